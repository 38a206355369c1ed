"""The xarray backend: a small netCDF-3 file written by scipy, imported with the `strata`
CLI (one VAR.b2nd per variable, with `dims`, `attrs`, `attr_dtypes`, `global_attrs` and
`global_attr_dtypes` vlmetalayers), opened lazily with engine="strata" and compared with
xarray's read of the netCDF file through scipy."""

import subprocess

import dask.array as da
import numpy as np
import pytest
import scipy.io
import xarray as xr

import strata

FILL = np.float32(-1.0e34)


@pytest.fixture
def grid(tmp_path, strata_bin):
    nc = tmp_path / "grid.nc"
    depth, lat, lon = 6, 20, 30
    temp = (np.arange(depth * lat * lon, dtype=np.float32).reshape(depth, lat, lon) / 4) - 100
    temp[2:, :3, :5] = FILL  # land below a depth
    salt = (np.arange(depth * lat * lon) % 3000 - 1500).astype(np.int16).reshape(depth, lat, lon)
    salt[0, 0, :] = -32767
    with scipy.io.netcdf_file(nc, "w") as f:
        f.title = b"a test grid"
        f.version = np.int32(3)
        f.flags = np.array([-1, 7], dtype=np.int8)
        f.bounds = np.array([-1.5, 2.25])
        for name, n in (("depth", depth), ("lat", lat), ("lon", lon)):
            f.createDimension(name, n)
        for name, n, step in (("depth", depth, 50.0), ("lat", lat, 1.5), ("lon", lon, 2.0)):
            v = f.createVariable(name, "f4", (name,))
            v[:] = np.arange(n, dtype=np.float32) * step
            v.units = b"m" if name == "depth" else b"degrees"
        t = f.createVariable("TEMP", "f4", ("depth", "lat", "lon"))
        t[:] = temp
        t._FillValue = FILL
        t.missing_value = FILL
        t.units = b"degC"
        s = f.createVariable("SALT", "i2", ("depth", "lat", "lon"))
        s[:] = salt
        s._FillValue = np.int16(-32767)
        s.scale_factor = np.float32(0.01)
        s.add_offset = np.float32(35.0)
        s.valid_range = np.array([-1500, 1500], dtype=np.int16)
    out = tmp_path / "grid"
    subprocess.run([str(strata_bin), "import", str(nc), str(out)], check=True,
                   capture_output=True, timeout=120)
    return nc, out


def attr_types(attrs):
    """Each attribute's type: ``str`` for text, else its NumPy dtype in native byte order
    (scipy gives several values as a big-endian array) and whether it is one value."""
    return {k: "str" if isinstance(v, str) else (np.asarray(v).dtype.newbyteorder("=").str,
                                                 np.ndim(v))
            for k, v in attrs.items()}


def test_open_dataset_matches_scipy(grid):
    nc, out = grid
    assert sorted(p.name for p in out.iterdir()) == [
        "SALT.b2nd", "TEMP.b2nd", "depth.b2nd", "lat.b2nd", "lon.b2nd"]
    ds = xr.open_dataset(out, engine="strata", chunks={})
    ref = xr.open_dataset(nc, engine="scipy", chunks={})
    temp = strata.open(out / "TEMP.b2nd")
    assert temp.vlmeta["dims"] == ["depth", "lat", "lon"]
    # Lazy: dask arrays with Strata's chunks.
    assert isinstance(ds.TEMP.data, da.Array)
    assert ds.TEMP.data.chunksize == temp.chunks
    assert ds.TEMP.encoding["preferred_chunks"] == dict(zip(("depth", "lat", "lon"), temp.chunks))
    assert ds.TEMP.dims == ("depth", "lat", "lon")
    assert set(ds.coords) == {"depth", "lat", "lon"} and set(ds.data_vars) == {"SALT", "TEMP"}
    assert ds.TEMP.attrs["units"] == "degC" and ds.depth.attrs["units"] == "m"
    # Fill values masked and scale/offset applied, as xarray does for the netCDF file: the
    # float32 scale_factor keeps its type, so SALT unpacks to float32 on both sides.
    assert ds.TEMP.dtype == np.float32 and ds.SALT.dtype == np.float32 == ref.SALT.dtype
    assert int(ds.TEMP.isnull().sum()) == 4 * 3 * 5
    assert int(ds.SALT.isnull().sum()) == 30
    xr.testing.assert_identical(ds.load(), ref.load())
    xr.testing.assert_identical(ds.TEMP.mean("depth"), ref.TEMP.mean("depth"))
    with scipy.io.netcdf_file(nc, mmap=False) as f:
        raw = f.variables["SALT"][:].copy()
    packed = raw * np.float32(0.01) + np.float32(35.0)
    np.testing.assert_array_equal(ds.SALT.values, np.where(raw == -32767, np.nan, packed))
    # The global attributes, with their netCDF types.
    assert ds.attrs.keys() == {"title", "version", "flags", "bounds"}
    assert attr_types(ds.attrs) == attr_types(ref.attrs) == {
        "title": "str", "version": ("<i4", 0), "flags": ("|i1", 1), "bounds": ("<f8", 1)}
    np.testing.assert_array_equal(ds.attrs["flags"], [-1, 7])
    # Undecoded, every attribute is there as stored, with its type.
    raw_ds = xr.open_dataset(out, engine="strata", mask_and_scale=False)
    raw_ref = xr.open_dataset(nc, engine="scipy", mask_and_scale=False)
    xr.testing.assert_identical(raw_ds, raw_ref)
    for name in ("TEMP", "SALT", "depth"):
        assert attr_types(raw_ds[name].attrs) == attr_types(raw_ref[name].attrs), name
    assert attr_types(raw_ds.SALT.attrs) == {
        "_FillValue": ("<i2", 0), "scale_factor": ("<f4", 0), "add_offset": ("<f4", 0),
        "valid_range": ("<i2", 1)}
    assert raw_ds.SALT.attrs["scale_factor"] == np.float32(0.01)


def test_arrays_imported_without_attribute_types(grid):
    """Arrays made before `attr_dtypes` and `global_attrs` existed: the typed netCDF
    attributes take the variable's dtype, other numbers stay Python numbers."""
    _, out = grid
    for path in out.iterdir():
        with strata.open(path, mode="r+") as arr:
            for name in ("attr_dtypes", "global_attrs", "global_attr_dtypes"):
                del arr.vlmeta[name]
    ds = xr.open_dataset(out, engine="strata", mask_and_scale=False)
    assert ds.attrs == {}
    salt = ds.SALT.attrs
    assert type(salt["_FillValue"]) is np.int16 and salt["_FillValue"] == -32767
    assert salt["valid_range"].dtype == np.int16
    np.testing.assert_array_equal(salt["valid_range"], [-1500, 1500])
    assert type(salt["scale_factor"]) is float and salt["scale_factor"] == float(np.float32(0.01))
    assert type(ds.TEMP.attrs["missing_value"]) is np.float32


def test_open_one_file_and_pickle(grid, tmp_path):
    _, out = grid
    ds = xr.open_dataset(out / "TEMP.b2nd", engine="strata", chunks={})
    assert list(ds.data_vars) == ["TEMP"]
    x = ds.TEMP.isel(depth=slice(1, 3)).mean()
    import pickle

    back = pickle.loads(pickle.dumps(x))
    assert float(back.compute()) == float(x.compute())
    plain = strata.asarray(np.arange(6.0).reshape(2, 3), path=tmp_path / "plain.b2nd")
    plain.close()
    ds = xr.open_dataset(tmp_path / "plain.b2nd", engine="strata")
    assert ds.plain.dims == ("dim_0", "dim_1")
    np.testing.assert_array_equal(ds.plain.values, np.arange(6.0).reshape(2, 3))


def test_levitus_climatology(levitus_nc, tmp_path, strata_bin):
    """The real Levitus grid imported by the CLI: the depth mean of the temperature, its data,
    fill values, attributes and global attributes, as xarray reads the netCDF file."""
    out = tmp_path / "levitus"
    subprocess.run([str(strata_bin), "import", str(levitus_nc), str(out)], check=True,
                   capture_output=True, timeout=300)
    ds = xr.open_dataset(out, engine="strata", chunks={})
    ref = xr.open_dataset(levitus_nc, engine="scipy")
    assert ds.TEMP.dims == ("ZAXLEVITR", "YAXLEVITR", "XAXLEVITR")
    assert ds.TEMP.data.chunksize == strata.open(out / "TEMP.b2nd").chunks
    mean = ds.TEMP.mean("ZAXLEVITR")
    assert isinstance(mean.data, da.Array)
    # Dask sums chunk by chunk: the same reduction over the scipy read, chunked alike, gives
    # the same bits; NumPy's one pass over the whole axis agrees to float32 rounding.
    same_chunks = ref.TEMP.chunk(ds.TEMP.chunksizes).mean("ZAXLEVITR")
    xr.testing.assert_identical(mean.compute(), same_chunks.compute())
    xr.testing.assert_allclose(mean.compute(), ref.TEMP.mean("ZAXLEVITR"), rtol=1e-6)
    # Land and sea floor are the fill value -1e10, masked to NaN as xarray masks the file.
    xr.testing.assert_identical(ds.load(), ref.load())
    nland = int(ref.TEMP.isnull().sum())
    assert 0 < nland < ref.TEMP.size and int(ds.TEMP.isnull().sum()) == nland
    assert ds.TEMP.encoding["_FillValue"] == np.float32(-1e10)
    assert ds.attrs == ref.attrs == {"history": "FERRET V4.45 (GUI) 22-May-97"}
    raw_ds = xr.open_dataset(out, engine="strata", mask_and_scale=False)
    raw_ref = xr.open_dataset(levitus_nc, engine="scipy", mask_and_scale=False)
    xr.testing.assert_identical(raw_ds, raw_ref)
    for name in raw_ref.variables:
        assert attr_types(raw_ds[name].attrs) == attr_types(raw_ref[name].attrs), name
    assert attr_types(raw_ds.TEMP.attrs) == {
        "missing_value": ("<f4", 0), "_FillValue": ("<f4", 0), "long_name": "str",
        "history": "str", "units": "str"}
