//! Imports an interface krt does not know (`evil:exfil/send`).
#![cfg(target_arch = "wasm32")]

wit_bindgen::generate!({
    inline: "
        package evil:exfil@1.0.0;
        interface send { post: func(data: string); }
        world unknown { import send; export run: func(); }
    ",
});

struct G;

impl Guest for G {
    fn run() {
        evil::exfil::send::post("the cluster's secrets");
    }
}

export!(G);
