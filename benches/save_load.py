"""Saving and loading one big float64 matrix: Strata (its C ABI, libstrata.so through ctypes)
against python-blosc2 (`blosc2.asarray(m, urlpath=...)`, `blosc2.open(p)[:]`) and NumPy
(`np.save`, `np.load`), side by side in one process.

Usage: save_load.py [--quick] [--rounds R] [--nthreads N] [--workdir DIR] [--json OUT]
                    [--lib target/release/libstrata.so] [--rules own,peer] [--cases 0,1,2]

The matrix is benches/slicing.py's field (smooth values with a little noise, rounded to
1/1024), 1000 x 125000 (1 GB; --quick 1000 x 8000, 64 MB). For each codec case (LZ4 clevel 5
with shuffle, LZ4 clevel 5 with bitshuffle, Zstd clevel 1 with shuffle; filters in the last
slot, as both libraries default to) and each partition rule:

- "own": each library's default chunks and blocks;
- "peer": python-blosc2's defaults given to Strata as well (equal parameters: the file sizes
  must be equal, and are checked);

every round saves the matrix with each library in turn (the order rotating from round to
round), then loads each file whole: warm (the file just written, in the page cache) and cold
(the file dropped from the page cache first: `echo 3 > /proc/sys/vm/drop_caches` when this
process may write it, else posix_fadvise(DONTNEED) on the file after an fdatasync; the header
says which). Every load is compared with the matrix (a mismatch stops with exit status 1).

Durability: python-blosc2 and NumPy never fsync. Strata's save is timed with
STRATA_SYNC_NONE (the same work) and, in a separate column, with its default
STRATA_SYNC_ON_CLOSE (the file on stable storage when the call returns).

Threads: --nthreads (default 2) for both Blosc2 libraries, compression and decompression.
The report gives medians over the rounds, the spread (min-max), the load average, and the
ratios python-blosc2 / Strata (> 1: Strata faster).
"""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

ap = argparse.ArgumentParser()
ap.add_argument("--quick", action="store_true")
ap.add_argument("--rounds", type=int, default=3)
ap.add_argument("--nthreads", type=int, default=2)
ap.add_argument("--workdir", type=Path, default=None)
ap.add_argument("--json", type=Path, default=None)
ap.add_argument("--lib", type=Path, default=REPO / "target" / "release" / "libstrata.so")
ap.add_argument("--rules", default="own,peer", help="partition rules to run (own, peer)")
ap.add_argument("--cases", default="", help="codec cases to run, by number (default: all)")
args = ap.parse_args()
os.environ["BLOSC_NTHREADS"] = str(args.nthreads)

import blosc2  # noqa: E402 (after BLOSC_NTHREADS)
import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from slicing import field  # noqa: E402

blosc2.set_nthreads(args.nthreads)

# --- Strata's C ABI --------------------------------------------------------------------------

MAX_DIM = 16


class CParams(ctypes.Structure):
    _fields_ = [("size", ctypes.c_size_t), ("codec", ctypes.c_uint8),
                ("codec_meta", ctypes.c_uint8), ("clevel", ctypes.c_uint8),
                ("splitmode", ctypes.c_uint8), ("typesize", ctypes.c_uint32),
                ("blocksize", ctypes.c_uint32), ("filters", ctypes.c_uint8 * 6),
                ("filters_meta", ctypes.c_uint8 * 6), ("use_dict", ctypes.c_uint8),
                ("nthreads", ctypes.c_uint32)]


class DParams(ctypes.Structure):
    _fields_ = [("size", ctypes.c_size_t), ("nthreads", ctypes.c_uint32)]


class NdParams(ctypes.Structure):
    _fields_ = [("size", ctypes.c_size_t), ("ndim", ctypes.c_int32),
                ("shape", ctypes.c_int64 * MAX_DIM), ("chunkshape", ctypes.c_int32 * MAX_DIM),
                ("blockshape", ctypes.c_int32 * MAX_DIM), ("cparams", CParams),
                ("dparams", DParams)]


class Storage(ctypes.Structure):
    _fields_ = [("size", ctypes.c_size_t), ("sparse", ctypes.c_uint8),
                ("overwrite", ctypes.c_uint8), ("sync", ctypes.c_uint8),
                ("chunksize", ctypes.c_size_t)]


SYNC_NONE, SYNC_ON_CLOSE = 0, 1
h_t = ctypes.c_void_p
lib = ctypes.CDLL(str(args.lib))
lib.strata_ndarray_params_default.argtypes = [ctypes.POINTER(NdParams)]
lib.strata_storage_default.argtypes = [ctypes.POINTER(Storage)]
lib.strata_ndarray_from_buffer.argtypes = [
    ctypes.c_char_p, ctypes.POINTER(Storage), ctypes.POINTER(NdParams), ctypes.c_char_p,
    ctypes.c_void_p, ctypes.c_size_t, ctypes.POINTER(h_t)]
lib.strata_ndarray_open.argtypes = [ctypes.c_char_p, ctypes.c_uint8, ctypes.c_uint8,
                                    ctypes.POINTER(h_t)]
lib.strata_ndarray_set_nthreads.argtypes = [h_t, ctypes.c_int32, ctypes.c_int32]
lib.strata_ndarray_get_slice.argtypes = [
    h_t, ctypes.c_int32, ctypes.POINTER(ctypes.c_int64), ctypes.POINTER(ctypes.c_int64),
    ctypes.POINTER(ctypes.c_int64), ctypes.c_void_p, ctypes.c_size_t]
lib.strata_ndarray_get_slice.restype = ctypes.c_int64
lib.strata_ndarray_close.argtypes = [h_t]
lib.strata_last_error.argtypes = [ctypes.c_char_p, ctypes.c_size_t]
lib.strata_last_error.restype = ctypes.c_size_t


def check(rc, what):
    if rc < 0 or (rc != 0 and what != "get_slice"):
        buf = ctypes.create_string_buffer(1024)
        lib.strata_last_error(buf, len(buf))
        raise SystemExit(f"strata {what}: {rc} {buf.value.decode(errors='replace')}")


def strata_save(m, path, case, partitions, sync):
    p = NdParams()
    check(lib.strata_ndarray_params_default(ctypes.byref(p)), "params_default")
    p.ndim = m.ndim
    for d, n in enumerate(m.shape):
        p.shape[d] = n
    if partitions is not None:
        chunks, blocks = partitions
        for d in range(m.ndim):
            p.chunkshape[d], p.blockshape[d] = chunks[d], blocks[d]
    p.cparams.codec, p.cparams.clevel = case["codec_id"], case["clevel"]
    p.cparams.filters[:] = [f.value for f in case["filters"]]
    p.cparams.filters_meta[:] = [0] * 6
    p.cparams.nthreads = args.nthreads
    p.dparams.nthreads = args.nthreads
    s = Storage()
    check(lib.strata_storage_default(ctypes.byref(s)), "storage_default")
    s.overwrite, s.sync = 1, sync
    h = h_t()
    check(lib.strata_ndarray_from_buffer(str(path).encode(), ctypes.byref(s), ctypes.byref(p),
                                         b"<f8", m.ctypes.data, m.nbytes, ctypes.byref(h)),
          "from_buffer")
    check(lib.strata_ndarray_close(h), "close")


def strata_load(path, shape):
    h = h_t()
    check(lib.strata_ndarray_open(str(path).encode(), 0, SYNC_NONE, ctypes.byref(h)), "open")
    lib.strata_ndarray_set_nthreads(h, args.nthreads, args.nthreads)
    out = np.empty(shape, dtype=np.float64)
    nd = len(shape)
    start = (ctypes.c_int64 * nd)(*([0] * nd))
    stop = (ctypes.c_int64 * nd)(*shape)
    n = lib.strata_ndarray_get_slice(h, nd, start, stop, None, out.ctypes.data, out.nbytes)
    check(n, "get_slice")
    check(lib.strata_ndarray_close(h), "close")
    return out


# --- the other libraries ---------------------------------------------------------------------


def blosc2_cparams(case):
    return blosc2.CParams(codec=case["codec"], clevel=case["clevel"], filters=case["filters"],
                          filters_meta=[0] * 6, nthreads=args.nthreads)


def blosc2_save(m, path, case, partitions):
    kw = {} if partitions is None else {"chunks": partitions[0], "blocks": partitions[1]}
    arr = blosc2.asarray(m, urlpath=str(path), mode="w", cparams=blosc2_cparams(case), **kw)
    del arr


def blosc2_load(path):
    return blosc2.open(str(path), dparams=blosc2.DParams(nthreads=args.nthreads))[:]


# --- page cache ------------------------------------------------------------------------------


def can_drop_all():
    try:
        with open("/proc/sys/vm/drop_caches", "w") as f:
            f.write("3\n")
        return True
    except OSError:
        return False


DROP_ALL = can_drop_all()


def drop(path):
    if DROP_ALL:
        os.sync()
        with open("/proc/sys/vm/drop_caches", "w") as f:
            f.write("3\n")
        return
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fdatasync(fd)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)


def loadavg():
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


# --- the run ---------------------------------------------------------------------------------

F = blosc2.Filter
NOF = F.NOFILTER
CASES = [
    {"name": "lz4 5 shuffle", "codec": blosc2.Codec.LZ4, "codec_id": 1, "clevel": 5,
     "filters": [NOF, NOF, NOF, NOF, NOF, F.SHUFFLE]},
    {"name": "lz4 5 bitshuffle", "codec": blosc2.Codec.LZ4, "codec_id": 1, "clevel": 5,
     "filters": [NOF, NOF, NOF, NOF, NOF, F.BITSHUFFLE]},
    {"name": "zstd 1 shuffle", "codec": blosc2.Codec.ZSTD, "codec_id": 5, "clevel": 1,
     "filters": [NOF, NOF, NOF, NOF, NOF, F.SHUFFLE]},
]


def timed(f):
    t = time.perf_counter()
    out = f()
    return time.perf_counter() - t, out


def run_case(m, work, case, rule, rows):
    files = {lib_: work / f"m.{lib_}.{'npy' if lib_ == 'npy' else 'b2nd'}"
             for lib_ in ("strata", "blosc2", "npy")}
    # python-blosc2's defaults for this matrix and codec (the "peer" partitions).
    peer = None
    if rule == "peer":
        blosc2_save(m, files["blosc2"], case, None)
        a = blosc2.open(str(files["blosc2"]))
        peer = (tuple(a.chunks), tuple(a.blocks))
        del a
    parts_strata = peer
    parts_blosc2 = None
    saves = {
        "strata": lambda: strata_save(m, files["strata"], case, parts_strata, SYNC_NONE),
        "blosc2": lambda: blosc2_save(m, files["blosc2"], case, parts_blosc2),
        "npy": lambda: np.save(files["npy"], m),
    }
    loads = {
        "strata": lambda: strata_load(files["strata"], m.shape),
        "blosc2": lambda: blosc2_load(files["blosc2"]),
        "npy": lambda: np.load(files["npy"]),
    }
    t = {k: {lib_: [] for lib_ in saves} for k in ("save", "save_sync", "warm", "cold")}
    libs = list(saves)
    for r in range(args.rounds):
        order = libs[r % 3:] + libs[:r % 3]
        for lib_ in order:
            dt, _ = timed(saves[lib_])
            t["save"][lib_].append(dt)
            dt, out = timed(loads[lib_])
            t["warm"][lib_].append(dt)
            if r == 0 and not np.array_equal(out, m):
                raise SystemExit(f"{lib_}'s load differs from the matrix ({case['name']})")
            del out
            drop(files[lib_])
            dt, out = timed(loads[lib_])
            t["cold"][lib_].append(dt)
            if r == 0 and not np.array_equal(out, m):
                raise SystemExit(f"{lib_}'s cold load differs from the matrix")
            del out
        dt, _ = timed(lambda: strata_save(m, files["strata"], case, parts_strata, SYNC_ON_CLOSE))
        t["save_sync"]["strata"].append(dt)
    sizes = {lib_: files[lib_].stat().st_size for lib_ in libs}
    a = blosc2.open(str(files["blosc2"]))
    b2_parts = (tuple(a.chunks), tuple(a.blocks))
    del a
    med = lambda v: statistics.median(v)  # noqa: E731
    spread = lambda v: (min(v), max(v))  # noqa: E731
    row = {
        "case": case["name"], "partitions": rule,
        "strata_partitions": "python-blosc2's" if peer else "Strata's default",
        "blosc2_partitions": f"{b2_parts[0]} / {b2_parts[1]}",
        "sizes_bytes": sizes,
        "save_s": {k: med(v) for k, v in t["save"].items()},
        "save_spread_s": {k: spread(v) for k, v in t["save"].items()},
        "strata_save_fsync_s": med(t["save_sync"]["strata"]),
        "warm_s": {k: med(v) for k, v in t["warm"].items()},
        "cold_s": {k: med(v) for k, v in t["cold"].items()},
        "load": loadavg(),
    }
    if rule == "peer" and sizes["strata"] != sizes["blosc2"]:
        row["size_mismatch"] = True
    rows.append(row)
    s, w, c = row["save_s"], row["warm_s"], row["cold_s"]
    mb = {k: v / 1e6 for k, v in sizes.items()}
    print(f"{case['name']:<17} {rule:<4} save  strata {s['strata']:6.2f} s (fsync "
          f"{row['strata_save_fsync_s']:5.2f})  blosc2 {s['blosc2']:6.2f}  npy {s['npy']:6.2f}"
          f"  x{s['blosc2'] / s['strata']:4.2f}", flush=True)
    print(f"{'':<22} warm  strata {w['strata']:6.2f} s               blosc2 {w['blosc2']:6.2f}"
          f"  npy {w['npy']:6.2f}  x{w['blosc2'] / w['strata']:4.2f}", flush=True)
    print(f"{'':<22} cold  strata {c['strata']:6.2f} s               blosc2 {c['blosc2']:6.2f}"
          f"  npy {c['npy']:6.2f}  x{c['blosc2'] / c['strata']:4.2f}", flush=True)
    print(f"{'':<22} MB    strata {mb['strata']:8.2f}  blosc2 {mb['blosc2']:8.2f}  npy "
          f"{mb['npy']:8.2f}   python-blosc2 partitions {row['blosc2_partitions']}; "
          f"load {row['load']}", flush=True)
    for f in files.values():
        f.unlink(missing_ok=True)


def main():
    shape = (1000, 8000) if args.quick else (1000, 125000)
    print(f"matrix {shape} float64 ({shape[0] * shape[1] * 8 / 1e6:.0f} MB), {args.rounds} "
          f"rounds, {args.nthreads} threads, python-blosc2 {blosc2.__version__} (C-Blosc2 "
          f"{blosc2.VERSION_STRING}); "
          f"cold reads: {'drop_caches' if DROP_ALL else 'posix_fadvise(DONTNEED)'}; "
          f"load {loadavg()}", flush=True)
    m = field(shape)
    rows = []
    with tempfile.TemporaryDirectory(dir=args.workdir) as d:
        work = Path(d)
        picked = [CASES[int(k)] for k in args.cases.split(",")] if args.cases else CASES
        for case in picked:
            for rule in args.rules.split(","):
                run_case(m, work, case, rule, rows)
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))
    if any(r.get("size_mismatch") for r in rows):
        raise SystemExit("equal parameters gave files of different sizes")


if __name__ == "__main__":
    main()
