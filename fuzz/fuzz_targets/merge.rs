//! Three-way merges of built-in kinds (strategic) and of any kind (JSON merge):
//! never panic, a computed patch applies to the live object, and applying it
//! twice is the same as once.
#![no_main]

use krt_guest::merge::{self, strategic};
use krt_fuzz::{object, same_identity};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut u = arbitrary::Unstructured::new(data);
    let (Ok(modified), Ok(current), Ok(original)) =
        (object(&mut u), object(&mut u), object(&mut u))
    else {
        return;
    };
    let current = same_identity(&modified, current);
    let original = u
        .arbitrary::<bool>()
        .unwrap_or(false)
        .then(|| same_identity(&modified, original));
    if strategic::holds_directive(&modified) || original.as_ref().is_some_and(strategic::holds_directive) {
        return;
    }
    let api_version = modified["apiVersion"].as_str().unwrap_or_default();
    let kind = modified["kind"].as_str().unwrap_or_default();
    if let Some(schema) = strategic::schema_for(api_version, kind)
        && let Ok(patch) = strategic::three_way(original.as_ref(), &modified, &current, schema)
    {
        let once = strategic::apply(&current, &patch, schema)
            .unwrap_or_else(|e| panic!("patch {patch} does not apply: {e}"));
        assert_eq!(
            strategic::apply(&once, &patch, schema).as_ref(),
            Ok(&once),
            "patch {patch}"
        );
    }
    if let Ok(patch) = merge::json::three_way(original.as_ref(), &modified, &current) {
        let mut once = current.clone();
        merge::json::apply(&mut once, &patch);
        let mut twice = once.clone();
        merge::json::apply(&mut twice, &patch);
        assert_eq!(twice, once, "patch {patch}");
    }
});
