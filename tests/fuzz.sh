#!/usr/bin/env bash
# Runs every cargo-fuzz target in fuzz/ for SECONDS_PER_TARGET seconds (default 8, so the
# six targets fuzz for under a minute; building them is extra). Needs the nightly toolchain
# and cargo-fuzz (`cargo install --locked cargo-fuzz`); without them it says so and exits 0.
# Crashes are written to fuzz/artifacts/<target>/ and make the script fail.
# Long run: `bash tests/fuzz.sh 600`; one target: `cd fuzz && cargo +nightly fuzz run merge`.
set -euo pipefail
cd "$(dirname "$0")/../fuzz"

seconds=${1:-8}
if ! rustup run nightly rustc --version >/dev/null 2>&1; then
    echo "fuzz: skipped (no nightly toolchain; install it with 'rustup toolchain install nightly')"
    exit 0
fi
if ! cargo +nightly fuzz --version >/dev/null 2>&1; then
    echo "fuzz: skipped (cargo-fuzz is missing; install it with 'cargo install --locked cargo-fuzz')"
    exit 0
fi

# Optimized, with debug assertions (overflow checks) on; run reuses this build.
cargo +nightly fuzz build -O -a
log=$(mktemp)
trap 'rm -f "$log"' EXIT
for target in $(cargo +nightly fuzz list); do
    echo "fuzz: $target for ${seconds}s"
    # -rss_limit_mb catches runaway allocation; the corpus grows in fuzz/corpus/<target>.
    if ! cargo +nightly fuzz run -O -a "$target" -- \
        -max_total_time="$seconds" -rss_limit_mb=2048 -max_len=4096 -print_final_stats=1 >"$log" 2>&1; then
        # The panic message, then the end of the run (libFuzzer's report and reproduction line).
        grep -m 5 -E 'panicked at|^(thread|patch|assertion)|ERROR: ' "$log" >&2 || true
        tail -n 25 "$log" >&2
        echo "fuzz: $target failed; the input is in fuzz/artifacts/$target/" >&2
        exit 1
    fi
    grep -E '^stat::number_of_executed_units' "$log" || true
done
echo "fuzz: all targets ran ${seconds}s without a crash"
