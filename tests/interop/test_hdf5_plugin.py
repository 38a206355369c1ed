"""Strata's HDF5 filter plugin (plugins/hdf5, filter 32026) against the real peers, both ways.

Files written by h5py through Strata's plugin (hdf5plugin not imported), hdf5plugin 7.1.0,
PyTables 3.11.1 and Debian's h5repack 1.10.8 through Strata's plugin; read by h5py through
Strata's plugin, h5py + hdf5plugin, PyTables (optimized path and filter only; and through
Strata's plugin, its own filter class unregistered) and Debian's h5dump 1.10.8 through
Strata's plugin, which loads from one directory in h5py (HDF5 2.0), PyTables (1.14) and h5dump
(1.10.8).
The datasets (hdf5_cases.py): every codec with every Blosc2 filter, ranks 1-3, 9, 10 and 16,
one item, ten random items, 1 MiB of random bytes, zeros, Fletcher32 after and before Blosc2,
HDF5's shuffle before Blosc2, compound and array types, big-endian, partly written, a 4 MiB
chunk, ZFP; PyTables' CArray, EArray and Table. Then the peers' known bugs with exact values,
and corrupt chunks.
"""

from __future__ import annotations

import struct

import blosc2
import numpy as np
import pytest
from hdf5_cases import H5PY_CASES, PYTABLES_CASES, case, expected
from hdf5_peers import Peers

# hdf5plugin stores ranks 9 to 16 as b2nd frames with the rank in cd_values[7]; PyTables
# 3.11.1's filter refuses a rank above 8, so it cannot read them (on either of its paths).
# Strata's plugin writes those ranks as plain frames, which PyTables reads.
HIGH_RANKS = {"i2_rank9", "i2_rank10", "u1_rank16"}
PEER_LIMITS = {("hdf5plugin", "pytables"): HIGH_RANKS, ("hdf5plugin", "pytables-filter"): HIGH_RANKS}

H5REPACK = {
    "h5repack": ("-f", "UD=32026,0,0"),  # no values: Strata's defaults (BloscLZ 5, shuffle)
    "h5repack_zstd": ("-f", "UD=32026,1,7,0,0,0,0,5,2,5"),  # zstd 5, bitshuffle, optional
}
PAIRS = [
    *(("strata", r) for r in ("strata", "hdf5plugin", "pytables", "pytables-filter", "pytables-plugin", "h5dump")),
    *(("hdf5plugin", r) for r in ("strata", "h5dump", "pytables", "pytables-filter", "pytables-plugin")),
    *(("pytables", r) for r in ("strata", "h5dump", "pytables-plugin")),
    *((w, r) for w in H5REPACK for r in ("strata", "hdf5plugin", "pytables", "h5dump")),
]


class Files:
    """The files of each writer, made once per session, and what each reader gets from them."""

    def __init__(self, peers: Peers, root) -> None:
        self.peers, self.root = peers, root
        self.paths: dict = {}
        self.reads: dict = {}

    def path(self, writer: str):
        if writer not in self.paths:
            path = self.root / f"{writer}.h5"
            if writer in H5REPACK:
                res = self.peers.h5repack(self.path("raw"), path, *H5REPACK[writer])
                assert res.returncode == 0, res.stderr
            else:
                self.peers.write(writer, path)
            self.paths[writer] = path
        return self.paths[writer]

    def read(self, writer: str, reader: str) -> tuple[dict, dict]:
        if (writer, reader) not in self.reads:
            out = self.root / f"{writer}-by-{reader}.npz"
            self.reads[writer, reader] = self.peers.read(reader, self.path(writer), out)
        return self.reads[writer, reader]


@pytest.fixture(scope="session")
def files(peers: Peers, tmp_path_factory) -> Files:
    return Files(peers, tmp_path_factory.mktemp("hdf5-files"))


def names_of(writer: str) -> list[str]:
    return [c[0] for c in PYTABLES_CASES] if writer == "pytables" else [c.name for c in H5PY_CASES]


def same_values(got: np.ndarray, want: np.ndarray) -> bool:
    if got.shape != want.shape:
        return False
    if want.dtype.names:
        return all(np.array_equal(got[n], want[n]) for n in want.dtype.names)
    return np.array_equal(got, want)


@pytest.mark.parametrize(("writer", "reader"), PAIRS, ids=[f"{w}-by-{r}" for w, r in PAIRS])
def test_every_dataset_reads_as_written(files: Files, writer: str, reader: str) -> None:
    arrays, errors = files.read(writer, reader)
    limits = PEER_LIMITS.get((writer, reader), set())
    assert set(errors) == limits, {k: v[-300:] for k, v in errors.items() if k not in limits}
    wrong = []
    for name in names_of(writer):
        if name in limits:
            continue
        lossy = writer != "pytables" and case(name).lossy
        # Lossy data (ZFP, trunc_prec) must decode to what C-Blosc2 (hdf5plugin) decodes.
        want = files.read(writer, "hdf5plugin")[0][name] if lossy else expected(name)
        if not same_values(arrays[name], want):
            wrong.append(name)
    assert not wrong, f"{reader} reads other values than {writer} wrote in {wrong}"


def test_lossy_datasets_stay_close(files: Files) -> None:
    """The lossy cases really carry the data (not, say, zeros): ZFP within its error bound for
    the accuracy mode, trunc_prec within a relative error of 2^-1 and every reader agreeing."""
    arrays, _ = files.read("strata", "strata")
    want = expected("zfp_acc_2d")
    assert 0 < np.abs(arrays["zfp_acc_2d"] - want).max() <= 1.0  # zfp_acc, meta 0: tolerance 1
    for name in ("zstd_trunc_prec_2d", "zstd_trunc_prec_1d"):
        got, want = arrays[name], expected(name)
        assert np.allclose(got, want, rtol=0.5), name
    # h5py's first read decoded Strata's chunks with C-Blosc2 (hdf5plugin) and PyTables too.
    for reader in ("hdf5plugin", "pytables"):
        other, _ = files.read("strata", reader)
        for c in H5PY_CASES:
            if c.lossy:
                assert np.array_equal(other[c.name], arrays[c.name]), (reader, c.name)


def chunk_facts(peers: Peers, path, names: list[str]) -> dict:
    """For each dataset: its cd_values and, per stored chunk, (filter_mask, size, the chunk's
    bytes as read_direct_chunk gives them), read by h5py without any filter."""
    code = f"""
import h5py, json, base64
out = {{}}
with h5py.File({str(path)!r}) as f:
    for name in {names!r}:
        ds = f[name]
        chunks = []
        for i in range(ds.id.get_num_chunks()):
            info = ds.id.get_chunk_info(i)
            mask, raw = ds.id.read_direct_chunk(info.chunk_offset)
            chunks.append([info.filter_mask, info.size, base64.b64encode(raw).decode()])
        out[name] = {{"cd": list(ds.id.get_create_plist().get_filter_by_id(32026)[1]), "chunks": chunks}}
print(json.dumps(out))
"""
    import base64
    import json

    res = peers.python("pytables", code)  # no filter needed to read stored chunks
    facts = json.loads(res.stdout)
    for f in facts.values():
        f["chunks"] = [(m, s, base64.b64decode(b)) for m, s, b in f["chunks"]]
    return facts


def test_strata_writes_b2nd_frames_up_to_rank_8_and_plain_frames_above(files: Files, peers: Peers) -> None:
    facts = chunk_facts(peers, files.path("strata"), ["lz4_shuffle_2d", "f4_3d", "i2_rank9", "u1_rank16", "noopts_2d"])
    assert facts["lz4_shuffle_2d"]["cd"] == [1, 0, 4, 12000, 5, 1, 1, 2, 50, 60]
    assert facts["f4_3d"]["cd"] == [1, 0, 4, 8 * 45 * 64 * 4, 1, 1, 5, 3, 8, 45, 64]
    assert facts["i2_rank9"]["cd"] == [1, 0, 2, 1024, 5, 1, 1]
    assert facts["u1_rank16"]["cd"] == [1, 0, 1, 65536, 5, 2, 5]
    assert facts["noopts_2d"]["cd"] == [1, 0, 4, 20000, 5, 1, 0, 2, 50, 100]
    for name, ndim in (("lz4_shuffle_2d", 2), ("f4_3d", 3)):
        for mask, _, raw in facts[name]["chunks"]:
            arr = blosc2.ndarray_from_cframe(raw)
            assert mask == 0 and arr.ndim == ndim and arr.shape == case(name).chunks
    for name in ("i2_rank9", "u1_rank16"):
        mask, _, raw = facts[name]["chunks"][0]
        schunk = blosc2.schunk_from_cframe(raw)
        assert mask == 0 and "b2nd" not in schunk.meta and schunk.nbytes == facts[name]["cd"][3]


def test_defaults_are_filled_for_rank_1_where_hdf5plugin_stores_raw(files: Files, peers: Peers) -> None:
    """h5py's compression=32026 without options: hdf5plugin keeps 4 cd_values, refuses to
    compress and, the filter being optional, HDF5 stores every chunk raw (filter_mask 1),
    silently. Strata's plugin fills in clevel 5, shuffle and BloscLZ."""
    ours = chunk_facts(peers, files.path("strata"), ["noopts_1d"])["noopts_1d"]
    theirs = chunk_facts(peers, files.path("hdf5plugin"), ["noopts_1d"])["noopts_1d"]
    assert ours["cd"] == [1, 0, 4, 400, 5, 1, 0]
    assert theirs["cd"] == [1, 0, 4, 400]
    assert {m for m, _, _ in theirs["chunks"]} == {1}
    assert all(raw == expected("noopts_1d")[i * 100:(i + 1) * 100].tobytes() for i, (_, _, raw) in enumerate(theirs["chunks"]))
    assert {m for m, _, _ in ours["chunks"]} == {0}
    assert all(blosc2.schunk_from_cframe(raw).nbytes == 400 for _, _, raw in ours["chunks"])


def test_buffer_size_of_tiny_and_incompressible_chunks(files: Files, peers: Peers) -> None:
    """hdf5plugin#404: the filter returned a frame larger than the chunk with *buf_size still
    the chunk's size; HDF5 2.2 rejects that and the chunk is lost. Strata's frames for 1 item,
    10 random doubles and 1 MiB of random bytes are stored whole (larger than the data) and read
    back exactly, through HDF5 2.0 (h5py) and 1.10.8 (h5repack, then h5dump). c-blosc#293: the
    1-item chunk is a frame too (filter_mask 0), and nothing is printed."""
    names = ["one_f4", "ten_f8", "random_1mib"]
    for writer in ("strata", "h5repack"):
        facts = chunk_facts(peers, files.path(writer), names)
        for name in names:
            (mask, size, raw), = facts[name]["chunks"]
            nbytes = expected(name).nbytes
            assert mask == 0 and size == len(raw) > nbytes, (writer, name, size)
            assert blosc2.schunk_from_cframe(raw).decompress_chunk(0) == expected(name).tobytes()
    res = peers.python("strata", "import numpy, h5py\n"
                       "with h5py.File('/dev/null', 'w', driver='core', backing_store=False) as f:\n"
                       "    f.create_dataset('x', data=numpy.float32([1.5]), compression=32026)\n"
                       "    assert f['x'][0] == 1.5\n")
    assert res.stderr == "" and res.stdout == ""
    for name in names:
        out = files.root / f"h5repack-{name}.bin"
        assert peers.h5dump("-d", f"/{name}", "-b", "NATIVE", "-o", out, files.path("h5repack")).returncode == 0
        assert out.read_bytes() == expected(name).tobytes(), name


def test_fletcher32_after_blosc2_is_the_frame_and_its_checksum(files: Files, peers: Peers) -> None:
    """h5py and PyTables >= 3.10 put Fletcher32 after Blosc2: each chunk is a whole frame and 4
    checksum bytes, which HDF5 verifies before the filter runs (a flipped checksum fails)."""
    facts = chunk_facts(peers, files.path("strata"), ["fletcher32_2d"])["fletcher32_2d"]
    for mask, size, raw in facts["chunks"]:
        frame_len = struct.unpack(">Q", raw[16:24])[0]  # the header's msgpack uint64 at byte 15
        assert mask == 0 and size == frame_len + 4
        assert blosc2.ndarray_from_cframe(raw[:-4]).shape == (50, 60)


def test_fletcher32_before_blosc2_keeps_the_checksum_bytes(files: Files, peers: Peers) -> None:
    """PyTables#1162: with Fletcher32 first, the filter receives the chunk and 4 checksum bytes;
    a b2nd frame of the chunk's items would drop them and the checksum would fail on read.
    Strata writes a plain frame of all 12004 bytes."""
    facts = chunk_facts(peers, files.path("strata"), ["fletcher32_first_2d"])["fletcher32_first_2d"]
    for mask, _, raw in facts["chunks"]:
        schunk = blosc2.schunk_from_cframe(raw)
        assert mask == 0 and schunk.nbytes == 50 * 60 * 4 + 4 and "b2nd" not in schunk.meta


def test_bytedelta_meta_0_chunks_written_directly(peers: Peers, tmp_path) -> None:
    """PyTables#1109: a chunk written with H5Dwrite_chunk with shuffle + bytedelta, meta 0 (the
    frame's typesize), failed to decode when the filter passed no super-chunk. Strata's plugin
    and C-Blosc2's read it, exactly."""
    data = expected("f4_3d")[:8, :45, :64].copy()
    schunk = blosc2.SChunk(chunksize=data.nbytes, data=data, cparams={
        "typesize": 4, "codec": blosc2.Codec.ZSTD,
        "filters": [blosc2.Filter.SHUFFLE, blosc2.Filter.BYTEDELTA], "filters_meta": [0, 0]})
    frame = tmp_path / "bytedelta.b2frame"
    frame.write_bytes(schunk.to_cframe())
    path = tmp_path / "bytedelta.h5"
    peers.python("hdf5plugin", f"""
import h5py, pathlib
with h5py.File({str(path)!r}, 'w') as f:
    ds = f.create_dataset('x', shape=(8, 45, 64), dtype='<f4', chunks=(8, 45, 64), compression=32026)
    ds.id.write_direct_chunk((0, 0, 0), pathlib.Path({str(frame)!r}).read_bytes())
""")
    check = f"import h5py, numpy\nwith h5py.File({str(path)!r}) as f:\n    print(f['x'][()].tobytes().hex())"
    for who in ("strata", "hdf5plugin"):
        assert bytes.fromhex(peers.python(who, check).stdout.strip()) == data.tobytes(), who


def test_pytables_reads_strata_high_ranks_through_its_filter(files: Files) -> None:
    arrays, errors = files.read("strata", "pytables-filter")
    assert not errors
    for name in HIGH_RANKS:
        assert np.array_equal(arrays[name], expected(name))
    _, errors = files.read("hdf5plugin", "pytables-filter")
    assert set(errors) == HIGH_RANKS and all("filter returned failure" in e for e in errors.values())


def test_pytables_hdf5_reads_through_strata_plugin_alone(files: Files, peers: Peers) -> None:
    """With PyTables' own filter class unregistered, its HDF5 reads 32026 datasets only through
    a plugin: without HDF5_PLUGIN_PATH the read fails, with Strata's plugin directory it gives
    the data (the `pytables-plugin` pairs above check every dataset), hdf5plugin's ranks 9-16
    included, which PyTables' own filter refuses."""
    code = f"""
import os, hdf5_cases, tables
hdf5_cases.unregister_pytables_filter()
os.environ["BLOSC2_FILTER"] = "1"
with tables.open_file({str(files.path("hdf5plugin"))!r}) as f:
    try:
        f.get_node("/zstd_shuffle_2d").read()
    except Exception as e:
        print("failed:", type(e).__name__)
    else:
        print("read")
"""
    assert peers.python("pytables", code).stdout.strip() == "failed: HDF5ExtError"
    assert peers.python("pytables-plugin", code).stdout.strip() == "read"
    arrays, errors = files.read("hdf5plugin", "pytables-plugin")
    assert not errors
    for name in HIGH_RANKS:
        assert np.array_equal(arrays[name], expected(name)), name


def test_probing_starts_no_thread_and_the_first_chunk_starts_the_runtime(peers: Peers) -> None:
    """HDF5 opens every library of its plugin directories to ask for its filter: that starts no
    thread. Strata's workers start on the first chunk, and the process still exits cleanly when
    HDF5 closes its plugins at exit (the library stays mapped for its threads)."""
    code = """
import os, h5py, numpy
from h5py import h5z
threads = lambda: len(os.listdir("/proc/self/task"))
before = threads()
assert h5z.filter_avail(32026)
probed = threads()
data = numpy.arange(200_000, dtype="f4").reshape(400, 500)
with h5py.File("/dev/null", "w", driver="core", backing_store=False) as f:
    f.create_dataset("x", data=data, chunks=(200, 500), compression=32026)
    assert numpy.array_equal(f["x"][()], data)
print(before, probed, threads())
"""
    res = peers.python("strata", code)
    before, probed, used = map(int, res.stdout.split())
    assert probed == before and used > before, res.stdout
    assert res.stderr == ""


CORRUPT = """
import h5py, numpy, sys
with h5py.File({path!r}, 'a') as f:
    ds = f['x']
    _, good = ds.id.read_direct_chunk((0, 0))
    bad = {make}
    ds.id.write_direct_chunk((0, 0), bad)
    try:
        ds[:50, :60]
    except OSError as e:
        print('failed:', e)
    else:
        print('decoded')
"""


@pytest.mark.parametrize(("what", "make"), [
    ("truncated", "good[:len(good) // 2]"),
    ("header only", "good[:90]"),
    ("empty", "b'\\0' * 4"),
    ("garbage", "bytes(range(256)) * 4"),
    ("flipped frame_len", "good[:17] + bytes(8) + good[25:]"),
    ("flipped bstarts", "good[:200] + bytes(b ^ 0xff for b in good[200:260]) + good[260:]"),
])
def test_corrupt_chunks_fail_the_read_without_a_crash(peers: Peers, tmp_path, what: str, make: str) -> None:
    path = tmp_path / "corrupt.h5"
    peers.python("strata", f"""
import h5py, hdf5_cases
with h5py.File({str(path)!r}, 'w') as f:
    f.create_dataset('x', data=hdf5_cases.expected('zstd_shuffle_2d'), chunks=(50, 60), compression=32026)
""")
    res = peers.python("strata", CORRUPT.format(path=str(path), make=make), check=False)
    assert res.returncode == 0, f"{what}: the reader died ({res.returncode}): {res.stderr[-2000:]}"
    assert res.stdout.startswith("failed:"), (what, res.stdout)
    assert res.stderr == "", res.stderr
    dump = peers.h5dump("--enable-error-stack", "-d", "/x", path)
    assert dump.returncode not in (0, -11, -6), (what, dump.returncode)
    assert "blosc2_filter (decompress)" in dump.stderr, (what, dump.stderr[-2000:])


def test_a_frame_that_contradicts_the_cd_values_fails_with_the_reason(peers: Peers, tmp_path) -> None:
    """A chunk holding a b2nd frame of shape (60, 50) in a dataset whose cd_values say (50, 60):
    the read fails, and HDF5's error stack says why."""
    path = tmp_path / "lying.h5"
    other = tmp_path / "other.b2nd"
    other.write_bytes(blosc2.asarray(np.zeros((60, 50), "f4"), chunks=(60, 50), blocks=(30, 50)).to_cframe())
    peers.python("strata", f"""
import h5py, pathlib
with h5py.File({str(path)!r}, 'w') as f:
    ds = f.create_dataset('x', shape=(50, 60), dtype='<f4', chunks=(50, 60), compression=32026)
    ds.id.write_direct_chunk((0, 0), pathlib.Path({str(other)!r}).read_bytes())
""")
    dump = peers.h5dump("--enable-error-stack", "-d", "/x", path)
    assert dump.returncode != 0
    assert "b2nd frame (the cd_values' chunk dims): shape [60, 50] given, [50, 60] expected" in dump.stderr, dump.stderr[-2000:]
