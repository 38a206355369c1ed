"""The ``Array`` class: a b2nd array (a ``.b2nd`` file, a sparse directory or memory) read and
written with NumPy basic indexing, and the functions that open and make one.
"""

import ast
import fcntl
import os
import threading
from collections.abc import MutableMapping

import msgpack
import numpy as np

from . import _native
from ._indexing import select
from .errors import ClosedError, ParamError, ReadOnlyError

_INVALID_PARAM = _native.ERROR_CODES["INVALID_PARAM"]
_FILE_WRITE = _native.ERROR_CODES["FILE_WRITE"]

#: The compression parameters of new arrays unless given (python-blosc2's defaults).
DEFAULT_CODEC = "zstd"
DEFAULT_CLEVEL = 1
DEFAULT_FILTERS = ("shuffle",)

_MODES = ("r", "r+", "a")


def _numpy_dtype(dtype_str, typesize):
    """The NumPy dtype of a stored dtype string (``dtype.str``, or ``str(dtype)`` of a
    structured dtype as python-blosc2 writes it); opaque ``V<typesize>`` items without one."""
    if dtype_str is None:
        return np.dtype(f"V{typesize}")
    if dtype_str.lstrip().startswith(("[", "{")):
        return np.dtype(ast.literal_eval(dtype_str))
    return np.dtype(dtype_str)


def _dtype_str(dtype):
    """How a NumPy dtype is stored in the b2nd metalayer (as python-blosc2 stores it)."""
    return str(dtype) if dtype.fields is not None else dtype.str


def _stamp(location):
    """What changes when another writer changes the array at ``location``: the frame file's
    inode, size and modification time (``chunks.b2frame`` of a sparse directory)."""
    path = os.path.join(location, "chunks.b2frame") if os.path.isdir(location) else location
    st = os.stat(path)
    return (st.st_ino, st.st_size, st.st_mtime_ns)


class VLMeta(MutableMapping):
    """The variable-length metalayers of an array, as a dict of name to value: values are
    stored as msgpack (what python-blosc2 does), so any msgpack-able value round-trips."""

    __slots__ = ("_array",)

    def __init__(self, array):
        self._array = array

    def __getitem__(self, name):
        if name not in self._array._handle().vlmeta_names():
            raise KeyError(name)
        return msgpack.unpackb(self._array._handle().vlmeta_get(name), raw=False)

    def __setitem__(self, name, value):
        content = msgpack.packb(value, use_bin_type=True)
        self._array._write(lambda h: h.vlmeta_set(name, content))

    def __delitem__(self, name):
        if name not in self._array._handle().vlmeta_names():
            raise KeyError(name)
        self._array._write(lambda h: h.vlmeta_delete(name))

    def __iter__(self):
        return iter(self._array._handle().vlmeta_names())

    def __len__(self):
        return len(self._array._handle().vlmeta_names())

    def __repr__(self):
        return f"VLMeta({dict(self)!r})"


class Array:
    """An N-dimensional b2nd array, compressed in chunks of blocks.

    ``arr[key]`` takes NumPy basic indexing (ints, slices with any step, ``...``, ``None``)
    and returns a NumPy array (a NumPy scalar when every dimension gets an int), decoding
    only the blocks the selection touches, with the GIL released. ``arr[key] = value``
    broadcasts ``value`` over the selection (arrays opened ``"r+"``/``"a"`` or made here).
    ``np.asarray(arr)`` reads it whole.

    An array on a file pickles as its path and mode only, so Dask workers reopen it; before
    each read an array on a file notices when another process changed the file and reopens
    it, and each write takes an exclusive lock on the file (``flock``) and reopens it under the
    lock, so processes writing disjoint chunks of one array (``dask.array.store``) do not lose
    each other's chunks.
    """

    __slots__ = ("_native", "_location", "_mode", "_dtype", "_stamp", "_reopening",
                 "__weakref__")

    def __init__(self, native):
        self._native = native
        self._location = native.location
        self._mode = native.mode
        self._dtype = _numpy_dtype(native.dtype_str, native.typesize)
        self._stamp = self._current_stamp()
        self._reopening = threading.Lock()

    # --- keeping the handle fresh -------------------------------------------------------

    def _current_stamp(self):
        if self._location is None or "://" in self._location:
            return None
        return _stamp(self._location)

    def _handle(self):
        """The native array, reopened first if another writer changed the file. The old
        handle is left to the threads still reading through it (its writes are committed)."""
        h = self._native
        if self._stamp is not None and not h.closed and _stamp(self._location) != self._stamp:
            with self._reopening:
                stamp = _stamp(self._location)  # taken first: a later change shows next time
                if stamp != self._stamp:
                    self._native = _native.open(self._location, self._mode)
                    self._stamp = stamp
                h = self._native
        return h

    def _write(self, change):
        """Runs ``change(native)`` as a write: refused on read-only arrays; on a file, under an
        exclusive lock of the file, on a handle opened under that lock (so it starts from what
        the last writer left, whichever process that was)."""
        if self._mode == "r":
            raise ReadOnlyError(
                f"{self._location} was opened read-only (mode 'r'); open it with mode 'r+'",
                _FILE_WRITE,
            )
        if self._native.closed:
            raise ClosedError("the array is closed", _INVALID_PARAM)
        if self._stamp is None:
            return change(self._handle())
        fd = os.open(self._lock_path(), os.O_RDONLY)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            with self._reopening:
                self._native = _native.open(self._location, self._mode)
                out = change(self._native)
                self._stamp = _stamp(self._location)
            return out
        finally:
            os.close(fd)

    def _lock_path(self):
        if os.path.isdir(self._location):
            return os.path.join(self._location, "chunks.b2frame")
        return self._location

    # --- metadata -----------------------------------------------------------------------

    @property
    def shape(self):
        """The shape, a tuple of ints."""
        return self._handle().shape

    @property
    def dtype(self):
        """The NumPy dtype of the items."""
        return self._dtype

    @property
    def ndim(self):
        """The number of dimensions."""
        return len(self.shape)

    @property
    def size(self):
        """The number of items."""
        return int(np.prod(self.shape, dtype=np.int64))

    @property
    def itemsize(self):
        """Bytes per item."""
        return self._dtype.itemsize

    @property
    def nbytes(self):
        """Uncompressed size in bytes."""
        return self._handle().nbytes

    @property
    def cbytes(self):
        """Compressed size in bytes (the frame's chunks)."""
        return self._handle().cbytes

    @property
    def cratio(self):
        """``nbytes / cbytes`` (``inf`` for an array of special chunks only)."""
        cbytes = self.cbytes
        return self.nbytes / cbytes if cbytes else float("inf")

    @property
    def chunks(self):
        """The chunk shape, a tuple of ints (Dask aligns its chunks to it)."""
        return self._handle().chunks

    @property
    def blocks(self):
        """The block shape, a tuple of ints."""
        return self._handle().blocks

    @property
    def cparams(self):
        """The compression parameters, a dict: ``codec``, ``codec_meta``, ``clevel``,
        ``typesize``, ``filters`` (six names, slot 0 first), ``filters_meta``, ``nthreads``."""
        return self._handle().cparams

    @property
    def meta(self):
        """The fixed-size metalayers, a dict of name to bytes (``b2nd`` among them)."""
        return self._handle().meta

    @property
    def vlmeta(self):
        """The variable-length metalayers, a dict-like :class:`VLMeta` of msgpack values."""
        return VLMeta(self)

    @property
    def location(self):
        """The path or URL of the array, ``None`` in memory."""
        return self._location

    @property
    def mode(self):
        """The mode it was opened with: ``"r"``, ``"r+"`` or ``"a"``."""
        return self._mode

    def __len__(self):
        shape = self.shape
        if not shape:
            raise TypeError("len() of a 0-d array")
        return shape[0]

    def __repr__(self):
        where = self._location or "memory"
        return f"<strata.Array {self.shape} {self._dtype} chunks={self.chunks} at {where}>"

    # --- reading and writing ------------------------------------------------------------

    def _read_box(self, native_key, box):
        # Decoded straight into the result's memory (no copy); no other thread sees `out`
        # before it is returned, as `read_into` requires.
        out = np.empty(box, dtype=self._dtype)
        self._handle().read_into(native_key, out)
        return out

    def __getitem__(self, key):
        """The selection ``key`` as a NumPy array of this array's dtype.

        Raises ``StrataIndexError`` (an ``IndexError``) for an index outside the array or a
        key that is not basic indexing; ``ClosedError`` after ``close``.
        """
        sel = select(key, self.shape)
        return self._read_box(sel.native, sel.box)[sel.post]

    def __setitem__(self, key, value):
        """Writes ``value``, broadcast to the shape of ``arr[key]``, into the selection.

        Raises ``ParamError`` (a ``ValueError``) when ``value`` cannot be cast to the array's
        dtype with NumPy's ``same_kind`` rule (floats into an int array, text into numbers) or
        does not broadcast; ``ReadOnlyError`` on an array opened ``"r"``.
        """
        sel = select(key, self.shape)
        value = np.asarray(value)
        if not np.can_cast(value.dtype, self._dtype, casting="same_kind"):
            raise ParamError(
                f"cannot write {value.dtype} values into a {self._dtype} array "
                "(NumPy's same_kind casting rule)",
                _INVALID_PARAM,
            )
        try:
            value = np.broadcast_to(value, sel.shape)
        except ValueError as e:
            raise ParamError(
                f"a value of shape {value.shape} does not broadcast to the selection's "
                f"shape {sel.shape}",
                _INVALID_PARAM,
            ) from e
        if 0 in sel.box:
            if self._mode == "r":
                self._write(lambda h: None)
            return
        # Compressed from its memory: a copy only if a cast, a broadcast or an order needs it.
        data = np.ascontiguousarray(value.astype(self._dtype, copy=False).reshape(sel.box))
        self._write(lambda h: h.write(sel.native, data))

    def __array__(self, dtype=None, copy=None):
        if copy is False:
            raise ValueError("a Strata array cannot be viewed as NumPy without a copy")
        out = self._read_box([], self.shape)
        return out if dtype is None else out.astype(dtype, copy=False)

    def iterchunks(self):
        """Yields ``(key, chunk)`` for every chunk in C order: ``key`` the tuple of slices the
        chunk covers (clipped to the shape), ``chunk`` its items as a NumPy array."""
        shape, chunks = self.shape, self.chunks
        grid = [-(-n // c) if c else 0 for n, c in zip(shape, chunks)]
        for coords in np.ndindex(*grid):
            key = tuple(
                slice(i * c, min((i + 1) * c, n)) for i, c, n in zip(coords, chunks, shape)
            )
            yield key, self[key]

    def resize(self, shape):
        """Changes the shape to ``shape`` (same number of dimensions); new items are zeros,
        items outside the new shape are dropped."""
        shape = [int(n) for n in shape]
        self._write(lambda h: h.resize(shape))

    def save(self, path):
        """Writes the array as a contiguous ``.b2nd`` file at ``path``."""
        self._handle().save(os.fspath(path))

    def close(self):
        """Flushes and closes the array; every later use raises ``ClosedError``."""
        self._native.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # --- pickling and Dask --------------------------------------------------------------

    def __reduce__(self):
        if self._location is None:
            raise TypeError(
                "an in-memory strata.Array cannot be pickled (it pickles as its location); "
                "save it to a file first"
            )
        return (open, (self._location, self._mode))

    def __dask_tokenize__(self):
        return ("strata.Array", self._location, self._mode, self._stamp)


def open(location, mode="r"):  # noqa: A001 (the package's entry point, as blosc2.open)
    """Opens the b2nd array at ``location``: a ``.b2nd`` file, a sparse frame directory or
    (when Strata is built with remote support) an ``http(s)://`` URL.

    ``mode``: ``"r"`` read-only, ``"r+"`` read and write, ``"a"`` read and write, creating
    nothing. Raises ``StrataIOError`` (an ``OSError``) when the file cannot be read and
    ``CorruptError`` (a ``ValueError``) when its bytes are not a b2nd array.
    """
    if mode not in _MODES:
        raise ParamError(f"mode must be one of {_MODES}, not {mode!r}", _INVALID_PARAM)
    return Array(_native.open(os.fspath(location), mode))


#: The data of arrays made without any (zeros, empty).
_NO_DATA = np.empty(0, np.uint8)


def _create(kind, shape, dtype, data, path=None, *, chunks=None, blocks=None,
            codec=DEFAULT_CODEC, clevel=DEFAULT_CLEVEL, filters=DEFAULT_FILTERS, nthreads=0,
            contiguous=True, overwrite=True, sync=False):
    dtype = np.dtype(dtype)
    if dtype.itemsize == 0 or dtype.hasobject:
        raise ParamError(f"dtype {dtype} has no fixed item bytes", _INVALID_PARAM)
    shape = tuple(int(n) for n in (shape if np.iterable(shape) else (shape,)))
    native = _native.create(
        kind, list(shape), dtype.itemsize, _dtype_str(dtype), data,
        None if path is None else os.fspath(path), contiguous, overwrite, bool(sync),
        None if chunks is None else [int(c) for c in chunks],
        None if blocks is None else [int(b) for b in blocks],
        codec, clevel, None if filters is None else list(filters), nthreads,
    )
    return Array(native)


_CREATE_DOC = """
    Keywords: ``path`` (a ``.b2nd`` file, or a sparse directory with ``contiguous=False``;
    ``None`` keeps the array in memory), ``chunks`` and ``blocks`` (shapes; derived when
    ``None``), ``codec`` (a name: ``"zstd"``, ``"lz4"``, ``"blosclz"``…, or a plugin's),
    ``clevel`` (0–9), ``filters`` (names, slot 0 first: ``"shuffle"``, ``"bitshuffle"``,
    ``"delta"``, ``"bytedelta"``…), ``nthreads`` (0 = the runtime's), ``overwrite``,
    ``sync`` (``True``: closing the array fsyncs the file, so that it survives a power loss;
    by default nothing is fsynced, as ``np.save`` and python-blosc2 do).
    Raises ``ParamError`` for bad parameters and ``StrataIOError`` when ``path`` cannot be
    written.
"""


def asarray(obj, path=None, **kwargs):
    """A new Strata array with the items of ``obj`` (anything ``np.asarray`` takes), of its
    shape and dtype.""" 
    a = np.asarray(obj)
    # Compressed from its memory (with the GIL released): a copy only if not C-contiguous.
    return _create("buffer", a.shape, a.dtype, np.ascontiguousarray(a), path, **kwargs)


def zeros(shape, dtype=np.float64, path=None, **kwargs):
    """A new Strata array of ``shape`` and ``dtype``, every item zero."""
    return _create("zeros", shape, dtype, _NO_DATA, path, **kwargs)


def empty(shape, dtype=np.float64, path=None, **kwargs):
    """A new Strata array of ``shape`` and ``dtype`` whose items are unset (read as zeros
    until written)."""
    return _create("empty", shape, dtype, _NO_DATA, path, **kwargs)


def full(shape, fill_value, dtype=None, path=None, **kwargs):
    """A new Strata array of ``shape``, every item ``fill_value`` (of ``dtype``, or of
    ``fill_value``'s own dtype when ``None``)."""
    value = np.asarray(fill_value, dtype=dtype)
    if value.ndim:
        raise ParamError("fill_value must be a scalar", _INVALID_PARAM)
    return _create("full", shape, value.dtype, np.ascontiguousarray(value), path, **kwargs)


def save(obj, path, **kwargs):
    """Writes ``obj`` (anything ``np.asarray`` takes) as the ``.b2nd`` file ``path`` in one
    call, as ``np.save``; keywords as :func:`asarray`."""
    asarray(obj, path=path, **kwargs).close()


def load(path):
    """The whole array stored at ``path`` as a NumPy array, as ``np.load``."""
    with open(path) as arr:
        return np.asarray(arr)


for _f in (asarray, zeros, empty, full, save):
    _f.__doc__ += _CREATE_DOC
