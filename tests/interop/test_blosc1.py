"""Old-format chunks decode in Strata: Blosc1 chunks (16-byte header, version 2) from the pinned
python-blosc 1.11 (C-Blosc 1.21), and python-blosc2's Blosc1-compatible 16-byte headers
(BLOSC_BLOSC1_COMPAT=1)."""

import os
import subprocess
import sys

import blosc
import pytest
from helpers import assert_same, make_data

SHUFFLES = {"noshuffle": blosc.NOSHUFFLE, "shuffle": blosc.SHUFFLE, "bitshuffle": blosc.BITSHUFFLE}


@pytest.mark.parametrize("clevel", [0, 1, 5, 9], ids=lambda v: f"clevel{v}")
@pytest.mark.parametrize("typesize", [1, 2, 4, 8, 16], ids=lambda v: f"typesize{v}")
@pytest.mark.parametrize("shuffle", list(SHUFFLES))
@pytest.mark.parametrize("cname", blosc.compressor_list())
def test_blosc1_chunks(strata, cname, shuffle, typesize, clevel):
    for kind, nbytes in [("smooth", 200_003), ("arange", 65_536), ("runs", 1000), ("random", 7)]:
        data = make_data(kind, nbytes, typesize)
        chunk = blosc.compress(data, typesize=typesize, clevel=clevel, shuffle=SHUFFLES[shuffle], cname=cname)
        assert chunk[0] == 2, "Blosc1 writes format version 2"
        assert_same(strata.decompress(chunk), data, f"{kind}, {nbytes} bytes")


# Run in a child process: the variable is read when C-Blosc2 initialises.
COMPAT_MAKER = """
import sys, blosc2
from helpers import assert_same, make_data
out = sys.argv[1]
for i, codec in enumerate(blosc2.Codec):
    if codec.value > 5:
        continue
    for filt in (blosc2.Filter.NOFILTER, blosc2.Filter.SHUFFLE, blosc2.Filter.BITSHUFFLE):
        data = make_data("smooth", 100_000, 8)
        chunk = blosc2.compress(data, typesize=8, clevel=5, filter=filt, codec=codec)
        open(f"{out}/{codec.name}-{filt.name}.b2", "wb").write(chunk)
        open(f"{out}/{codec.name}-{filt.name}.raw", "wb").write(data)
"""


def test_blosc2_blosc1_compat_headers(strata, tmp_path):
    env = {**os.environ, "BLOSC_BLOSC1_COMPAT": "1", "PYTHONPATH": os.path.dirname(__file__)}
    subprocess.run([sys.executable, "-c", COMPAT_MAKER, str(tmp_path)], env=env, check=True)
    chunks = sorted(tmp_path.glob("*.b2"))
    assert len(chunks) == 15
    for path in chunks:
        chunk = path.read_bytes()
        assert strata.info(chunk)["header_len"] == 16, path.name
        assert_same(strata.decompress(chunk), path.with_suffix(".raw").read_bytes(), path.name)
