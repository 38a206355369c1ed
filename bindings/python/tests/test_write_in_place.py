"""Writes compress straight from the caller's NumPy array: exact values whatever its layout,
no copy of a C-contiguous array, the native data checks, and the `sync` keyword."""

import re
import tracemalloc

import numpy as np
import pytest

import strata
from strata import ERROR_CODES
from strata import _native


class Sub(np.ndarray):
    """A subclass of ndarray, which the native side refuses to borrow."""


def layouts():
    """One (7, 6) float64 field in the layouts a caller may hand over."""
    base = np.arange(7 * 12, dtype="<f8").reshape(7, 12) / 4 - 3
    return {
        "c": np.ascontiguousarray(base[:, :6]),
        "strided": base[:, ::2],
        "reversed": base[::-1, 11:5:-1],
        "fortran": np.asfortranarray(base[:, :6]),
        "big-endian": base[:, :6].astype(">f8"),
        "subclass": base[:, :6].view(Sub),
    }


@pytest.mark.parametrize("layout", list(layouts()))
def test_asarray_from_any_layout_exact(tmp_path, layout):
    a = layouts()[layout]
    want = np.asarray(a)
    arr = strata.asarray(a, tmp_path / "a.b2nd", chunks=(3, 4), blocks=(2, 3))
    assert arr.dtype == want.dtype
    assert arr[:].tobytes() == np.ascontiguousarray(want).tobytes()
    arr.close()
    assert strata.load(tmp_path / "a.b2nd").tobytes() == np.ascontiguousarray(want).tobytes()


def test_structured_and_text_items_exact():
    rec = np.zeros(9, dtype=[("t", "<i8"), ("v", "<f4", (3,)), ("s", "S2")])
    rec["t"] = np.arange(9) * 1000
    rec["v"] = np.arange(27, dtype="<f4").reshape(9, 3) / 8
    rec["s"] = [b"ab", b"c", b"", b"de", b"fg", b"h", b"ij", b"k", b"lm"]
    arr = strata.asarray(rec[::-2], chunks=(2,), blocks=(1,))
    assert arr[:].tobytes() == rec[::-2].tobytes()
    text = np.array([["x", "yz"], ["", "abc"]], dtype="<U3").T
    assert strata.asarray(text)[:].tobytes() == np.ascontiguousarray(text).tobytes()


def test_setitem_from_any_layout_exact():
    want = np.zeros((7, 6), dtype="<f8")
    arr = strata.zeros((7, 6), dtype="<f8", chunks=(3, 4), blocks=(2, 3))
    writes = [
        ((slice(None), slice(None)), layouts()["fortran"]),
        ((slice(1, 6, 2), slice(None, None, -1)), np.arange(18, dtype="<i4").reshape(3, 6)),
        ((slice(None), 2), 7.5),                               # broadcast scalar
        ((slice(2, 5), slice(1, 3)), layouts()["strided"][:3, 4:]),
        ((Ellipsis, slice(5, 6)), np.arange(7, dtype=">f8")[:, None]),
        ((slice(3, 3),), np.empty((0, 6))),                    # nothing to write
    ]
    for key, value in writes:
        arr[key] = value
        want[key] = value
        assert arr[:].tobytes() == want.tobytes(), key


def test_a_large_write_copies_nothing():
    a = np.arange(4 << 20, dtype="<f8").reshape(2048, 2048)  # 32 MiB
    strata.asarray(a[:8], codec="lz4", clevel=1)  # one-off allocations not counted
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        arr = strata.asarray(a, codec="lz4", clevel=1)
        arr[:1024] = a[1024:]
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 0.25 * a.nbytes, peak  # neither write made a bytes copy of its items
    np.testing.assert_array_equal(arr[:1024], a[1024:])


def test_bad_data_is_refused():
    arr = strata.zeros((4, 4), dtype="<f8")
    native = arr._handle()
    cases = [
        (np.zeros((4, 8))[:, ::2], strata.ParamError, "the data array is not C-contiguous"),
        (b"\0" * 128, TypeError, "the data must be a numpy.ndarray, not bytes"),
        (np.zeros((4, 4)).view(Sub), TypeError, "the data must be a numpy.ndarray, not Sub"),
        (np.zeros(15), strata.ParamError, "bytes of data for the selection 120 is below 128"),
    ]
    for data, cls, message in cases:
        with pytest.raises(cls, match=re.escape(message)) as e:
            native.write([], data)
        if cls is strata.ParamError:
            assert e.value.code == ERROR_CODES["INVALID_PARAM"]
    np.testing.assert_array_equal(arr[:], np.zeros((4, 4)))
    readonly = np.frombuffer(np.arange(16, dtype="<f8").tobytes(), "<f8")  # data may be read-only
    native.write([], readonly)
    np.testing.assert_array_equal(arr[:], np.arange(16).reshape(4, 4))
    with pytest.raises(TypeError, match="the data must be a numpy.ndarray, not bytes"):
        _native.create("buffer", [2], 8, "<f8", b"\0" * 16, None, True, True, False, None, None,
                       "zstd", 1, ["shuffle"], 0)


def test_sync_writes_the_same_file(tmp_path):
    a = np.arange(1000, dtype="<i4").reshape(10, 100)
    strata.save(a, tmp_path / "plain.b2nd", chunks=(5, 50))
    strata.save(a, tmp_path / "synced.b2nd", chunks=(5, 50), sync=True)
    assert (tmp_path / "plain.b2nd").read_bytes() == (tmp_path / "synced.b2nd").read_bytes()
    np.testing.assert_array_equal(strata.load(tmp_path / "synced.b2nd"), a)
