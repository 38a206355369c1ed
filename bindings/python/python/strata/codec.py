"""One-chunk compression: ``compress`` bytes into a Blosc2 chunk and ``decompress`` a Blosc
(1 or 2) chunk, both with the GIL released."""

import numpy as np

from . import _native
from .array import DEFAULT_CLEVEL, DEFAULT_CODEC, DEFAULT_FILTERS


def _as_bytes(data):
    """``data`` (bytes, or any buffer: bytearray, memoryview, NumPy array) as bytes; bytes are
    passed on without a copy."""
    if isinstance(data, bytes):
        return data
    return memoryview(data).tobytes()


def compress(data, typesize=None, codec=DEFAULT_CODEC, clevel=DEFAULT_CLEVEL,
             filters=DEFAULT_FILTERS, nthreads=0):
    """``data`` (bytes or a buffer; a NumPy array gives its own itemsize as ``typesize``)
    compressed into one Blosc2 chunk, as bytes. ``typesize`` defaults to 1 for plain bytes.

    Raises ``ParamError`` for a bad codec, filter, clevel or typesize.
    """
    if typesize is None:
        typesize = data.itemsize if isinstance(data, np.ndarray) else 1
    filters = None if filters is None else list(filters)
    return _native.compress(_as_bytes(data), int(typesize), codec, int(clevel), filters,
                            int(nthreads))


def decompress(chunk, dtype=None):
    """The data of the Blosc chunk ``chunk`` (bytes or a buffer): a ``bytearray``, or, when
    ``dtype`` is given, a 1-d NumPy array of ``dtype`` that the chunk is decoded straight into.

    Raises ``CorruptError`` (a ``ValueError``) when ``chunk`` is not a valid chunk, and
    ``ValueError`` when its size is not a multiple of ``dtype``'s item size.
    """
    chunk = _as_bytes(chunk)
    if dtype is None:
        return _native.decompress(chunk)
    dtype = np.dtype(dtype)
    nbytes = _native.chunk_nbytes(chunk)
    if dtype.itemsize == 0 or nbytes % dtype.itemsize:
        raise ValueError(f"the chunk's {nbytes} bytes are not a whole number of {dtype} items")
    # Memory NumPy reserves but does not touch: only the blocks that decode fill it, so a
    # corrupt chunk claiming a huge size fails after its first block, as decompress_vec.
    out = np.empty(nbytes // dtype.itemsize, dtype)
    _native.decompress_into(chunk, out)
    return out
