"""Zstd chunks with a trained dictionary (use_dict): C-Blosc2's decode in Strata, Strata's
decode in C-Blosc2."""

import blosc2
import pytest
from helpers import FILTER_SETS, Params, assert_same, cblosc2_compress, make_data

USE_DICT = 0x01


@pytest.mark.parametrize("blocksize", [0, 16_384], ids=["blocksize-auto", "blocksize16384"])
@pytest.mark.parametrize("kind", ["arange", "smooth", "runs"])
@pytest.mark.parametrize("typesize", [1, 4, 8], ids=lambda v: f"typesize{v}")
@pytest.mark.parametrize("clevel", [1, 5, 9], ids=lambda v: f"clevel{v}")
def test_zstd_dict_both_ways(strata, clevel, typesize, kind, blocksize):
    data = make_data(kind, 300_007, typesize)
    p = Params("zstd", clevel, typesize, FILTER_SETS["shuffle"], blocksize=blocksize, use_dict=True)

    c_chunk = cblosc2_compress(data, p)
    assert c_chunk[31] & USE_DICT, "C-Blosc2 stored no dictionary"
    assert_same(strata.decompress(c_chunk), data, "C-Blosc2 → Strata")

    s_chunk = strata.compress(data, p)
    assert strata.info(s_chunk)["blosc2_flag_names"] == ["use_dict"]
    assert_same(blosc2.decompress2(s_chunk), data, "Strata → C-Blosc2")
    assert s_chunk[:12] == c_chunk[:12], "header: version, flags, typesize, nbytes, blocksize"
    assert s_chunk[16:32] == c_chunk[16:32], "header: filters, codec, blosc2 flags"
