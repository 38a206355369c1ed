"""Strata arrays as Dask arrays: the chunks of the Dask array are Strata's chunks, so each
task decodes one chunk, and the graph holds only the array's path (an ``Array`` pickles as
its location and mode), so worker processes of ``dask.distributed`` reopen the file."""

import dask.array as da


def to_dask(arr, chunks=None, **kwargs):
    """``dask.array.from_array(arr, chunks=arr.chunks)`` (or ``chunks``), named after the
    array's path, mode and file stamp, so the graph changes when the file does; other
    keywords go to ``from_array``."""
    kwargs.setdefault("name", "strata-" + da.core.tokenize(arr))
    return da.from_array(arr, chunks=arr.chunks if chunks is None else chunks, **kwargs)
