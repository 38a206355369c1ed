"""Exceptions raised by strata: every one is a ``StrataError`` with the library's code."""


class StrataError(Exception):
    """An error of the Strata library.

    Attributes: ``message`` (str), the library's message; ``code`` (int), its stable error
    code (a ``BLOSC2_ERROR_*`` value, or a Strata code from -1000 down; the table is
    ``strata.ERROR_CODES``).
    """

    def __init__(self, message, code=0):
        super().__init__(message)
        self.message = message
        self.code = code


class ParamError(StrataError, ValueError):
    """A bad parameter: shape, dtype, codec, filter, selection, value."""


class CorruptError(StrataError, ValueError):
    """Stored bytes that are not a valid Blosc2 chunk, frame or b2nd array."""


class StrataIOError(StrataError, OSError):
    """A file or URL could not be read or written."""


class StrataIndexError(StrataError, IndexError):
    """An index outside the array, or a key that is not basic indexing."""


class ClosedError(StrataError, ValueError):
    """An operation on an array that was closed."""


class ReadOnlyError(StrataError, ValueError):
    """A write to an array opened read-only."""
