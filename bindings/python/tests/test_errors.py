"""Bad input raises the right exception class with the library's message and code, and never
crashes the interpreter."""

import os

import numpy as np
import pytest

import strata
from strata import ERROR_CODES


def test_error_classes():
    assert issubclass(strata.ParamError, ValueError)
    assert issubclass(strata.CorruptError, ValueError)
    assert issubclass(strata.StrataIOError, OSError)
    assert issubclass(strata.StrataIndexError, IndexError)
    for cls in (strata.ParamError, strata.CorruptError, strata.StrataIOError,
                strata.StrataIndexError, strata.ClosedError, strata.ReadOnlyError):
        assert issubclass(cls, strata.StrataError)
    assert ERROR_CODES["INVALID_PARAM"] == -12 and ERROR_CODES["INVALID_INDEX"] == -33


def test_closed_array(tmp_path):
    arr = strata.zeros((4,), path=tmp_path / "c.b2nd")
    arr.close()
    def set_vlmeta():
        arr.vlmeta["a"] = 1

    for use in (lambda: arr[0], lambda: arr.shape, lambda: arr.__setitem__(0, 1.0),
                lambda: arr.resize((5,)), set_vlmeta, lambda: np.asarray(arr)):
        with pytest.raises(strata.ClosedError, match="the array is closed") as e:
            use()
        assert e.value.code == ERROR_CODES["INVALID_PARAM"]
    arr.close()  # closing twice is fine


def test_wrong_dtype_on_write():
    arr = strata.zeros((3,), dtype=np.int16)
    with pytest.raises(strata.ParamError, match="cannot write float64 values into a int16 array") as e:
        arr[0] = 1.5
    assert e.value.code == ERROR_CODES["INVALID_PARAM"]
    with pytest.raises(strata.ParamError, match="cannot write <U3 values"):
        arr[:] = "abc"
    with pytest.raises(strata.ParamError, match=r"shape \(2,\) does not broadcast to the selection's shape \(3,\)"):
        arr[:] = [1, 2]
    np.testing.assert_array_equal(arr[:], [0, 0, 0])


def test_out_of_range_and_bad_keys():
    arr = strata.asarray(np.arange(12).reshape(3, 4))
    cases = [
        (3, "index 3 is out of bounds for axis 0 with size 3"),
        ((0, -5), "index -5 is out of bounds for axis 1 with size 4"),
        ((0, 1, 2), "too many indices: the array is 2-dimensional, but 3 were indexed"),
        ((Ellipsis, Ellipsis), r"an index can only have a single ellipsis \('...'\)"),
        ([0, 1], "not list"),
        (np.array([True, False, True]), "not ndarray"),
        (True, "not bool"),
        ((slice(0.5, 2),), "slice indices must be integers or None, not float"),
    ]
    for key, message in cases:
        with pytest.raises(strata.StrataIndexError, match=message) as e:
            arr[key]
        assert e.value.code == ERROR_CODES["INVALID_INDEX"]
        assert isinstance(e.value, IndexError)
    with pytest.raises(ValueError, match="slice step cannot be zero"):
        arr[::0]


def test_read_only_array(tmp_path):
    strata.save(np.zeros(4), tmp_path / "ro.b2nd")
    arr = strata.open(tmp_path / "ro.b2nd")
    with pytest.raises(strata.ReadOnlyError, match="opened read-only") as e:
        arr[0] = 1.0
    assert e.value.code == ERROR_CODES["FILE_WRITE"]
    with pytest.raises(strata.ReadOnlyError):
        arr.vlmeta["x"] = 1


def test_missing_and_corrupt_files(tmp_path):
    with pytest.raises(strata.StrataIOError) as e:
        strata.open(tmp_path / "missing.b2nd")
    assert e.value.code == ERROR_CODES["FILE_OPEN"]
    assert str(tmp_path / "missing.b2nd") in str(e.value)
    bad = tmp_path / "bad.b2nd"
    bad.write_bytes(b"this is not a frame at all, just text" * 4)
    with pytest.raises(strata.CorruptError) as e:
        strata.open(bad)
    assert e.value.code == ERROR_CODES["INVALID_HEADER"]
    with pytest.raises(strata.ParamError, match="mode must be one of"):
        strata.open(bad, mode="w+")


def test_corrupt_chunk_data(tmp_path):
    path = tmp_path / "flip.b2nd"
    strata.save(np.sin(np.arange(20_000) / 100), path, codec="zstd", chunks=(5_000,))
    raw = bytearray(path.read_bytes())
    # The first chunk's header: version 5, then its nbytes (40000) at bytes 4-7. The first
    # block offset (bstart) follows the 32-byte header; point it past the chunk.
    at = raw.find((40_000).to_bytes(4, "little")) - 4
    assert raw[at] == 5
    raw[at + 32:at + 36] = (65_535).to_bytes(4, "little")
    path.write_bytes(bytes(raw))
    arr = strata.open(path)
    np.testing.assert_array_equal(arr[5_000:], np.sin(np.arange(5_000, 20_000) / 100))
    with pytest.raises(strata.CorruptError, match="invalid header: bstart 65535 is not 36 to") as e:
        arr[:10]
    assert e.value.code == ERROR_CODES["INVALID_HEADER"]


def test_decompress_garbage():
    with pytest.raises(strata.CorruptError) as e:
        strata.decompress(b"\x05\x01\x02\x03garbage")
    assert e.value.code < 0
    with pytest.raises(strata.ParamError):
        strata.compress(b"abcd", codec="no-such-codec")
    with pytest.raises(strata.ParamError):
        strata.compress(b"abcd", clevel=10)


def test_pickling_an_in_memory_array_is_refused():
    import pickle

    with pytest.raises(TypeError, match="in-memory strata.Array cannot be pickled"):
        pickle.dumps(strata.zeros((2,)))


def test_load_plugin_errors(tmp_path):
    """Every plugin load failure has code PLUGIN_LOAD and names the path; a path that is not a
    readable file is an OSError, a file that is not a plugin library a ValueError."""
    text = tmp_path / "text.txt"
    text.write_text("not a library\n")
    for path, message in [(tmp_path / "nope.so", "No such file or directory"),
                          (text / "x.so", "Not a directory"),
                          (tmp_path, "Is a directory")]:
        with pytest.raises(strata.StrataIOError, match=message) as e:
            strata.load_plugin(path)
        assert type(e.value) is strata.StrataIOError and isinstance(e.value, OSError)
        assert e.value.code == ERROR_CODES["PLUGIN_LOAD"] and str(path) in str(e.value)
    from strata import _native

    for path, message in [(text, "cannot be loaded"),
                          # its real path: the library names the file it opened, and a
                          # virtual environment may be reached through a symbolic link
                          (os.path.realpath(_native.__file__),
                           "no strata_plugin_descriptors symbol: not a Strata plugin library")]:
        with pytest.raises(strata.ParamError, match=message) as e:
            strata.load_plugin(path)
        assert type(e.value) is strata.ParamError and not isinstance(e.value, OSError)
        assert e.value.code == ERROR_CODES["PLUGIN_LOAD"] and str(path) in str(e.value)
    assert {r["name"] for r in strata.plugins()} >= {"zstd", "shuffle"}  # the registry is intact


def special_chunk(special, typesize, nbytes):
    """A 32-byte Blosc2 chunk of the run-length kind ``special`` (1 zeros, 2 NaNs, 4
    uninitialized): extended header flags, no codec, the kind in bits 4-6 of the last byte."""
    header = bytearray(32)
    header[0:4] = bytes([5, 1, 0x05 | 0x10, typesize])
    header[4:8] = nbytes.to_bytes(4, "little")
    header[8:12] = nbytes.to_bytes(4, "little")
    header[12:16] = (32).to_bytes(4, "little")
    header[31] = special << 4
    return bytes(header)


def test_bad_run_length_chunk_is_corrupt():
    nan = np.frombuffer(strata.decompress(special_chunk(2, 4, 16)), dtype=np.float32)
    assert nan.shape == (4,) and np.isnan(nan).all()
    with pytest.raises(strata.CorruptError, match="typesize of a NaN chunk") as e:
        strata.decompress(special_chunk(2, 2, 16))
    assert e.value.code == ERROR_CODES["RUN_LENGTH"]
    with pytest.raises(strata.CorruptError, match="nbytes of a special chunk") as e:
        strata.decompress(special_chunk(4, 4, 10))
    assert e.value.code == ERROR_CODES["RUN_LENGTH"]


def test_a_frame_that_is_not_an_array(tmp_path):
    import blosc2

    path = tmp_path / "plain.b2frame"
    blosc2.SChunk(chunksize=400, data=np.arange(100, dtype=np.int32), urlpath=str(path), mode="w")
    with pytest.raises(strata.CorruptError, match='no metalayer named "b2nd"') as e:
        strata.open(path)
    assert e.value.code == ERROR_CODES["METALAYER_NOT_FOUND"]
