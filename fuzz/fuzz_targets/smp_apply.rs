//! Strategic merge patch application with arbitrary patches (every directive):
//! never panics, whatever the live object and the patch hold.
#![no_main]

use krt_guest::merge::strategic;
use krt_fuzz::{object, same_identity, value};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut u = arbitrary::Unstructured::new(data);
    let (Ok(live), Ok(patch)) = (object(&mut u), value(&mut u, 6)) else {
        return;
    };
    let patch = if patch.is_object() {
        same_identity(&live, patch)
    } else {
        patch
    };
    let api_version = live["apiVersion"].as_str().unwrap_or_default();
    let kind = live["kind"].as_str().unwrap_or_default();
    if let Some(schema) = strategic::schema_for(api_version, kind) {
        let _ = strategic::apply(&live, &patch, schema);
    }
});
