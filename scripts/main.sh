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
# Then the grids into HDF5: `strata export` writes both arrays as datasets of HDF5's Blosc2
# filter (32026) into out/grids.h5, their big chunks copied as stored; h5py reads them back
# through Strata's plugin (hdf5plugin not imported), bit-exact; hyperplanes are read through
# Strata's direct path next to h5py's filter path (scripts/main_hdf5.py).
# Then stratad serves the arrays of out/ on loopback (an ephemeral port): a slice is read
# through the stock Caterva2 client (caterva2.Client, from .venv) and with curl (the native
# API), the block cache's statistics are printed, and the daemon is stopped (SIGTERM).
# Arrays go to out/ (git-ignored). Set CODEC/CLEVEL to try others (default zstd, 5).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

cargo build --release
bash scripts/setup-venv.sh
bash scripts/fetch-data.sh
if ! command -v curl >/dev/null && [ "$(id -u)" -eq 0 ]; then
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq curl
fi

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
echo "== HDF5: the grids as datasets of HDF5's Blosc2 filter (32026), out/grids.h5"
rm -f out/grids.h5
"$strata" export out/etopo5/ROSE.b2nd out/grids.h5:/etopo5/ROSE
"$strata" export out/levitus/TEMP.b2nd out/grids.h5:/levitus/TEMP
"$strata" info out/grids.h5
.venv/bin/python scripts/main_hdf5.py out/grids.h5 target/release/libstrata_hdf5_filter.so "$strata" \
  out/etopo5-ROSE.npy:/etopo5/ROSE out/levitus-TEMP.npy:/levitus/TEMP

echo
echo "== stratad: the arrays of out/ over HTTP"
daemon_out=$(mktemp)
STRATAD_LOG=warn target/release/stratad --root @public=out --listen 127.0.0.1:0 --cache-bytes 256M \
  >"$daemon_out" &
daemon=$!
trap 'kill "$daemon" 2>/dev/null || true; rm -f "$daemon_out"' EXIT
for _ in $(seq 100); do
  grep -q "listening on" "$daemon_out" && break
  sleep 0.1
done
url=$(sed -n 's/^stratad listening on //p' "$daemon_out")
echo "stratad (pid $daemon) at $url"
echo "-- the stock Caterva2 client (caterva2.Client): a slice of out/levitus/TEMP.b2nd"
.venv/bin/python - "$url" <<'PY'
import sys, time
import blosc2, caterva2, numpy as np
client = caterva2.Client(sys.argv[1])
root = client.get("@public")
print(f"roots {list(client.get_roots())}; @public holds {len(root)} datasets: {', '.join(root)}")
temp = client.get("@public/levitus/TEMP.b2nd")
print(f"TEMP: shape {temp.shape}, dtype {temp.dtype}, chunks {temp.chunks}, blocks {temp.blocks}")
t = time.perf_counter()
got = temp[0, 80:90, 100:104]
ms = (time.perf_counter() - t) * 1e3
want = blosc2.open("out/levitus/TEMP.b2nd")[0, 80:90, 100:104]
assert np.array_equal(got, want), "the slice differs from python-blosc2's read of the file"
print(f"TEMP[0, 80:90, 100:104] in {ms:.1f} ms, equal to python-blosc2's read of the file:")
print(np.array2string(got, precision=2, max_line_width=100))
PY
echo "-- curl (the native API): the same slice as raw float32"
curl -s -D - -o out/temp-slice.raw "$url/v1/slice/@public/levitus/TEMP.b2nd?sel=0,80:90,100:104" |
  grep -iE '^(HTTP|x-shape|x-dtype|content-length)' | tr -d '\r'
od -An -tf4 -w16 -N32 out/temp-slice.raw
echo "-- the block cache"
curl -s "$url/metrics" | grep -E '^stratad_cache_(hits|misses|bytes|entries|evictions)'
kill -TERM "$daemon"
wait "$daemon" && echo "stratad stopped (SIGTERM, exit 0)"
trap - EXIT
rm -f "$daemon_out"
echo
echo "main: done in $((SECONDS - start)) s after the build"
