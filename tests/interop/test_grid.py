"""The parameter grid on generated data: every codec × filter pipeline × clevel × typesize,
in both directions, with headers compared and BloscLZ chunks compared byte for byte.

Each grid point runs three inputs; kinds and sizes rotate along the grid so that every kind
meets every size, typesize and codec somewhere. Sizes: 0, 1, 7, 31, 32, 1000 bytes (below and
around Blosc's minimum), odd sizes and exact multiples of the block sizes, and 4 MiB + 1 bytes
for a few points.
"""

import pytest
from helpers import CLEVELS, CODECS, FILTER_SETS, KINDS, TYPESIZES, Params, check_case, float_data, make_data

SMALL = [0, 1, 7, 31, 32, 1000]
MEDIUM = [12_345, 65_536, 100_003, 262_144]

GRID = [
    (codec, fset, clevel, typesize)
    for codec in CODECS
    for fset in FILTER_SETS
    for clevel in CLEVELS
    for typesize in TYPESIZES
    # trunc_prec works on float32 and float64 only.
    if fset != "trunc_prec" or typesize in (4, 8)
]


def inputs(index: int, fset: str, typesize: int) -> list[tuple[str, bytes]]:
    """The three inputs of grid point `index`, named for failure messages."""
    if fset == "trunc_prec":
        nitems = [SMALL[index % 6], MEDIUM[index % 4] // typesize, MEDIUM[(index + 2) % 4] // typesize]
        kinds = ["smooth", "normal", "smooth" if index % 2 else "normal"]
        return [(f"{k} floats, {n} items", float_data(k, n, typesize, index)) for k, n in zip(kinds, nitems)]
    picks = [
        (KINDS[index % 5], SMALL[index % 6]),
        (KINDS[(index + 1) % 5], MEDIUM[index % 4]),
        (KINDS[(index + 3) % 5], MEDIUM[(index + 2) % 4]),
    ]
    return [(f"{kind}, {nbytes} bytes", make_data(kind, nbytes, typesize, index)) for kind, nbytes in picks]


@pytest.mark.parametrize(
    ("index", "codec", "fset", "clevel", "typesize"),
    [pytest.param(i, *g, id=f"{g[0]}-{g[1]}-clevel{g[2]}-typesize{g[3]}") for i, g in enumerate(GRID)],
)
def test_grid(strata, index, codec, fset, clevel, typesize):
    p = Params(codec, clevel, typesize, FILTER_SETS[fset])
    problems = []
    for what, data in inputs(index, fset, typesize):
        problems += check_case(strata, data, p, what)
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("typesize", [4, 8], ids=lambda v: f"typesize{v}")
@pytest.mark.parametrize("fset", ["shuffle", "bitshuffle", "delta+shuffle"])
@pytest.mark.parametrize("codec", ["blosclz", "lz4", "zstd"])
def test_4mib_plus_one(strata, codec, fset, typesize):
    p = Params(codec, 5, typesize, FILTER_SETS[fset])
    data = make_data("smooth", 4 * 1024 * 1024 + 1, typesize)
    problems = check_case(strata, data, p, "smooth, 4 MiB + 1 bytes")
    assert not problems, "\n".join(problems)
