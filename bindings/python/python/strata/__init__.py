"""Strata: chunked, compressed N-dimensional arrays that read and write the Blosc2 formats
(``.b2nd`` arrays, frames, chunks), from NumPy, Dask and xarray.

>>> import numpy as np, strata
>>> strata.save(np.arange(12.0).reshape(3, 4), "a.b2nd")      # doctest: +SKIP
>>> strata.open("a.b2nd")[1, ::-2]                              # doctest: +SKIP
array([7., 5.])
"""

from . import _native
from .array import Array, VLMeta, asarray, empty, full, load, open, save, zeros
from .codec import compress, decompress
from .errors import (
    ClosedError,
    CorruptError,
    ParamError,
    ReadOnlyError,
    StrataError,
    StrataIndexError,
    StrataIOError,
)

#: Every error code of the library: name to value (``StrataError.code`` is one of them).
ERROR_CODES = dict(_native.ERROR_CODES)

__version__ = "0.1.0"


def set_nthreads(nthreads):
    """Sets how many threads Strata's runtime uses to compress and decompress blocks
    (0 = one per core)."""
    _native.set_nthreads(int(nthreads))


def plugins():
    """The registered codecs and filters, built-in and loaded: a list of dicts with
    ``kind`` (``"codec"`` or ``"filter"``), ``id``, ``name`` and ``origin``."""
    return [
        {"kind": kind, "id": id_, "name": name, "origin": origin}
        for kind, id_, name, origin in _native.plugins()
    ]


def load_plugin(path):
    """Loads the plugin library at ``path`` (a Strata or C-Blosc2 codec/filter plugin) into
    the registry; returns what it registered, as :func:`plugins` lists it (without origin).

    Raises ``StrataError`` with code ``ERROR_CODES["PLUGIN_LOAD"]`` when the library is
    rejected.
    """
    return [{"kind": k, "id": i, "name": n} for k, i, n in _native.load_plugin(str(path))]


def to_dask(arr, chunks=None, **kwargs):
    """``arr`` (a :class:`Array`) as a Dask array whose chunks are Strata's chunks (or
    ``chunks``); the graph holds the array's path, so worker processes reopen the file."""
    from .dask import to_dask as _to_dask

    return _to_dask(arr, chunks=chunks, **kwargs)


__all__ = [
    "Array", "VLMeta", "open", "asarray", "zeros", "empty", "full", "save", "load",
    "compress", "decompress", "set_nthreads", "plugins", "load_plugin", "to_dask",
    "ERROR_CODES", "StrataError", "ParamError", "CorruptError", "StrataIOError",
    "StrataIndexError", "ClosedError", "ReadOnlyError",
]
