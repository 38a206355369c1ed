#!/usr/bin/env bash
# The main job: real climate grids into Strata's compressed N-d arrays, and back.
# On a fresh machine it builds Strata (release), fetches the NOAA grids (Debian's
# ferret-datasets, pinned, SHA-256 checked), then for each grid:
#   1. strata import    netCDF-3 → one .b2nd array per variable, partitions derived from the
#                       detected L2/L3 caches: sizes, cratio, compression speed;
#   2. strata export    the main variable back to .npy: decompression speed, and the file's
#                       SHA-256 must equal the pinned one of an independent conversion;
#   3. strata bench     hyperplanes along each axis: time and blocks decompressed, next to
#                       reading the same hyperplane from the raw .npy (and checked equal to it),
#                       with both files in the page cache (warm), then dropped from it before
#                       every read (cold: what a read from the disk costs).
# Arrays go to out/ (git-ignored). Set CODEC/CLEVEL to try others (default zstd, 5).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

cargo build --release
bash scripts/fetch-data.sh

strata=target/release/strata
codec=${CODEC:-zstd}
clevel=${CLEVEL:-5}
start=$SECONDS
mkdir -p out

echo
"$strata" system | sed -n '1,8p'
# grid, netCDF file, variable, pinned SHA-256 of the variable as .npy (see fetch-data.sh)
grids=(
  "etopo5 etopo5.cdf ROSE 4e95afc920ae5aab03e7b1132053a85b369504ef6d62928f4137d92dc9d5ee02"
  "levitus levitus_climatology.cdf TEMP 4278d6c65a8ce9f2ef826756d0595b68b61e87fd6b732a7a5a315cb93d9f969d"
)
for grid in "${grids[@]}"; do
  read -r name nc var sha <<<"$grid"
  echo
  echo "== $name: data/$nc ($(du -h "data/$nc" | cut -f1) netCDF-3)"
  echo "-- import (codec $codec, clevel $clevel, shuffle)"
  "$strata" import --force --codec "$codec" --clevel "$clevel" "data/$nc" "out/$name"
  echo "-- export $var back to .npy"
  "$strata" export --force "out/$name/$var.b2nd" "out/$name-$var.npy"
  echo "$sha  out/$name-$var.npy" | sha256sum --check --quiet
  echo "round trip: out/$name-$var.npy has the pinned SHA-256 (bit-exact)"
  echo "-- hyperplanes of $var (9 per axis, median) against the raw .npy"
  "$strata" bench "out/$name/$var.b2nd" --npy "out/$name-$var.npy" --runs 5
  "$strata" bench "out/$name/$var.b2nd" --npy "out/$name-$var.npy" --runs 5 --cold | tail -n +2
done
echo
echo "main: done in $((SECONDS - start)) s after the build"
