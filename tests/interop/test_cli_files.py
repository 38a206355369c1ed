"""What the strata CLI writes opens in python-blosc2 with the same data, and what python-blosc2
writes, the CLI reads: frames from `strata compress` (contiguous and sparse, several codecs),
and `strata info` / `strata decompress` on python-blosc2's frames."""

from __future__ import annotations

import json

import blosc2
import numpy as np
import pytest

from helpers import CODECS, REPO


@pytest.mark.parametrize("codec", CODECS)
@pytest.mark.parametrize("sparse", [False, True], ids=["contiguous", "sparse"])
def test_cli_frames_open_in_python_blosc2(strata, tmp_path, grids, codec, sparse):
    levitus = grids["levitus"]
    raw = tmp_path / "levitus.raw"
    raw.write_bytes(levitus.tobytes())
    frame = tmp_path / ("levitus.b2frame" if not sparse else "levitus-dir.b2frame")
    args = ["compress", "--codec", codec, "--typesize", "4", "--chunksize", "1M"]
    strata.output(*args, *(["--sparse"] if sparse else []), raw, frame)
    schunk = blosc2.open(str(frame))
    assert schunk.nchunks == -(-levitus.nbytes // (1 << 20))
    assert schunk.typesize == 4
    assert schunk.cparams.codec.name.lower() == codec
    chunks = b"".join(bytes(schunk.decompress_chunk(i)) for i in range(schunk.nchunks))
    back = np.frombuffer(chunks, dtype="<f4")
    np.testing.assert_array_equal(back, levitus.ravel())


def test_python_blosc2_frames_read_by_the_cli(strata, tmp_path, grids):
    data = np.ascontiguousarray(grids["etopo5"][:1000])
    path = tmp_path / "etopo.b2frame"
    cparams = {"codec": blosc2.Codec.ZSTD, "clevel": 3, "typesize": 4, "nthreads": 1}
    chunksize = 100 * 4320 * 4  # 100 rows: every chunk full (a short chunk in the middle would
    # make C-Blosc2 switch to a variable-chunksize frame whose zero chunks it cannot read back)
    schunk = blosc2.SChunk(chunksize=chunksize, data=data.tobytes(), cparams=cparams,
                           urlpath=str(path), contiguous=True, meta={"grid": [1000, 4320]})
    schunk.vlmeta["units"] = "metres"
    schunk.vlmeta["range"] = (-10000, 9000)
    zeros = np.zeros(chunksize // 4, dtype="<f4")
    schunk.append_data(zeros.tobytes())
    del schunk
    info = json.loads(strata.output("info", "--json", path))
    assert info["nchunks"] == 11 and info["chunksize"] == chunksize
    assert info["nbytes"] == data.nbytes + zeros.nbytes
    assert info["codec"] == "zstd" and info["clevel"] == 3
    assert info["special_chunks"] == {"zero": 1, "nan": 0, "uninit": 0}
    assert info["metalayers"] == [{"name": "grid", "size": 7, "value": [1000, 4320]}]
    vl = {layer["name"]: layer["value"] for layer in info["vlmetalayers"]}
    assert vl == {"units": "metres", "range": [-10000, 9000]}
    out = tmp_path / "back.raw"
    strata.output("decompress", path, out)
    assert out.read_bytes() == data.tobytes() + zeros.tobytes()


@pytest.mark.parametrize("contiguous", [True, False], ids=["contiguous", "sparse"])
def test_python_blosc2_variable_chunk_frames_decompress_with_the_cli(strata, tmp_path, contiguous):
    """C-Blosc2 writes chunksize 0 when chunks differ in size: each chunk gives its own bytes."""
    path = tmp_path / "var.b2frame"
    s = blosc2.SChunk(chunksize=1000, urlpath=str(path), contiguous=contiguous, mode="w", cparams={"typesize": 2})
    pieces = [np.arange(150, dtype="<u2").tobytes(), b"x" * 5000, b"yz" * 700, b"end!" * 16]
    for p in pieces:
        s.append_chunk(blosc2.compress2(p, typesize=2))
    del s
    info = json.loads(strata.output("info", "--json", path))
    assert (info["nchunks"], info["chunksize"], info["nbytes"]) == (4, None, sum(map(len, pieces)))
    out = tmp_path / "back.raw"
    strata.output("decompress", path, out)
    assert out.read_bytes() == b"".join(pieces)


def test_cli_import_of_netcdf_opens_in_python_blosc2(strata, tmp_path, grids):
    out = tmp_path / "levitus"
    strata.output("import", "--codec", "zstd", "--clevel", "3", REPO / "data" / "levitus_climatology.cdf", out)
    temp = blosc2.open(str(out / "TEMP.b2nd"))
    np.testing.assert_array_equal(temp[:], grids["levitus"])
    np.testing.assert_array_equal(temp[5, 10:100:7, -30:], grids["levitus"][5, 10:100:7, -30:])
    assert temp.schunk.vlmeta["dims"] == ["ZAXLEVITR", "YAXLEVITR", "XAXLEVITR"]
    assert temp.schunk.vlmeta["attrs"]["units"] == "DEG C"
    assert temp.schunk.vlmeta["attrs"]["_FillValue"] == pytest.approx(-1e10)
    assert temp.schunk.cparams.codec == blosc2.Codec.ZSTD
    lat = blosc2.open(str(out / "YAXLEVITR.b2nd"))
    assert lat.dtype == np.float64 and lat.shape == (180,)


def test_cli_import_of_npy_opens_in_python_blosc2(strata, tmp_path, grids):
    out = tmp_path / "etopo.b2nd"
    strata.output("import", "--chunkshape", "500,1000", "--blockshape", "100,250",
                  REPO / "data" / "etopo5_rose.npy", out)
    arr = blosc2.open(str(out))
    assert arr.chunks == (500, 1000) and arr.blocks == (100, 250)
    np.testing.assert_array_equal(arr[:], grids["etopo5"])
    np.testing.assert_array_equal(arr[2000:, ::500], grids["etopo5"][2000:, ::500])


DTYPES = ["<f8", "<f4", "<i2", "|u1", "|b1", "<c16", "|S5", "<U3"]


@pytest.mark.parametrize("dtype", DTYPES)
def test_python_blosc2_arrays_read_by_the_cli(strata, tmp_path, dtype):
    rng = np.random.default_rng(7)
    shape = (23, 17, 9)
    if dtype.endswith(("S5", "U3")):
        data = rng.integers(0, 1000, size=shape).astype(dtype)
    else:
        data = (rng.standard_normal(shape) * 100).astype(dtype)
    path = tmp_path / "a.b2nd"
    blosc2.asarray(data, chunks=(10, 8, 9), blocks=(4, 3, 5), urlpath=str(path), mode="w")
    out = tmp_path / "a.npy"
    strata.output("export", path, out)
    np.testing.assert_array_equal(np.load(out), data)
    part = tmp_path / "part.npy"
    strata.output("slice", path, "--start", "-5,3", "--stop", "23,17,8", "--step", "2,4,3", "-o", part)
    np.testing.assert_array_equal(np.load(part), data[-5::2, 3::4, :8:3])
    info = json.loads(strata.output("info", "--json", path))
    assert info["b2nd"]["shape"] == list(shape) and info["b2nd"]["dtype"] == np.dtype(dtype).str


@pytest.mark.parametrize("name", ["etopo5.cdf", "levitus_climatology.cdf"])
def test_netcdf_import_matches_scipy(strata, tmp_path, name):
    """Every variable strata imports equals what an independent netCDF-3 reader (scipy's) sees:
    values, shape, dimension names, the attributes with their types, and the global
    attributes on every array."""
    from scipy.io import netcdf_file

    out = tmp_path / "arrays"
    strata.output("import", REPO / "data" / name, out)
    with netcdf_file(REPO / "data" / name, "r", mmap=False) as nc:
        numeric = {k: v for k, v in nc.variables.items() if v.data.dtype.kind != "S"}
        assert sorted(p.stem for p in out.glob("*.b2nd")) == sorted(numeric)
        for var_name, var in numeric.items():
            arr = blosc2.open(str(out / f"{var_name}.b2nd"))
            want = var.data.astype(var.data.dtype.newbyteorder("<"))
            assert arr.dtype == want.dtype, var_name
            np.testing.assert_array_equal(arr[:], want, err_msg=var_name)
            assert arr.schunk.vlmeta["dims"] == list(var.dimensions)
            vlmeta = arr.schunk.vlmeta
            for stored, types, attrs in (("attrs", "attr_dtypes", var._attributes),
                                         ("global_attrs", "global_attr_dtypes", nc._attributes)):
                values, dtypes = vlmeta[stored], vlmeta[types]
                assert values.keys() == attrs.keys(), f"{var_name} {stored}"
                for key, value in attrs.items():
                    if isinstance(value, bytes):  # text; Strata drops C's trailing NULs
                        assert values[key] == value.decode().rstrip("\x00")
                        assert key not in dtypes
                    else:
                        want = np.asarray(value)
                        assert dtypes[key] == want.dtype.newbyteorder("<").str, f"{var_name}.{key}"
                        typed = np.asarray(values[key], dtype=dtypes[key])
                        np.testing.assert_array_equal(typed, want, err_msg=f"{var_name}.{key}")


@pytest.fixture
def zfp_plugin(monkeypatch):
    """The ZFP plugin of the release build, found through STRATA_PLUGIN_PATH."""
    lib = REPO / "target" / "release" / "libstrata_zfp.so"
    if not lib.is_file():
        pytest.fail(f"no {lib}: cargo build --release --workspace builds plugins/zfp")
    monkeypatch.setenv("STRATA_PLUGIN_PATH", str(lib.parent))


def test_python_blosc2_zfp_arrays_read_by_the_cli(strata, tmp_path, grids, zfp_plugin):
    data = np.ascontiguousarray(grids["etopo5"][:512, :1024])
    path = tmp_path / "zfp.b2nd"
    cparams = {"codec": blosc2.Codec.ZFP_RATE, "codec_meta": 37, "filters": [], "filters_meta": [],
               "nthreads": 1}
    arr = blosc2.asarray(data, chunks=(256, 512), blocks=(64, 128), cparams=cparams,
                         urlpath=str(path), mode="w")
    out = tmp_path / "zfp.npy"
    strata.output("export", path, out)
    np.testing.assert_array_equal(np.load(out), arr[:])  # the same decoder, the same values
    part = tmp_path / "part.npy"
    strata.output("slice", path, "--start", "100,200", "--stop", "300,900", "-o", part)
    np.testing.assert_array_equal(np.load(part), arr[100:300, 200:900])


def test_cli_zfp_import_opens_in_python_blosc2(strata, tmp_path, grids, zfp_plugin):
    src = REPO / "data" / "etopo5_rose.npy"
    path = tmp_path / "acc.b2nd"
    strata.output("import", "--codec", "zfp_acc", "--codec-meta", "-2", "--filter", "noshuffle",
                  "--chunkshape", "512,1024", "--blockshape", "64,128", src, path)
    arr = blosc2.open(str(path))
    assert arr.schunk.cparams.codec == blosc2.Codec.ZFP_ACC
    err = np.abs(arr[:].astype(np.float64) - grids["etopo5"])
    assert err.max() <= 1e-2
    assert arr.schunk.cratio > 1.5
