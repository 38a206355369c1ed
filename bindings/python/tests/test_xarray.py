"""The xarray backend: a small netCDF-3 file written by scipy, imported with the `strata`
CLI (one VAR.b2nd per variable, with `dims` and `attrs` vlmetalayers), opened lazily with
engine="strata" and compared with xarray's read of the netCDF file through scipy."""

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
    out = tmp_path / "grid"
    subprocess.run([str(strata_bin), "import", str(nc), str(out)], check=True,
                   capture_output=True, timeout=120)
    return nc, out


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
    # Fill values masked and scale/offset applied, as xarray does for the netCDF file. The
    # `attrs` vlmetalayer keeps numbers, not their netCDF types: the float32 scale_factor comes
    # back as a float, so SALT unpacks to float64 where the netCDF read gives float32.
    assert ds.TEMP.dtype == np.float32 and ds.SALT.dtype == np.float64
    assert ref.SALT.dtype == np.float32
    assert int(ds.TEMP.isnull().sum()) == 4 * 3 * 5
    assert int(ds.SALT.isnull().sum()) == 30
    xr.testing.assert_equal(ds.drop_vars("SALT").load(), ref.drop_vars("SALT").load())
    xr.testing.assert_equal(ds.TEMP.mean("depth"), ref.TEMP.mean("depth"))
    with scipy.io.netcdf_file(nc, mmap=False) as f:
        raw = f.variables["SALT"][:].copy()
    packed = raw * np.float64(np.float32(0.01)) + 35.0
    np.testing.assert_array_equal(ds.SALT.values, np.where(raw == -32767, np.nan, packed))
    np.testing.assert_allclose(ds.SALT.values, ref.SALT.values, rtol=1e-6)


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
