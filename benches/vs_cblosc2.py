"""Strata against C-Blosc2 on the same data and parameters, side by side.

Usage: vs_cblosc2.py --strata BIN [--chunk-bytes N...] [--nthreads N...] [--sweep NAME]
                     [--runs N] FILE.npy...

Each file is split into chunks of --chunk-bytes held in memory. For every configuration both
sides compress and decompress all chunks with the same number of threads: one warm-up pass,
then the median of --runs passes. Strata's numbers come from `strata bench --json`; C-Blosc2's
from timing python-blosc2's compress2/decompress2 in this process. Speeds are GB/s (10^9
bytes) of uncompressed data; "memcpy" is a plain copy of the same chunks, the ceiling. The
round trip is checked across the two: the first chunk compressed by Strata decompresses in
C-Blosc2, and C-Blosc2's decompresses in Strata.

Sweeps (--sweep): "main" (default: five codec/filter pairs at clevel 5), "threads" (lz4,
blosclz and zstd with shuffle and bitshuffle: the scheduler's comparison).

Exit status 1 if any round trip fails.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

import blosc2
import numpy as np

# The interop suite's bridge to C-Blosc2 and the strata CLI: the same parameters on both sides.
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "interop"))
from helpers import FILTER_SETS, Params, Strata, StrataError  # noqa: E402

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


def time_median(work, runs: int) -> float:
    """Seconds of the median of `runs` calls of `work`, after one warm-up call."""
    work()
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        work()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def memcpy_gbps(chunks: list[bytes], runs: int) -> float:
    """GB/s of copying the chunks into a preallocated buffer, the ceiling for decompression."""
    scratch = bytearray(max(len(c) for c in chunks))
    views = [memoryview(c) for c in chunks]

    def copy_all() -> None:
        for v in views:
            scratch[: len(v)] = v

    return sum(map(len, chunks)) / time_median(copy_all, runs) / 1e9


def cblosc2_bench(chunks: list[bytes], params: dict, nthreads: int, runs: int) -> dict:
    compressed: list[bytes] = []
    params = {**params, "nthreads": nthreads}
    dparams = blosc2.DParams(nthreads=nthreads)

    def compress_all() -> None:
        compressed[:] = [blosc2.compress2(c, **params) for c in chunks]

    ctime = time_median(compress_all, runs)
    scratch = bytearray(max(len(c) for c in chunks))
    for chunk, comp in zip(chunks, compressed):
        n = len(chunk)
        blosc2.decompress2(comp, dst=scratch, dparams=dparams)
        if scratch[:n] != chunk:
            raise SystemExit("C-Blosc2 does not give its own input back")

    def decompress_all() -> None:
        for comp in compressed:
            blosc2.decompress2(comp, dst=scratch, dparams=dparams)

    dtime = time_median(decompress_all, runs)
    nbytes = sum(map(len, chunks))
    return {
        "cbytes": sum(map(len, compressed)),
        "compress_gbps": nbytes / ctime / 1e9,
        "decompress_gbps": nbytes / dtime / 1e9,
    }


def strata_bench(
    strata: Strata, path: Path, codec: str, filt: str, clevel: int, chunk_bytes: int, nthreads: int, runs: int
) -> dict:
    out = strata.output(
        "bench", path, "--json", "--codec", codec, "--filter", filt, "--clevel", str(clevel),
        "--chunk-bytes", str(chunk_bytes), "--nthreads", str(nthreads), "--runs", str(runs),
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


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--strata", required=True, help="the strata binary")
    ap.add_argument("--chunk-bytes", type=int, nargs="+", default=[4 << 20])
    ap.add_argument("--nthreads", type=int, nargs="+", default=[1])
    ap.add_argument("--sweep", choices=sorted(SWEEPS), default="main")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("files", nargs="+", type=Path)
    args = ap.parse_args()
    scratch = tempfile.TemporaryDirectory()
    strata = Strata(Path(args.strata), Path(scratch.name))

    print(f"C-Blosc2 {blosc2.blosclib_version.split()[0]} (python-blosc2 {blosc2.__version__}); "
          f"median of {args.runs} runs after a warm-up; GB/s of uncompressed data; S = Strata, C = C-Blosc2")
    all_ok = True
    ratios: tuple[list[float], list[float]] = ([], [])
    for path in args.files:
        arr = np.load(path)
        data = arr.tobytes()
        for chunk_bytes in args.chunk_bytes:
            chunks = [data[i : i + chunk_bytes] for i in range(0, len(data), chunk_bytes)]
            print(f"\n{path.name}: {arr.dtype} {arr.shape}, {len(data)} bytes, {len(chunks)} chunks of "
                  f"{chunk_bytes} B; memcpy {memcpy_gbps(chunks, args.runs):.2f} GB/s")
            print(f"{'codec':<8} {'filter':<11} {'clevel':>6} {'thr':>3} │ {'cbytes Strata':>13} {'C-Blosc2':>10} "
                  f"{'cratio S':>8} {'C':>6} │ {'comp GB/s S':>11} {'C':>6} {'S/C':>5} │ "
                  f"{'decomp GB/s S':>13} {'C':>6} {'S/C':>5} │ round trip, same bytes")
            for codec, filt, clevel in SWEEPS[args.sweep]:
                p = Params(codec, clevel, arr.itemsize, FILTER_SETS[filt])
                ok, same = cross_round_trip(strata, chunks[0], p)
                all_ok &= ok
                for nthreads in args.nthreads:
                    ours = strata_bench(strata, path, codec, filt, clevel, chunk_bytes, nthreads, args.runs)
                    theirs = cblosc2_bench(chunks, p.cparams(), nthreads, args.runs)
                    print(f"{codec:<8} {filt:<11} {clevel:>6} {nthreads:>3} │ {ours['cbytes']:>13} "
                          f"{theirs['cbytes']:>10} {len(data) / ours['cbytes']:>8.2f} "
                          f"{len(data) / theirs['cbytes']:>6.2f} │ "
                          f"{ours['compress_gbps']:>11.3f} {theirs['compress_gbps']:>6.3f} "
                          f"{ours['compress_gbps'] / theirs['compress_gbps']:>5.2f} │ "
                          f"{ours['decompress_gbps']:>13.3f} {theirs['decompress_gbps']:>6.3f} "
                          f"{ours['decompress_gbps'] / theirs['decompress_gbps']:>5.2f} │ "
                          f"{'ok' if ok else 'FAILED'}, {'yes' if same else 'no'}")
                    ratios[0].append(ours["compress_gbps"] / theirs["compress_gbps"])
                    ratios[1].append(ours["decompress_gbps"] / theirs["decompress_gbps"])
    print(f"\nStrata / C-Blosc2, geometric mean over {len(ratios[0])} rows: compression "
          f"{statistics.geometric_mean(ratios[0]):.2f}, decompression {statistics.geometric_mean(ratios[1]):.2f}; "
          f"round trips {'all ok' if all_ok else 'FAILED'}")
    return 0 if all_ok else 1


if __name__ == "__main__":
    sys.exit(main())
