"""The xarray backend ``engine="strata"``: a directory of ``.b2nd`` arrays (what
``strata import`` makes from a netCDF file: one ``VAR.b2nd`` per variable) or one ``.b2nd``
file opens as a ``Dataset``, lazily.

Each array's dimension names come from its ``dims`` vlmetalayer (a list of names; ``dim_0``,
``dim_1``… without one), its attributes from ``attrs`` (a map) with each numeric one cast to
its netCDF type, the NumPy dtype that ``attr_dtypes`` names (one value as a NumPy scalar,
several as a 1-d array, as netCDF readers give them). The dataset's attributes are the
``global_attrs`` of its arrays (typed by ``global_attr_dtypes``). CF decoding (fill values
and ``missing_value`` masked to NaN, ``scale_factor``/``add_offset``, times) is xarray's own
(``xarray.conventions.decode_cf``), as for netCDF files. Variables are read only when
indexed or computed; ``encoding["preferred_chunks"]`` is the Strata chunk shape, so
``chunks={}`` gives Dask chunks equal to Strata's chunks.
"""

import os

import numpy as np
import xarray as xr
from xarray.backends import BackendArray, BackendEntrypoint
from xarray.core import indexing

from .array import open as open_array

#: Attributes that hold values of the variable's own type (netCDF's rule for them): what
#: arrays imported before ``attr_dtypes`` existed are typed by.
_TYPED_ATTRS = ("_FillValue", "missing_value", "valid_min", "valid_max", "valid_range")


class StrataBackendArray(BackendArray):
    """A Strata array as xarray reads it: basic indexing, passed to ``Array.__getitem__``."""

    def __init__(self, array):
        self.array = array
        self.shape = array.shape
        self.dtype = array.dtype

    def __getitem__(self, key):
        return indexing.explicit_indexing_adapter(
            key, self.shape, indexing.IndexingSupport.BASIC, self._getitem
        )

    def _getitem(self, key):
        return np.asarray(self.array[key])


def _paths(location):
    """``(variable name, path)`` of the arrays at ``location`` (a directory or a file)."""
    if os.path.isdir(location) and not os.path.exists(os.path.join(location, "chunks.b2frame")):
        names = sorted(f for f in os.listdir(location) if f.endswith(".b2nd"))
        return [(f[: -len(".b2nd")], os.path.join(location, f)) for f in names]
    base = os.path.basename(os.path.normpath(location))
    return [(base[: -len(".b2nd")] if base.endswith(".b2nd") else base, location)]


def _typed(attrs, dtypes):
    """``attrs`` with each attribute that ``dtypes`` (name to NumPy dtype) names cast to that
    dtype: one value as a NumPy scalar, several as a 1-d array."""
    out = dict(attrs)
    for name, dtype in dtypes.items():
        if name in out:
            out[name] = np.asarray(out[name], dtype=dtype)[()]
    return out


def _variable(array, vlmeta):
    dims = vlmeta["dims"] if "dims" in vlmeta else [f"dim_{i}" for i in range(array.ndim)]
    attrs = vlmeta.get("attrs", {})
    if "attr_dtypes" in vlmeta:
        attrs = _typed(attrs, vlmeta["attr_dtypes"])
    else:
        attrs = _typed(attrs, dict.fromkeys(_TYPED_ATTRS, array.dtype))
    data = indexing.LazilyIndexedArray(StrataBackendArray(array))
    encoding = {
        "preferred_chunks": dict(zip(dims, array.chunks)),
        "chunks": array.chunks,
        "dtype": array.dtype,
    }
    return xr.Variable(tuple(dims), data, attrs, encoding)


class StrataBackendEntrypoint(BackendEntrypoint):
    """``xr.open_dataset(path, engine="strata")`` for Strata arrays (see the module)."""

    description = "Strata b2nd arrays: a directory of .b2nd files (strata import) or one file"
    open_dataset_parameters = (
        "filename_or_obj", "drop_variables", "mask_and_scale", "decode_times",
        "decode_timedelta", "use_cftime", "concat_characters", "decode_coords",
    )

    def open_dataset(self, filename_or_obj, *, drop_variables=None, mask_and_scale=True,
                     decode_times=True, decode_timedelta=None, use_cftime=None,
                     concat_characters=True, decode_coords=True):
        location = os.fspath(filename_or_obj)
        drop = set([drop_variables] if isinstance(drop_variables, str) else drop_variables or ())
        arrays, variables, global_attrs = [], {}, None
        for name, path in _paths(location):
            if name in drop:
                continue
            array = open_array(path)
            arrays.append(array)
            vlmeta = dict(array.vlmeta)
            variables[name] = _variable(array, vlmeta)
            if global_attrs is None and "global_attrs" in vlmeta:
                global_attrs = _typed(vlmeta["global_attrs"], vlmeta.get("global_attr_dtypes", {}))
        if not variables:
            raise ValueError(f"{location}: no .b2nd array to open")
        ds = xr.conventions.decode_cf(
            xr.Dataset(variables, attrs=global_attrs),
            mask_and_scale=mask_and_scale,
            decode_times=decode_times,
            decode_timedelta=decode_timedelta,
            use_cftime=use_cftime,
            concat_characters=concat_characters,
            decode_coords=decode_coords,
        )
        ds.set_close(lambda: [a.close() for a in arrays])
        return ds

    def guess_can_open(self, filename_or_obj):
        try:
            location = os.fspath(filename_or_obj)
        except TypeError:
            return False
        if os.path.isdir(location):
            return any(f.endswith(".b2nd") for f in os.listdir(location))
        return location.endswith(".b2nd")
