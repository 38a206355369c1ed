"""Frames (super-chunks on disk and in memory) against python-blosc2, both ways.

The same operations run on both sides: python-blosc2 writes a frame, Strata writes one (through
examples/frame_tool, a thin layer over strata::schunk until the CLI has frame commands), and
then: Strata reads python-blosc2's frame with identical data and metadata, python-blosc2 reads
Strata's, and for BloscLZ/LZ4 on one thread the two files are identical byte for byte
(header, chunks, offsets index and trailer). For other codecs the header agrees but for cbytes
and frame_len. Interrupted writes (Strata's crash-safe protocol) leave frames python-blosc2
opens with either the old or the new content.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import blosc2
import msgpack
import numpy as np
import pytest
from helpers import REPO, assert_same

TOOL = Path(os.environ.get("STRATA_FRAME_TOOL", REPO / "target" / "release" / "examples" / "frame_tool"))
CODEC_IDS = {"blosclz": 0, "lz4": 1, "lz4hc": 2, "zlib": 4, "zstd": 5}
KINDS = {"zero": blosc2.SpecialValue.ZERO, "nan": blosc2.SpecialValue.NAN, "uninit": blosc2.SpecialValue.UNINIT}


@pytest.fixture(scope="module")
def tool() -> Path:
    if not TOOL.is_file():
        pytest.fail(f"no frame_tool at {TOOL}: cargo build --release --example frame_tool")
    return TOOL


def run(tool: Path, *args) -> str:
    res = subprocess.run([str(tool), *map(str, args)], capture_output=True, text=True, check=False)
    if res.returncode != 0:
        raise AssertionError(f"frame_tool {args[0]} failed: {res.stderr.strip()}")
    return res.stdout


def dump(tool: Path, path: Path, tmp: Path) -> tuple[dict, bytes]:
    out = tmp / "dump.bin"
    info = json.loads(run(tool, "dump", path, out))
    return info, out.read_bytes()


def packb(v) -> str:
    return msgpack.packb(v, use_bin_type=True).hex()


def py_cparams(codec: str, typesize: int, clevel: int = 5, filters=(blosc2.Filter.SHUFFLE,)) -> dict:
    return {
        "codec": getattr(blosc2.Codec, codec.upper()),
        "clevel": clevel,
        "typesize": typesize,
        "nthreads": 1,
        "splitmode": blosc2.SplitMode.FORWARD_COMPAT_SPLIT,
        "filters": list(filters),
    }


def st_cparams(codec: str, typesize: int, clevel: int = 5, filters=(1,)) -> dict:
    fl = [int(f) for f in filters] + [0] * (6 - len(filters))
    return {"codec": CODEC_IDS[codec], "clevel": clevel, "typesize": typesize, "nthreads": 1, "splitmode": 4, "filters": fl}


def python_frame(path: Path, location: str, ops: list, raw: bytes, cparams: dict, meta: dict, chunksize: int) -> None:
    """Runs `ops` with python-blosc2, leaving the frame at `path`."""
    storage = {"urlpath": None if location == "memory" else str(path), "contiguous": location != "dir", "mode": "w"}
    s = blosc2.SChunk(chunksize=chunksize, cparams=cparams, dparams={"nthreads": 1}, meta=meta, **storage)
    for op in ops:
        kind = op["op"]
        piece = raw[op.get("start", 0) : op.get("stop", 0)]
        if kind == "append":
            s.append_data(piece)
        elif kind == "insert":
            s.insert_data(op["n"], piece, copy=True)
        elif kind == "update":
            s.update_data(op["n"], piece, copy=True)
        elif kind == "delete":
            s.delete_chunk(op["n"])
        elif kind == "special":  # zeros: C-Blosc2's compressor makes a special chunk of them
            chunk = blosc2.compress2(bytes(op["nbytes"]), **cparams)
            {"append": lambda: s.append_chunk(chunk), "insert": lambda: s.insert_chunk(op["n"], chunk), "update": lambda: s.update_chunk(op["n"], chunk)}[op.get("how", "append")]()
        elif kind == "fill_special":
            s.fill_special(op["nitems"], KINDS[op["kind"]])
        elif kind == "vlmeta":
            s.vlmeta[op["name"]] = op["value"]
        elif kind == "vlmeta_delete":
            del s.vlmeta[op["name"]]
        elif kind == "meta_update":
            s.meta[op["name"]] = op["value"]
        elif kind == "reopen" and location != "memory":
            del s
            s = blosc2.open(str(path), mode="a")
        elif kind != "reopen":
            raise ValueError(kind)
    if location == "memory":
        path.write_bytes(s.to_cframe())
    del s


def strata_frame(tool: Path, tmp: Path, path: Path, location: str, ops: list, raw: bytes, cparams: dict, meta: dict) -> None:
    """Runs `ops` with Strata (frame_tool write), leaving the frame at `path`."""
    st_ops = []
    for op in ops:
        op = dict(op)
        if "value" in op:
            op["hex"] = packb(op.pop("value"))
        if op["op"] == "special":
            op["kind"] = "zero"
        st_ops.append(op)
    spec = {"location": location, "cparams": cparams, "metalayers": {k: packb(v) for k, v in meta.items()}, "ops": st_ops}
    (tmp / "spec.json").write_text(json.dumps(spec))
    (tmp / "raw.bin").write_bytes(raw)
    run(tool, "write", tmp / "spec.json", tmp / "raw.bin", path)


def expected_data(path: Path) -> bytes:
    s = blosc2.open(str(path))
    return s[:] if s.nbytes else b""


def check_python_reads(path: Path, want: bytes, meta: dict, vlmeta: dict) -> None:
    s = blosc2.open(str(path))
    assert_same(s[:] if s.nbytes else b"", want, f"python-blosc2 reading Strata's {path.name}")
    for k, v in meta.items():
        assert s.meta[k] == v
    assert {k: s.vlmeta[k] for k in s.vlmeta} == vlmeta


def check_strata_reads(tool: Path, tmp: Path, path: Path) -> None:
    info, data = dump(tool, path, tmp)
    s = blosc2.open(str(path))
    assert_same(data, s[:] if s.nbytes else b"", f"Strata reading python-blosc2's {path.name}")
    assert info["nchunks"] == s.nchunks and info["nbytes"] == s.nbytes
    assert info["typesize"] == s.typesize
    assert {k: msgpack.unpackb(bytes.fromhex(v)) for k, v in info["metalayers"].items()} == {k: s.meta[k] for k in s.meta.keys()}
    assert {k: msgpack.unpackb(bytes.fromhex(v)) for k, v in info["vlmetalayers"].items()} == {k: s.vlmeta[k] for k in s.vlmeta}


def first_difference(a: bytes, b: bytes) -> str:
    n = min(len(a), len(b))
    at = next((i for i in range(n) if a[i] != b[i]), n)
    return f"{len(a)} vs {len(b)} bytes, first difference at byte {at}: {a[at:at + 16].hex()} vs {b[at:at + 16].hex()}"


CHUNK = 4000


def data(typesize: int, nchunks: float, seed: int = 0) -> bytes:
    n = int(CHUNK * nchunks)
    rng = np.random.default_rng(seed)
    arr = (np.cumsum(rng.integers(0, 5, n // 4 + 1)) % 1000).astype(np.uint32).tobytes()
    return arr[:n]


SCENARIOS = {
    "appends": lambda: [{"op": "append", "start": i * CHUNK, "stop": (i + 1) * CHUNK} for i in range(4)]
    + [{"op": "append", "start": 4 * CHUNK, "stop": 4 * CHUNK + 1000}],
    "specials-and-vlmeta": lambda: [
        {"op": "append", "start": 0, "stop": CHUNK},
        {"op": "special", "nbytes": CHUNK},
        {"op": "append", "start": CHUNK, "stop": 2 * CHUNK},
        {"op": "vlmeta", "name": "vl", "value": "hello"},
        {"op": "vlmeta", "name": "t", "value": [1, 2.5, "x"]},
        {"op": "vlmeta", "name": "vl", "value": {"a": 1}},
        {"op": "vlmeta_delete", "name": "t"},
        {"op": "meta_update", "name": "abc", "value": [7, 8, 9]},
    ],
    "insert-update-delete": lambda: [
        *({"op": "append", "start": i * CHUNK, "stop": (i + 1) * CHUNK} for i in range(4)),
        {"op": "insert", "n": 1, "start": 5 * CHUNK, "stop": 6 * CHUNK},
        {"op": "update", "n": 0, "start": 7 * CHUNK, "stop": 8 * CHUNK},
        {"op": "update", "n": 2, "start": 0, "stop": CHUNK},
        {"op": "special", "how": "update", "n": 3, "nbytes": CHUNK},
        {"op": "update", "n": 3, "start": 2 * CHUNK, "stop": 3 * CHUNK},
        {"op": "delete", "n": 1},
        {"op": "special", "how": "insert", "n": 0, "nbytes": CHUNK},
        {"op": "reopen"},
        {"op": "append", "start": 9 * CHUNK, "stop": 10 * CHUNK},
        {"op": "delete", "n": 4},
    ],
}


@pytest.mark.parametrize("location", ["file", "memory"])
@pytest.mark.parametrize("codec,typesize", [("blosclz", 4), ("lz4", 1), ("lz4", 8), ("blosclz", 2)])
@pytest.mark.parametrize("scenario", list(SCENARIOS))
def test_same_operations_same_bytes(tool, tmp_path, location, codec, typesize, scenario):
    """BloscLZ/LZ4 frames made by the same operations are identical files, and each side reads
    the other's."""
    ops = SCENARIOS[scenario]()
    raw = data(typesize, 12)
    meta = {"abc": [1, 2, 3]}
    py, st = tmp_path / "py.b2frame", tmp_path / "st.b2frame"
    python_frame(py, location, ops, raw, py_cparams(codec, typesize), meta, CHUNK)
    strata_frame(tool, tmp_path, st, location, ops, raw, st_cparams(codec, typesize), meta)
    a, b = py.read_bytes(), st.read_bytes()
    assert a == b, first_difference(a, b)
    check_strata_reads(tool, tmp_path, py)
    s = blosc2.open(str(py))
    check_python_reads(st, expected_data(py), {k: s.meta[k] for k in s.meta.keys()}, {k: s.vlmeta[k] for k in s.vlmeta})


@pytest.mark.parametrize("codec", ["zstd", "zlib", "lz4hc"])
@pytest.mark.parametrize("scenario", list(SCENARIOS))
def test_other_codecs_interoperate(tool, tmp_path, codec, scenario):
    """Other codecs compress differently by build, so the bytes differ; data, metadata and the
    fixed header (cbytes and frame_len aside) agree."""
    ops = SCENARIOS[scenario]()
    raw = data(4, 12, seed=1)
    meta = {"abc": [1, 2, 3]}
    py, st = tmp_path / "py.b2frame", tmp_path / "st.b2frame"
    python_frame(py, "file", ops, raw, py_cparams(codec, 4, clevel=3), meta, CHUNK)
    strata_frame(tool, tmp_path, st, "file", ops, raw, st_cparams(codec, 4, clevel=3), meta)
    ha, hb = bytearray(py.read_bytes()[:87]), bytearray(st.read_bytes()[:87])
    for h in (ha, hb):
        h[16:24] = bytes(8)  # frame_len
        h[39:47] = bytes(8)  # cbytes
    assert ha == hb
    check_strata_reads(tool, tmp_path, py)
    s = blosc2.open(str(py))
    check_python_reads(st, s[:], {"abc": s.meta["abc"]}, {k: s.vlmeta[k] for k in s.vlmeta})


@pytest.mark.parametrize("scenario", ["appends", "specials-and-vlmeta", "insert-update-delete"])
def test_sparse_frames(tool, tmp_path, scenario):
    """Sparse frames (directories): each side reads the other's; append-only directories have
    identical chunks.b2frame and chunk files."""
    ops = SCENARIOS[scenario]()
    raw = data(4, 12, seed=2)
    meta = {"abc": [1, 2, 3]}
    py, st = tmp_path / "py.b2frame", tmp_path / "st.b2frame"
    python_frame(py, "dir", ops, raw, py_cparams("lz4", 4), meta, CHUNK)
    strata_frame(tool, tmp_path, st, "dir", ops, raw, st_cparams("lz4", 4), meta)
    check_strata_reads(tool, tmp_path, py)
    s = blosc2.open(str(py))
    check_python_reads(st, s[:], {"abc": s.meta["abc"]}, {k: s.vlmeta[k] for k in s.vlmeta})
    if scenario != "insert-update-delete":
        names = sorted(p.name for p in py.iterdir())
        assert names == sorted(p.name for p in st.iterdir())
        assert "00000000.chunk" in names
        for name in names:
            a, b = (py / name).read_bytes(), (st / name).read_bytes()
            assert a == b, f"{name}: {first_difference(a, b)}"


@pytest.mark.parametrize("kind", ["zero", "nan", "uninit"])
@pytest.mark.parametrize("location", ["file", "dir"])
def test_fill_special(tool, tmp_path, kind, location):
    """fill_special: no chunk stored, one repeated offsets entry; the same bytes as C-Blosc2."""
    nitems = 10_000_000 + 17
    ts = 8 if kind == "nan" else 4
    py, st = tmp_path / "py.b2frame", tmp_path / "st.b2frame"
    ops = [{"op": "fill_special", "nitems": nitems, "kind": kind, "chunksize": 1 << 20}]
    python_frame(py, location, ops, b"", py_cparams("blosclz", ts), {}, 1 << 20)
    strata_frame(tool, tmp_path, st, location, ops, b"", st_cparams("blosclz", ts), {})
    index = "chunks.b2frame" if location == "dir" else ""
    a, b = (py / index).read_bytes(), (st / index).read_bytes()
    assert a == b, first_difference(a, b)
    info, got = dump(tool, py, tmp_path)
    assert info["nchunks"] == (nitems * ts + (1 << 20) - 1) >> 20
    assert all(c["kind"] == kind and c["cbytes"] == 0 for c in info["chunks"])
    if kind == "nan":
        assert np.isnan(np.frombuffer(got, np.float64)).all()
    elif kind == "zero":
        assert not np.frombuffer(got, np.uint8).any()


def test_variable_chunks_from_cblosc2_3x(tool, tmp_path):
    """C-Blosc2 3.x frames with chunks of different sizes (chunksize 0, version 3) read."""
    path = tmp_path / "var.b2frame"
    s = blosc2.SChunk(chunksize=1000, urlpath=str(path), contiguous=True, mode="w", cparams={"typesize": 1})
    pieces = [bytes(range(100)) * 3, b"x" * 5000, b"yz" * 700]
    for p in pieces:
        s.append_chunk(blosc2.compress2(p, typesize=1))
    del s
    assert path.read_bytes()[25] & 0x40  # variable chunks
    info, got = dump(tool, path, tmp_path)
    assert got == b"".join(pieces) and info["chunksize"] is None and info["nchunks"] == 3


@pytest.mark.parametrize("filters", [(blosc2.Filter.SHUFFLE,), (blosc2.Filter.DELTA, blosc2.Filter.SHUFFLE)])
def test_lazy_partial_reads(tool, tmp_path, filters):
    """Byte ranges of a chunk of many blocks, read lazily from python-blosc2's file."""
    path = tmp_path / "big.b2frame"
    arr = (np.arange(2_000_000, dtype=np.float64) * 0.25).tobytes()
    cp = {"typesize": 8, "blocksize": 64 * 1024, "nthreads": 4, "filters": list(filters), "codec": blosc2.Codec.ZSTD}
    s = blosc2.SChunk(chunksize=len(arr) // 2, urlpath=str(path), contiguous=True, mode="w", cparams=cp)
    s.append_data(arr[: len(arr) // 2])
    s.append_data(arr[len(arr) // 2 :])
    del s
    half = len(arr) // 2
    for n, (a, b) in [(0, (0, 8)), (1, (123_457, 400_003)), (1, (half - 10, half)), (0, (65_536, 131_072))]:
        out = tmp_path / "r.bin"
        run(tool, "range", path, n, a, b, out)
        assert_same(out.read_bytes(), arr[n * half + a : n * half + b], f"chunk {n} bytes {a}..{b}")


@pytest.mark.parametrize("op", [
    {"op": "append", "start": 0, "stop": CHUNK},
    {"op": "insert", "n": 1, "start": CHUNK, "stop": 2 * CHUNK},
    {"op": "update", "n": 0, "start": 2 * CHUNK, "stop": 3 * CHUNK},
    {"op": "update", "n": 1, "start": 0, "stop": CHUNK // 2 * 2},
    {"op": "delete", "n": 0},
    {"op": "vlmeta", "name": "vl", "hex": packb(list(range(50)))},
    {"op": "vlmeta_delete", "name": "old"},
], ids=lambda o: o["op"] + str(o.get("n", "")))
def test_interrupted_writes_leave_frames_cblosc2_opens(tool, tmp_path, op):
    """An operation stopped after each of its writes leaves a frame that python-blosc2 opens,
    holding either the data before the operation or the data after it."""
    raw = data(4, 4, seed=3)
    base = [
        {"op": "append", "start": 0, "stop": CHUNK},
        {"op": "append", "start": CHUNK, "stop": 2 * CHUNK},
        {"op": "vlmeta", "name": "old", "hex": packb("x")},
    ]
    spec = {"cparams": st_cparams("lz4", 4), "metalayers": {"m": packb([1])}}
    (tmp_path / "raw.bin").write_bytes(raw)

    def state(ops, k):
        (tmp_path / "spec.json").write_text(json.dumps({**spec, "ops": ops}))
        out = tmp_path / f"s{k}.b2frame"
        fired = run(tool, "crash", tmp_path / "spec.json", tmp_path / "raw.bin", out, k).strip() == "fired"
        s = blosc2.open(str(out))
        return fired, (s[:] if s.nbytes else b"", dict(s.vlmeta.getall()), s.meta["m"])

    _, before = state([*base, {"op": "vlmeta", "name": "old", "hex": packb("x")}], 10**9)
    _, after = state([*base, op], 10**9)
    assert before != after
    seen = set()
    for k in range(1, 40):
        fired, got = state([*base, op], k)
        assert got in (before, after), f"after write {k}: neither the old nor the new frame"
        seen.add(got == after)
        if not fired:
            break
    assert seen == {False, True}
