#!/usr/bin/env bash
# Fuzz every target for N seconds each (default 30): `fuzz/run.sh [seconds]`.
#
# Installs cargo-fuzz if missing, regenerates the seed corpus (fuzz/corpus/, git-ignored) and
# runs `decompress`, `getitem`, `frame`, `info`, `hdf5_chunk` and `daemon_requests`. Crashes land in
# fuzz/artifacts/<target>/; minimize one with
#   RUSTC_BOOTSTRAP=1 cargo fuzz tmin <target> <file>
# and keep it under tests/data/fuzz-regressions/ as <target>-<name>.bin (tests/bad_input.rs
# replays them, cli/tests/fuzz_regressions.rs the info-* ones). Extra libFuzzer flags can be
# passed in FUZZ_ARGS.
#
# The mutation sequence is seeded (FUZZ_SEED, default 1) so that a run is repeatable: a crash
# found in CI is found again by the same command. Set FUZZ_SEED=0 for a random seed when
# hunting for new crashes over longer runs.
#
# cargo-fuzz needs nightly-only rustc flags (-Z sanitizer, sancov passes). We have only the
# stable toolchain, so RUSTC_BOOTSTRAP=1 unlocks them.
set -euo pipefail

secs="${1:-30}"
here="$(cd "$(dirname "$0")" && pwd)"
cd "$here"
export RUSTC_BOOTSTRAP=1

if [ "$(cargo fuzz --version 2>/dev/null)" != "cargo-fuzz 0.13.2" ]; then
    cargo install cargo-fuzz --version 0.13.2 --locked
fi

cargo run --quiet --release --example gen_corpus -- corpus

targets=(decompress getitem frame info hdf5_chunk daemon_requests)
cargo fuzz build

status=0
for t in "${targets[@]}"; do
    mkdir -p "artifacts/$t"
    echo "== fuzzing $t for ${secs}s"
    # -rss_limit_mb: the targets allocate at most a few MiB per input (MAX_OUT in src/lib.rs).
    # shellcheck disable=SC2086
    if ! cargo fuzz run "$t" "corpus/$t" -- -max_total_time="$secs" -rss_limit_mb=2048 \
            -timeout=10 -seed="${FUZZ_SEED:-1}" -print_final_stats=1 ${FUZZ_ARGS:-}; then
        echo "!! $t found a crash: see fuzz/artifacts/$t/"
        status=1
    fi
done
exit "$status"
