//! Built against a future `kusion:runtime@0.2.0`: imports its `host` and
//! exports its `runtime`.
#![cfg(target_arch = "wasm32")]

wit_bindgen::generate!({
    inline: "
        package kusion:runtime@0.2.0;
        interface host { sleep: func(ms: u32); }
        interface runtime { apply: func(plan: string) -> string; }
        world kubernetes-runtime { import host; export runtime; }
    ",
});

struct G;

impl exports::kusion::runtime::runtime::Guest for G {
    fn apply(plan: String) -> String {
        kusion::runtime::host::sleep(1);
        plan
    }
}

export!(G);
