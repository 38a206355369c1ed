"""Hyperplane slicing of b2nd arrays: Strata against python-blosc2, h5py (Blosc2 filter) and zarr.

Usage: slicing.py [--quick] [--repeat R] [--rounds N] [--nthreads N] [--seed S] [--json OUT]
                  [--strata-bench PATH] [--workdir DIR]

What it measures. For each of the three shapes of the Caterva study (--quick: small shapes of
the same kind, for CI), one float64 array is written once per library with the same chunks,
LZ4 clevel 5 and shuffle. Then, for every axis k, R random indices i are drawn (the same for
every library) and each library reads the hyperplanes arr[:, ..., i, ..., :] (i at axis k) one by
one; each read is timed alone, from the call to a filled NumPy array (the output is allocated
by each read, as the libraries do), and the median per axis is reported. Every hyperplane read is
compared with NumPy's: a mismatch is an error (exit status 1).

The libraries:
- blosc2: python-blosc2 writes `SHAPE.b2nd` with `blosc2.asarray(..., chunks, blocks)`; read with
  `blosc2.open(path)[idx]` (C-Blosc2's b2nd_get_slice_cbuffer, which decompresses only the blocks
  the slice touches).
- strata: the example `slice_bench` reads the very same `.b2nd` file (same compressed bytes). It is
  run once per axis and round (interface below); when its binary is missing the table says
  "strata: not available" and no Strata number is shown.
- h5py: HDF5 with hdf5plugin's Blosc2 filter (ID 32026), the same chunks. HDF5 has no blocks of
  its own: the filter stores each chunk as a b2nd frame whose blockshape it chooses itself (recorded
  as h5py's "blockshape"), and h5py's reads go through the filter, which decompresses whole chunks.
- zarr: Zarr format 3 with its BloscCodec (numcodecs' Blosc, i.e. C-Blosc 1.x), the same chunks;
  C-Blosc chooses the blocksize (recorded).

Data. A smooth field with a little noise, deterministic (see `field`): the sum of one sine per
axis, a cross term, normal noise of 0.05 (PCG64, --seed), rounded to multiples of 1/1024 as
data measured to about three decimals are; values about 15 +- 30.

Same treatment for all:
- warm OS page cache: every library's file is read whole before the timed reads of each shape;
- the libraries take turns: the R indices of an axis are cut into --rounds parts (default 4), and
  each part is read by every library in turn, the order rotating from round to round, so that
  the load of a shared machine falls on all alike;
- each peer opens its file once per shape and makes one untimed read per axis before its timed
  reads; Strata's slice_bench runs once per axis and round, with one untimed read of its own;
- no library-level cache of chunks: h5py opens with rdcc_nbytes=0 (HDF5's chunk cache off),
  zarr's local store has none, python-blosc2 opens without cache_dir (it then has none);
- threads: --nthreads (default 1) for decompression everywhere: python-blosc2's dparams, the HDF5
  filter through BLOSC_NTHREADS (it reads C-Blosc2's defaults otherwise), zarr's thread pool
  (threading.max_workers; its C-Blosc decompresses each chunk on one thread), Strata's --nthreads;
- Python's garbage collector is off during timed reads.

Theory columns (from the geometry alone): how many chunks a hyperplane touches (all libraries),
how many b2nd blocks it touches (blocks outside the array, in edge chunks, do not count), and the
bytes each kind of reader must decompress: blocks x blocksize for b2nd readers, chunks x chunk
bytes for h5py and zarr. Strata reports the blocks it actually decompressed; a count different
from the theory is an error.

Strata's side, `slice_bench` (built by `cargo build --release --example slice_bench`):

    slice_bench FILE.b2nd --axis K --indices I1,I2,... [--nthreads N] [--warmup W] [--dump OUT]

opens FILE once (untimed), makes W untimed reads (default 1) of the hyperplane at I1, then reads
the hyperplane at each index in order, timing each read alone (output allocated per read). It
prints one line of JSON on stdout:

    {"axis": K, "indices": [I1, ...], "times_s": [t1, ...], "median_s": M,
     "blocks_decompressed": [b1, ...], "chunks_touched": [c1, ...], "nthreads": N}

where times_s, blocks_decompressed (counted by the engine as it decompresses) and chunks_touched
have one entry per index, in order. With --dump it also writes the hyperplanes of the timed reads,
concatenated in index order, each as its items in C order, in the array's dtype, little-endian, no
header. Errors: a message on stderr and a non-zero exit status.

Exit status 1 if any read differs from NumPy, Strata fails, or its block counts differ from the
theory.
"""

from __future__ import annotations

import argparse
import gc
import json
import math
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DEFAULT_STRATA_BENCH = Path(os.environ.get("STRATA_SLICE_BENCH", REPO / "target" / "release" / "examples" / "slice_bench"))
PEERS = ("blosc2", "h5py", "zarr")
LIBRARIES = ("strata", *PEERS)
CLEVEL = 5
QUANTUM = 1 / 1024
NOISE = 0.05
SLAB_ITEMS = 1 << 23  # the field is made slab by slab along axis 0, ~64 MiB at a time


@dataclass(frozen=True)
class Case:
    """One array: shape, chunkshape and blockshape (elements, C order), float64."""

    shape: tuple[int, ...]
    chunks: tuple[int, ...]
    blocks: tuple[int, ...]

    @property
    def name(self) -> str:
        return "x".join(map(str, self.shape))

    @property
    def itemsize(self) -> int:
        return 8

    @property
    def nbytes(self) -> int:
        return math.prod(self.shape) * self.itemsize

    @property
    def extchunks(self) -> tuple[int, ...]:
        """The chunkshape rounded up to whole blocks, as b2nd stores chunks (docs/b2nd.md)."""
        return tuple(-(-c // b) * b for c, b in zip(self.chunks, self.blocks))


# The three shapes of the Caterva study.
FULL = [
    Case((8000, 8000), (4000, 100), (500, 25)),
    Case((800, 600, 300), (200, 100, 80), (20, 100, 10)),
    Case((400, 80, 100, 50), (100, 40, 10, 50), (30, 5, 2, 10)),
]
# Small ones of the same kind, for CI: blocks much smaller than chunks along some axes, edge
# chunks (a shape not a multiple of its chunk) and padded chunks (a chunk not a multiple of its
# block) included.
QUICK = [
    Case((240, 240), (120, 40), (30, 10)),
    Case((80, 60, 30), (40, 20, 16), (4, 20, 2)),
    Case((40, 16, 20, 10), (20, 8, 5, 10), (6, 2, 2, 5)),
]


def field(shape: tuple[int, ...], seed: int = 0):
    """The benchmark's data, float64 of `shape`: with x_k = i_k / shape[k] in [0, 1),

        15 + sum_k 8 sin(2 pi (1.5 + k) x_k + 0.7 k)
           + 3 sin(2 pi (5 x_0 + 3 x_last)) cos(2 pi 7 x_1) + 0.05 N(0, 1),

    rounded to a multiple of 1/1024. The noise is drawn in C order from PCG64(seed), so the
    array depends only on `shape` and `seed`."""
    import numpy as np

    out = np.empty(shape, dtype=np.float64)
    ndim = len(shape)
    rng = np.random.default_rng(seed)
    rows = max(1, SLAB_ITEMS // max(1, math.prod(shape[1:])))
    for start in range(0, shape[0], rows):
        stop = min(shape[0], start + rows)
        x = [np.arange(start, stop) / shape[0]] + [np.arange(n) / n for n in shape[1:]]
        x = [v.reshape([-1 if d == k else 1 for d in range(ndim)]) for k, v in enumerate(x)]
        v = np.full((stop - start, *shape[1:]), 15.0)
        for k, xk in enumerate(x):
            v += 8 * np.sin(2 * np.pi * (1.5 + k) * xk + 0.7 * k)
        v += 3 * np.sin(2 * np.pi * (5 * x[0] + 3 * x[-1])) * np.cos(2 * np.pi * 7 * x[1])
        v += NOISE * rng.standard_normal(v.shape)
        out[start:stop] = np.round(v / QUANTUM) * QUANTUM
    return out


def hyperplane_key(ndim: int, axis: int, index: int) -> tuple:
    """The key of arr[:, ..., index, ..., :] with `index` at `axis`."""
    return tuple(index if d == axis else slice(None) for d in range(ndim))


def draw_indices(case: Case, axis: int, repeat: int, seed: int) -> list[int]:
    """`repeat` random indices along `axis`, the same for every library (distinct when possible)."""
    import numpy as np

    rng = np.random.default_rng([seed, len(case.shape), axis])
    n = case.shape[axis]
    return [int(i) for i in rng.choice(n, size=repeat, replace=repeat > n)]


def theory(case: Case, axis: int) -> dict:
    """What one hyperplane along `axis` touches, from the geometry: chunks, b2nd blocks (those
    inside the array only, as C-Blosc2 skips the others) and bytes to decompress."""
    nchunks = 1
    nblocks = 1
    for d, (n, c, b) in enumerate(zip(case.shape, case.chunks, case.blocks)):
        if d == axis:
            continue
        nchunks *= -(-n // c)
        nblocks *= sum(-(-min(c, n - start) // b) for start in range(0, n, c))
    blocksize = math.prod(case.blocks) * case.itemsize
    chunk_bytes = math.prod(case.chunks) * case.itemsize
    return {
        "chunks": nchunks,
        "b2nd_blocks": nblocks,
        "b2nd_bytes": nblocks * blocksize,
        "chunked_bytes": nchunks * chunk_bytes,
        "hyperplane_bytes": math.prod(n for d, n in enumerate(case.shape) if d != axis) * case.itemsize,
    }


def dir_bytes(path: Path) -> int:
    if path.is_file():
        return path.stat().st_size
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def warm(path: Path) -> None:
    """Read every byte of `path` (a file or a directory tree) so that it is in the page cache."""
    files = [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.is_file())
    for f in files:
        with open(f, "rb") as fh:
            while fh.read(1 << 24):
                pass


# ---------------------------------------------------------------------------------------------
# Writers: one per peer; each returns what it records about its file.


def write_blosc2(case: Case, arr, path: Path) -> dict:
    import blosc2

    cparams = {
        "codec": blosc2.Codec.LZ4,
        "clevel": CLEVEL,
        "filters": [blosc2.Filter.SHUFFLE],
        "filters_meta": [0],
        "typesize": case.itemsize,
        "nthreads": os.cpu_count() or 1,
    }
    a = blosc2.asarray(arr, urlpath=str(path), mode="w", chunks=case.chunks, blocks=case.blocks, cparams=cparams)
    info = {
        "file": path.name,
        "file_bytes": dir_bytes(path),
        "cbytes": int(a.schunk.cbytes),
        "blockshape": list(a.blocks),
        "blocksize": int(a.schunk.blocksize),
        "splitmode": a.schunk.cparams.splitmode.name,
    }
    del a
    return info


def write_h5py(case: Case, arr, path: Path) -> dict:
    import blosc2
    import h5py
    import hdf5plugin

    compression = hdf5plugin.Blosc2(cname="lz4", clevel=CLEVEL, filters=hdf5plugin.Blosc2.SHUFFLE)
    with h5py.File(path, "w") as f:
        f.create_dataset("data", data=arr, chunks=case.chunks, **compression)
    with h5py.File(path, "r") as f:
        ds = f["data"]
        filter_mask, chunk0 = ds.id.read_direct_chunk((0,) * arr.ndim)
        cbytes = int(ds.id.get_storage_size())
    # Every HDF5 chunk is a b2nd frame; the filter chose its blockshape, and
    # the chunk is padded to whole blocks.
    inner = blosc2.ndarray_from_cframe(chunk0)
    padded = Case(case.chunks, case.chunks, tuple(inner.blocks)).extchunks
    return {
        "file": path.name,
        "file_bytes": dir_bytes(path),
        "cbytes": cbytes,
        "filter_options": list(compression["compression_opts"]),
        "blockshape": list(inner.blocks),
        "blocksize": int(inner.schunk.blocksize),
        "padded_chunk": list(padded),
        "padded_chunk_factor": math.prod(padded) / math.prod(case.chunks),
        "chunk0_filter_mask": int(filter_mask),
    }


def write_zarr(case: Case, arr, path: Path) -> dict:
    import zarr
    from zarr.codecs import BloscCodec

    z = zarr.create_array(
        store=str(path),
        shape=arr.shape,
        chunks=case.chunks,
        dtype=arr.dtype,
        compressors=[BloscCodec(cname="lz4", clevel=CLEVEL, shuffle="shuffle")],
        zarr_format=3,
        fill_value=0.0,
        overwrite=True,
    )
    z[...] = arr
    chunk_files = sorted(p for p in (path / "c").rglob("*") if p.is_file())
    # C-Blosc 1.x header: nbytes, blocksize, cbytes at bytes 4, 8, 12 (little-endian u32).
    head = chunk_files[0].read_bytes()[:16]
    return {
        "file": path.name,
        "file_bytes": dir_bytes(path),
        "cbytes": sum(p.stat().st_size for p in chunk_files),
        "zarr_format": 3,
        "blocksize": int.from_bytes(head[8:12], "little"),
        "chunk_files": len(chunk_files),
    }


WRITERS = {"blosc2": (write_blosc2, ".b2nd"), "h5py": (write_h5py, ".h5"), "zarr": (write_zarr, ".zarr")}


# ---------------------------------------------------------------------------------------------
# Readers: open once, then timed hyperplane reads.


def open_peer(lib: str, path: Path, nthreads: int):
    """The open array of `lib` at `path`, and what closes it."""
    if lib == "blosc2":
        import blosc2

        a = blosc2.open(str(path), mode="r", dparams={"nthreads": nthreads})
        return a, lambda: None
    if lib == "h5py":
        import h5py
        import hdf5plugin  # noqa: F401  (registers the Blosc2 filter with HDF5)

        f = h5py.File(path, "r", rdcc_nbytes=0)
        return f["data"], f.close
    if lib == "zarr":
        import zarr

        return zarr.open_array(str(path), mode="r"), lambda: None
    raise ValueError(lib)


def read_peer(a, axis: int, indices: list[int], arr) -> dict:
    """Timed reads by a peer's open array `a` of the hyperplanes at `indices`: the seconds of each,
    and the indices whose hyperplane differs from NumPy's."""
    import numpy as np

    times, mismatches = [], []
    for i in indices:
        key = hyperplane_key(arr.ndim, axis, i)
        gc.disable()
        start = time.perf_counter()
        got = a[key]
        elapsed = time.perf_counter() - start
        gc.enable()
        times.append(elapsed)
        if not (isinstance(got, np.ndarray) and got.dtype == arr.dtype and np.array_equal(got, arr[key])):
            mismatches.append(i)
    return {"times_s": times, "mismatches": mismatches}


class StrataFailed(Exception):
    """Strata's slice_bench failed or answered off its interface."""


def read_strata(binary: Path, path: Path, case: Case, axis: int, indices: list[int], arr, nthreads: int,
                scratch: Path) -> dict:
    """One run of Strata's slice_bench on `path` (the `.b2nd` python-blosc2 wrote): its times, the
    indices whose dumped hyperplane differs from NumPy's, and the blocks and chunks it says it
    decompressed and touched. StrataFailed if it fails or answers off the interface."""
    import numpy as np

    dump = scratch / f"strata-{case.name}-axis{axis}.raw"
    cmd = [str(binary), str(path), "--axis", str(axis), "--indices", ",".join(map(str, indices)),
           "--nthreads", str(nthreads), "--warmup", "1", "--dump", str(dump)]
    try:
        res = subprocess.run(cmd, capture_output=True, text=True, check=False)
        if res.returncode != 0:
            raise StrataFailed(f"{' '.join(cmd)} exited {res.returncode}: {res.stderr.strip()}")
        lines = res.stdout.strip().splitlines()
        if not lines:
            raise StrataFailed(f"{' '.join(cmd)} printed nothing")
        out = json.loads(lines[-1])
        for name in ("times_s", "blocks_decompressed", "chunks_touched"):
            if len(out.get(name, [])) != len(indices):
                raise StrataFailed(f"slice_bench: {name} has {len(out.get(name, []))} entries, expected {len(indices)}")
        if out.get("axis") != axis or out.get("indices") != indices:
            raise StrataFailed(f"slice_bench answered for axis {out.get('axis')}, indices {out.get('indices')}")
        planes = np.fromfile(dump, dtype=arr.dtype.newbyteorder("<"))
        dump.unlink()
    except (OSError, ValueError, AttributeError) as e:  # cannot run, not JSON, no dump
        raise StrataFailed(f"{' '.join(cmd)}: {e}") from e
    per = theory(case, axis)["hyperplane_bytes"] // case.itemsize
    if planes.size != per * len(indices):
        mismatches = list(indices)
    else:
        mismatches = [i for n, i in enumerate(indices)
                      if not np.array_equal(planes[n * per:(n + 1) * per], arr[hyperplane_key(arr.ndim, axis, i)].ravel())]
    return {"times_s": out["times_s"], "mismatches": mismatches,
            "blocks_decompressed": out["blocks_decompressed"], "chunks_touched": out["chunks_touched"]}


def rounds_of(indices: list[int], rounds: int) -> list[list[int]]:
    """`indices` cut into `rounds` consecutive parts, as even as can be."""
    n = len(indices)
    return [indices[r * n // rounds:(r + 1) * n // rounds] for r in range(rounds)]


def time_case(case: Case, files: dict[str, Path], plan: dict[int, list[int]], arr, nthreads: int, rounds: int,
              strata_bin: Path | None, scratch: Path) -> dict[int, dict[str, dict]]:
    """Per axis and library: every timed read (in index order), its median, and the checks.

    The libraries take turns: the indices of an axis are cut into `rounds` parts, and each part is
    read by every library in turn, the order rotating from round to round, so that the load of a
    shared machine falls on all of them alike. Each peer opens its file once (after reading it
    whole into the page cache) and makes one untimed read per axis first; Strata's slice_bench
    runs once per axis and round, with one untimed read of its own."""
    libs = [lib for lib in LIBRARIES if lib != "strata" or strata_bin is not None]
    for lib in libs:
        warm(files["blosc2" if lib == "strata" else lib])
    handles = {lib: open_peer(lib, files[lib], nthreads) for lib in PEERS}
    results: dict[int, dict[str, dict]] = {}
    try:
        for axis, indices in plan.items():
            per_lib = {lib: {"times_s": [], "mismatches": []} for lib in libs}
            for lib in PEERS:
                handles[lib][0][hyperplane_key(arr.ndim, axis, indices[0])]  # untimed first read
            for r, part in enumerate(rounds_of(indices, rounds)):
                for lib in libs[r % len(libs):] + libs[:r % len(libs)]:
                    if lib == "strata":
                        got = read_strata(strata_bin, files["blosc2"], case, axis, part, arr, nthreads, scratch)
                    else:
                        got = read_peer(handles[lib][0], axis, part, arr)
                    for key, value in got.items():
                        per_lib[lib].setdefault(key, []).extend(value)
            for r in per_lib.values():
                r["median_s"] = statistics.median(r["times_s"])
                r["min_s"] = min(r["times_s"])
            if "strata" in per_lib:
                t = theory(case, axis)
                s = per_lib["strata"]
                s["blocks_as_theory"] = all(b == t["b2nd_blocks"] for b in s["blocks_decompressed"])
                s["chunks_as_theory"] = all(c == t["chunks"] for c in s["chunks_touched"])
            results[axis] = per_lib
    finally:
        for _, close in handles.values():
            close()
    return results


# ---------------------------------------------------------------------------------------------
# Report


def versions() -> dict:
    import blosc2
    import h5py
    import hdf5plugin
    import numcodecs
    import numpy as np
    import zarr

    build = hdf5plugin.get_config().build_config
    return {
        "python": platform.python_version(),
        "numpy": np.__version__,
        "python-blosc2": blosc2.__version__,
        "C-Blosc2 (python-blosc2)": blosc2.blosclib_version.split()[0],
        "h5py": h5py.__version__,
        "HDF5": h5py.version.hdf5_version,
        "hdf5plugin": hdf5plugin.version,
        "hdf5plugin SIMD": ",".join(k for k in ("sse2", "ssse3", "avx2", "avx512") if getattr(build, k)) or "none",
        "zarr": zarr.__version__,
        "numcodecs": numcodecs.__version__,
        "C-Blosc (numcodecs)": numcodecs.blosc.VERSION_STRING,
    }


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def fmt_ms(r: dict | None) -> str:
    return f"{r['median_s'] * 1e3:.2f}" if r else "n/a"


def ratio(peer: dict | None, ours: dict | None) -> str:
    return f"{peer['median_s'] / ours['median_s']:.1f}x" if peer and ours else "n/a"


def print_case(c: dict) -> None:
    libs = c["libraries"]
    print(f"\n{tuple(c['shape'])} float64, chunks {tuple(c['chunks'])}, blocks {tuple(c['blocks'])} "
          f"({c['nbytes'] / 2**20:.0f} MiB)")
    print("  compressed: " + "; ".join(
        f"{lib} {libs[lib]['cbytes'] / 2**20:.1f} MiB (cratio {c['nbytes'] / libs[lib]['cbytes']:.2f})"
        for lib in PEERS))
    print(f"  blocks: b2nd {tuple(libs['blosc2']['blockshape'])} = {libs['blosc2']['blocksize']} B; "
          f"h5py's filter chose {tuple(libs['h5py']['blockshape'])} = {libs['h5py']['blocksize']} B "
          f"(its chunks padded to {tuple(libs['h5py']['padded_chunk'])}, "
          f"x{libs['h5py']['padded_chunk_factor']:.2f}); "
          f"zarr's C-Blosc chose {libs['zarr']['blocksize']} B")
    head = (f"  {'axis':>4} {'chunks':>6} {'blocks':>6} {'MB b2nd':>8} {'MB chunk':>8} | "
            f"{'Strata':>8} {'blosc2':>8} {'h5py':>8} {'zarr':>8} ms | "
            f"{'S/blosc2':>8} {'S/h5py':>7} {'S/zarr':>7} | {'b2/h5py':>7} {'b2/zarr':>7}")
    print(head)
    for ax in c["axes"]:
        t, r = ax["theory"], ax["results"]
        s, b = r.get("strata"), r["blosc2"]
        print(f"  {ax['axis']:>4} {t['chunks']:>6} {t['b2nd_blocks']:>6} {t['b2nd_bytes'] / 1e6:>8.2f} "
              f"{t['chunked_bytes'] / 1e6:>8.1f} | {fmt_ms(s):>8} {fmt_ms(b):>8} {fmt_ms(r['h5py']):>8} "
              f"{fmt_ms(r['zarr']):>8}    | {ratio(b, s):>8} {ratio(r['h5py'], s):>7} {ratio(r['zarr'], s):>7} | "
              f"{ratio(r['h5py'], b):>7} {ratio(r['zarr'], b):>7}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="small shapes of the same kind (CI smoke test)")
    ap.add_argument("--repeat", type=int, help="random hyperplanes per axis (default 20; --quick 3)")
    ap.add_argument("--rounds", type=int, default=4,
                    help="the libraries take turns this many times per axis, each reading its share of the indices")
    ap.add_argument("--nthreads", type=int, default=1, help="decompression threads for every library")
    ap.add_argument("--seed", type=int, default=0, help="seed of the data's noise and of the indices")
    ap.add_argument("--json", type=Path, help="write every number (and every time) here")
    ap.add_argument("--strata-bench", type=Path, default=DEFAULT_STRATA_BENCH,
                    help="Strata's slice_bench example (default: $STRATA_SLICE_BENCH, else the release build)")
    ap.add_argument("--workdir", type=Path, help="write the files here and keep them (default: a temporary directory)")
    args = ap.parse_args(argv)
    repeat = args.repeat or (3 if args.quick else 20)
    cases = QUICK if args.quick else FULL

    # Must precede the first C-Blosc2 context of the HDF5 filter, which has no other knob.
    os.environ["BLOSC_NTHREADS"] = str(args.nthreads)
    import zarr

    zarr.config.set({"threading.max_workers": args.nthreads})

    strata_bin = args.strata_bench
    strata_note = None
    if not strata_bin.is_file():
        strata_note = (f"strata: not available (no {strata_bin}; build it with "
                       f"`cargo build --release --example slice_bench`)")

    if args.workdir:
        args.workdir.mkdir(parents=True, exist_ok=True)
        workdir, cleanup = args.workdir, None
    else:
        cleanup = tempfile.TemporaryDirectory(prefix="strata-slicing-")
        workdir = Path(cleanup.name)

    report = {
        "config": {
            "quick": args.quick,
            "repeat": repeat,
            "rounds": min(args.rounds, repeat),
            "nthreads": args.nthreads,
            "seed": args.seed,
            "codec": "lz4",
            "clevel": CLEVEL,
            "filters": ["shuffle"],
            "dtype": "float64",
            "data": f"field(shape, seed): smooth sines + {NOISE} N(0,1) noise, rounded to 1/1024",
            "caches": "page cache warm (files read whole before each shape's reads); peers open once per "
                      "shape, slice_bench once per axis and round; one untimed read per axis (and per "
                      "slice_bench run); h5py rdcc_nbytes=0; zarr local store, no cache; python-blosc2 "
                      "without cache_dir",
            "cpu": cpu_model(),
            "cores": os.cpu_count(),
            "loadavg_at_start": list(os.getloadavg()),
            "versions": versions(),
            "strata_bench": str(strata_bin) if strata_note is None else None,
            "strata_note": strata_note,
        },
        "cases": [],
    }
    cfg = report["config"]
    print(f"Hyperplane slicing, {'quick' if args.quick else 'full'} shapes; LZ4 clevel {CLEVEL} + shuffle; "
          f"median of {repeat} random hyperplanes per axis; {args.nthreads} decompression thread(s); warm page cache")
    print("  " + ", ".join(f"{k} {v}" for k, v in cfg["versions"].items()))
    print(f"  cpu: {cfg['cpu']}, {cfg['cores']} cores, load average {cfg['loadavg_at_start'][0]:.2f} at the start")
    print("  columns: chunks / b2nd blocks touched by one hyperplane and MB each kind of reader must "
          "decompress (theory); median ms; speed-ups = peer time / Strata time (S/...) and / python-blosc2 (b2/...)")
    if strata_note:
        print(f"  {strata_note}")

    failures: list[str] = []
    try:
        for case in cases:
            arr = field(case.shape, args.seed)
            files = {lib: workdir / f"{case.name}{suffix}" for lib, (_, suffix) in WRITERS.items()}
            c = {"shape": list(case.shape), "chunks": list(case.chunks), "blocks": list(case.blocks),
                 "nbytes": case.nbytes, "libraries": {}, "axes": []}
            for lib, (writer, _) in WRITERS.items():
                if files[lib].is_dir():
                    shutil.rmtree(files[lib])
                elif files[lib].exists():
                    files[lib].unlink()
                c["libraries"][lib] = writer(case, arr, files[lib])
            plan = {axis: draw_indices(case, axis, repeat, args.seed) for axis in range(len(case.shape))}
            try:
                timings = time_case(case, files, plan, arr, args.nthreads, min(args.rounds, repeat),
                                    strata_bin if strata_note is None else None, workdir)
            except StrataFailed as e:  # the peers run again alone; the failure is reported
                failures.append(f"{case.name}: strata failed: {e}")
                timings = time_case(case, files, plan, arr, args.nthreads, min(args.rounds, repeat), None, workdir)
            for axis, indices in plan.items():
                ax = {"axis": axis, "indices": indices, "theory": theory(case, axis), "results": timings[axis]}
                for lib, r in timings[axis].items():
                    if r["mismatches"]:
                        failures.append(f"{case.name} axis {axis}: {lib} differs from NumPy at {r['mismatches']}")
                    if lib == "strata" and not (r["blocks_as_theory"] and r["chunks_as_theory"]):
                        failures.append(f"{case.name} axis {axis}: strata decompressed {r['blocks_decompressed']} "
                                        f"blocks in {r['chunks_touched']} chunks; the geometry says "
                                        f"{ax['theory']['b2nd_blocks']} in {ax['theory']['chunks']}")
                c["axes"].append(ax)
            report["cases"].append(c)
            print_case(c)
            del arr
    finally:
        if cleanup is not None:
            cleanup.cleanup()

    report["config"]["loadavg_at_end"] = list(os.getloadavg())
    report["failures"] = failures
    if args.json:
        args.json.write_text(json.dumps(report, indent=1) + "\n")
    if failures:
        print("\nFAILED:\n  " + "\n  ".join(failures))
        return 1
    print(f"\nload average {report['config']['loadavg_at_end'][0]:.2f} at the end (other processes share the cores)")
    print("all hyperplanes equal NumPy's" + ("" if strata_note else "; Strata's block counts match the geometry"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
