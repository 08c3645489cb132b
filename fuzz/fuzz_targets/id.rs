//! Resource ID parsing: never panics, and an ID that parses prints back unchanged.
#![no_main]

use krt_guest::id::ResourceId;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|text: &str| {
    if let Ok(id) = ResourceId::parse(text) {
        assert_eq!(id.to_string(), text);
        assert_eq!(ResourceId::parse(&id.to_string()), Ok(id));
    }
});
