#!/usr/bin/env bash
# Builds the JavaScript middleware labels.js into a component with componentize-js:
#
#   examples/js-labels/build.sh [OUT]        # default: target/components/labels.wasm
#
# componentize-js (pinned below) is installed with npm into target/node-tools (or
# $KRT_NODE_TOOLS) when that version is not there yet. The component is built again only
# when labels.js or wit/ is newer than it. `--disable` leaves out every WASI feature of the
# JS engine (stdio, random, clocks, http, fetch-event): a middleware needs none, and krt
# refuses `wasi:http` and the filesystem the engine would otherwise import.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
target="${CARGO_TARGET_DIR:-$root/target}"
tools="${KRT_NODE_TOOLS:-$target/node-tools}"
out="${1:-$target/components/labels.wasm}"
version=0.23.0
cjs="$tools/node_modules/.bin/componentize-js"

if [[ "$("$cjs" --version 2>/dev/null)" != "$version" ]]; then
    npm install --prefix "$tools" --no-audit --no-fund --silent \
        "@bytecodealliance/componentize-js@$version" >&2
fi
if [[ -f "$out" && -z "$(find "$here/labels.js" "$root/wit" -newer "$out" -print -quit)" ]]; then
    echo "$out"
    exit 0
fi
mkdir -p "$(dirname "$out")"
"$cjs" "$here/labels.js" --wit "$root/wit" --world-name middleware \
    --disable stdio random clocks http fetch-event -o "$out" >&2
echo "$out"
