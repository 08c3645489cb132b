//! `apply` looks for what an earlier call left in linear memory. A plan named
//! `write` fills 1 MiB with a secret pattern and then scans memory for it, which
//! must find it (the scan works); any other plan grows memory by 4 MiB (pages an
//! earlier instance may have used) and scans all of it. The secret is built at
//! run time from masked bytes, so it is in no data segment and in no plan: only
//! a `write` call ever puts it in memory. The answer is a status whose reason is
//! `Found` or `NotFound`, with the address or the bytes scanned.
#![cfg(target_arch = "wasm32")]
#![allow(
    unsafe_code,
    reason = "reading the instance's own linear memory byte by byte"
)]

use krt_test_guests::*;
use std::hint::black_box;

/// The secret, each byte XORed with [`MASK`].
const MASKED: [u8; 16] = *b"\x11\x08\x0e\x77\x08\x1f\x09\x13\x1e\x0f\x1f\x77\x69\x6a\x69\x68";
/// What unmasks [`MASKED`]; read through `black_box` so that the compiler
/// cannot fold the plain secret into a constant.
const MASK: u8 = 0x5a;

/// The first address where the secret lies in linear memory, and how many bytes were scanned.
fn scan() -> (Option<usize>, usize) {
    let mask = black_box(MASK);
    let size = core::arch::wasm32::memory_size(0) * 65536;
    let byte = |addr: usize| unsafe { std::ptr::read_volatile(addr as *const u8) };
    let found = (1..size - MASKED.len())
        .find(|&addr| (0..MASKED.len()).all(|j| byte(addr + j) ^ mask == MASKED[j]));
    (found, size)
}

hostile! {
    fn apply(_, plan, _) {
        if meta(&plan, "name") == "write" {
            let mask = black_box(MASK);
            let secret: Vec<u8> = MASKED.iter().map(|b| b ^ mask).collect();
            let filled: Vec<u8> = secret.iter().copied().cycle().take(1 << 20).collect();
            black_box(&filled);
            std::mem::forget(filled);
        } else {
            core::arch::wasm32::memory_grow(0, 64);
        }
        let (found, size) = scan();
        let (reason, message) = match found {
            Some(addr) => ("Found", format!("the secret at address {addr}")),
            None => ("NotFound", format!("no secret in {size} bytes")),
        };
        applied(Some(status(t::StatusCode::Internal, reason, message)))
    }
}
