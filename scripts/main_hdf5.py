"""The main job's HDF5 step: the grids Strata wrote as datasets of HDF5's Blosc2 filter (32026)
read back by h5py through Strata's plugin (hdf5plugin not imported), checked bit-exact against
the .npy exports, then hyperplanes along each axis read through Strata's direct path (`strata
bench FILE.h5:/path`: only the touched blocks) next to h5py's filter path, which decompresses
whole chunks: with HDF5's chunk cache as h5py sets it (HDF5 2.0: 8 MiB, so a chunk that fits
stays decompressed between reads), and with the cache off (every read decompresses).

Usage: main_hdf5.py FILE.h5 PLUGIN.so STRATA NPY:/DATASET...
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PLANES = 9  # as strata bench


def indices(n: int, k: int) -> list[int]:
    """strata bench's spread of k indices in 0..n (golden-ratio steps)."""
    return [int(((i * 0.618_033_988_75 + 0.5) % 1.0) * n) % max(n, 1) for i in range(k)]


def main() -> None:
    h5, plugin, strata, *pairs = sys.argv[1:]
    plugin_dir = Path(tempfile.mkdtemp(prefix="strata-hdf5-plugin-"))
    shutil.copy(plugin, plugin_dir)
    os.environ["HDF5_PLUGIN_PATH"] = str(plugin_dir)  # before HDF5 starts
    import h5py
    import numpy as np

    def hyperplane_ms(name: str, axis: int, want, rdcc_nbytes: int | None) -> float:
        """The median time of h5py's reads of the hyperplanes strata bench reads (the file
        opened alone: HDF5 shares an open dataset, and its cache, between handles)."""
        kw = {} if rdcc_nbytes is None else {"rdcc_nbytes": rdcc_nbytes}
        with h5py.File(h5, **kw) as g:
            ds = g[name]
            ds[(0,) * ds.ndim]  # opens the dataset (and for the cache, loads a chunk) untimed
            times = []
            for i in indices(ds.shape[axis], PLANES):
                key = tuple(i if d == axis else slice(None) for d in range(ds.ndim))
                t = time.perf_counter()
                plane = ds[key]
                times.append(time.perf_counter() - t)
                if not np.array_equal(plane, want[key]):
                    raise SystemExit(f"{name}: h5py's hyperplane {axis}/{i} differs")
        return statistics.median(times) * 1e3

    for pair in pairs:
        npy, name = pair.rsplit(":", 1)
        want = np.load(npy)
        with h5py.File(h5) as f:
            start = time.perf_counter()
            got = f[name][()]
            seconds = time.perf_counter() - start
        if got.dtype != want.dtype or got.shape != want.shape or not np.array_equal(got, want):
            raise SystemExit(f"h5py reads other values from {h5}:{name} than {npy}")
        print(f"h5py {h5py.__version__} (HDF5 {h5py.version.hdf5_version}) through Strata's plugin, "
              f"hdf5plugin not imported: {name} {list(got.shape)} bit-exact in {seconds * 1e3:.0f} ms")
        res = subprocess.run([strata, "bench", "--json", "--runs", "5", f"{h5}:{name}"], capture_output=True,
                             text=True, check=True)
        bench = json.loads(res.stdout)
        print(f"  {'axis':>4}  {'hyperplane':>12}  {'strata direct':>14}  {'blocks':>6}  {'h5py (cache)':>13}"
              f"  {'h5py (no cache)':>16}  {'speed-up (no cache)':>20}")
        for row in bench["hyperplanes"]:
            axis = row["axis"]
            ms = [hyperplane_ms(name, axis, want, None), hyperplane_ms(name, axis, want, 0)]
            shape = "[" + ",".join(map(str, row["plane_shape"])) + "]"
            print(f"  {axis:>4}  {shape:>12}  {row['strata_ms']:>11.2f} ms  {row['blocks_decompressed']:>6}"
                  f"  {ms[0]:>10.2f} ms  {ms[1]:>13.2f} ms  {ms[1] / row['strata_ms']:>19.1f}x")
    shutil.rmtree(plugin_dir)


if __name__ == "__main__":
    main()
