"""Threads change nothing but speed. Strata's chunks compressed on several threads (2, and 0 =
one per core) decode in C-Blosc2 and, for BloscLZ, equal C-Blosc2's one-thread chunks byte for
byte; C-Blosc2's chunks compressed on 4 threads (blocks stored in the order they finish) decode
in Strata on several threads."""

import blosc2
import pytest
from helpers import FILTER_SETS, Params, assert_same, check_case, make_data


@pytest.mark.parametrize("nthreads", [2, 0], ids=lambda v: f"nthreads{v}")
@pytest.mark.parametrize("fset", ["shuffle", "bitshuffle", "delta+shuffle"])
@pytest.mark.parametrize("codec", ["blosclz", "lz4", "zstd"])
def test_threads(strata, codec, fset, nthreads):
    p = Params(codec, 5, 4, FILTER_SETS[fset], blocksize=16_384, nthreads=nthreads)
    problems = []
    for kind, nbytes in [("smooth", 1_000_003), ("runs", 524_288)]:
        data = make_data(kind, nbytes, 4)
        problems += check_case(strata, data, p, f"{kind}, {nbytes} bytes")
        c_chunk = blosc2.compress2(data, **{**p.cparams(), "nthreads": 4})
        what = f"{kind}, {nbytes} bytes: C-Blosc2 on 4 threads → Strata"
        try:
            # (C-Blosc2's own decoding is the reference: see check_case on delta.)
            assert_same(strata.decompress(c_chunk, nthreads), blosc2.decompress2(c_chunk), what)
        except AssertionError as e:
            problems.append(str(e))
    assert not problems, "\n".join(problems)
