"""NumPy basic indexing over Strata's slice engine.

A key (ints, slices with any step, ``...``, ``None``) becomes one ``(start, stop, step)`` per
dimension of the array, which the native layer reads or writes directly (negative steps
included), plus the NumPy key that turns the selection's box into NumPy's result: an int
becomes a length-1 slice read and then index 0 (dropping the axis), ``None`` a new axis.
"""

import operator

from ._native import ERROR_CODES
from .errors import StrataIndexError

_INVALID_INDEX = ERROR_CODES["INVALID_INDEX"]


class Selection:
    """A resolved basic-indexing key on an array of ``shape``.

    Attributes: ``native`` (list of ``(start, stop, step)``, one per dimension), ``box``
    (the shape of the selected box, one entry per dimension, ints as 1), ``post`` (the NumPy
    key that maps the box to NumPy's result) and ``shape`` (the result's shape).
    """

    __slots__ = ("native", "box", "post", "shape")

    def __init__(self, native, box, post, shape):
        self.native = native
        self.box = box
        self.post = post
        self.shape = shape


def _index(value):
    """``value`` as a Python int if it is an integer index (not a bool), else ``None``."""
    if isinstance(value, bool) or type(value).__name__ == "bool_":
        return None
    try:
        return operator.index(value)
    except TypeError:
        return None


def select(key, shape):
    """The :class:`Selection` of ``key`` on an array of ``shape`` (a tuple of ints).

    Raises ``StrataIndexError`` (an ``IndexError``) for an int outside its dimension, too
    many indices, more than one ``...`` or a key that is not basic indexing (arrays, lists,
    bools), and ``ValueError`` for a slice step of 0, as NumPy does.
    """
    if not isinstance(key, tuple):
        key = (key,)
    nreal = sum(1 for k in key if k is not None and k is not Ellipsis)
    nellipsis = sum(1 for k in key if k is Ellipsis)
    if nellipsis > 1:
        raise StrataIndexError("an index can only have a single ellipsis ('...')", _INVALID_INDEX)
    if nreal > len(shape):
        raise StrataIndexError(
            f"too many indices: the array is {len(shape)}-dimensional, but {nreal} were indexed",
            _INVALID_INDEX,
        )
    native, box, post, result = [], [], [], []
    dim = 0

    def whole(count):
        nonlocal dim
        for _ in range(count):
            native.append((None, None, 1))
            box.append(shape[dim])
            post.append(slice(None))
            result.append(shape[dim])
            dim += 1

    for k in key:
        if k is None:
            post.append(None)
            result.append(1)
        elif k is Ellipsis:
            whole(len(shape) - nreal)
        elif isinstance(k, slice):
            n = shape[dim]
            start, stop, step = (_slice_part(k.start), _slice_part(k.stop), _slice_part(k.step))
            if step == 0:
                raise ValueError("slice step cannot be zero")
            count = len(range(*slice(start, stop, step).indices(n)))
            native.append((start, stop, 1 if step is None else step))
            box.append(count)
            post.append(slice(None))
            result.append(count)
            dim += 1
        else:
            i = _index(k)
            if i is None:
                raise StrataIndexError(
                    "only integers, slices (':'), ellipsis ('...') and None are valid "
                    f"indices, not {type(k).__name__}",
                    _INVALID_INDEX,
                )
            n = shape[dim]
            if not -n <= i < n:
                raise StrataIndexError(
                    f"index {i} is out of bounds for axis {dim} with size {n}", _INVALID_INDEX
                )
            i %= n
            native.append((i, i + 1, 1))
            box.append(1)
            post.append(0)
            dim += 1
    whole(len(shape) - dim)
    return Selection(native, tuple(box), tuple(post), tuple(result))


def _slice_part(value):
    """A slice's start, stop or step as an int or ``None``."""
    if value is None:
        return None
    i = _index(value)
    if i is None:
        raise StrataIndexError(
            "slice indices must be integers or None, not " + type(value).__name__,
            _INVALID_INDEX,
        )
    return i
