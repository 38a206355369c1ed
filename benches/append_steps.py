"""A model writing one time step per call: NSTEPS steps of 180 x 360 float32 appended along
time to a .b2nd file, Strata (strata_ndarray_append of libstrata.so) against C-Blosc2
(b2nd_append of python-blosc2's libblosc2.so), both through ctypes, on copies of one empty
file made by python-blosc2 (same partitions and compression). Rounds alternate which library
goes first; the report gives the median time per step, the median of the slowest 1 % of
steps, the time of the whole run and the final file size, each a median over the rounds.

    .venv/bin/python benches/append_steps.py [--steps 1000] [--rounds 3] [--threads 1]
        [--lib target/release/libstrata.so]

Two layouts: one step a chunk (blocks of whole steps: C-Blosc2's fast path for appending a
chunk) and 8 steps a chunk in blocks of half a step (each append updates the last chunk).
"""

from __future__ import annotations

import argparse
import ctypes
import os
import shutil
import statistics
import tempfile
import time
from pathlib import Path

NY, NX = 180, 360
REPO = Path(__file__).resolve().parents[1]

ap = argparse.ArgumentParser()
ap.add_argument("--steps", type=int, default=1000)
ap.add_argument("--rounds", type=int, default=3)
ap.add_argument("--threads", type=int, default=1)
ap.add_argument("--lib", type=Path, default=REPO / "target" / "release" / "libstrata.so")
args = ap.parse_args()
# C-Blosc2 reads its thread count from the environment when it makes a context.
os.environ["BLOSC_NTHREADS"] = str(args.threads)

import blosc2  # noqa: E402 (after BLOSC_NTHREADS)
import numpy as np  # noqa: E402

h_t, p_t, i32, i64, sz = ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int32, ctypes.c_int64, ctypes.c_size_t
strata = ctypes.CDLL(str(args.lib))
strata.strata_ndarray_open.argtypes = [ctypes.c_char_p, ctypes.c_uint8, ctypes.c_uint8, ctypes.POINTER(h_t)]
strata.strata_ndarray_append.argtypes = [h_t, i32, p_t, sz]
strata.strata_ndarray_append.restype = i64
strata.strata_ndarray_set_nthreads.argtypes = [h_t, i32, i32]
strata.strata_ndarray_close.argtypes = [h_t]
cb = ctypes.CDLL(str(Path(blosc2.__file__).parent / "lib" / "libblosc2.so"))
cb.blosc2_init()
cb.b2nd_open.argtypes = [ctypes.c_char_p, ctypes.POINTER(h_t)]
cb.b2nd_append.argtypes = [h_t, p_t, i64, ctypes.c_int8]
cb.b2nd_free.argtypes = [h_t]

# The model's fields: a smooth pattern drifting with t plus fixed noise (made before timing).
y = np.linspace(-np.pi / 2, np.pi / 2, NY, dtype=np.float32)[:, None]
x = np.linspace(0, 2 * np.pi, NX, dtype=np.float32)[None, :]
noise = np.random.default_rng(0).normal(0, 0.05, (NY, NX)).astype(np.float32)


def field(t: int) -> np.ndarray:
    return np.ascontiguousarray(15 * np.cos(y) * np.sin(x + t / 50) + noise + t / 100, dtype=np.float32)


STEPS = [field(t) for t in range(min(args.steps, 64))]  # reused cyclically: 64 distinct steps


def run_strata(path: Path) -> list[float]:
    h = ctypes.c_void_p()
    assert strata.strata_ndarray_open(str(path).encode(), 1, 0, ctypes.byref(h)) == 0
    strata.strata_ndarray_set_nthreads(h, args.threads, args.threads)
    times = []
    for t in range(args.steps):
        f = STEPS[t % len(STEPS)]
        t0 = time.perf_counter()
        n = strata.strata_ndarray_append(h, 0, f.ctypes.data, f.nbytes)
        times.append(time.perf_counter() - t0)
        assert n == t + 1, n
    assert strata.strata_ndarray_close(h) == 0
    return times


def run_cblosc2(path: Path) -> list[float]:
    h = ctypes.c_void_p()
    assert cb.b2nd_open(str(path).encode(), ctypes.byref(h)) == 0
    times = []
    for t in range(args.steps):
        f = STEPS[t % len(STEPS)]
        t0 = time.perf_counter()
        rc = cb.b2nd_append(h, f.ctypes.data, f.nbytes, 0)
        times.append(time.perf_counter() - t0)
        assert rc >= 0, rc
    assert cb.b2nd_free(h) == 0
    return times


LAYOUTS = {
    "1 step/chunk": ((1, NY, NX), (1, NY, NX)),
    "8 steps/chunk": ((8, NY, NX), (1, NY // 2, NX)),
}
RUNNERS = {"Strata": run_strata, "C-Blosc2": run_cblosc2}

print(f"{args.steps} steps of {NY} x {NX} float32 ({NY * NX * 4 / 1024:.0f} KiB each), {args.threads} thread(s), "
      f"LZ4 clevel 5 + shuffle, {args.rounds} rounds alternated; medians")
print(f"{'layout':<14} {'library':<9} {'us/step':>9} {'p99 us':>9} {'run s':>7} {'file MB':>8} {'ratio':>6}")
with tempfile.TemporaryDirectory(dir="/var/tmp") as d:
    for layout, (chunks, blocks) in LAYOUTS.items():
        empty = Path(d) / "empty.b2nd"
        cparams = blosc2.CParams(codec=blosc2.Codec.LZ4, clevel=5, filters=[blosc2.Filter.SHUFFLE], nthreads=args.threads)
        blosc2.zeros((0, NY, NX), dtype=np.float32, chunks=chunks, blocks=blocks, cparams=cparams, urlpath=str(empty), mode="w")
        results: dict[str, list[tuple[float, float, float, int]]] = {k: [] for k in RUNNERS}
        for r in range(args.rounds):
            order = list(RUNNERS) if r % 2 == 0 else list(reversed(RUNNERS))
            for name in order:
                path = Path(d) / f"{name}.b2nd"
                shutil.copy(empty, path)
                times = RUNNERS[name](path)
                size = path.stat().st_size
                check = blosc2.open(str(path))
                assert check.shape == (args.steps, NY, NX)
                np.testing.assert_array_equal(check[args.steps - 1], STEPS[(args.steps - 1) % len(STEPS)])
                slow = sorted(times)[int(0.99 * len(times))]
                results[name].append((statistics.median(times), slow, sum(times), size))
                path.unlink()
        for name, rows in results.items():
            med = [statistics.median(col) for col in zip(*rows)]
            raw = args.steps * NY * NX * 4
            print(f"{layout:<14} {name:<9} {med[0] * 1e6:9.0f} {med[1] * 1e6:9.0f} {med[2]:7.2f} {med[3] / 1e6:8.2f} "
                  f"{raw / med[3]:6.2f}")
