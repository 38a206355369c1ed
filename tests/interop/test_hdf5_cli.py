"""Strata's direct-chunk path through the `strata` CLI against the real peers, both ways.

* `strata export ARRAY.b2nd OUT.h5:/path` (an array made by python-blosc2, its chunks copied
  as stored) and `strata export FILE.h5:/path OUT.h5:/path` (compressed again): read by h5py
  with hdf5plugin, by h5py with Strata's plugin, by PyTables and by Debian's h5dump.
* `strata slice FILE.h5:/path` of files hdf5plugin 7.1.0 and PyTables 3.11.1 wrote: the items
  h5py reads for the same NumPy selection.
* `strata import FILE.h5`: arrays python-blosc2 reads as h5py reads the datasets.
* `strata info FILE.h5 --json`: the datasets with their filters and how they are read.
* The peers' known bugs on the direct path, with exact values: PyTables' optimized read of a
  partly written CArray returns another chunk's data; b2h5py fails on missing and raw-stored
  chunks and skips Fletcher32.
"""

from __future__ import annotations

import json

import blosc2
import numpy as np
import pytest
from hdf5_cases import H5PY_CASES, PYTABLES_CASES, case, expected
from hdf5_peers import Peers
from helpers import Strata


@pytest.fixture(scope="module")
def peer_files(peers: Peers, tmp_path_factory) -> dict:
    root = tmp_path_factory.mktemp("hdf5-cli")
    files = {}
    for writer in ("hdf5plugin", "pytables"):
        files[writer] = root / f"{writer}.h5"
        peers.write(writer, files[writer])
    return files


def npy_of(strata: Strata, spec: str, *args: str) -> np.ndarray:
    out = strata._path(".npy")
    res = strata.run("slice", *args, "-o", out, spec) if args else strata.run("export", spec, out)
    assert res.returncode == 0, res.stderr
    return np.load(out)


SELECTIONS = {
    "zstd_shuffle_2d": ("--start", "3,140", "--stop", "117,2", "--step", "7,-3"),
    "f4_3d": ("--start", "5,10,179", "--stop", "6,80,0", "--step", "1,1,-2"),
    "big_chunk_2d": ("--start", "500", "--stop", "600"),
    "partial_2d": ("--start", "50,0", "--stop", "350,400", "--step", "25,9"),
    "noopts_1d": ("--start", "95", "--stop", "205", "--step", "2"),
    "compound_1d": ("--start", "950", "--stop", "10", "--step", "-31"),
    "fletcher32_2d": ("--start", "60", "--stop", "61"),
    "hdf5shuffle_2d": ("--start", "10", "--stop", "20"),
    "i2_rank10": ("--start", "1,0,1", "--stop", "2,2,2"),
}


def np_selection(args: tuple, ndim: int) -> tuple:
    """The NumPy index the CLI's --start/--stop/--step give."""
    opts = dict(zip(args[::2], args[1::2]))
    get = lambda k: [int(x) for x in opts[k].split(",")] if k in opts else []  # noqa: E731
    start, stop, step = get("--start"), get("--stop"), get("--step")
    return tuple(slice(start[i] if i < len(start) else None, stop[i] if i < len(stop) else None,
                       step[i] if i < len(step) else None) for i in range(ndim))


@pytest.mark.parametrize("name", SELECTIONS)
def test_slices_of_hdf5plugin_files_match_h5py(strata: Strata, peer_files: dict, name: str) -> None:
    spec = f"{peer_files['hdf5plugin']}:/{name}"
    got = npy_of(strata, spec, *SELECTIONS[name])
    want = expected(name)[np_selection(SELECTIONS[name], len(case(name).shape))]
    assert got.dtype == want.dtype and got.shape == want.shape
    assert got.tobytes() == np.ascontiguousarray(want).tobytes()


def test_pytables_nodes_export_as_pytables_reads_them(strata: Strata, peer_files: dict) -> None:
    for name, *_ in PYTABLES_CASES:
        got = npy_of(strata, f"{peer_files['pytables']}:/{name}")
        want = expected(name)
        assert got.tobytes() == want.tobytes(), name
        if want.dtype.names:
            assert got.dtype.names == want.dtype.names, name


def test_info_lists_datasets_filters_and_how_they_are_read(strata: Strata, peer_files: dict) -> None:
    res = strata.run("info", "--json", peer_files["hdf5plugin"])
    assert res.returncode == 0, res.stderr
    report = json.loads(res.stdout)
    by_name = {d["name"]: d for d in report["datasets"]}
    assert set(by_name) == {f"/{c.name}" for c in H5PY_CASES}
    d = by_name["/zstd_bitshuffle_2d"]
    assert (d["shape"], d["dtype"], d["chunks"], d["read"]) == ([120, 150], "<f4", [50, 60], "direct")
    assert d["filters"] == [{"id": 32026, "name": "blosc2", "cd_values": [1, 0, 4, 12000, 5, 2, 5, 2, 50, 60]}]
    assert by_name["/fletcher32_2d"]["read"] == "direct"
    assert by_name["/fletcher32_first_2d"]["read"].startswith("hdf5: its filter pipeline is [3, 32026]")
    assert by_name["/compound_1d"]["dtype"] == "[('a', '<i4'), ('b', '<f8')]"


def test_exports_read_in_every_peer(strata: Strata, peers: Peers, tmp_path) -> None:
    rng = np.random.default_rng(5)
    grid = (np.cumsum(rng.normal(size=(300, 400)), axis=1) * 10).astype("<f4")
    b2 = blosc2.asarray(grid, chunks=(128, 160), blocks=(32, 40), urlpath=str(tmp_path / "grid.b2nd"),
                        cparams={"codec": blosc2.Codec.ZSTD, "clevel": 5})
    del b2
    out = tmp_path / "out.h5"
    for spec, args in ((f"{out}:/grid", ()), (f"{out}:/g/cut", ("--start", "10,400", "--stop", "290,0", "--step", "3,-7"))):
        res = strata.run("export", *args, tmp_path / "grid.b2nd", spec)
        assert res.returncode == 0, res.stderr
    want = {"grid": grid, "g/cut": grid[10:290:3, 400:0:-7]}
    for reader in ("hdf5plugin", "strata", "pytables", "h5dump"):
        arrays, errors = peers.read(reader, out, tmp_path / f"by-{reader}.npz") if reader != "h5dump" else h5dump(peers, out, want)
        assert not errors, (reader, errors)
        for name, w in want.items():
            assert np.array_equal(arrays[name].reshape(w.shape), w), (reader, name)


def h5dump(peers: Peers, path, want: dict) -> tuple[dict, dict]:
    arrays, errors = {}, {}
    for name, w in want.items():
        out = path.parent / (name.replace("/", "_") + ".bin")
        res = peers.h5dump("-d", f"/{name}", "-b", "NATIVE", "-o", out, path)
        if res.returncode != 0:
            errors[name] = res.stderr
        else:
            arrays[name] = np.frombuffer(out.read_bytes(), w.dtype)
    return arrays, errors


def test_imports_read_in_python_blosc2(strata: Strata, peer_files: dict, tmp_path) -> None:
    res = strata.run("import", "--codec", "zstd", peer_files["pytables"], tmp_path / "arrays")
    assert res.returncode == 0, res.stderr
    for name, *_ in PYTABLES_CASES:
        arr = blosc2.open(str(tmp_path / "arrays" / f"{name}.b2nd"))
        assert arr[()].tobytes() == expected(name).tobytes(), name


# PyTables 3.11.1's optimized read maps chunks by allocation index: in this 4x4 CArray of 2x2
# chunks only the lower half is written, so the first allocated chunk is (1, 0).
PARTIAL = """
import numpy, tables
with tables.open_file({path!r}, 'w') as f:
    a = f.create_carray('/', 'a', atom=tables.Int32Atom(), shape=(4, 4), chunkshape=(2, 2),
                        filters=tables.Filters(5, 'blosc2:lz4'))
    a[2:4, :] = numpy.arange(1, 9, dtype='i4').reshape(2, 4)
"""


def test_partly_written_carrays_read_by_coordinate(strata: Strata, peers: Peers, tmp_path) -> None:
    path = tmp_path / "partial.h5"
    peers.python("pytables", PARTIAL.format(path=str(path)))
    read = "import tables\nwith tables.open_file({!r}) as f:\n    print(f.root.a[0:2, 0:2].tolist())"
    assert peers.python("pytables", read.format(str(path))).stdout.strip() == "[[1, 2], [5, 6]]"  # PyTables' bug
    assert peers.python("pytables-filter", read.format(str(path))).stdout.strip() == "[[0, 0], [0, 0]]"
    got = npy_of(strata, f"{path}:/a", "--start", "0,0", "--stop", "2,2")
    assert got.tolist() == [[0, 0], [0, 0]]
    assert npy_of(strata, f"{path}:/a").tolist() == [[0] * 4, [0] * 4, [1, 2, 3, 4], [5, 6, 7, 8]]


B2H5PY = """
import b2h5py, h5py, numpy
with h5py.File({path!r}) as f:
    try:
        print(repr(b2h5py.B2Dataset(f[{name!r}])[{sel}].tolist()))
    except Exception as e:
        print(type(e).__name__)
"""


def test_where_b2h5py_fails_the_direct_path_reads(strata: Strata, peers: Peers, peer_files: dict, tmp_path) -> None:
    path = peer_files["hdf5plugin"]
    # A chunk that is not stored: b2h5py finds no byte offset.
    res = peers.python("hdf5plugin", B2H5PY.format(path=str(path), name="partial_2d", sel="0:2, 0:2"))
    assert res.stdout.strip() == "TypeError"
    assert npy_of(strata, f"{path}:/partial_2d", "--start", "0,0", "--stop", "2,2").tolist() == [[-1.0, -1.0]] * 2
    # A chunk stored raw (hdf5plugin's rank-1 default): b2h5py's frame open fails.
    res = peers.python("hdf5plugin", B2H5PY.format(path=str(path), name="noopts_1d", sel="0:3"))
    assert res.stdout.strip() == "RuntimeError"
    got = npy_of(strata, f"{path}:/noopts_1d", "--start", "0", "--stop", "3")
    assert got.tobytes() == expected("noopts_1d")[:3].tobytes()
    # A damaged byte under Fletcher32: b2h5py reads on, silently; HDF5 and Strata refuse.
    flipped = tmp_path / "flipped.h5"
    peers.python("hdf5plugin", f"""
import h5py, numpy
with h5py.File({str(flipped)!r}, 'w') as f:
    f.create_dataset('x', data=numpy.arange(1000, dtype='<i4'), chunks=(1000,), fletcher32=True,
                     compression=32026, compression_opts=(0, 0, 0, 0, 0, 0, 0))
    off = f['x'].id.get_chunk_info(0).byte_offset
raw = bytearray(open({str(flipped)!r}, 'rb').read())
raw[off + 200] ^= 1
open({str(flipped)!r}, 'wb').write(raw)
""")
    res = peers.python("hdf5plugin", B2H5PY.format(path=str(flipped), name="x", sel="0:1000"))
    values = eval(res.stdout)  # noqa: S307 - our own list of ints
    assert values != list(range(1000)) and sum(a != b for a, b in zip(values, range(1000))) == 1
    res = strata.run("slice", "--start", "0", "--stop", "5", f"{flipped}:/x")
    assert res.returncode == 1 and "Fletcher32" in res.stderr, res.stderr
