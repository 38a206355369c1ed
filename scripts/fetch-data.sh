#!/usr/bin/env bash
# Fetches the real climate grids that the interop suite and the main job use, into data/
# (git-ignored), as C-order little-endian .npy files:
#   data/etopo5_rose.npy   ETOPO5 relief of the Earth's surface, float32 (2161, 4320), metres
#   data/levitus_temp.npy  Levitus ocean temperature climatology, float32 (20, 180, 360), deg C
# Source: Debian's package ferret-datasets, pinned version, checked by SHA-256, netCDF-3 files
# converted with the .venv's scipy (run scripts/setup-venv.sh first). Skips everything when the
# .npy files are present with the expected hashes.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
data="$root/data"
python="$root/.venv/bin/python"

deb_package=ferret-datasets
deb_version=7.6.0-5
deb_sha256=e5770222647ebfe2ab77b845e07a7e05cb6fed7b12dec9ae287a1f8046031744
nc_dir=usr/share/ferret-vis/data

# output file, netCDF file in the package, variable, SHA-256 of the .npy
grids=(
  "etopo5_rose.npy etopo5.cdf ROSE 4e95afc920ae5aab03e7b1132053a85b369504ef6d62928f4137d92dc9d5ee02"
  "levitus_temp.npy levitus_climatology.cdf TEMP 4278d6c65a8ce9f2ef826756d0595b68b61e87fd6b732a7a5a315cb93d9f969d"
)

verified() {
  local npy nc var sha
  for grid in "${grids[@]}"; do
    read -r npy nc var sha <<<"$grid"
    echo "$sha  $data/$npy" | sha256sum --check --status 2>/dev/null || return 1
  done
}

if verified; then
  echo "fetch-data: data/ is up to date"
  exit 0
fi
[ -x "$python" ] || { echo "fetch-data: no $python; run scripts/setup-venv.sh first" >&2; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
chmod 0777 "$tmp" # apt's download user writes here
deb="$tmp/${deb_package}_${deb_version}_all.deb"
if ! (cd "$tmp" && apt-get download -qq "$deb_package=$deb_version" 2>/dev/null); then
  [ "$(id -u)" -eq 0 ] || { echo "fetch-data: $deb_package $deb_version not in apt's lists; run apt-get update as root" >&2; exit 1; }
  apt-get update -qq
  (cd "$tmp" && apt-get download -qq "$deb_package=$deb_version")
fi
echo "$deb_sha256  $deb" | sha256sum --check --quiet || { echo "fetch-data: $deb has the wrong SHA-256" >&2; exit 1; }
dpkg-deb -x "$deb" "$tmp/pkg"

mkdir -p "$data"
for grid in "${grids[@]}"; do
  read -r npy nc var sha <<<"$grid"
  "$python" "$root/scripts/nc_to_npy.py" "$tmp/pkg/$nc_dir/$nc" "$var" "$data/$npy"
done
verified || { echo "fetch-data: converted grids do not have the expected SHA-256" >&2; exit 1; }
echo "fetch-data: data/ ready"
