"""What the strata CLI writes opens in python-blosc2 with the same data, and what python-blosc2
writes, the CLI reads: frames from `strata compress` (contiguous and sparse, several codecs),
and `strata info` / `strata decompress` on python-blosc2's frames."""

from __future__ import annotations

import json

import blosc2
import numpy as np
import pytest

from helpers import CODECS


@pytest.mark.parametrize("codec", CODECS)
@pytest.mark.parametrize("sparse", [False, True], ids=["contiguous", "sparse"])
def test_cli_frames_open_in_python_blosc2(strata, tmp_path, grids, codec, sparse):
    levitus = grids["levitus"]
    raw = tmp_path / "levitus.raw"
    raw.write_bytes(levitus.tobytes())
    frame = tmp_path / ("levitus.b2frame" if not sparse else "levitus-dir.b2frame")
    args = ["compress", "--codec", codec, "--typesize", "4", "--chunk-bytes", "1M"]
    strata.output(*args, *(["--sparse"] if sparse else []), raw, frame)
    schunk = blosc2.open(str(frame))
    assert schunk.nchunks == -(-levitus.nbytes // (1 << 20))
    assert schunk.typesize == 4
    assert schunk.cparams.codec.name.lower() == codec
    chunks = b"".join(bytes(schunk.decompress_chunk(i)) for i in range(schunk.nchunks))
    back = np.frombuffer(chunks, dtype="<f4")
    np.testing.assert_array_equal(back, levitus.ravel())


def test_python_blosc2_frames_read_by_the_cli(strata, tmp_path, grids):
    data = np.ascontiguousarray(grids["etopo5"][:1000])
    path = tmp_path / "etopo.b2frame"
    cparams = {"codec": blosc2.Codec.ZSTD, "clevel": 3, "typesize": 4, "nthreads": 1}
    chunksize = 100 * 4320 * 4  # 100 rows: every chunk full (a short chunk in the middle would
    # make C-Blosc2 switch to a variable-chunksize frame whose zero chunks it cannot read back)
    schunk = blosc2.SChunk(chunksize=chunksize, data=data.tobytes(), cparams=cparams,
                           urlpath=str(path), contiguous=True, meta={"grid": [1000, 4320]})
    schunk.vlmeta["units"] = "metres"
    schunk.vlmeta["range"] = (-10000, 9000)
    zeros = np.zeros(chunksize // 4, dtype="<f4")
    schunk.append_data(zeros.tobytes())
    del schunk
    info = json.loads(strata.output("info", "--json", path))
    assert info["nchunks"] == 11 and info["chunksize"] == chunksize
    assert info["nbytes"] == data.nbytes + zeros.nbytes
    assert info["codec"] == "zstd" and info["clevel"] == 3
    assert info["special_chunks"] == {"zero": 1, "nan": 0, "uninit": 0}
    assert info["metalayers"] == [{"name": "grid", "size": 7, "value": [1000, 4320]}]
    vl = {layer["name"]: layer["value"] for layer in info["vlmetalayers"]}
    assert vl == {"units": "metres", "range": [-10000, 9000]}
    out = tmp_path / "back.raw"
    strata.output("decompress", path, out)
    assert out.read_bytes() == data.tobytes() + zeros.tobytes()
