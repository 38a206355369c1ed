#!/usr/bin/env bash
# All of Strata's tests, the one test command (CI runs it through .ci/run):
#   1. .venv from the pinned requirements (scripts/setup-venv.sh; as root it installs Debian's
#      python3-venv if Python lacks venv)
#   2. cmake and libclang for the ZFP plugin and gfortran for bindings/fortran
#      (scripts/setup-build-deps.sh; Debian's packages, as root), cbindgen (pinned;
#      tests/ffi_c.rs regenerates include/strata.h with it)
#   3. the fast tier, minutes: cargo fmt --check; cargo clippy --workspace --all-targets with
#      warnings denied (the lints [workspace.lints] declares, undocumented_unsafe_blocks
#      among them); cargo doc with warnings denied; the unit tests in debug mode (debug
#      assertions on), and the library's again with its `ndarray` feature
#   4. the long tier: cargo build --release --workspace; the real climate grids into data/
#      (scripts/fetch-data.sh, Debian's ferret-datasets; the .npy files made by the release
#      strata, checked against pinned SHA-256); cargo test --workspace --release
#   5. the interop suite against the real peers (pytest tests/interop, STRATA_BIN and
#      STRATAD_BIN set to the release binaries; the stock Caterva2 clients drive stratad),
#      then the Python package (scripts/test-python.sh: built with maturin, installed into
#      .venv, pytest bindings/python/tests)
#   6. the fuzz targets, 30 s each (fuzz/run.sh; FUZZ_SECONDS changes it, 0 skips)
# `scripts/test.sh --fast` stops after the fast tier.
# Every check runs even when an earlier one fails; each prints one `check:` line, and the last
# line sums up all tests. The exit status is non-zero if anything failed.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT
# pytest's temporary files (several GiB over the interop suite) live here, not in /tmp's
# pytest-of-$USER, so that they are freed before the fuzz build and at the end.
pytest_tmp="$logs/pytest"
mkdir -p "$pytest_tmp"
# stage NAME: a banner with the time so far and the disk space left (a full disk fails builds
# in ways that look like anything else).
stage() {
  printf '\n== %s (at %d s; %s free on the disk)\n' "$1" "$SECONDS" \
    "$(df -h --output=avail . | tail -n 1 | tr -d ' ')"
}
# The suite builds each profile once; incremental state would only take disk space.
export CARGO_INCREMENTAL=0

stage "Python environment"
bash scripts/setup-venv.sh
stage "tools"
bash scripts/setup-build-deps.sh
cbindgen_version=0.29.2
if [ "$(cbindgen --version 2>/dev/null)" != "cbindgen $cbindgen_version" ]; then
  cargo install cbindgen --version "$cbindgen_version" --locked
fi
failed_checks=()
# check NAME CMD...: runs CMD, logs it to $logs/NAME.log and says how it went in one line.
check() {
  local name=$1 status=0
  shift
  stage "$name"
  "$@" 2>&1 | tee "$logs/$name.log" || status=$?
  if [ "$status" -eq 0 ]; then
    echo "check: $name ok"
  else
    echo "check: $name FAILED (exit $status; log above)"
    failed_checks+=("$name")
  fi
  return 0
}
# tests_in LOG: "passed failed" summed over the `test result:` lines of a cargo test log.
tests_in() {
  awk '/^test result:/ {p += $4; f += $6} END {print p + 0, f + 0}' "$1"
}

check fmt cargo fmt --all --check
# The optional `ndarray` feature (ArrayD conversions) is linted, documented and tested too.
check clippy cargo clippy --workspace --all-targets --features strata/ndarray --quiet -- -D warnings
check doc env RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps --features strata/ndarray --quiet
check unit-debug cargo test --workspace --lib --bins
check unit-ndarray cargo test -p strata --lib --features ndarray
read -r unit_passed unit_failed < <(cat "$logs/unit-debug.log" "$logs/unit-ndarray.log" > "$logs/unit.log"; tests_in "$logs/unit.log")
if [ "${1:-}" = --fast ]; then
  [ ${#failed_checks[@]} -eq 0 ] || echo "failed checks: ${failed_checks[*]}"
  echo "summary (fast tier): $unit_passed passed, $unit_failed failed"
  [ ${#failed_checks[@]} -eq 0 ]
  exit
fi

# The debug build directory is not needed after the fast tier: free it when the disk is short.
if [ "$(df -k --output=avail . | tail -n 1)" -lt $((25 * 1024 * 1024)) ]; then
  echo "less than 25 GiB free: removing target/debug before the long tier"
  rm -rf target/debug
fi
check build-release cargo build --release --workspace
check data bash scripts/fetch-data.sh
check cargo-test cargo test --workspace --release --no-fail-fast
read -r cargo_passed cargo_failed < <(tests_in "$logs/cargo-test.log")

# junit_counts FILE: "passed failed skipped" of a pytest --junitxml report ("0 0 0" without one).
junit_counts() {
  .venv/bin/python - "$1" <<'PY' 2>/dev/null || echo "0 0 0"
import sys
import xml.etree.ElementTree as ET
suite = ET.parse(sys.argv[1]).getroot()
suite = suite if suite.tag == "testsuite" else suite[0]
failed = int(suite.get("failures")) + int(suite.get("errors"))
skipped = int(suite.get("skipped"))
print(int(suite.get("tests")) - failed - skipped, failed, skipped)
PY
}

stage "interop suite (pytest tests/interop)"
pytest_status=0
STRATA_BIN="$root/target/release/strata" STRATAD_BIN="$root/target/release/stratad" \
  .venv/bin/python -m pytest tests/interop -q -n auto -p no:cacheprovider \
  --basetemp="$pytest_tmp/interop" --junitxml="$logs/interop.xml" 2>&1 | tee "$logs/interop.log" || pytest_status=$?
read -r py_passed py_failed py_skipped < <(junit_counts "$logs/interop.xml")
[ "$pytest_status" -eq 0 ] && echo "check: interop ok" || { echo "check: interop FAILED (exit $pytest_status)"; failed_checks+=(interop); }

# The Python package: built, installed into .venv and tested (scripts/test-python.sh).
check python bash scripts/test-python.sh --basetemp="$pytest_tmp/python" --junitxml="$logs/python.xml"
read -r pkg_passed pkg_failed pkg_skipped < <(junit_counts "$logs/python.xml")
py_passed=$((py_passed + pkg_passed)) py_failed=$((py_failed + pkg_failed))
py_skipped=$((py_skipped + pkg_skipped))

# The fuzz build has its own target directory (fuzz/target, two profiles of the whole
# workspace, 2-3 GiB); the main one and pytest's files are not needed after this point.
# Under 40 GiB free the main target/ goes too: CI once ran out of disk building the fuzzers.
rm -rf "$pytest_tmp"
if [ "$(df -k --output=avail . | tail -n 1)" -lt $((40 * 1024 * 1024)) ]; then
  echo "less than 40 GiB free: removing target/ before the fuzz build"
  rm -rf target
fi
fuzz_result=skipped
if [ "${FUZZ_SECONDS:-30}" != 0 ]; then
  check fuzz bash fuzz/run.sh "${FUZZ_SECONDS:-30}"
  case " ${failed_checks[*]} " in *" fuzz "*) fuzz_result=FAILED ;; *) fuzz_result=ok ;; esac
fi

printf '\n== done in %d s: unit tests (debug) %d passed, %d failed; cargo test %d passed, %d failed; pytest (interop, python package) %d passed, %d failed, %d skipped; fuzz %s\n' \
  "$SECONDS" "$unit_passed" "$unit_failed" "$cargo_passed" "$cargo_failed" "$py_passed" "$py_failed" "$py_skipped" "$fuzz_result"
# The end of each failed check's log again, so that the reason is in the last lines printed.
for name in "${failed_checks[@]}"; do
  printf '\n== why %s failed: the end of its log\n' "$name"
  grep -a -i -E 'error|panicked|failed|crash|no space|killed|deadly|timed? ?out' "$logs/$name.log" |
    tail -n 30 || true
  echo "-- its last lines:"
  grep -a -v -E '^(#[0-9]+|"|.*# Uses: )' "$logs/$name.log" | tail -n 10 || true
done
[ ${#failed_checks[@]} -eq 0 ] || echo "failed checks: ${failed_checks[*]}"
echo "summary: $((unit_passed + cargo_passed + py_passed)) passed, $((unit_failed + cargo_failed + py_failed)) failed (fuzz: $fuzz_result)"
[ ${#failed_checks[@]} -eq 0 ]
