"""Strata against C-Blosc2 on the same data and parameters, side by side.

Usage: vs_cblosc2.py --strata BIN [--chunk-bytes N] [--runs N] FILE.npy...

Each file is split into chunks of --chunk-bytes held in memory. For every configuration both
sides compress and decompress all chunks on one thread: one warm-up pass, then the median of
--runs passes. Strata's numbers come from `strata bench --json`; C-Blosc2's from timing
python-blosc2's compress2/decompress2 in this process (blosc2.set_nthreads(1)). Speeds are GB/s
(10^9 bytes) of uncompressed data. The round trip is checked across the two: the first chunk
compressed by Strata decompresses in C-Blosc2, and C-Blosc2's decompresses in Strata.

Exit status 1 if any round trip fails.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import blosc2
import numpy as np

# (codec, filter, clevel)
CONFIGS = [
    ("blosclz", "shuffle", 5),
    ("lz4", "shuffle", 5),
    ("zstd", "shuffle", 5),
    ("zlib", "shuffle", 5),
    ("zstd", "bitshuffle", 5),
]


def cparams(codec: str, filt: str, clevel: int, typesize: int) -> dict:
    return {
        "codec": getattr(blosc2.Codec, codec.upper()),
        "clevel": clevel,
        "typesize": typesize,
        "filters": [getattr(blosc2.Filter, filt.upper())],
        "filters_meta": [0],
        "splitmode": blosc2.SplitMode.FORWARD_COMPAT_SPLIT,
        "nthreads": 1,
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


def cblosc2_bench(chunks: list[bytes], params: dict, runs: int) -> dict:
    compressed: list[bytes] = []

    def compress_all() -> None:
        compressed[:] = [blosc2.compress2(c, **params) for c in chunks]

    ctime = time_median(compress_all, runs)
    scratch = bytearray(max(len(c) for c in chunks))
    for chunk, comp in zip(chunks, compressed):
        n = len(chunk)
        blosc2.decompress2(comp, dst=scratch)
        if scratch[:n] != chunk:
            raise SystemExit("C-Blosc2 does not give its own input back")

    def decompress_all() -> None:
        for comp in compressed:
            blosc2.decompress2(comp, dst=scratch)

    dtime = time_median(decompress_all, runs)
    nbytes = sum(map(len, chunks))
    return {
        "cbytes": sum(map(len, compressed)),
        "compress_gbps": nbytes / ctime / 1e9,
        "decompress_gbps": nbytes / dtime / 1e9,
    }


def strata_bench(strata: str, path: Path, codec: str, filt: str, clevel: int, chunk_bytes: int, runs: int) -> dict:
    args = [strata, "bench", str(path), "--json", "--codec", codec, "--filter", filt, "--clevel", str(clevel)]
    args += ["--chunk-bytes", str(chunk_bytes), "--runs", str(runs)]
    out = subprocess.run(args, check=True, capture_output=True, text=True).stdout
    return json.loads(out.splitlines()[0])


def cross_round_trip(strata: str, chunk: bytes, params: dict, codec: str, filt: str, clevel: int) -> bool:
    """Strata's chunk decodes in C-Blosc2 and C-Blosc2's in Strata, both to `chunk`."""
    with tempfile.TemporaryDirectory() as tmp:
        raw, ours, theirs, back = (Path(tmp) / n for n in ("in.raw", "s.b2", "c.b2", "back.raw"))
        raw.write_bytes(chunk)
        subprocess.run(
            [strata, "chunk", "compress", "--codec", codec, "--filter", filt, "--clevel", str(clevel),
             "--typesize", str(params["typesize"]), raw, ours],
            check=True,
        )
        theirs.write_bytes(blosc2.compress2(chunk, **params))
        subprocess.run([strata, "chunk", "decompress", theirs, back], check=True)
        return blosc2.decompress2(ours.read_bytes()) == chunk and back.read_bytes() == chunk


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--strata", required=True, help="the strata binary")
    ap.add_argument("--chunk-bytes", type=int, default=4 << 20)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("files", nargs="+", type=Path)
    args = ap.parse_args()
    blosc2.set_nthreads(1)

    print(f"C-Blosc2 {blosc2.blosclib_version.split()[0]} (python-blosc2 {blosc2.__version__}); one thread, "
          f"{args.chunk_bytes} B chunks, median of {args.runs} runs after a warm-up; GB/s of uncompressed data")
    all_ok = True
    for path in args.files:
        arr = np.load(path)
        data = arr.tobytes()
        chunks = [data[i : i + args.chunk_bytes] for i in range(0, len(data), args.chunk_bytes)]
        print(f"\n{path.name}: {arr.dtype} {arr.shape}, {len(data)} bytes, {len(chunks)} chunks")
        print(f"{'codec':<8} {'filter':<11} {'clevel':>6} │ {'cbytes Strata':>13} {'C-Blosc2':>10} "
              f"{'cratio S':>8} {'C':>6} │ {'comp GB/s S':>11} {'C':>6} {'S/C':>5} │ "
              f"{'decomp GB/s S':>13} {'C':>6} {'S/C':>5} │ round trip")
        for codec, filt, clevel in CONFIGS:
            params = cparams(codec, filt, clevel, arr.itemsize)
            ours = strata_bench(args.strata, path, codec, filt, clevel, args.chunk_bytes, args.runs)
            theirs = cblosc2_bench(chunks, params, args.runs)
            ok = cross_round_trip(args.strata, chunks[0], params, codec, filt, clevel)
            all_ok &= ok
            print(f"{codec:<8} {filt:<11} {clevel:>6} │ {ours['cbytes']:>13} {theirs['cbytes']:>10} "
                  f"{len(data) / ours['cbytes']:>8.2f} {len(data) / theirs['cbytes']:>6.2f} │ "
                  f"{ours['compress_gbps']:>11.3f} {theirs['compress_gbps']:>6.3f} "
                  f"{ours['compress_gbps'] / theirs['compress_gbps']:>5.2f} │ "
                  f"{ours['decompress_gbps']:>13.3f} {theirs['decompress_gbps']:>6.3f} "
                  f"{ours['decompress_gbps'] / theirs['decompress_gbps']:>5.2f} │ {'ok' if ok else 'FAILED'}")
    return 0 if all_ok else 1


if __name__ == "__main__":
    sys.exit(main())
