#!/usr/bin/env bash
# Builds and runs examples/outside, a crate outside krt's workspace that depends on krt-host by
# path as an embedder's crate would, and checks that nothing in its build runs a nested cargo:
# no build script of krt's is in its dependency graph (krt's guest comes prebuilt in
# krt-guest-component), and krt-wasm-build, which is what runs one, is not in it at all.
set -euo pipefail
cd "$(dirname "$0")/.."
manifest=examples/outside/Cargo.toml
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$PWD/target}"

cargo metadata --locked --format-version 1 --manifest-path "$manifest" >"$CARGO_TARGET_DIR/outside-metadata.json"
python3 - "$CARGO_TARGET_DIR/outside-metadata.json" <<'PY'
import json, sys
meta = json.load(open(sys.argv[1]))
resolved = {node["id"] for node in meta["resolve"]["nodes"]}
krt = [p for p in meta["packages"] if p["id"] in resolved and p["name"].startswith("krt-")]
names = sorted(p["name"] for p in krt)
assert "krt-host" in names, names
assert "krt-wasm-build" not in names, f"krt-wasm-build is in the graph: {names}"
scripts = [p["name"] for p in krt if any("custom-build" in t["kind"] for t in p["targets"])]
assert not scripts, f"krt crates with a build script: {scripts}"
print(f"outside: {len(resolved)} packages, krt's: {', '.join(names)}; none has a build script")
PY

out="$(cargo run --locked --quiet --manifest-path "$manifest" --bin embed)"
echo "$out"
grep -qx 'apply: Create' <<<"$out"
grep -q '^health: Current' <<<"$out"
echo "outside: the embedder's crate built on its own and ran krt's component"
