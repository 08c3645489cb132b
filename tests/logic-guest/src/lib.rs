//! A runtime component with its own `kusion:runtime/logic`: krt's standard
//! runtime, except that every diff's unified text starts with [`MARK`] and
//! every health message with `marked: `. Tests swap it in with `--component`
//! to check that previews, drift and health come from the loaded component.

/// The first line of every unified diff this component computes.
pub const MARK: &str = "# diff by the marked test component";

#[cfg(target_arch = "wasm32")]
#[allow(unsafe_code, reason = "wit-bindgen's generated import and export glue")]
mod component {
    use krt_guest::component::{Component, logic, observed, rt, t};

    /// krt's runtime with marked logic.
    struct Marked;

    krt_guest::component::export!(Marked);

    impl rt::Guest for Marked {
        fn apply(
            prior: Option<t::Resource>,
            plan: Option<t::Resource>,
            options: rt::ApplyOptions,
        ) -> rt::ApplyResponse {
            <Component as rt::Guest>::apply(prior, plan, options)
        }

        fn read(
            prior: Option<t::Resource>,
            plan: Option<t::Resource>,
            options: rt::ReadOptions,
        ) -> rt::ReadResponse {
            <Component as rt::Guest>::read(prior, plan, options)
        }

        fn delete(resource: t::Resource, options: rt::DeleteOptions) -> rt::DeleteResponse {
            <Component as rt::Guest>::delete(resource, options)
        }

        fn watch(resource: t::Resource, options: rt::WatchOptions) -> rt::WatchResponse {
            <Component as rt::Guest>::watch(resource, options)
        }
    }

    impl observed::Guest for Marked {
        fn apply_observed(
            prior: Option<t::Resource>,
            plan: Option<t::Resource>,
            observation: Option<observed::Observation>,
            options: rt::ApplyOptions,
        ) -> observed::ObservedResponse {
            <Component as observed::Guest>::apply_observed(prior, plan, observation, options)
        }
    }

    fn marked(mut diff: logic::ObjectDiff) -> logic::ObjectDiff {
        if !diff.changes.is_empty() {
            diff.unified = format!("{}\n{}", super::MARK, diff.unified);
        }
        diff
    }

    impl logic::Guest for Marked {
        fn health(object: String) -> Result<t::Health, t::Status> {
            let mut health = <Component as logic::Guest>::health(object)?;
            health.message = format!("marked: {}", health.message);
            Ok(health)
        }

        fn normalize(object: String) -> Result<String, t::Status> {
            <Component as logic::Guest>::normalize(object)
        }

        fn diff(
            before: Option<String>,
            after: Option<String>,
            ignore_paths: Vec<String>,
        ) -> Result<logic::ObjectDiff, t::Status> {
            <Component as logic::Guest>::diff(before, after, ignore_paths).map(marked)
        }

        fn drift(
            prior: String,
            live: Option<String>,
            ignore_paths: Vec<String>,
        ) -> Result<logic::ObjectDiff, t::Status> {
            <Component as logic::Guest>::drift(prior, live, ignore_paths).map(marked)
        }

        fn three_way_patch(
            original: Option<String>,
            modified: String,
            current: Option<String>,
        ) -> Result<logic::Patch, t::Status> {
            <Component as logic::Guest>::three_way_patch(original, modified, current)
        }
    }
}
