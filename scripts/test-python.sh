#!/usr/bin/env bash
# The Python package's check (scripts/test.sh runs it after the release build): fmt, clippy
# and rustdoc of its native crate (bindings/python, a workspace of its own), the release wheel
# built with the pinned maturin and installed into .venv, then its pytest suite
# (bindings/python/tests) with STRATA_BIN (the release CLI, which the xarray tests import
# netCDF with) and STRATAD_BIN (the release daemon, which serves the remote tests' files on
# 127.0.0.1); the Levitus test reads data/ (scripts/fetch-data.sh). Extra arguments go to
# pytest, e.g. --junitxml=FILE.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
venv="$root/.venv"
# A target directory of its own: strata's library (a cdylib too) has an output name without
# a hash, so a build of it with other features in the workspace's directory (the CLI's, with
# hdf5) would replace the one this crate links, and the reverse.
export CARGO_TARGET_DIR="$root/target/python"
wheels="$CARGO_TARGET_DIR/wheels"

cd "$root/bindings/python"
cargo fmt --check
cargo clippy --all-targets --quiet -- -D warnings
RUSTDOCFLAGS="-D warnings" cargo doc --no-deps --quiet
rm -rf "$wheels"
"$venv/bin/maturin" build --release --quiet -o "$wheels"
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check --force-reinstall \
  --no-deps "$wheels"/strata-*.whl

cd "$root"
STRATA_BIN="${STRATA_BIN:-$root/target/release/strata}" \
  STRATAD_BIN="${STRATAD_BIN:-$root/target/release/stratad}" \
  "$venv/bin/python" -m pytest bindings/python/tests -q -p no:cacheprovider "$@"
