"""b2nd arrays in files (`.b2nd` and sparse directories) against python-blosc2, both ways.

python-blosc2 writes arrays (ndim 1 to 8 and 16; numeric, bool, complex, bytes, unicode and
structured dtypes; edge chunks; default and explicit partitions; zeros and full arrays, whose
chunks are special; sparse directories) and Strata reads them, whole and sliced (steps,
negative steps, indices), equal to NumPy's data. Strata writes arrays and python-blosc2 opens
them with `blosc2.open(path)[...]`, whole and sliced, equal to NumPy's; then Strata writes
into them (a slice, a resize) and python-blosc2 reads the result, and the other way round.

Strata runs through examples/b2nd_tool (a thin layer over strata::ndarray until the CLI has
array commands). python-blosc2 4.14.1 returns wrong items for partial slices of arrays with
the delta filter (its own bug); those are compared with NumPy only.
"""

from __future__ import annotations

import ast
import json
import os
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

import blosc2
import numpy as np
import pytest
from helpers import REPO

TOOL = Path(os.environ.get("STRATA_B2ND_TOOL", REPO / "target" / "release" / "examples" / "b2nd_tool"))
DATA = REPO / "data"


@pytest.fixture(scope="module")
def tool() -> Path:
    if not TOOL.is_file():
        pytest.fail(f"no b2nd_tool at {TOOL}: cargo build --release --example b2nd_tool")
    return TOOL


def run(tool: Path, *args) -> str:
    res = subprocess.run([str(tool), *map(str, args)], capture_output=True, text=True, check=False)
    if res.returncode != 0:
        raise AssertionError(f"b2nd_tool {args[0]} failed: {res.stderr.strip()}")
    return res.stdout


def np_dtype(s: str) -> np.dtype:
    """The NumPy dtype of a b2nd dtype string (structured ones are Python literals)."""
    return np.dtype(ast.literal_eval(s) if s.startswith(("[", "{", "(")) else s)


def key_str(key: tuple) -> str:
    """A NumPy key (ints and slices) as b2nd_tool's slice argument."""
    def one(k) -> str:
        if isinstance(k, int):
            return str(k)
        return ":".join("" if v is None else str(v) for v in (k.start, k.stop, k.step))

    return ",".join(one(k) for k in key)


def keep_dims(key: tuple) -> tuple:
    """`key` with each index i made the slice i:i+1 (Strata keeps indexed dimensions)."""
    return tuple(slice(k, k + 1 or None) if isinstance(k, int) else k for k in key)


def strata_info(tool: Path, path: Path) -> dict:
    return json.loads(run(tool, "info", path))


def strata_slice(tool: Path, path: Path, key: tuple, dtype: np.dtype, tmp: Path) -> np.ndarray:
    out = tmp / "slice.raw"
    shape = json.loads(run(tool, "slice", path, out, key_str(key)))["shape"]
    return np.frombuffer(out.read_bytes(), dtype=dtype).reshape(shape)


def slices_for(shape: tuple) -> list[tuple]:
    """A few selections of an array of `shape`: steps, negative steps, indices, boxes
    across chunk borders, the last items."""
    nd = len(shape)
    keys = [
        (),
        tuple(slice(n // 3, n - n // 4) for n in shape),
        tuple(slice(None, None, 2 + d % 2) for d in range(nd)),
        tuple(slice(None, None, -1 - d % 3) for d in range(nd)),
        (shape[0] // 2,) + tuple(slice(1, None, 3) for _ in shape[1:]),
        tuple(-1 for _ in shape),
        tuple(slice(n - 2, None) for n in shape),
    ]
    if nd > 1:
        keys.append((slice(None),) * (nd - 1) + (shape[-1] // 2,))
        keys.append((slice(None, None, -3), shape[1] - 1))
    return keys


def make_data(shape: tuple, dtype: np.dtype, seed: int = 0) -> np.ndarray:
    """Deterministic data of `shape` and `dtype`: a smooth ramp with noise, bytes for the
    others."""
    rng = np.random.default_rng(seed)
    n = int(np.prod(shape))
    i = np.arange(n, dtype=np.float64)
    smooth = np.sin(i / 37.0) * 100 + i / 11.0 + rng.integers(0, 4, n)
    if dtype.kind == "b":
        return (smooth.astype(np.int64) % 3 == 0).reshape(shape)
    if dtype.kind in "iu":
        return (smooth % min(np.iinfo(dtype).max, 1 << 30)).astype(dtype).reshape(shape)
    if dtype.kind == "f":
        return smooth.astype(dtype).reshape(shape)
    if dtype.kind == "c":
        return (smooth + 1j * smooth[::-1]).astype(dtype).reshape(shape)
    if dtype.kind == "S":
        return np.array([b"%d" % (v % 10**dtype.itemsize) for v in smooth.astype(np.int64)], dtype=dtype).reshape(shape)
    if dtype.kind == "U":
        return np.array([str(v)[: dtype.itemsize // 4] for v in smooth], dtype=dtype).reshape(shape)
    raw = (np.arange(n * dtype.itemsize) * 7 % 251).astype(np.uint8)
    return np.frombuffer(raw.tobytes(), dtype=dtype).reshape(shape)


@dataclass
class Case:
    name: str
    shape: tuple
    dtype: str
    chunks: tuple | None = None
    blocks: tuple | None = None
    cparams: dict = field(default_factory=dict)
    make: str = "asarray"  # asarray, zeros, full
    sparse: bool = False

    @property
    def has_delta(self) -> bool:
        return blosc2.Filter.DELTA in self.cparams.get("filters", [])


STRUCT = "[('a', '<i4'), ('b', '<f8'), ('c', '|S3')]"
CASES = [
    Case("1d_f8_edges", (1000,), "<f8", (300,), (70,)),
    Case("1d_u1_default", (100_000,), "|u1"),
    Case("2d_f4_default", (500, 700), "<f4"),
    Case("2d_i8_edges_zstd_bitshuffle", (123, 77), "<i8", (50, 30), (20, 7),
         {"codec": blosc2.Codec.ZSTD, "clevel": 3, "filters": [blosc2.Filter.BITSHUFFLE]}),
    Case("3d_levitus", (20, 180, 360), "<f4", (7, 50, 100), (3, 20, 30), {"codec": blosc2.Codec.LZ4}),
    Case("4d_i2", (9, 8, 7, 6), "<i2", (4, 5, 3, 6), (2, 2, 3, 3)),
    Case("5d_u2_delta", (6, 7, 5, 4, 9), "<u2", (3, 4, 5, 2, 4), (2, 2, 2, 2, 3),
         {"filters": [blosc2.Filter.DELTA, blosc2.Filter.SHUFFLE], "codec": blosc2.Codec.LZ4}),
    Case("6d_bool", (3, 4, 5, 3, 4, 5), "|b1", (2, 3, 4, 2, 3, 4), (1, 2, 2, 2, 2, 3)),
    Case("7d_c8", (2, 3, 4, 3, 2, 3, 4), "<c8", (2, 2, 2, 2, 2, 2, 2), (1, 2, 1, 2, 2, 1, 2)),
    Case("8d_i8", (3, 2, 3, 2, 3, 2, 3, 4), "<i8", (2, 2, 2, 2, 2, 2, 2, 3), (1, 1, 2, 1, 2, 2, 1, 2)),
    Case("16d_u1", (2,) * 14 + (3, 5), "|u1"),
    Case("2d_c16", (40, 30), "<c16", (16, 16), (8, 4)),
    Case("2d_bytes", (31, 17), "|S10", (10, 10), (5, 3)),
    Case("2d_unicode", (29, 13), "<U5", (9, 9), (4, 4)),
    Case("2d_structured", (33, 21), STRUCT, (16, 8), (5, 3)),
    Case("2d_zeros", (300, 200), "<f8", (100, 64), (25, 16), make="zeros"),
    Case("3d_full", (30, 20, 10), "<i4", (16, 16, 16), (4, 4, 4), make="full"),
    Case("2d_sparse", (200, 150), "<f8", (64, 64), (16, 32), sparse=True),
    Case("3d_sparse_zeros", (40, 30, 20), "<u4", (16, 16, 16), (8, 8, 8), make="zeros", sparse=True),
]


def write_python(c: Case, path: Path) -> np.ndarray:
    """Writes case `c` with python-blosc2 at `path`; returns its data."""
    dt = np_dtype(c.dtype)
    kw = {"urlpath": str(path), "mode": "w", "contiguous": not c.sparse}
    if c.chunks:
        kw.update(chunks=c.chunks, blocks=c.blocks)
    if c.cparams:
        kw["cparams"] = blosc2.CParams(**c.cparams)
    if c.make == "zeros":
        blosc2.zeros(c.shape, dtype=dt, **kw)
        return np.zeros(c.shape, dtype=dt)
    if c.make == "full":
        blosc2.full(c.shape, 7, dtype=dt, **kw)
        return np.full(c.shape, 7, dtype=dt)
    if c.name == "3d_levitus":
        data = np.load(DATA / "levitus_temp.npy")
    else:
        data = make_data(c.shape, dt)
    blosc2.asarray(data, **kw)
    return data


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_strata_reads_python_blosc2_files(tool: Path, case: Case, tmp_path: Path) -> None:
    path = tmp_path / ("a.b2frame" if case.sparse else "a.b2nd")
    data = write_python(case, path)
    theirs = blosc2.open(str(path))
    info = strata_info(tool, path)
    assert tuple(info["shape"]) == theirs.shape == case.shape
    assert tuple(info["chunkshape"]) == theirs.chunks
    assert tuple(info["blockshape"]) == theirs.blocks
    assert np_dtype(info["dtype"]) == data.dtype
    assert info["typesize"] == data.dtype.itemsize
    assert info["sparse"] == case.sparse
    assert info["nchunks"] == theirs.schunk.nchunks
    if case.make == "zeros":
        assert info["cbytes"] == 0  # special chunks: index entries only
    for key in slices_for(case.shape):
        got = strata_slice(tool, path, key, data.dtype, tmp_path)
        want = data[keep_dims(key)]
        assert got.shape == want.shape, key
        assert np.array_equal(got, want), f"{case.name} {key}"
        if not case.has_delta:
            assert np.array_equal(got, theirs[keep_dims(key)]), f"{case.name} {key} vs python-blosc2"


def write_strata(tool: Path, c: Case, path: Path, tmp: Path) -> np.ndarray:
    """Writes case `c` with Strata at `path`; returns its data."""
    dt = np_dtype(c.dtype)
    spec = {"shape": list(c.shape), "dtype": c.dtype, "sparse": c.sparse, "init": c.make}
    if c.make == "asarray":
        spec["init"] = "buffer"
    if c.chunks:
        spec.update(chunkshape=list(c.chunks), blockshape=list(c.blocks))
    filters = [f.value for f in c.cparams.get("filters", [blosc2.Filter.SHUFFLE])]
    spec["filters"] = [0] * (6 - len(filters)) + filters
    spec["codec"] = c.cparams.get("codec", blosc2.Codec.BLOSCLZ).value
    spec["clevel"] = int(c.cparams.get("clevel", 5))
    if c.make == "zeros":
        data = np.zeros(c.shape, dtype=dt)
    elif c.make == "full":
        data = np.full(c.shape, 7, dtype=dt)
    else:
        data = make_data(c.shape, dt, seed=1)
    (tmp / "spec.json").write_text(json.dumps(spec))
    (tmp / "data.raw").write_bytes(np.ascontiguousarray(data).tobytes())
    run(tool, "write", tmp / "spec.json", tmp / "data.raw", path)
    return data


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_python_blosc2_reads_strata_files(tool: Path, case: Case, tmp_path: Path) -> None:
    path = tmp_path / ("s.b2frame" if case.sparse else "s.b2nd")
    data = write_strata(tool, case, path, tmp_path)
    a = blosc2.open(str(path))
    assert a.shape == case.shape
    assert a.dtype == data.dtype
    if case.chunks:
        assert (a.chunks, a.blocks) == (case.chunks, case.blocks)
    assert a.schunk.typesize == data.dtype.itemsize
    assert np.array_equal(a[...], data), case.name
    if case.has_delta:
        return
    for key in slices_for(case.shape):
        assert np.array_equal(a[key], data[key]), f"{case.name} {key}"


def test_writes_and_resizes_cross_over(tool: Path, tmp_path: Path) -> None:
    """Strata writes a slice and resizes a python-blosc2 file; python-blosc2 reads it and
    writes to it; Strata reads that."""
    path = tmp_path / "x.b2nd"
    data = make_data((50, 40, 30), np.dtype("<f8"))
    blosc2.asarray(data, urlpath=str(path), mode="w", chunks=(20, 16, 16), blocks=(5, 8, 4))
    patch = -make_data((12, 19, 7), np.dtype("<f8"), seed=3)
    (tmp_path / "patch.raw").write_bytes(patch.tobytes())
    run(tool, "set", path, tmp_path / "patch.raw", "14:26,3:40:2,-7:")
    data[14:26, 3:40:2, -7:] = patch
    assert np.array_equal(blosc2.open(str(path))[...], data)
    run(tool, "resize", path, "57,33,30")
    grown = np.zeros((57, 33, 30), dtype=data.dtype)
    grown[:50] = data[:, :33]
    a = blosc2.open(str(path))
    assert a.shape == (57, 33, 30)
    assert np.array_equal(a[...], grown)
    # python-blosc2 writes into the resized file; Strata reads both changes.
    a = blosc2.open(str(path), mode="a")
    a[50:57, 0:5, 0] = 9.5
    grown[50:57, 0:5, 0] = 9.5
    a.resize((57, 33, 31))
    grown = np.concatenate([grown, np.zeros((57, 33, 1))], axis=2)
    del a
    for key in slices_for(grown.shape):
        got = strata_slice(tool, path, key, grown.dtype, tmp_path)
        assert np.array_equal(got, grown[keep_dims(key)]), key


def test_sparse_item_rewritten_many_times(tool: Path, tmp_path: Path) -> None:
    """One item of a zeros sparse array written 60 times by Strata: each write makes a new
    chunk file, numbered low enough that python-blosc2 (which checks file numbers against
    cbytes) still opens the directory."""
    path = tmp_path / "z.b2frame"
    c = Case("zeros", (1000,), "<i8", (100,), (100,), make="zeros", sparse=True)
    data = write_strata(tool, c, path, tmp_path)
    for v in range(60):
        (tmp_path / "v.raw").write_bytes(np.int64(v).tobytes())
        run(tool, "set", path, tmp_path / "v.raw", "5")
    data[5] = 59
    files = sorted(p.name for p in path.iterdir())
    assert files == ["00000000.chunk", "chunks.b2frame"], files
    assert np.array_equal(blosc2.open(str(path))[...], data)
    assert np.array_equal(strata_slice(tool, path, (), data.dtype, tmp_path), data)


def test_sparse_writes_cross_over(tool: Path, tmp_path: Path) -> None:
    """A sparse directory made by Strata, written by python-blosc2, read by Strata."""
    path = tmp_path / "d.b2frame"
    c = Case("sparse", (70, 50), "<i4", (32, 32), (8, 16), sparse=True)
    data = write_strata(tool, c, path, tmp_path)
    assert sorted(p.name for p in path.iterdir())[-1] == "chunks.b2frame"
    a = blosc2.open(str(path), mode="a")
    a[60:70, 40:50] = -1
    data[60:70, 40:50] = -1
    del a
    got = strata_slice(tool, path, (), data.dtype, tmp_path)
    assert np.array_equal(got, data)
    run(tool, "resize", path, "20,50")
    assert np.array_equal(blosc2.open(str(path))[...], data[:20])


@pytest.fixture
def zfp_plugin(tool: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A plugin directory holding only the ZFP plugin (built beside the tool), set as
    STRATA_PLUGIN_PATH."""
    lib = tool.parent.parent / "libstrata_zfp.so"
    if not lib.is_file():
        pytest.fail(f"no {lib}: build it (cargo build --release --workspace)")
    plugins = tmp_path / "plugins"
    plugins.mkdir()
    shutil.copy(lib, plugins)
    monkeypatch.setenv("STRATA_PLUGIN_PATH", str(plugins))
    return plugins


@pytest.mark.parametrize("codec,meta", [(blosc2.Codec.ZFP_RATE, 40), (blosc2.Codec.ZFP_ACC, -2)],
                         ids=["zfp_rate", "zfp_acc"])
def test_zfp_arrays_both_ways(tool: Path, zfp_plugin: Path, tmp_path: Path, codec, meta) -> None:
    """ZFP needs the array's shapes (CParams.nd / DParams.nd): python-blosc2's ZFP .b2nd read
    here, sliced, equal to what python-blosc2 decodes; Strata's read there equal to what Strata
    decodes, and close to the data."""
    grid = np.load(DATA / "levitus_temp.npy")[:, :96, :200]
    data = np.where(grid > -1e9, grid, 0).astype("<f4")
    chunks, blocks = (8, 48, 100), (4, 16, 20)
    cparams = blosc2.CParams(codec=codec, codec_meta=meta & 0xFF, filters=[blosc2.Filter.NOFILTER], nthreads=1)
    theirs = tmp_path / "zfp_py.b2nd"
    blosc2.asarray(data, urlpath=str(theirs), mode="w", chunks=chunks, blocks=blocks, cparams=cparams)
    decoded = blosc2.open(str(theirs))[...]
    for key in slices_for(data.shape):
        got = strata_slice(tool, theirs, key, data.dtype, tmp_path)
        assert np.array_equal(got, decoded[keep_dims(key)]), key
    ours = tmp_path / "zfp_st.b2nd"
    spec = {"shape": list(data.shape), "dtype": "<f4", "chunkshape": list(chunks), "blockshape": list(blocks),
            "codec": codec.value, "codec_meta": meta & 0xFF, "clevel": 5, "filters": [0] * 6}
    (tmp_path / "spec.json").write_text(json.dumps(spec))
    (tmp_path / "data.raw").write_bytes(data.tobytes())
    run(tool, "write", tmp_path / "spec.json", tmp_path / "data.raw", ours)
    mine = strata_slice(tool, ours, (), data.dtype, tmp_path)
    back = blosc2.open(str(ours))[...]
    assert np.array_equal(back, mine)
    # zfp 1.0.1 on both sides: the same bytes decode the same everywhere, and Strata's
    # chunks are C-Blosc2's.
    assert np.array_equal(back, decoded)
    assert float(np.abs(back.astype(np.float64) - data).max()) < 1.0
