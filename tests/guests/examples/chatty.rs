//! `apply` floods the host with 4 KiB log records, forever.
#![cfg(target_arch = "wasm32")]

use krt_test_guests::*;

hostile! {
    fn apply(_, _, _) {
        let line = "flood ".repeat(700);
        loop {
            host::log(host::LogLevel::Info, &line, &[]);
        }
    }
}
