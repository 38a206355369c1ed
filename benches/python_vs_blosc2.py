"""Strata's Python package against python-blosc2, side by side in one Python process.

Usage: python_vs_blosc2.py [--quick] [--repeat R] [--workdir DIR] [--json OUT]

Cases (every one read from the very same `.b2nd` file by both libraries; medians of R runs,
each timed alone from the call to a filled NumPy array):
- whole: `strata.open(p)[:]` vs `blosc2.open(p)[:]` for each of the three shapes of the
  Caterva study (benches/slicing.py: its cases, data and file settings, LZ4 clevel 5 and
  shuffle, written by python-blosc2);
- hyperplane axis k: `arr[:, ..., i, ..., :]` at R random indices, the array opened once
  and read once untimed first;
- save / load of one float64 matrix (1 GiB, --quick 64 MiB; the same field): `strata.save` /
  `strata.load`, `np.save` / `np.load`, `blosc2.asarray(urlpath=...)` /
  `blosc2.open(p)[:]`, both compressors at zstd clevel 1 with shuffle (python-blosc2's
  defaults).
Each read case runs with the page cache warm (the file read whole first) and cold (the file
dropped from the page cache with posix_fadvise(DONTNEED) before every timed read). Threads: each
library's default (one per core).

This is a benchmark, not a test: it prints a table (and writes JSON with --json); a
mismatch between a library's result and NumPy's stops it with exit status 1.
"""

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import blosc2
import numpy as np

import strata

sys.path.insert(0, str(Path(__file__).resolve().parent))
from slicing import FULL, QUICK, draw_indices, field, hyperplane_key, warm, write_blosc2  # noqa: E402


def drop(path):
    """Drops `path` (a file) from the page cache."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fdatasync(fd)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)


def timed(run, prepare, repeat, check):
    """The median time of `repeat` calls of `run()`, `prepare()` before each (untimed); the
    first result goes through `check`."""
    times = []
    for k in range(repeat):
        prepare()
        t = time.perf_counter()
        out = run()
        times.append(time.perf_counter() - t)
        if k == 0:
            check(out)
        del out
    return statistics.median(times)


def equal(want):
    def check(got):
        if not np.array_equal(np.asarray(got), want):
            raise SystemExit("a result differs from NumPy's")
    return check


def compare(rows, name, cache, ours, theirs, peer="python-blosc2"):
    rows.append({"case": name, "cache": cache, "strata_s": ours, peer + "_s": theirs,
                 "speedup": theirs / ours})
    print(f"{name:<34} {cache:<5} strata {ours * 1e3:9.2f} ms   {peer} {theirs * 1e3:9.2f} ms"
          f"   x{theirs / ours:5.2f}", flush=True)


def reads(cases, workdir, repeat, rows):
    for case in cases:
        arr = field(case.shape)
        path = workdir / f"{case.name}.b2nd"
        write_blosc2(case, arr, path)
        for cache in ("warm", "cold"):
            prepare = (lambda: warm(path)) if cache == "warm" else (lambda: drop(path))
            ours = timed(lambda: strata.open(path)[:], prepare, repeat, equal(arr))
            theirs = timed(lambda: blosc2.open(str(path))[:], prepare, repeat, equal(arr))
            compare(rows, f"whole {case.name}", cache, ours, theirs)
            for axis in range(len(case.shape)):
                idx = draw_indices(case, axis, repeat, seed=0)
                for lib, opened in (("strata", strata.open(path)), ("blosc2", blosc2.open(str(path)))):
                    opened[hyperplane_key(len(case.shape), axis, idx[0])]  # untimed
                    if cache == "warm":
                        warm(path)
                    times = []
                    for i in idx:
                        key = hyperplane_key(len(case.shape), axis, i)
                        if cache == "cold":
                            drop(path)
                        t = time.perf_counter()
                        out = opened[key]
                        times.append(time.perf_counter() - t)
                        equal(arr[key])(out)
                    if lib == "strata":
                        ours = statistics.median(times)
                    else:
                        theirs = statistics.median(times)
                compare(rows, f"hyperplane {case.name} axis {axis}", cache, ours, theirs)
        path.unlink()


def save_load(nbytes, workdir, repeat, rows):
    cols = 8192
    matrix = field((nbytes // 8 // cols, cols))
    files = {"strata": workdir / "m-strata.b2nd", "blosc2": workdir / "m-blosc2.b2nd",
             "npy": workdir / "m.npy"}
    cp = blosc2.CParams(codec=blosc2.Codec.ZSTD, clevel=1)
    save = {
        "strata": lambda: strata.save(matrix, files["strata"], codec="zstd", clevel=1),
        "npy": lambda: np.save(files["npy"], matrix),
        "blosc2": lambda: blosc2.asarray(matrix, urlpath=str(files["blosc2"]), mode="w", cparams=cp),
    }
    load = {
        "strata": lambda: strata.load(files["strata"]),
        "npy": lambda: np.load(files["npy"]),
        "blosc2": lambda: blosc2.open(str(files["blosc2"]))[:],
    }
    t = {lib: timed(save[lib], lambda: None, repeat, lambda _: None) for lib in save}
    name = f"save {matrix.nbytes >> 20} MiB"
    compare(rows, name, "-", t["strata"], t["blosc2"])
    compare(rows, name, "-", t["strata"], t["npy"], peer="np.save")
    for cache in ("warm", "cold"):
        t = {}
        for lib in load:
            f = files[lib]
            prepare = (lambda: warm(f)) if cache == "warm" else (lambda: drop(f))
            t[lib] = timed(load[lib], prepare, repeat, equal(matrix))
        name = f"load {matrix.nbytes >> 20} MiB"
        compare(rows, name, cache, t["strata"], t["blosc2"])
        compare(rows, name, cache, t["strata"], t["npy"], peer="np.load")
    for f in files.values():
        f.unlink()


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="small shapes and a 64 MiB matrix")
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--workdir", type=Path)
    p.add_argument("--json", type=Path)
    args = p.parse_args(argv)
    print(f"strata {strata.__version__}, python-blosc2 {blosc2.__version__}, numpy {np.__version__}")
    rows = []
    with tempfile.TemporaryDirectory(dir=args.workdir) as tmp:
        work = Path(tmp)
        reads(QUICK if args.quick else FULL, work, args.repeat, rows)
        save_load((64 if args.quick else 1024) << 20, work, args.repeat, rows)
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
