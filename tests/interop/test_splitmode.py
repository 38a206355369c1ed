"""The four split modes (ALWAYS, NEVER, AUTO, FORWARD_COMPAT) for a subset of the grid; BloscLZ
chunks byte for byte, every codec in both directions."""

import pytest
from helpers import CODECS, FILTER_SETS, SPLITMODES, Params, check_case, make_data


@pytest.mark.parametrize("fset", ["noshuffle", "shuffle", "bitshuffle"])
@pytest.mark.parametrize("typesize", [2, 4, 8, 16], ids=lambda v: f"typesize{v}")
@pytest.mark.parametrize("splitmode", list(SPLITMODES))
@pytest.mark.parametrize("codec", CODECS)
def test_splitmode(strata, codec, splitmode, typesize, fset):
    p = Params(codec, 5, typesize, FILTER_SETS[fset], splitmode=splitmode)
    problems = []
    for kind, nbytes in [("smooth", 100_003), ("arange", 65_536)]:
        problems += check_case(strata, make_data(kind, nbytes, typesize), p, f"{kind}, {nbytes} bytes")
    assert not problems, "\n".join(problems)
