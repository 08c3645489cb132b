//! The component glue: krt's standard runtime (`krt_guest::component::Component`)
//! wrapped so that `apply` checks the organisation's rules first. A violating
//! plan never reaches the cluster; everything else is delegated unchanged.

use krt_guest::component::{Component, logic, resource_in, rt, status_out, t};

/// The organisation-rules runtime.
struct OrgRules;

krt_guest::component::export!(OrgRules);

impl rt::Guest for OrgRules {
    fn apply(
        prior: Option<t::Resource>,
        plan: Option<t::Resource>,
        options: rt::ApplyOptions,
    ) -> rt::ApplyResponse {
        let violation = match plan.clone().map(resource_in).transpose() {
            Ok(plan) => plan.and_then(|p| crate::rules::check(&p.id, &p.attributes)),
            Err(status) => Some(status),
        };
        match violation {
            Some(status) => rt::ApplyResponse {
                resource: None,
                live: None,
                action: rt::Action::Unchanged,
                status: Some(status_out(status)),
                retries: 0,
            },
            None => <Component as rt::Guest>::apply(prior, plan, options),
        }
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

impl logic::Guest for OrgRules {
    fn health(object: String) -> Result<t::Health, t::Status> {
        <Component as logic::Guest>::health(object)
    }

    fn normalize(object: String) -> Result<String, t::Status> {
        <Component as logic::Guest>::normalize(object)
    }

    fn diff(
        before: Option<String>,
        after: Option<String>,
        ignore_paths: Vec<String>,
    ) -> Result<logic::ObjectDiff, t::Status> {
        <Component as logic::Guest>::diff(before, after, ignore_paths)
    }

    fn drift(
        prior: String,
        live: Option<String>,
        ignore_paths: Vec<String>,
    ) -> Result<logic::ObjectDiff, t::Status> {
        <Component as logic::Guest>::drift(prior, live, ignore_paths)
    }

    fn three_way_patch(
        original: Option<String>,
        modified: String,
        current: Option<String>,
    ) -> Result<logic::Patch, t::Status> {
        <Component as logic::Guest>::three_way_patch(original, modified, current)
    }
}
