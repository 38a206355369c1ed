#!/usr/bin/env bash
# Strata's remote arrays against python-blosc2's C2Array and Proxy, over loopback, from
# stratad and from cat2-server: see benches/remote_vs_c2array.py for what is measured. Builds
# libstrata and stratad (release), sets up .venv (python-blosc2, cat2-server), then runs it;
# extra arguments go to the Python script (e.g. --rounds 3). The table is also written to
# benches/results/remote_vs_c2array.md.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
bash scripts/setup-venv.sh
cargo build --release -p strata -p strata-daemon
exec .venv/bin/python benches/remote_vs_c2array.py --lib target/release/libstrata.so \
  --stratad target/release/stratad --out benches/results/remote_vs_c2array.md "$@"
