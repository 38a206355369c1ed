"""Reads (and one-chunk decompression with a dtype) decode straight into the NumPy array they
return: exact values for every dtype and key, no second copy of the result, and the native
destination checks."""

import re
import tracemalloc

import numpy as np
import pytest

import strata
from strata import ERROR_CODES, _native

SHAPE = (7, 5, 6)  # no dimension a multiple of its chunk or block: edge chunks everywhere
CHUNKS = (3, 2, 4)
BLOCKS = (2, 1, 3)

DTYPES = [
    "?", "i1", "<i2", "<i4", "<i8", "u1", "<u2", "<u4", "<u8", "<f2", "<f4", "<f8", ">f8",
    "<c8", "<c16", "<M8[ns]", "<m8[s]", "S5", "<U3",
    [("a", "<i4"), ("b", "<f8", (2,)), ("c", "S3")],
]

KEYS = [
    (),
    (Ellipsis,),
    (3,),
    (slice(None, None, 2),),
    (slice(None, None, -1), slice(1, 4), slice(5, 0, -2)),
    (Ellipsis, 4),
    (1, Ellipsis, slice(None, None, 3)),
    (slice(6, 2, -3), None, 0, slice(None)),
    (-1, -2, -3),
    (slice(2, 2),),                      # empty along axis 0
    (slice(None), slice(4, 1), 0),       # empty along axis 1
    (slice(10, 20),),                    # past the end: empty
]


class Sub(np.ndarray):
    """A subclass of ndarray, which the native side refuses to borrow."""


def values(dtype):
    """SHAPE items of `dtype`, every one different where the dtype allows."""
    dtype = np.dtype(dtype)
    n = int(np.prod(SHAPE))
    raw = np.random.default_rng(7).integers(0, 256, n * dtype.itemsize, dtype=np.uint8)
    if dtype.kind in "fc":
        return np.arange(n).astype(dtype).reshape(SHAPE) * 1.5 - 40
    if dtype.kind == "U":
        return np.array([chr(0x41 + i % 26) * (1 + i % 3) for i in range(n)], dtype).reshape(SHAPE)
    if dtype.kind == "b":
        return (np.arange(n) % 3 == 0).reshape(SHAPE)
    return raw.view(dtype).reshape(SHAPE)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_every_dtype_and_key_exact(tmp_path, dtype):
    a = values(dtype)
    for arr in (strata.asarray(a, chunks=CHUNKS, blocks=BLOCKS),
                strata.asarray(a, tmp_path / "a.b2nd", chunks=CHUNKS, blocks=BLOCKS)):
        assert arr.dtype == a.dtype
        for key in KEYS:
            got, want = arr[key], a[key]
            assert type(got) is type(want), key  # a NumPy scalar for an int per dimension
            assert got.dtype == want.dtype and got.shape == want.shape, key
            assert got.tobytes() == want.tobytes(), key
            if isinstance(got, np.ndarray):
                assert got.flags.writeable and got.flags.c_contiguous and numpy_owned(got), key
        got = np.asarray(arr)
        assert got.tobytes() == a.tobytes() and got.flags.owndata


def numpy_owned(x):
    """Whether `x` is, or views, an array that owns its memory (NumPy allocated it, not a
    bytearray or another buffer object)."""
    while isinstance(x.base, np.ndarray):
        x = x.base
    return x.base is None and x.flags.owndata


def test_scalar_and_zero_size_arrays():
    a = np.arange(12, dtype="<i4").reshape(3, 4)
    arr = strata.asarray(a, chunks=(2, 3), blocks=(1, 2))
    item = arr[2, 3]
    assert isinstance(item, np.int32) and item == 11
    empty = strata.zeros((0, 4), dtype="<f8")
    assert empty[:].shape == (0, 4) and empty[:].dtype == np.float64
    assert np.asarray(empty).shape == (0, 4)


def filled_with_ff(shape, dtype):
    """A destination every byte of which is 0xFF, so any byte a read misses shows."""
    out = np.empty(shape, dtype)
    out.view(np.uint8).reshape(-1)[:] = 0xFF
    return out


def test_every_byte_of_the_destination_is_written():
    # Special chunks (zeros, unset, one repeated value) and stored edge chunks alike.
    made = {
        "zeros": (strata.zeros(SHAPE, "<i4", chunks=CHUNKS, blocks=BLOCKS), np.zeros(SHAPE, "<i4")),
        "empty": (strata.empty(SHAPE, "<i4", chunks=CHUNKS, blocks=BLOCKS), np.zeros(SHAPE, "<i4")),
        "full": (strata.full(SHAPE, 9, "<i4", chunks=CHUNKS, blocks=BLOCKS), np.full(SHAPE, 9, "<i4")),
        "data": (strata.asarray(values("<i4"), chunks=CHUNKS, blocks=BLOCKS), values("<i4")),
    }
    for name, (arr, want) in made.items():
        out = filled_with_ff(SHAPE, "<i4")
        arr._handle().read_into([], out)
        np.testing.assert_array_equal(out, want, err_msg=name)
        out = filled_with_ff((3, 5, 2), "<i4")
        arr._handle().read_into([(6, 0, -2), (None, None, 1), (1, 6, 3)], out)
        np.testing.assert_array_equal(out, want[6:0:-2, :, 1:6:3], err_msg=name)


def test_a_large_read_allocates_only_its_result(tmp_path):
    a = np.arange(4 << 20, dtype="<f8").reshape(2048, 2048)  # 32 MiB
    arr = strata.asarray(a, tmp_path / "big.b2nd", codec="lz4", clevel=1)
    arr[:1]  # the first read's one-off allocations (thread pools, buffers) not counted
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        out = arr[:]
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert a.nbytes <= peak < 1.5 * a.nbytes
    assert numpy_owned(out) and np.array_equal(out, a)
    del out
    # The native side's allocations too: the resident set's high-water mark, reset first.
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")
    before = vm_kib("VmRSS")
    out = arr[:]
    grown = (vm_kib("VmHWM") - before) << 10
    assert grown < 1.5 * a.nbytes, grown
    assert np.array_equal(out, a)


def vm_kib(field):
    """A `/proc/self/status` field (`VmRSS`, `VmHWM`), in KiB."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise AssertionError(f"no {field} in /proc/self/status")


def test_bad_destinations_are_refused():
    a = np.arange(30, dtype="<f8").reshape(5, 6)
    native = strata.asarray(a, chunks=(2, 4), blocks=(1, 2))._handle()
    cases = [
        (np.empty((5, 5)), strata.ParamError,
         "bytes of the destination array for the selection: 200 given, 240 expected"),
        (np.empty(31), strata.ParamError,
         "bytes of the destination array for the selection: 248 given, 240 expected"),
        (np.frombuffer(bytes(240), "<f8"), strata.ParamError, "the destination array is read-only"),
        (np.empty((5, 12))[:, ::2], strata.ParamError, "the destination array is not C-contiguous"),
        (np.empty((6, 5)).T, strata.ParamError, "the destination array is not C-contiguous"),
        (np.empty((5, 6)).view(Sub), TypeError, "the destination must be a numpy.ndarray, not Sub"),
        (bytearray(240), TypeError, "the destination must be a numpy.ndarray, not bytearray"),
    ]
    for out, cls, message in cases:
        before = out.tobytes() if isinstance(out, np.ndarray) else bytes(out)
        with pytest.raises(cls, match=re.escape(message)) as e:
            native.read_into([], out)
        if cls is strata.ParamError:
            assert e.value.code == ERROR_CODES["INVALID_PARAM"]
        after = out.tobytes() if isinstance(out, np.ndarray) else bytes(out)
        assert after == before  # nothing written
    readonly = np.empty((5, 6))
    readonly.flags.writeable = False
    with pytest.raises(strata.ParamError, match="the destination array is read-only"):
        native.read_into([], readonly)
    ok = np.empty((5, 6))
    native.read_into([], ok)
    np.testing.assert_array_equal(ok, a)
    native.close()
    with pytest.raises(strata.ClosedError, match="the array is closed"):
        native.read_into([], ok)


@pytest.mark.parametrize("dtype", ["u1", "<i2", "<f4", "<c16", [("a", "<i4"), ("b", "S3")]], ids=str)
def test_decompress_with_a_dtype_decodes_into_the_result(dtype):
    a = values(dtype).reshape(-1)
    chunk = strata.compress(a, codec="lz4", filters=["shuffle"])
    out = strata.decompress(chunk, dtype=dtype)
    assert out.dtype == a.dtype and out.shape == a.shape and out.tobytes() == a.tobytes()
    assert out.base is None and out.flags.owndata and out.flags.writeable
    assert bytes(strata.decompress(chunk)) == a.tobytes()  # a bytearray without a dtype
    assert strata.decompress(strata.compress(b""), dtype="<f8").shape == (0,)


def test_decompress_into_bad_input():
    chunk = strata.compress(np.arange(10, dtype="<i4"))
    assert _native.chunk_nbytes(chunk) == 40
    with pytest.raises(ValueError, match="the chunk's 40 bytes are not a whole number of complex128 items"):
        strata.decompress(chunk, dtype="<c16")
    with pytest.raises(strata.ParamError,
                       match="bytes of the destination array for the chunk: 44 given, 40 expected"):
        _native.decompress_into(chunk, np.empty(11, "<i4"))
    with pytest.raises(strata.ParamError, match="the destination array is read-only"):
        _native.decompress_into(chunk, np.frombuffer(bytes(40), "<i4"))
    with pytest.raises(TypeError, match="the destination must be a numpy.ndarray, not bytearray"):
        _native.decompress_into(chunk, bytearray(40))
    big = strata.compress(np.arange(100_000, dtype="<i4"), codec="zstd")
    with pytest.raises(strata.CorruptError):
        strata.decompress(big[:-10], dtype="<i4")  # cut short
    with pytest.raises(strata.CorruptError):
        strata.decompress(b"\x05\x01", dtype="<i4")  # shorter than a header
