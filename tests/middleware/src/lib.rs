//! Middleware components for krt's chain tests and benchmark. The components
//! are the examples (`examples/*.rs`, one component each, built for
//! `wasm32-wasip2` by `tests/build.rs`); this library holds only what they
//! share: [`pass_through!`].

/// Expands, inside an `impl Guest for …` block of a middleware component, to
/// the named runtime functions (`apply`, `read`, `delete`, `watch`), each
/// handing its call to the next link unchanged. The component's bindings must
/// be in scope, with the next link's interface imported as `next`.
#[macro_export]
macro_rules! pass_through {
    ($($function:ident),+ $(,)?) => {
        $($crate::pass_through!(@ $function);)+
    };
    (@ apply) => {
        fn apply(
            prior: Option<Resource>,
            plan: Option<Resource>,
            options: ApplyOptions,
        ) -> ApplyResponse {
            next::apply(prior.as_ref(), plan.as_ref(), &options)
        }
    };
    (@ read) => {
        fn read(prior: Option<Resource>, plan: Option<Resource>, options: ReadOptions) -> ReadResponse {
            next::read(prior.as_ref(), plan.as_ref(), &options)
        }
    };
    (@ delete) => {
        fn delete(resource: Resource, options: DeleteOptions) -> DeleteResponse {
            next::delete(&resource, &options)
        }
    };
    (@ watch) => {
        fn watch(resource: Resource, options: WatchOptions) -> WatchResponse {
            next::watch(&resource, &options)
        }
    };
}
