#!/usr/bin/env bash
# Composes krt's guest (the prebuilt guest-component/krt_guest.wasm) with the in-memory cluster
# component, which it builds, using `wac compose` (the script is tests/compose.wac):
#
#   tests/compose.sh [OUT_DIR]        # default: target/components
#
# Writes OUT_DIR/guest.wasm, OUT_DIR/memcluster.wasm and OUT_DIR/composed.wasm, whose only
# imports are WASI (it exports `types`, `runtime` and `logic`), so `wasmtime run --invoke ...
# composed.wasm` runs the runtime against a fresh in-memory cluster. Needs `wac` (cargo install
# --locked wac-cli@0.12.0 --no-default-features --features wit); the cluster is built by
# krt-wasm-build, in the `guest` profile.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
target="${CARGO_TARGET_DIR:-$root/target}"
out="${1:-$target/components}"
cargo="${CARGO:-cargo}"

build() { # target dir, then package arguments
    "$cargo" run --quiet --manifest-path "$root/Cargo.toml" -p krt-wasm-build -- "$@"
}
# The cluster gets a target dir of its own: it links the guest library without the `component`
# feature.
build "$target/krt-memcluster" guest --package krt-memcluster

mkdir -p "$out"
cp "$root/guest-component/krt_guest.wasm" "$out/guest.wasm"
cp "$target/krt-memcluster/wasm32-wasip2/guest/krt_memcluster.wasm" "$out/memcluster.wasm"
# `wac plug` would leave the guest's import of `types` open (it cannot re-export it), so the
# composition is spelled out in a script.
wac compose --dep "krt:memcluster=$out/memcluster.wasm" --dep "krt:guest=$out/guest.wasm" \
    -o "$out/composed.wasm" "$root/tests/compose.wac"
echo "$out/composed.wasm"
