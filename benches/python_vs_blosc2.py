"""Strata's Python package against python-blosc2, side by side in one Python process.

Usage: python_vs_blosc2.py [--quick] [--repeat R] [--workdir DIR] [--json OUT]

Cases (every one read from the very same `.b2nd` file by both libraries; medians of R runs,
each timed alone from the call to a filled NumPy array; the libraries take turns, one run
each per round — strata, python-blosc2, strata, python-blosc2... — so that the load of a
shared machine falls on both alike):
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
library's default (one per core). The load average (`uptime`) is printed before and after.

This is a benchmark, not a test: it prints a table (and writes JSON with --json); a
mismatch between a library's result and NumPy's stops it with exit status 1.
"""

import argparse
import json
import os
import statistics
import subprocess
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


def rounds(sides, repeat, check):
    """The median time per side of `repeat` rounds in which every side runs once, in turn.

    `sides` maps a name to `(prepare, run)`: in round k, `prepare()` (untimed) then `run(k)`
    (timed alone); every result goes through `check(k, result)`."""
    times = {name: [] for name in sides}
    for k in range(repeat):
        for name, (prepare, run) in sides.items():
            prepare()
            t = time.perf_counter()
            out = run(k)
            times[name].append(time.perf_counter() - t)
            check(k, out)
            del out
    return {name: statistics.median(ts) for name, ts in times.items()}


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
            t = rounds({"strata": (prepare, lambda k: strata.open(path)[:]),
                        "blosc2": (prepare, lambda k: blosc2.open(str(path))[:])},
                       repeat, lambda k, out: equal(arr)(out))
            compare(rows, f"whole {case.name}", cache, t["strata"], t["blosc2"])
            for axis in range(len(case.shape)):
                idx = draw_indices(case, axis, repeat, seed=0)
                keys = [hyperplane_key(len(case.shape), axis, i) for i in idx]
                opened = {"strata": strata.open(path), "blosc2": blosc2.open(str(path))}
                for a in opened.values():
                    a[keys[0]]  # untimed
                if cache == "warm":
                    warm(path)
                each = (lambda: None) if cache == "warm" else (lambda: drop(path))
                t = rounds({lib: (each, lambda k, a=a: a[keys[k]]) for lib, a in opened.items()},
                           repeat, lambda k, out: equal(arr[keys[k]])(out))
                compare(rows, f"hyperplane {case.name} axis {axis}", cache, t["strata"],
                        t["blosc2"])
        path.unlink()


def save_load(nbytes, workdir, repeat, rows):
    cols = 8192
    matrix = field((nbytes // 8 // cols, cols))
    files = {"strata": workdir / "m-strata.b2nd", "blosc2": workdir / "m-blosc2.b2nd",
             "npy": workdir / "m.npy"}
    cp = blosc2.CParams(codec=blosc2.Codec.ZSTD, clevel=1)
    save = {
        "strata": lambda k: strata.save(matrix, files["strata"], codec="zstd", clevel=1),
        "npy": lambda k: np.save(files["npy"], matrix),
        "blosc2": lambda k: blosc2.asarray(matrix, urlpath=str(files["blosc2"]), mode="w",
                                           cparams=cp),
    }
    load = {
        "strata": lambda k: strata.load(files["strata"]),
        "npy": lambda k: np.load(files["npy"]),
        "blosc2": lambda k: blosc2.open(str(files["blosc2"]))[:],
    }
    t = rounds({lib: (lambda: None, run) for lib, run in save.items()}, repeat,
               lambda k, out: None)
    name = f"save {matrix.nbytes >> 20} MiB"
    compare(rows, name, "-", t["strata"], t["blosc2"])
    compare(rows, name, "-", t["strata"], t["npy"], peer="np.save")
    for cache in ("warm", "cold"):
        sides = {}
        for lib, run in load.items():
            f = files[lib]
            prepare = (lambda f=f: warm(f)) if cache == "warm" else (lambda f=f: drop(f))
            sides[lib] = (prepare, run)
        t = rounds(sides, repeat, lambda k, out: equal(matrix)(out))
        name = f"load {matrix.nbytes >> 20} MiB"
        compare(rows, name, cache, t["strata"], t["blosc2"])
        compare(rows, name, cache, t["strata"], t["npy"], peer="np.load")
    for f in files.values():
        f.unlink()


def uptime():
    """Prints the machine's load average, as `uptime` shows it."""
    print(subprocess.run(["uptime"], capture_output=True, text=True, check=True).stdout.rstrip(),
          flush=True)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="small shapes and a 64 MiB matrix")
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--workdir", type=Path)
    p.add_argument("--json", type=Path)
    args = p.parse_args(argv)
    print(f"strata {strata.__version__}, python-blosc2 {blosc2.__version__}, numpy {np.__version__}")
    uptime()
    rows = []
    with tempfile.TemporaryDirectory(dir=args.workdir) as tmp:
        work = Path(tmp)
        reads(QUICK if args.quick else FULL, work, args.repeat, rows)
        save_load((64 if args.quick else 1024) << 20, work, args.repeat, rows)
    uptime()
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
