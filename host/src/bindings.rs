//! The host's Rust bindings of `wit/`: the imports of the `cluster-middleware`
//! world, the widest one krt hosts (every import krt implements: `kubernetes`,
//! `host`, `types` and `runtime`, the next link of a chain; a runtime component
//! uses a subset of them), and the exports of the `krt-guest` world, generated
//! on top of the same import bindings: `runtime`, which every link has, and the
//! optional `logic` and `observed-apply`. Imports are async (they await
//! kube-rs, or the next link) and may trap for host bugs; exports are called
//! with `call_*` async methods.

wasmtime::component::bindgen!({
    path: "wit",
    world: "cluster-middleware",
    imports: { default: async | trappable },
    exports: { default: async },
    with: {
        "kusion:runtime/kubernetes.watch-stream": crate::imports::kubernetes::WatchState,
    },
});

/// The `runtime` import of a middleware: the next link of the chain.
pub use kusion::runtime::runtime as next;
pub use kusion::runtime::{host as host_services, kubernetes, types};

/// World `krt-guest`, for its `logic` export; its imports are the ones above.
mod guest_world {
    wasmtime::component::bindgen!({
        path: "wit",
        world: "krt-guest",
        imports: { default: async | trappable },
        exports: { default: async },
        with: {
            "kusion:runtime/kubernetes": super::kusion::runtime::kubernetes,
            "kusion:runtime/host": super::kusion::runtime::host,
            "kusion:runtime/types": super::kusion::runtime::types,
        },
    });
}

/// The `runtime` export every link has, from world `krt-guest` so that
/// `observed-apply`'s types are its types.
pub use guest_world::exports::kusion::runtime::runtime;
pub use guest_world::exports::kusion::runtime::{logic, observed_apply as observed};
