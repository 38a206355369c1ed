#!/usr/bin/env bash
# Creates or updates the Python environment .venv (git-ignored) from the pinned
# tests/interop/requirements.txt (python-blosc2 = C-Blosc2, the old blosc = Blosc1, numpy,
# scipy, PyTables, pytest), benches/requirements.txt (h5py, hdf5plugin, zarr, b2h5py, av: the
# benchmarks' peers, which the interop suite runs too) and tests/daemon/requirements.txt
# (caterva2 with its server: the stock clients the daemon's tests drive, and cat2-server for its
# bench) and bindings/python/requirements.txt (maturin, hypothesis, dask, distributed, xarray:
# the Python package's build and tests). Installs Debian's python3-venv first when root and
# Python lacks venv. Does nothing when .venv already matches the requirements.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
venv="$root/.venv"
requirements=("$root/tests/interop/requirements.txt" "$root/benches/requirements.txt"
  "$root/tests/daemon/requirements.txt" "$root/bindings/python/requirements.txt")
stamp="$venv/.requirements.sha256"

want=$(cat "${requirements[@]}" | sha256sum | cut -d' ' -f1)
if [ -x "$venv/bin/python" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$want" ]; then
  echo "setup-venv: .venv is up to date"
  exit 0
fi

if ! python3 -c 'import venv, ensurepip' 2>/dev/null; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "setup-venv: python3 has no venv module; install python3-venv" >&2
    exit 1
  fi
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv
fi

python3 -m venv "$venv"
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check --only-binary :all: \
  -r "${requirements[0]}" -r "${requirements[1]}" -r "${requirements[2]}" -r "${requirements[3]}"
echo "$want" > "$stamp"
echo "setup-venv: .venv ready ($("$venv/bin/python" -c 'import blosc2; print("python-blosc2", blosc2.__version__, "/ C-Blosc2", blosc2.blosclib_version.split()[0])'))"
