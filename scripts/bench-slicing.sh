#!/usr/bin/env bash
# Hyperplane slicing side by side: Strata, python-blosc2 (C-Blosc2), h5py with hdf5plugin's
# Blosc2 filter, and zarr, on the three shapes of the Caterva study (benches/slicing.py says what
# is measured and how). Sets up .venv with the peers pinned in benches/requirements.txt, builds
# Strata's slice_bench example (release), then runs the harness; arguments go to it, e.g.
#   scripts/bench-slicing.sh --quick
#   scripts/bench-slicing.sh --repeat 30 --nthreads 2 --json slicing.json
# Strata's column reads "n/a" while the example does not build yet (the harness says so).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

bash scripts/setup-venv.sh
if [ -f examples/slice_bench.rs ]; then
  cargo build --release --example slice_bench
else
  echo "bench-slicing: no examples/slice_bench.rs yet, so no Strata numbers"
fi

start=$SECONDS
.venv/bin/python benches/slicing.py "$@"
echo
echo "bench-slicing: done in $((SECONDS - start)) s after the build"
