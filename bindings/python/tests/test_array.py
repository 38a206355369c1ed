"""The Array API against NumPy: creation, metadata, reading, writing, vlmeta, resize, chunk
iteration, save/load, chunk compression and the runtime settings, with exact values."""

import msgpack
import numpy as np
import pytest

import strata


def grid(shape, dtype=np.float64):
    return np.arange(int(np.prod(shape)), dtype=dtype).reshape(shape)


def test_asarray_in_memory_metadata_and_values():
    a = grid((10, 7), np.float32)
    arr = strata.asarray(a, chunks=(4, 5), blocks=(2, 5), codec="lz4", clevel=7)
    assert arr.shape == (10, 7) and isinstance(arr.shape, tuple)
    assert arr.dtype == np.dtype("<f4") and isinstance(arr.dtype, np.dtype)
    assert (arr.ndim, arr.size, arr.nbytes, len(arr)) == (2, 70, 280, 10)
    assert arr.chunks == (4, 5) and arr.blocks == (2, 5)
    assert arr.cparams["codec"] == "lz4" and arr.cparams["clevel"] == 7
    assert arr.cparams["typesize"] == 4
    assert arr.cparams["filters"] == ["shuffle"] + ["nofilter"] * 5
    assert 0 < arr.cbytes and arr.cratio == arr.nbytes / arr.cbytes
    assert arr.location is None
    np.testing.assert_array_equal(np.asarray(arr), a)
    assert np.asarray(arr).dtype == np.float32
    np.testing.assert_array_equal(np.asarray(arr, dtype=np.int64), a.astype(np.int64))


def test_file_round_trip_and_meta(tmp_path):
    a = grid((6, 5, 4), np.int16)
    path = tmp_path / "a.b2nd"
    strata.save(a, path, chunks=(3, 5, 4))
    np.testing.assert_array_equal(strata.load(path), a)
    with strata.open(path) as arr:
        assert arr.location == str(path) and arr.mode == "r"
        assert arr.dtype == np.dtype("<i2") and arr.chunks == (3, 5, 4)
        assert set(arr.meta) == {"b2nd"}
        b2nd = arr.meta["b2nd"]
        assert isinstance(b2nd, bytes)
        # version, ndim, shape, chunkshape, blockshape, dtype format (0: NumPy), dtype
        assert msgpack.unpackb(b2nd) == [0, 3, [6, 5, 4], [3, 5, 4], list(arr.blocks), 0, "<i2"]
        assert arr.cbytes < path.stat().st_size


def test_basic_indexing_matches_numpy():
    a = grid((9, 8, 7))
    arr = strata.asarray(a, chunks=(4, 3, 5), blocks=(2, 3, 2))
    keys = [
        (), 3, -1, (2, 5), (2, 5, 6), slice(None), slice(2, 7), slice(None, None, -1),
        (slice(1, 8, 3), slice(None, None, -2), 4), (Ellipsis, 2), (None, 1, Ellipsis, None),
        (slice(-3, None), None, slice(6, 1, -2)), (slice(5, 2),), (slice(100, 200),),
        (1, Ellipsis, slice(-1, -8, -3)), np.int64(4), (np.int32(-2), slice(np.int64(1), 3)),
    ]
    for key in keys:
        got, want = arr[key], a[key]
        assert type(got) is type(want), key
        assert np.shape(got) == np.shape(want), key
        np.testing.assert_array_equal(got, want)
    assert arr[1, 2, 3] == a[1, 2, 3] and isinstance(arr[1, 2, 3], np.float64)


def test_setitem_broadcasts_and_casts(tmp_path):
    a = np.zeros((8, 6), dtype=np.int32)
    arr = strata.zeros((8, 6), dtype=np.int32, path=tmp_path / "z.b2nd", chunks=(3, 4))
    for key, value in [
        ((slice(1, 5), slice(None)), np.arange(6)),  # a row broadcast over rows
        ((slice(None, None, -3), 2), 7),             # a scalar, negative step
        ((Ellipsis, slice(4, None)), [[1], [2], [3], [4], [5], [6], [7], [8]]),
        ((0,), np.int8(-5)),
        ((None, 7, slice(1, 6, 2)), [[10, 20, 30]]),
    ]:
        a[key] = value
        arr[key] = value
        np.testing.assert_array_equal(arr[...], a)
    arr.close()
    np.testing.assert_array_equal(strata.load(tmp_path / "z.b2nd"), a)


def test_zeros_empty_full_and_dtypes():
    np.testing.assert_array_equal(strata.zeros((3, 4), dtype="u2")[:], np.zeros((3, 4), "u2"))
    assert strata.empty((5,), dtype=np.complex64)[:].shape == (5,)
    f = strata.full((4, 3), 2.5, dtype=np.float32)
    np.testing.assert_array_equal(f[:], np.full((4, 3), 2.5, np.float32))
    assert f.dtype == np.float32
    b = strata.full((3,), True)
    assert b.dtype == np.bool_ and b[:].tolist() == [True] * 3
    rec = np.array([(1, 2.0), (3, 4.5)], dtype=[("a", "<i4"), ("b", "<f8")])
    r = strata.asarray(rec)
    assert r.dtype == rec.dtype and r[1] == rec[1] and r[:].tolist() == rec.tolist()
    z = strata.asarray(np.float64(3.25))
    assert z.shape == () and z[()] == 3.25 and np.asarray(z).shape == ()


def test_vlmeta_msgpack_values(tmp_path):
    arr = strata.zeros((4,), path=tmp_path / "v.b2nd")
    arr.vlmeta["units"] = "K"
    arr.vlmeta["scale"] = [0.5, 2, {"k": b"\x00\x01"}]
    assert dict(arr.vlmeta) == {"units": "K", "scale": [0.5, 2, {"k": b"\x00\x01"}]}
    del arr.vlmeta["units"]
    assert list(arr.vlmeta) == ["scale"] and len(arr.vlmeta) == 1
    with pytest.raises(KeyError):
        arr.vlmeta["units"]
    arr.close()
    assert dict(strata.open(tmp_path / "v.b2nd").vlmeta) == {"scale": [0.5, 2, {"k": b"\x00\x01"}]}


def test_resize_and_iterchunks(tmp_path):
    a = grid((5, 4), np.int64)
    arr = strata.asarray(a, path=tmp_path / "r.b2nd", chunks=(2, 3))
    arr.resize((7, 5))
    want = np.zeros((7, 5), np.int64)
    want[:5, :4] = a
    np.testing.assert_array_equal(arr[:], want)
    arr.resize((3, 2))
    np.testing.assert_array_equal(arr[:], a[:3, :2])
    arr.resize((7, 5))
    seen = np.full((7, 5), -1, np.int64)
    keys = []
    for key, chunk in arr.iterchunks():
        keys.append(key)
        seen[key] = chunk
    assert keys[:2] == [(slice(0, 2), slice(0, 3)), (slice(0, 2), slice(3, 5))]
    assert len(keys) == 8 and keys[-1] == (slice(6, 7), slice(3, 5))
    want = np.zeros((7, 5), np.int64)
    want[:3, :2] = a[:3, :2]
    np.testing.assert_array_equal(seen, want)


def test_save_of_an_in_memory_array(tmp_path):
    a = grid((3, 3), np.uint8)
    strata.asarray(a).save(tmp_path / "m.b2nd")
    np.testing.assert_array_equal(strata.load(tmp_path / "m.b2nd"), a)


def test_sparse_directory(tmp_path):
    a = grid((6, 6), np.float32)
    arr = strata.asarray(a, path=tmp_path / "sparse", contiguous=False, chunks=(3, 3))
    arr[0] = -1
    a[0] = -1
    arr.close()
    assert (tmp_path / "sparse" / "chunks.b2frame").is_file()
    np.testing.assert_array_equal(strata.load(tmp_path / "sparse"), a)


def test_compress_decompress_round_trip():
    data = np.linspace(0, 1, 10_000)
    chunk = strata.compress(data, codec="zstd", clevel=9, filters=["shuffle"])
    assert isinstance(chunk, bytes) and len(chunk) < data.nbytes // 3
    assert chunk[0] == 5  # the chunk format version of Blosc2
    out = strata.decompress(chunk)
    assert isinstance(out, bytearray) and bytes(out) == data.tobytes()
    np.testing.assert_array_equal(strata.decompress(bytearray(chunk), dtype=np.float64), data)
    raw = b"abc" * 1000
    assert bytes(strata.decompress(strata.compress(raw, clevel=0))) == raw
    assert bytes(strata.decompress(strata.compress(memoryview(raw)))) == raw


def test_plugins_and_settings():
    rows = strata.plugins()
    names = {(r["kind"], r["name"]) for r in rows}
    assert {("codec", "zstd"), ("codec", "lz4"), ("filter", "shuffle"), ("filter", "bytedelta")} <= names
    zstd = next(r for r in rows if r["name"] == "zstd")
    assert zstd["id"] == 5
    strata.set_nthreads(1)
    a = grid((50, 50))
    np.testing.assert_array_equal(strata.asarray(a)[:], a)
    strata.set_nthreads(0)
