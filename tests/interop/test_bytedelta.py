"""BYTEDELTA with meta 0, C-Blosc2's default, outside a super-chunk: meta 0 means "the
typesize". python-blosc2 writes the typesize into the chunk header and C-Blosc2 refuses meta 0
when it decodes a chunk on its own; Strata's chunks store the typesize too, byte for byte as
python-blosc2's, and C-Blosc2 decodes every one of them."""

import blosc2
import pytest
from helpers import KINDS, Params, assert_same, cblosc2_compress, check_case, make_data

# Header byte of the filter meta of slot 1 (filters_meta are bytes 24-29).
SLOT1_META = 25


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("typesize", [2, 4, 8, 16, 200])
@pytest.mark.parametrize("codec", ["blosclz", "lz4", "zstd"])
def test_bytedelta_meta_zero_is_the_typesize(strata, codec, typesize, kind):
    data = make_data(kind, 100_000, typesize, seed=typesize)
    p = Params(codec, 5, typesize, (("shuffle", None), ("bytedelta", 0)))
    what = f"{codec} typesize {typesize} {kind}"
    c_chunk = cblosc2_compress(data, p)
    assert c_chunk[SLOT1_META] == typesize, f"{what}: python-blosc2 stores {c_chunk[SLOT1_META]}"
    s_chunk = strata.compress(data, p)
    assert s_chunk[SLOT1_META] == typesize, f"{what}: Strata stores {s_chunk[SLOT1_META]}"
    assert_same(blosc2.decompress2(s_chunk), data, f"{what}: Strata's chunk in C-Blosc2")
    assert check_case(strata, data, p, what) == []
