//! Health mapping: never panics on any JSON value or time.
#![no_main]

use krt_guest::health::compute;
use krt_fuzz::{object, value};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut u = arbitrary::Unstructured::new(data);
    let object = if u.arbitrary().unwrap_or(true) {
        object(&mut u)
    } else {
        value(&mut u, 6)
    };
    let now: Option<i64> = u.arbitrary().unwrap_or(None);
    if let Ok(object) = object {
        compute(&object, now);
    }
});
