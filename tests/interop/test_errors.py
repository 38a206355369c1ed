"""Broken chunks: strata exits 1 with a message naming the file and the problem."""

import pytest
from helpers import FILTER_SETS, Params, cblosc2_compress, make_data


@pytest.mark.parametrize("cut", [0, 10, 16, 31, 32, 100, "half", "last"], ids=lambda v: f"keep-{v}")
@pytest.mark.parametrize("codec", ["blosclz", "zstd"])
def test_truncated_chunk(strata, tmp_path, codec, cut):
    chunk = cblosc2_compress(make_data("smooth", 100_000, 8), Params(codec, 5, 8, FILTER_SETS["shuffle"]))
    keep = {"half": len(chunk) // 2, "last": len(chunk) - 1}.get(cut, cut)
    path = tmp_path / "truncated.b2"
    path.write_bytes(chunk[:keep])
    out = tmp_path / "out"
    for args in (["decompress", path, out], ["info", path], ["getitem", path, "--start", "0", "--nitems", "1", out]):
        if args[0] == "info" and keep >= 32:
            continue  # a whole header is all info reads
        res = strata.run("chunk", *args)
        assert res.returncode == 1, f"{args[0]}: exit {res.returncode}, stderr {res.stderr!r}"
        assert "truncated.b2" in res.stderr and "truncated" in res.stderr.split("truncated.b2", 1)[1], res.stderr


def test_garbage_and_missing(strata, tmp_path):
    junk = tmp_path / "junk.b2"
    junk.write_bytes(bytes(range(256)) * 4)
    res = strata.run("chunk", "decompress", junk, tmp_path / "out")
    assert res.returncode == 1 and "junk.b2" in res.stderr, res.stderr
    res = strata.run("chunk", "decompress", tmp_path / "absent.b2", tmp_path / "out")
    assert res.returncode == 1 and "absent.b2" in res.stderr, res.stderr
