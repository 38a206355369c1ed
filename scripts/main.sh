#!/usr/bin/env bash
# The main job: Strata against C-Blosc2 on real climate grids, side by side.
# On a fresh machine it builds Strata (release), sets up .venv (python-blosc2 = C-Blosc2, numpy,
# scipy) and fetches the grids into data/; then, for each grid and several codec/filter
# configurations, prints sizes, cratio and compress/decompress GB/s of both on one thread with
# 4 MiB chunks (medians), the Strata/C-Blosc2 ratios, and checks the round trip across the two.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

bash scripts/setup-build-deps.sh
cargo build --release --workspace
bash scripts/setup-venv.sh
bash scripts/fetch-data.sh

start=$SECONDS
.venv/bin/python benches/vs_cblosc2.py --strata target/release/strata data/etopo5_rose.npy data/levitus_temp.npy
echo
echo "main: done in $((SECONDS - start)) s after the build"
