//! The stack engine's input parsing (plain manifests and Kusion specs, YAML or JSON):
//! never panics, and every resource it accepts passes the runtime's own ID check.
#![no_main]

use krt_guest::target::Manifest;
use krt_stack::manifest;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|text: &str| {
    if let Ok(loaded) = manifest::parse("fuzz.yaml", text) {
        for l in loaded {
            if let Err(status) = Manifest::from_resource(&l.resource) {
                panic!(
                    "accepted {} but the runtime refuses it: {}",
                    l.resource.id, status.message
                );
            }
        }
    }
});
