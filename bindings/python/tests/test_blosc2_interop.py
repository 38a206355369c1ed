"""Files written by Strata open in python-blosc2 and back, in the same process, with
identical data, metadata and chunk bytes decodable by both."""

import blosc2
import numpy as np

import strata


def test_strata_file_read_by_blosc2(tmp_path):
    a = np.linspace(-5, 5, 6 * 7 * 8, dtype=np.float32).reshape(6, 7, 8)
    path = tmp_path / "s.b2nd"
    arr = strata.asarray(a, path=path, chunks=(3, 7, 4), blocks=(2, 3, 4), codec="lz4", clevel=5)
    arr.vlmeta["units"] = "degC"
    arr.close()
    b = blosc2.open(str(path))
    assert b.shape == a.shape and b.dtype == a.dtype
    assert b.chunks == (3, 7, 4) and b.blocks == (2, 3, 4)
    assert b.schunk.vlmeta["units"] == "degC"
    np.testing.assert_array_equal(b[:], a)
    np.testing.assert_array_equal(b[1:5, ::2, 3], a[1:5, ::2, 3])


def test_blosc2_file_read_by_strata(tmp_path):
    rec = np.zeros(40, dtype=[("t", "<i8"), ("v", "<f4", (2,))])
    rec["t"] = np.arange(40)
    rec["v"] = np.arange(80, dtype=np.float32).reshape(40, 2) / 7
    path = tmp_path / "b.b2nd"
    b = blosc2.asarray(rec, urlpath=str(path), chunks=(16,), blocks=(8,), mode="w",
                       cparams=blosc2.CParams(codec=blosc2.Codec.ZSTD, clevel=3))
    b.schunk.vlmeta["attrs"] = {"note": "from blosc2", "n": [1, 2]}
    del b
    arr = strata.open(path)
    assert arr.dtype == rec.dtype and arr.shape == (40,) and arr.chunks == (16,)
    assert arr.cparams["codec"] == "zstd" and arr.cparams["clevel"] == 3
    assert arr.vlmeta["attrs"] == {"note": "from blosc2", "n": [1, 2]}
    assert arr[:].tobytes() == rec.tobytes()
    assert arr[-3::-7].tobytes() == rec[-3::-7].tobytes()


def test_both_directions_on_one_file_and_chunks(tmp_path):
    a = np.arange(1000, dtype=np.int64).reshape(10, 100)
    path = tmp_path / "x.b2nd"
    strata.save(a, path, chunks=(5, 50))
    b = blosc2.open(str(path), mode="a")
    b[2:4, 10:20] = -1
    del b
    a[2:4, 10:20] = -1
    np.testing.assert_array_equal(strata.load(path), a)
    chunk = strata.compress(a, codec="blosclz", clevel=5)
    assert blosc2.decompress(chunk) == a.tobytes()
    assert bytes(strata.decompress(blosc2.compress2(a.tobytes(), typesize=8))) == a.tobytes()
