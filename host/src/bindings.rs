//! The one `bindgen!` of the host: Rust bindings of the `kubernetes-runtime`
//! world in `wit/`. Imports are async (they await kube-rs) and may trap for host
//! bugs; exports are called with `call_*` async methods.

wasmtime::component::bindgen!({
    path: "../wit",
    world: "kubernetes-runtime",
    imports: { default: async | trappable },
    exports: { default: async },
    with: {
        "kusion:runtime/kubernetes.watch-stream": crate::imports::kubernetes::WatchState,
    },
});

pub use exports::kusion::runtime::runtime;
pub use kusion::runtime::{host as host_services, kubernetes, types};
