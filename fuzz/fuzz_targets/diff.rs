//! Diff normalisation and diffs: never panic; normalising is idempotent; an
//! object never differs or drifts from itself.
#![no_main]

use krt_guest::diff::{diff, drift, overwritten};
use krt_guest::normalize::{normalize, normalize_for_diff};
use krt_fuzz::{object, value};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut u = arbitrary::Unstructured::new(data);
    let (Ok(before), Ok(after)) = (object(&mut u), object(&mut u)) else {
        return;
    };
    let after = if u.arbitrary().unwrap_or(false) {
        value(&mut u, 4).unwrap_or(after)
    } else {
        after
    };
    let ignore: Vec<String> = u.arbitrary().unwrap_or_default();
    for v in [&before, &after] {
        let once = normalize(v);
        assert_eq!(normalize(&once), once);
        let once = normalize_for_diff(v);
        assert_eq!(normalize_for_diff(&once), once);
        let same = diff(Some(v), Some(v), &ignore);
        assert!(
            same.changes.is_empty() && same.unified.is_empty(),
            "{v} differs from itself: {same:?}"
        );
        assert!(
            drift(v, Some(v), &ignore).changes.is_empty(),
            "{v} drifts from itself"
        );
    }
    let _ = diff(Some(&before), Some(&after), &ignore);
    let _ = diff(None, Some(&after), &ignore);
    let _ = diff(Some(&before), None, &ignore);
    let _ = overwritten(&before, &after, &before, &ignore);
});
