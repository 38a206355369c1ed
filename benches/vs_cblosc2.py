"""Strata against C-Blosc2 on the same data and parameters, side by side, in alternating rounds.

Usage: vs_cblosc2.py --strata BIN [--chunksize N[,N...]] [--nthreads N[,N...]] [--sweep NAME]
                     [--rounds R] [--runs K] FILE.npy...

Each file is split into chunks of --chunksize held in memory. For every configuration and
thread count the two sides run --rounds rounds, in alternating order (Strata first in even
rounds, C-Blosc2 first in odd ones); in each round a side compresses and decompresses all
chunks --runs times after one warm-up pass and reports its median pass. The table gives the
median over the rounds and, in brackets, the spread (lowest to highest round).

Both sides hold their state as a program that cares about speed does:
- Strata: `strata bench --json`, one process per round, with one decompression context
  (`Context::global`) and compressed and decompressed buffers allocated once and reused.
- C-Blosc2: the C library that python-blosc2 ships, called through ctypes: one compression and
  one decompression context per thread count (`blosc2_create_cctx`/`blosc2_create_dctx`,
  created once, so the thread pool at 2 threads is created once), `blosc2_compress_ctx` and
  `blosc2_decompress_ctx` into buffers allocated and touched once. (python-blosc2's
  `compress2`/`decompress2` build a new context, and at 2 threads a new pool, on every call:
  not what a user who holds an SChunk pays.)

Speeds are GB/s (10^9 bytes) of uncompressed data. Two copies bound decompression from above:
"memcpy block" copies one 256 KiB block between two buffers that stay in cache (what a block
decoder's last write can at best do per thread), "memcpy stream" copies the whole file into a
buffer touched before (a large streaming copy on one thread, what decompressing into memory
at best does per thread). The load average (`os.getloadavg`) is printed before and after every
configuration: numbers taken with a load above the number of cores are unreliable, and the
summary says so.

The round trip is checked across the two on the first chunk: Strata's chunk decompresses in
C-Blosc2, C-Blosc2's in Strata, and the last column tells whether the two chunks are the same
bytes (on one thread C-Blosc2 is reproducible). Sweeps (--sweep): "main" (default: five
codec/filter pairs at clevel 5), "threads" (lz4, blosclz and zstd with shuffle and bitshuffle).

Exit status 1 if any round trip fails.
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

import blosc2
import numpy as np

# The interop suite's bridge to C-Blosc2 and the strata CLI: the same parameters on both sides.
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "interop"))
from helpers import FILTER_IDS, FILTER_SETS, SPLITMODES, Params, Strata, StrataError  # noqa: E402

# (codec, filter, clevel) per sweep
SWEEPS = {
    "main": [
        ("blosclz", "shuffle", 5),
        ("lz4", "shuffle", 5),
        ("zstd", "shuffle", 5),
        ("zlib", "shuffle", 5),
        ("zstd", "bitshuffle", 5),
    ],
    "threads": [(c, f, 5) for c in ("lz4", "blosclz", "zstd") for f in ("shuffle", "bitshuffle")],
}
MAX_FILTERS = 6
OVERHEAD = 32  # BLOSC2_MAX_OVERHEAD: the extended header
BLOCK_COPY = 256 << 10


class CParams(ctypes.Structure):
    """C-Blosc2's `blosc2_cparams`, field by field as its header declares it."""

    _fields_ = [
        ("compcode", ctypes.c_uint8),
        ("compcode_meta", ctypes.c_uint8),
        ("clevel", ctypes.c_uint8),
        ("use_dict", ctypes.c_int),
        ("typesize", ctypes.c_int32),
        ("nthreads", ctypes.c_int16),
        ("blocksize", ctypes.c_int32),
        ("splitmode", ctypes.c_int32),
        ("schunk", ctypes.c_void_p),
        ("filters", ctypes.c_uint8 * MAX_FILTERS),
        ("filters_meta", ctypes.c_uint8 * MAX_FILTERS),
        ("prefilter", ctypes.c_void_p),
        ("preparams", ctypes.c_void_p),
        ("tuner_params", ctypes.c_void_p),
        ("tuner_id", ctypes.c_int),
        ("instr_codec", ctypes.c_bool),
        ("codec_params", ctypes.c_void_p),
        ("filter_params", ctypes.c_void_p * MAX_FILTERS),
    ]


class DParams(ctypes.Structure):
    """C-Blosc2's `blosc2_dparams`."""

    _fields_ = [
        ("nthreads", ctypes.c_int16),
        ("schunk", ctypes.c_void_p),
        ("postfilter", ctypes.c_void_p),
        ("postparams", ctypes.c_void_p),
        ("typesize", ctypes.c_int32),
    ]


def load_cblosc2() -> ctypes.CDLL:
    """The C-Blosc2 shared library python-blosc2 runs on (already loaded in this process)."""
    lib = ctypes.CDLL(str(Path(blosc2.__file__).parent / "lib" / "libblosc2.so"))
    lib.blosc2_init()
    lib.blosc2_get_blosc2_cparams_defaults.restype = CParams
    lib.blosc2_get_blosc2_dparams_defaults.restype = DParams
    lib.blosc2_create_cctx.argtypes = [CParams]
    lib.blosc2_create_cctx.restype = ctypes.c_void_p
    lib.blosc2_create_dctx.argtypes = [DParams]
    lib.blosc2_create_dctx.restype = ctypes.c_void_p
    lib.blosc2_free_ctx.argtypes = [ctypes.c_void_p]
    for f in (lib.blosc2_compress_ctx, lib.blosc2_decompress_ctx):
        f.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int32, ctypes.c_void_p, ctypes.c_int32]
        f.restype = ctypes.c_int
    return lib


def address(buf: np.ndarray) -> int:
    return buf.ctypes.data


class CBlosc2:
    """One compression and one decompression context of C-Blosc2 for a configuration, with the
    compressed chunks and the output buffer they reuse."""

    def __init__(self, lib: ctypes.CDLL, chunks: list[np.ndarray], p: Params, nthreads: int) -> None:
        self.lib, self.chunks = lib, chunks
        cp = lib.blosc2_get_blosc2_cparams_defaults()
        cp.compcode = getattr(blosc2.Codec, p.codec.upper()).value
        cp.clevel, cp.typesize, cp.nthreads = p.clevel, p.typesize, nthreads
        cp.blocksize, cp.splitmode, cp.use_dict = p.blocksize, SPLITMODES[p.splitmode].value, int(p.use_dict)
        for i in range(MAX_FILTERS):
            name, meta = p.filters[i] if i < len(p.filters) else ("noshuffle", None)
            cp.filters[i], cp.filters_meta[i] = FILTER_IDS[name].value, meta or 0
        dp = lib.blosc2_get_blosc2_dparams_defaults()
        dp.nthreads = nthreads
        self.cctx, self.dctx = lib.blosc2_create_cctx(cp), lib.blosc2_create_dctx(dp)
        if not self.cctx or not self.dctx:
            raise SystemExit("C-Blosc2 made no context")
        self.compressed = [np.ones(c.nbytes + OVERHEAD, np.uint8) for c in chunks]
        self.sizes = [0] * len(chunks)
        self.out = np.ones(max(c.nbytes for c in chunks), np.uint8)

    def close(self) -> None:
        self.lib.blosc2_free_ctx(self.cctx)
        self.lib.blosc2_free_ctx(self.dctx)

    def compress_all(self) -> None:
        for i, (c, dst) in enumerate(zip(self.chunks, self.compressed)):
            n = self.lib.blosc2_compress_ctx(self.cctx, address(c), c.nbytes, address(dst), dst.nbytes)
            if n <= 0:
                raise SystemExit(f"C-Blosc2 compression failed ({n})")
            self.sizes[i] = n

    def decompress_all(self) -> None:
        out, f, ctx = self.out, self.lib.blosc2_decompress_ctx, self.dctx
        for c, n in zip(self.compressed, self.sizes):
            if f(ctx, address(c), n, address(out), out.nbytes) < 0:
                raise SystemExit("C-Blosc2 decompression failed")

    def check(self) -> None:
        for chunk, comp, n in zip(self.chunks, self.compressed, self.sizes):
            k = self.lib.blosc2_decompress_ctx(self.dctx, address(comp), n, address(self.out), self.out.nbytes)
            if k != chunk.nbytes or not np.array_equal(self.out[:k], chunk):
                raise SystemExit("C-Blosc2 does not give its own input back")

    def round(self, runs: int) -> dict:
        """One round: the median pass of `runs` each way, after a warm-up pass."""
        ctime = median_time(self.compress_all, runs)
        self.check()
        dtime = median_time(self.decompress_all, runs)
        nbytes = sum(c.nbytes for c in self.chunks)
        return {"cbytes": sum(self.sizes), "compress_gbps": nbytes / ctime / 1e9,
                "decompress_gbps": nbytes / dtime / 1e9}


def median_time(work, runs: int) -> float:
    """Seconds of the median of `runs` calls of `work`, after one warm-up call."""
    work()
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        work()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def memcpy_ceilings(data: np.ndarray, runs: int) -> tuple[float, float]:
    """GB/s of libc's memmove: one block copied between two buffers in cache (repeated so that
    a call's cost does not count), and the whole of `data` into a buffer touched before."""
    move = ctypes.memmove
    src, dst = np.ones(BLOCK_COPY, np.uint8), np.zeros(BLOCK_COPY, np.uint8)
    s, d = address(src), address(dst)
    reps = 400

    def blocks() -> None:
        for _ in range(reps):
            move(d, s, BLOCK_COPY)

    block = BLOCK_COPY * reps / median_time(blocks, runs) / 1e9
    out = np.ones_like(data)
    stream = data.nbytes / median_time(lambda: move(address(out), address(data), data.nbytes), runs) / 1e9
    return block, stream


def strata_round(strata: Strata, path: Path, codec: str, filt: str, clevel: int, chunksize: int,
                 nthreads: int, runs: int) -> dict:
    out = strata.output(
        "bench", path, "--json", "--codec", codec, "--filter", filt, "--clevel", str(clevel),
        "--chunksize", str(chunksize), "--nthreads", str(nthreads), "--runs", str(runs),
    )
    return json.loads(out.splitlines()[0])


def cross_round_trip(strata: Strata, chunk: bytes, p: Params) -> tuple[bool, bool]:
    """Whether Strata's chunk decodes in C-Blosc2 and C-Blosc2's in Strata, both to `chunk`;
    and whether the two chunks are the same bytes."""
    try:
        ours = strata.compress(chunk, p)
        theirs = blosc2.compress2(chunk, **p.cparams())
        ok = blosc2.decompress2(ours) == chunk and strata.decompress(theirs) == chunk
    except (StrataError, ValueError, RuntimeError) as e:
        print(f"round trip failed: {e}", file=sys.stderr)
        return False, False
    return ok, ours == theirs


def int_list(text: str) -> list[int]:
    return [int(v) for v in text.split(",")]


def spread(values: list[float]) -> str:
    return f"{statistics.median(values):.3f} [{min(values):.2f}-{max(values):.2f}]"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--strata", required=True, help="the strata binary")
    ap.add_argument("--chunksize", type=int_list, default=[4 << 20], help="bytes, comma-separated")
    ap.add_argument("--nthreads", type=int_list, default=[1], help="comma-separated")
    ap.add_argument("--sweep", choices=sorted(SWEEPS), default="main")
    ap.add_argument("--rounds", type=int, default=5, help="alternating rounds per configuration")
    ap.add_argument("--runs", type=int, default=3, help="timed passes per side and round")
    ap.add_argument("files", nargs="+", type=Path)
    args = ap.parse_args()
    scratch = tempfile.TemporaryDirectory()
    strata = Strata(Path(args.strata), Path(scratch.name))
    lib = load_cblosc2()
    cores = os.cpu_count() or 1

    print(f"C-Blosc2 {blosc2.blosclib_version.split()[0]} through ctypes, persistent contexts; "
          f"{args.rounds} alternating rounds, each the median of {args.runs} passes after a warm-up; "
          f"GB/s of uncompressed data, median [lowest-highest round]; S = Strata, C = C-Blosc2; "
          f"{cores} cores; load {os.getloadavg()[0]:.2f} at the start")
    all_ok = True
    ratios: tuple[list[float], list[float]] = ([], [])
    loads: list[float] = []
    for path in args.files:
        arr = np.load(path)
        data = np.ascontiguousarray(arr).view(np.uint8).reshape(-1)
        block, stream = memcpy_ceilings(data, 5)
        for chunksize in args.chunksize:
            chunks = [data[i : i + chunksize] for i in range(0, data.nbytes, chunksize)]
            print(f"\n{path.name}: {arr.dtype} {arr.shape}, {data.nbytes} bytes, {len(chunks)} chunks of "
                  f"{chunksize} B; memcpy block {block:.2f} GB/s, memcpy stream {stream:.2f} GB/s (one thread)")
            print(f"{'codec':<8} {'filter':<10} {'thr':>3} │ {'cratio S':>8} {'C':>6} │ "
                  f"{'comp GB/s S':>18} {'C':>18} {'S/C':>5} │ "
                  f"{'decomp GB/s S':>18} {'C':>18} {'S/C':>5} │ load      │ round trip, same bytes")
            for codec, filt, clevel in SWEEPS[args.sweep]:
                p = Params(codec, clevel, arr.itemsize, FILTER_SETS[filt])
                ok, same = cross_round_trip(strata, bytes(chunks[0]), p)
                all_ok &= ok
                for nthreads in args.nthreads:
                    load0 = os.getloadavg()[0]
                    peer = CBlosc2(lib, chunks, p, nthreads)
                    s_rounds, c_rounds = [], []
                    for r in range(args.rounds):
                        sides = [
                            lambda: s_rounds.append(
                                strata_round(strata, path, codec, filt, clevel, chunksize, nthreads, args.runs)),
                            lambda: c_rounds.append(peer.round(args.runs)),
                        ]
                        for side in sides if r % 2 == 0 else sides[::-1]:
                            side()
                    peer.close()
                    load1 = os.getloadavg()[0]
                    loads += [load0, load1]
                    sc = [s["compress_gbps"] for s in s_rounds]
                    cc = [c["compress_gbps"] for c in c_rounds]
                    sd = [s["decompress_gbps"] for s in s_rounds]
                    cd = [c["decompress_gbps"] for c in c_rounds]
                    rc = statistics.median(sc) / statistics.median(cc)
                    rd = statistics.median(sd) / statistics.median(cd)
                    print(f"{codec:<8} {filt:<10} {nthreads:>3} │ "
                          f"{data.nbytes / s_rounds[0]['cbytes']:>8.2f} {data.nbytes / c_rounds[0]['cbytes']:>6.2f} │ "
                          f"{spread(sc):>18} {spread(cc):>18} {rc:>5.2f} │ "
                          f"{spread(sd):>18} {spread(cd):>18} {rd:>5.2f} │ {load0:.2f}-{load1:.2f} │ "
                          f"{'ok' if ok else 'FAILED'}, {'yes' if same else 'no'}")
                    ratios[0].append(rc)
                    ratios[1].append(rd)
    print(f"\nStrata / C-Blosc2, geometric mean over {len(ratios[0])} rows: compression "
          f"{statistics.geometric_mean(ratios[0]):.2f}, decompression {statistics.geometric_mean(ratios[1]):.2f}; "
          f"round trips {'all ok' if all_ok else 'FAILED'}; load {os.getloadavg()[0]:.2f} at the end, "
          f"highest seen {max(loads):.2f}"
          + (f" (above {cores} cores: the ratios are unreliable)" if max(loads) > cores else ""))
    return 0 if all_ok else 1


if __name__ == "__main__":
    sys.exit(main())
