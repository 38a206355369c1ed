#!/usr/bin/env bash
# Fetches the real climate grids that the interop suite and the main job use, into data/
# (git-ignored): the netCDF-3 files as published, and one variable of each as a C-order
# little-endian .npy file:
#   data/etopo5.cdf, data/etopo5_rose.npy   ETOPO5 relief of the Earth's surface,
#                                           ROSE float32 (2161, 4320), metres
#   data/levitus_climatology.cdf, data/levitus_temp.npy
#                                           Levitus ocean climatology, TEMP float32
#                                           (20, 180, 360), deg C (and SALT)
# Source: Debian's package ferret-datasets, pinned version, checked by SHA-256 (the package and
# every file taken from it). The .npy files are made by Strata itself (`strata import` of the
# netCDF variable, then `strata export`), so they need a release build (STRATA_BIN, else
# target/release/strata); their pinned SHA-256 was computed from an independent conversion
# (scipy's netCDF reader), so a match also proves the import and export bit-exact. Skips
# everything when the files are present with the expected hashes.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
data="$root/data"
strata="${STRATA_BIN:-$root/target/release/strata}"

deb_package=ferret-datasets
deb_version=7.6.0-5
deb_sha256=e5770222647ebfe2ab77b845e07a7e05cb6fed7b12dec9ae287a1f8046031744
nc_dir=usr/share/ferret-vis/data

# output .npy, its SHA-256, netCDF file in the package, its SHA-256, variable
grids=(
  "etopo5_rose.npy 4e95afc920ae5aab03e7b1132053a85b369504ef6d62928f4137d92dc9d5ee02 etopo5.cdf 1455d5e5feebd183d0bef5538a750ca8a44801e1503f964df900831c224459ce ROSE"
  "levitus_temp.npy 4278d6c65a8ce9f2ef826756d0595b68b61e87fd6b732a7a5a315cb93d9f969d levitus_climatology.cdf 6cf0c43e2b5b790a25547eb90194c0468ab508a40636c1e67b42e892c3b7596b TEMP"
)

verified() {
  local npy npy_sha nc nc_sha var
  for grid in "${grids[@]}"; do
    read -r npy npy_sha nc nc_sha var <<<"$grid"
    echo "$npy_sha  $data/$npy" | sha256sum --check --status 2>/dev/null || return 1
    echo "$nc_sha  $data/$nc" | sha256sum --check --status 2>/dev/null || return 1
  done
}

if verified; then
  echo "fetch-data: data/ is up to date"
  exit 0
fi
[ -x "$strata" ] || { echo "fetch-data: no $strata; build it first (cargo build --release)" >&2; exit 1; }

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
  read -r npy npy_sha nc nc_sha var <<<"$grid"
  cp "$tmp/pkg/$nc_dir/$nc" "$data/$nc"
  "$strata" import --force --var "$var" "$data/$nc" "$tmp/b2nd" >/dev/null
  "$strata" export --force "$tmp/b2nd/$var.b2nd" "$data/$npy" 2>/dev/null
done
verified || { echo "fetch-data: the grids do not have the expected SHA-256" >&2; exit 1; }
echo "fetch-data: data/ ready"
