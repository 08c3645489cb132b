//! `apply` sleeps in the host five times for 200 ms: a second of host time
//! and almost no guest execution.
#![cfg(target_arch = "wasm32")]

use krt_test_guests::*;

hostile! {
    fn apply(_, _, _) {
        for _ in 0..5 {
            host::sleep(200);
        }
        applied(None)
    }
}
