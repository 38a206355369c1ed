"""Changes along an axis, Strata against C-Blosc2 (python-blosc2 4.14.1 and its libblosc2).

* c-examples/timesteps.c appends a run one time step per call, edits a copy (insert, delete,
  resize with a start) and joins the run with itself (concatenate, stack): python-blosc2
  opens every file with the data a NumPy reference gives, and its own `blosc2.concat` /
  `blosc2.stack` of the run give the same data and partitions.
* The same appends, inserts, deletes and resizes made on copies of one python-blosc2 file by
  Strata (its C API, libstrata.so through ctypes) and by C-Blosc2 (`b2nd_append`,
  `b2nd_insert`, `b2nd_delete`, `b2nd_resize` of python-blosc2's libblosc2 through ctypes)
  give the same shape, the same data, and chunk for chunk the same compressed bytes.
"""

from __future__ import annotations

import ctypes
import shutil
from pathlib import Path

import blosc2
import numpy as np
import pytest
from helpers import strata_binary
from test_capi import build, libstrata, run  # noqa: F401 (libstrata is a fixture)

NT, NY, NX = 10, 18, 36


def run_field(nt: int = NT) -> np.ndarray:
    """timesteps.c's run: item t, y, x holds t * 1000 + y * NX + x."""
    t, y, x = np.meshgrid(np.arange(nt), np.arange(NY), np.arange(NX), indexing="ij")
    return (t * 1000 + y * NX + x).astype(np.float32)


def test_timesteps_written_by_c_open_in_python_blosc2(tmp_path: Path, libstrata: Path) -> None:
    exe = build(Path(__file__).resolve().parents[2] / "c-examples" / "timesteps.c", tmp_path, libstrata)
    assert run(exe, tmp_path).endswith("ok\n")
    ref = run_field()
    a = blosc2.open(str(tmp_path / "timesteps.b2nd"))
    assert (a.shape, a.chunks, a.blocks, a.dtype) == ((NT, NY, NX), (4, 9, 12), (2, 9, 12), np.float32)
    np.testing.assert_array_equal(a[:], ref)

    edit = np.concatenate([ref[:4], np.full((4, NY, NX), -1, np.float32), ref[4:]])[4:-1]
    edit = np.concatenate([np.zeros((NT - 1, NY, 12), np.float32), edit], axis=2)
    e = blosc2.open(str(tmp_path / "timesteps_edit.b2nd"))
    np.testing.assert_array_equal(e[:], edit)

    c = blosc2.open(str(tmp_path / "timesteps_concat.b2nd"))
    theirs = blosc2.concat([a, a], axis=0, cparams=a.cparams)
    assert (c.shape, c.chunks, c.blocks) == (theirs.shape, theirs.chunks, theirs.blocks)
    np.testing.assert_array_equal(c[:], theirs[:])
    np.testing.assert_array_equal(c[:], np.concatenate([ref, ref]))

    s = blosc2.open(str(tmp_path / "timesteps_stack.b2nd"))
    theirs = blosc2.stack([a, a], axis=0, cparams=a.cparams)
    assert (s.shape, s.chunks, s.blocks) == (theirs.shape, theirs.chunks, theirs.blocks) == (
        (2, NT, NY, NX),
        (1, 4, 9, 12),
        (1, 2, 9, 12),
    )
    np.testing.assert_array_equal(s[:], np.stack([ref, ref]))
    # each stacked chunk is one of the run's chunks, as stored
    for i in range(s.schunk.nchunks):
        assert s.schunk.get_chunk(i) == a.schunk.get_chunk(i % a.schunk.nchunks)


# --------------------------------------------------------------------------- both libraries


class Strata:
    """Strata's C API in libstrata.so."""

    def __init__(self) -> None:
        lib = ctypes.CDLL(str(strata_binary().parent / "libstrata.so"))
        h, p, i32, i64, sz = ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int32, ctypes.c_int64, ctypes.c_size_t
        lib.strata_ndarray_open.argtypes = [ctypes.c_char_p, ctypes.c_uint8, ctypes.c_uint8, ctypes.POINTER(h)]
        lib.strata_ndarray_append.argtypes = [h, i32, p, sz]
        lib.strata_ndarray_append.restype = i64
        lib.strata_ndarray_insert.argtypes = [h, i32, i64, p, sz]
        lib.strata_ndarray_insert.restype = i64
        lib.strata_ndarray_delete.argtypes = [h, i32, i64, i64]
        lib.strata_ndarray_delete.restype = i64
        lib.strata_ndarray_resize_at.argtypes = [h, i32, ctypes.POINTER(i64), ctypes.POINTER(i64)]
        lib.strata_ndarray_close.argtypes = [h]
        lib.strata_last_error.argtypes = [ctypes.c_char_p, sz]
        self.lib = lib

    def error(self) -> str:
        buf = ctypes.create_string_buffer(512)
        self.lib.strata_last_error(buf, 512)
        return buf.value.decode()

    def apply(self, path: Path, ops: list) -> None:
        h = ctypes.c_void_p()
        assert self.lib.strata_ndarray_open(str(path).encode(), 1, 0, ctypes.byref(h)) == 0, self.error()
        for op, *args in ops:
            args = [np.ascontiguousarray(a) if isinstance(a, np.ndarray) else a for a in args]
            if op == "append":
                axis, data = args
                rc = self.lib.strata_ndarray_append(h, axis, data.ctypes.data, data.nbytes)
            elif op == "insert":
                axis, at, data = args
                rc = self.lib.strata_ndarray_insert(h, axis, at, data.ctypes.data, data.nbytes)
            elif op == "delete":
                rc = self.lib.strata_ndarray_delete(h, *args)
            else:
                shape, start = (np.array(a, dtype=np.int64) for a in args)
                ptr = ctypes.POINTER(ctypes.c_int64)
                rc = self.lib.strata_ndarray_resize_at(h, len(shape), shape.ctypes.data_as(ptr), start.ctypes.data_as(ptr))
            assert rc >= 0, (op, self.error())
        assert self.lib.strata_ndarray_close(h) == 0, self.error()


class CBlosc2:
    """C-Blosc2's b2nd functions in python-blosc2's libblosc2.so (its own copy, initialized
    here)."""

    def __init__(self) -> None:
        lib = ctypes.CDLL(str(Path(blosc2.__file__).parent / "lib" / "libblosc2.so"))
        h, p, i64 = ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64
        lib.blosc2_init()
        lib.b2nd_open.argtypes = [ctypes.c_char_p, ctypes.POINTER(h)]
        lib.b2nd_append.argtypes = [h, p, i64, ctypes.c_int8]
        lib.b2nd_insert.argtypes = [h, p, i64, ctypes.c_int8, i64]
        lib.b2nd_delete.argtypes = [h, ctypes.c_int8, i64, i64]
        lib.b2nd_resize.argtypes = [h, ctypes.POINTER(i64), ctypes.POINTER(i64)]
        lib.b2nd_free.argtypes = [h]
        self.lib = lib

    def apply(self, path: Path, ops: list) -> None:
        h = ctypes.c_void_p()
        assert self.lib.b2nd_open(str(path).encode(), ctypes.byref(h)) == 0
        for op, *args in ops:
            args = [np.ascontiguousarray(a) if isinstance(a, np.ndarray) else a for a in args]
            if op == "append":
                axis, data = args
                rc = self.lib.b2nd_append(h, data.ctypes.data, data.nbytes, axis)
            elif op == "insert":
                axis, at, data = args
                rc = self.lib.b2nd_insert(h, data.ctypes.data, data.nbytes, axis, at)
            elif op == "delete":
                rc = self.lib.b2nd_delete(h, *args)
            else:
                shape, start = (np.array(a, dtype=np.int64) for a in args)
                ptr = ctypes.POINTER(ctypes.c_int64)
                rc = self.lib.b2nd_resize(h, shape.ctypes.data_as(ptr), start.ctypes.data_as(ptr))
            assert rc >= 0, (op, rc)
        assert self.lib.b2nd_free(h) == 0


def steps(first: int, n: int, seed: int = 0) -> np.ndarray:
    """n time steps of NY x NX float32, from step `first`: smooth fields plus noise."""
    rng = np.random.default_rng(seed + first)
    t = np.arange(first, first + n, dtype=np.float32)[:, None, None]
    y = np.linspace(-1, 1, NY, dtype=np.float32)[None, :, None]
    x = np.linspace(0, 6, NX, dtype=np.float32)[None, None, :]
    return (np.sin(x + t / 5) * np.cos(3 * y) * 20 + rng.normal(0, 0.1, (n, NY, NX))).astype(np.float32)


def reference(start: np.ndarray, ops: list) -> np.ndarray:
    """What the operations give, with NumPy."""
    a = start
    for op, *args in ops:
        if op == "append":
            a = np.concatenate([a, args[1]], axis=args[0])
        elif op == "insert":
            axis, at, data = args
            a = np.concatenate([a.take(range(at), axis), data, a.take(range(at, a.shape[axis]), axis)], axis=axis)
        elif op == "delete":
            axis, at, n = args
            a = np.delete(a, range(at, at + n), axis=axis)
        else:
            shape, start_at = args
            for d, (new, at) in enumerate(zip(shape, start_at)):
                old = a.shape[d]
                if new > old:
                    zshape = list(a.shape)
                    zshape[d] = new - old
                    z = np.zeros(zshape, a.dtype)
                    a = np.concatenate([a.take(range(at), d), z, a.take(range(at, old), d)], axis=d)
                elif new < old:
                    a = np.delete(a, range(at, at + old - new), axis=d)
    return a


CASES = {
    # a model's loop, one step per call: chunks of 4 steps (the partly filled chunk updated)
    "append-steps": ((0, (4, 9, 12), (2, 9, 12)), [("append", 0, steps(t, 1)) for t in range(9)]),
    # one step a chunk whose blocks span the other dimensions: C-Blosc2's fast path
    "append-chunks": ((0, (1, NY, NX), (1, NY, NX)), [("append", 0, steps(t, 1)) for t in range(5)]),
    "append-other-axes": (
        (6, (4, 9, 12), (2, 9, 12)),
        [("append", 2, steps(0, 6)[:, :, :5]), ("append", 1, steps(9, 6)[:, :2, :].repeat(2, axis=2)[:, :, : NX + 5])],
    ),
    "insert": ((8, (2, 9, 12), (1, 9, 12)), [("insert", 0, 4, steps(50, 2)), ("insert", 0, 10, steps(60, 3))]),
    "insert-columns": ((8, (2, 9, 12), (1, 9, 12)), [("insert", 2, 12, steps(0, 8)[:, :, :24])]),
    "delete": ((12, (2, 9, 12), (1, 9, 12)), [("delete", 0, 2, 4), ("delete", 0, 5, 3), ("delete", 2, 0, 12)]),
    "resize-at": ((8, (2, 9, 12), (1, 9, 12)), [("resize", (8, NY, NX + 12), (0, 0, 12)), ("resize", (6, 9, NX + 12), (2, 0, 0))]),
}


@pytest.mark.parametrize("case", CASES)
def test_strata_and_c_blosc2_change_a_file_alike(tmp_path: Path, case: str) -> None:
    (nsteps, chunks, blocks), ops = CASES[case]
    start = steps(100, nsteps)
    src = tmp_path / "start.b2nd"
    cparams = blosc2.CParams(codec=blosc2.Codec.LZ4, clevel=5, filters=[blosc2.Filter.SHUFFLE], nthreads=1)
    blosc2.asarray(start, chunks=chunks, blocks=blocks, cparams=cparams, urlpath=str(src), mode="w")
    ours, theirs = tmp_path / "strata.b2nd", tmp_path / "cblosc2.b2nd"
    shutil.copy(src, ours)
    shutil.copy(src, theirs)
    Strata().apply(ours, ops)
    CBlosc2().apply(theirs, ops)
    a, b = blosc2.open(str(ours)), blosc2.open(str(theirs))
    want = reference(start, ops)
    assert a.shape == b.shape == want.shape
    np.testing.assert_array_equal(a[:], want)
    np.testing.assert_array_equal(b[:], want)
    assert a.schunk.nchunks == b.schunk.nchunks
    for i in range(a.schunk.nchunks):
        assert a.schunk.decompress_chunk(i) == b.schunk.decompress_chunk(i), f"chunk {i}"
        assert a.schunk.get_chunk(i) == b.schunk.get_chunk(i), f"chunk {i} as stored"
