"""Real climate grids (scripts/fetch-data.sh): about 2 MiB slices of ETOPO5 relief and of the
Levitus temperature climatology, float32, through every codec and filter pipeline."""

import pytest
from helpers import CODECS, FILTER_SETS, Params, check_case

SLICES = {
    "etopo5": lambda a: a[1000:1120],  # 120 rows of 4320: Atlantic, Africa, Indian Ocean
    "levitus": lambda a: a[0:8],  # the top 8 depth levels
}


@pytest.mark.parametrize("clevel", [1, 5, 9], ids=lambda v: f"clevel{v}")
@pytest.mark.parametrize("fset", list(FILTER_SETS))
@pytest.mark.parametrize("codec", CODECS)
@pytest.mark.parametrize("grid", list(SLICES))
def test_real_grid(strata, grids, grid, codec, fset, clevel):
    data = SLICES[grid](grids[grid]).tobytes()
    p = Params(codec, clevel, 4, FILTER_SETS[fset])
    problems = check_case(strata, data, p, f"{grid} slice, {len(data)} bytes")
    assert not problems, "\n".join(problems)
