#!/usr/bin/env bash
# Builds krt's guest and the in-memory cluster component and composes them with `wac compose`
# (the script is tests/compose.wac):
#
#   tests/compose.sh [OUT_DIR]        # default: target/components
#
# Writes OUT_DIR/guest.wasm, OUT_DIR/memcluster.wasm and OUT_DIR/composed.wasm, whose only
# imports are WASI (it exports `types`, `runtime` and `logic`), so `wasmtime run --invoke ... composed.wasm` runs the runtime against a fresh
# in-memory cluster. Needs `wac` (cargo install --locked wac-cli@0.12.0 --no-default-features
# --features wit) and the wasm32-wasip2 target (rust-toolchain.toml installs it).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
target="${CARGO_TARGET_DIR:-$root/target}"
out="${1:-$target/components}"
cargo="${CARGO:-cargo}"

# As in host/build.rs: flags and wrappers meant for native builds are not for the components.
unset RUSTFLAGS CARGO_ENCODED_RUSTFLAGS RUSTC_WRAPPER RUSTC_WORKSPACE_WRAPPER CARGO_BUILD_TARGET CARGO_TARGET_DIR

build() { # target dir, then package arguments
    local dir=$1
    shift
    "$cargo" build --quiet --manifest-path "$root/Cargo.toml" "$@" \
        --target wasm32-wasip2 --profile guest --target-dir "$dir"
}
# The guest exactly as host/build.rs builds it, in its target dir, so an up-to-date guest is not
# built again. The cluster gets its own: it links the guest library without the `component`
# feature, and that build would overwrite guest.wasm with the glue-less library.
build "$target/krt-guest" --package guest --features component
build "$target/krt-memcluster" --package memcluster

mkdir -p "$out"
cp "$target/krt-guest/wasm32-wasip2/guest/guest.wasm" "$out/guest.wasm"
cp "$target/krt-memcluster/wasm32-wasip2/guest/memcluster.wasm" "$out/memcluster.wasm"
# `wac plug` would leave the guest's import of `types` open (it cannot re-export it), so the
# composition is spelled out in a script.
wac compose --dep "krt:memcluster=$out/memcluster.wasm" --dep "krt:guest=$out/guest.wasm" \
    -o "$out/composed.wasm" "$root/tests/compose.wac"
echo "$out/composed.wasm"
