"""Special chunks: python-blosc2's zero, NaN, repeated-value and uninitialised chunks decode
in Strata; zeros compress to the same 32-byte special-zero chunk in Strata as in C-Blosc2."""

import blosc2
import numpy as np
import pytest
from helpers import CODECS, FILTER_SETS, Params, assert_same, cblosc2_compress

NITEMS = 10_000


def special_chunk(value: blosc2.SpecialValue, dtype, fill=None) -> bytes:
    typesize = np.dtype(dtype).itemsize
    schunk = blosc2.SChunk(chunksize=NITEMS * typesize, cparams=blosc2.CParams(typesize=typesize))
    if fill is None:
        schunk.fill_special(NITEMS, value)
    else:
        schunk.fill_special(NITEMS, value, value=fill)
    return bytes(schunk.get_chunk(0))


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["float32", "float64"])
def test_cblosc2_special_chunks_decode(strata, dtype):
    zeros = special_chunk(blosc2.SpecialValue.ZERO, dtype)
    assert strata.info(zeros)["special"] == "zero"
    assert_same(strata.decompress(zeros), np.zeros(NITEMS, dtype).tobytes(), "zero chunk")

    nans = special_chunk(blosc2.SpecialValue.NAN, dtype)
    assert strata.info(nans)["special"] == "nan"
    assert np.isnan(np.frombuffer(strata.decompress(nans), dtype)).all()

    value = special_chunk(blosc2.SpecialValue.VALUE, dtype, dtype(-2.75))
    assert strata.info(value)["special"] == "value"
    assert_same(strata.decompress(value), np.full(NITEMS, -2.75, dtype).tobytes(), "value chunk")

    uninit = special_chunk(blosc2.SpecialValue.UNINIT, dtype)
    assert strata.info(uninit)["special"] == "uninit"
    assert len(strata.decompress(uninit)) == NITEMS * np.dtype(dtype).itemsize


@pytest.mark.parametrize("nbytes", [32, 8_000, 1_000_000, 4 * 1024 * 1024], ids=lambda v: f"{v}bytes")
@pytest.mark.parametrize("typesize", [1, 4, 8], ids=lambda v: f"typesize{v}")
@pytest.mark.parametrize("fset", ["noshuffle", "shuffle", "bitshuffle"])
@pytest.mark.parametrize("codec", CODECS)
def test_zeros_make_the_same_special_chunk(strata, codec, fset, typesize, nbytes):
    p = Params(codec, 5, typesize, FILTER_SETS[fset])
    zeros = bytes(nbytes)
    c_chunk = cblosc2_compress(zeros, p)
    s_chunk = strata.compress(zeros, p)
    assert len(c_chunk) == 32 and c_chunk[31] >> 4 == 1, "C-Blosc2 wrote a special-zero chunk"
    same = len(s_chunk) == len(c_chunk) and s_chunk == c_chunk
    assert same, f"Strata wrote {s_chunk[:32].hex()} ({len(s_chunk)} bytes), C-Blosc2 {c_chunk.hex()}"
    assert_same(strata.decompress(c_chunk), zeros, "C-Blosc2's zero chunk")
