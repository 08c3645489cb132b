//! Opens a TCP connection with `std::net` and reads a file with `std::fs`, so the
//! component imports `wasi:sockets` and `wasi:filesystem` (even when LTO drops what
//! is unused).
#![cfg(target_arch = "wasm32")]

use krt_test_guests::*;

hostile! {
    fn apply(_, _, _) {
        let outcome = std::net::TcpStream::connect("10.0.0.1:80")
            .map(|_| ())
            .and_then(|()| std::fs::read_to_string("/etc/hostname").map(|_| ()));
        applied(Some(status(
            t::StatusCode::Internal,
            "Connected",
            format!("{outcome:?}"),
        )))
    }
}
