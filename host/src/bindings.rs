//! The host's Rust bindings of `wit/`: the `kubernetes-runtime` world (the
//! imports krt implements and the `runtime` export it calls), and the
//! optional `logic` export of the `krt-guest` world, generated on top of the
//! same import bindings. Imports are async (they await kube-rs) and may trap
//! for host bugs; exports are called with `call_*` async methods.

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

/// World `krt-guest`, for its `logic` export; its imports are the ones above.
mod guest_world {
    wasmtime::component::bindgen!({
        path: "../wit",
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

pub use guest_world::exports::kusion::runtime::logic;
