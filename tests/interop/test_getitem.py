"""`strata chunk getitem` against numpy slicing, on chunks made by C-Blosc2 and by Strata, with
small blocks so that ranges start, end and cross inside blocks other than block 0 (which delta
chunks need as their reference)."""

import blosc2
import numpy as np
import pytest
from helpers import FILTER_SETS, Params, assert_same, cblosc2_compress

ARRAYS = {
    "int32 arange": np.arange(100_000, dtype=np.int32) * 3,
    "float64 smooth": np.sin(np.linspace(0, 50, 30_011)) * 1e3,
    "uint16 runs": np.repeat(np.arange(0, 5_000, dtype=np.uint16), 7),
}
# (start, nitems): first item, block boundaries, inside a late block, the end, everything, none.
RANGES = [(0, 1), (1023, 2), (1024, 1), (5_000, 3_000), (20_011, 9_000), (-1, 1), (0, None), (777, 0)]


@pytest.mark.parametrize("maker", ["C-Blosc2", "Strata"])
@pytest.mark.parametrize("fset", ["noshuffle", "shuffle", "bitshuffle", "delta+shuffle", "shuffle+bytedelta"])
@pytest.mark.parametrize("codec", ["blosclz", "lz4", "zstd"])
@pytest.mark.parametrize("array", list(ARRAYS))
def test_getitem_matches_numpy(strata, array, codec, fset, maker):
    arr = ARRAYS[array]
    p = Params(codec, 5, arr.itemsize, FILTER_SETS[fset], blocksize=4096)
    chunk = cblosc2_compress(arr.tobytes(), p) if maker == "C-Blosc2" else strata.compress(arr.tobytes(), p)
    assert strata.info(chunk)["nblocks"] > 1
    assert_same(blosc2.decompress2(chunk), arr.tobytes(), "decompress2")
    for start, nitems in RANGES:
        start = start % len(arr)
        nitems = len(arr) - start if nitems is None else nitems
        got = strata.getitem(chunk, start, nitems)
        assert_same(got, arr[start : start + nitems].tobytes(), f"items {start}..{start + nitems}")
