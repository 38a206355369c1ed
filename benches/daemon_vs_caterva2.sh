#!/usr/bin/env bash
# stratad against cat2-server (caterva2[server] 2026.9.2, login off) on the same data, side by
# side in one run: see benches/daemon_vs_caterva2.py for what is measured and how. Installs
# Debian's wrk and nginx (as root) if missing, builds stratad (release), sets up .venv (which holds
# cat2-server), then runs the comparison; extra arguments go to the Python script, e.g.
#   benches/daemon_vs_caterva2.sh --quick --seconds 3 --rounds 1
# The table is also written to benches/results/daemon_vs_caterva2.md.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
if ! command -v wrk >/dev/null || ! [ -x /usr/sbin/nginx ]; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "daemon_vs_caterva2: wrk or nginx is missing; install Debian's wrk and nginx" >&2
    exit 1
  fi
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wrk nginx
fi
bash scripts/setup-venv.sh
cargo build --release -p strata-daemon
exec .venv/bin/python benches/daemon_vs_caterva2.py --stratad target/release/stratad \
  --out benches/results/daemon_vs_caterva2.md "$@"
