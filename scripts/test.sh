#!/usr/bin/env bash
# All of Strata's tests, the one test command (CI runs it through .ci/run):
#   1. .venv from the pinned tests/interop/requirements.txt (scripts/setup-venv.sh; as root it
#      installs Debian's python3-venv if Python lacks venv)
#   2. cmake and libclang for the ZFP plugin and gfortran for bindings/fortran
#      (scripts/setup-build-deps.sh; Debian's packages, as root), cbindgen (pinned;
#      tests/ffi_c.rs regenerates include/strata.h with it), then
#      cargo build --release --workspace
#   3. the real climate grids into data/ (scripts/fetch-data.sh, Debian's ferret-datasets; the
#      .npy files made by the release strata, checked against pinned SHA-256), then
#      cargo test --workspace --release
#   4. the interop suite against C-Blosc2 and Blosc1 (pytest tests/interop, STRATA_BIN set to
#      the release binary)
#   5. the fuzz targets, 30 s each (fuzz/run.sh; FUZZ_SECONDS changes it, 0 skips)
# Every stage runs even when an earlier test stage fails; the last line sums up all tests, and
# the exit status is non-zero if anything failed.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT
stage() { printf '\n== %s (at %d s)\n' "$1" "$SECONDS"; }

stage "Python environment"
bash scripts/setup-venv.sh
stage "tools"
bash scripts/setup-build-deps.sh
cbindgen_version=0.29.2
if [ "$(cbindgen --version 2>/dev/null)" != "cbindgen $cbindgen_version" ]; then
  cargo install cbindgen --version "$cbindgen_version" --locked
fi
stage "cargo build --release --workspace"
cargo build --release --workspace
stage "real data (made into .npy by the build's strata)"
bash scripts/fetch-data.sh

stage "cargo test --workspace --release"
cargo_status=0
cargo test --workspace --release 2>&1 | tee "$logs/cargo.log" || cargo_status=$?
read -r cargo_passed cargo_failed < <(awk '/^test result:/ {p += $4; f += $6} END {print p + 0, f + 0}' "$logs/cargo.log")

stage "interop suite (pytest tests/interop)"
pytest_status=0
STRATA_BIN="$root/target/release/strata" .venv/bin/python -m pytest tests/interop -q -n auto -p no:cacheprovider \
  --junitxml="$logs/interop.xml" || pytest_status=$?
read -r py_passed py_failed < <(.venv/bin/python - "$logs/interop.xml" <<'PY' 2>/dev/null || echo "0 0"
import sys
import xml.etree.ElementTree as ET
suite = ET.parse(sys.argv[1]).getroot()
suite = suite if suite.tag == "testsuite" else suite[0]
failed = int(suite.get("failures")) + int(suite.get("errors"))
print(int(suite.get("tests")) - failed - int(suite.get("skipped")), failed)
PY
)

fuzz_status=0
if [ "${FUZZ_SECONDS:-30}" != 0 ]; then
  stage "fuzz (${FUZZ_SECONDS:-30} s per target)"
  bash fuzz/run.sh "${FUZZ_SECONDS:-30}" || fuzz_status=$?
fi

printf '\n== done in %d s: cargo test %d passed, %d failed (exit %d); interop %d passed, %d failed (exit %d); fuzz exit %d\n' \
  "$SECONDS" "$cargo_passed" "$cargo_failed" "$cargo_status" "$py_passed" "$py_failed" "$pytest_status" "$fuzz_status"
fuzz_result=$([ "${FUZZ_SECONDS:-30}" = 0 ] && echo skipped || { [ "$fuzz_status" -eq 0 ] && echo ok || echo FAILED; })
echo "summary: $((cargo_passed + py_passed)) passed, $((cargo_failed + py_failed)) failed (fuzz: $fuzz_result)"
[ "$cargo_status" -eq 0 ] && [ "$pytest_status" -eq 0 ] && [ "$fuzz_status" -eq 0 ]
