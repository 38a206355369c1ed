"""The slicing benchmark's smoke test: `benches/slicing.py --quick` runs, every library it times
(python-blosc2, h5py with hdf5plugin's Blosc2 filter, zarr, and Strata's slice_bench example when
it is built) returns NumPy's hyperplanes, the files hold what the benchmark says (LZ4, clevel 5,
shuffle, the same chunks), and the geometry that Strata's block counts are held to is right."""

from __future__ import annotations

import importlib.util
import itertools
import json
import math
import subprocess
import sys

import blosc2
import numpy as np
import pytest
from helpers import REPO

HARNESS = REPO / "benches" / "slicing.py"


def load_harness():
    spec = importlib.util.spec_from_file_location("slicing_bench", HARNESS)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


slicing = load_harness()


@pytest.fixture(scope="module")
def run(tmp_path_factory) -> dict:
    """One quick run of the harness: its exit status, stdout, JSON report and kept files."""
    tmp = tmp_path_factory.mktemp("slicing")
    out = tmp / "report.json"
    res = subprocess.run(
        [sys.executable, str(HARNESS), "--quick", "--json", str(out), "--workdir", str(tmp / "files")],
        capture_output=True, text=True, timeout=600, check=False,
    )
    return {"res": res, "report": json.loads(out.read_text()) if out.is_file() else None,
            "files": tmp / "files"}


def test_harness_succeeds(run):
    res, report = run["res"], run["report"]
    assert res.returncode == 0, res.stdout + res.stderr
    assert report is not None and report["failures"] == []
    assert [c["shape"] for c in report["cases"]] == [list(c.shape) for c in slicing.QUICK]
    for case in report["cases"]:
        assert len(case["axes"]) == len(case["shape"])
        for line in ("compressed:", "blocks: b2nd"):
            assert line in res.stdout
    assert "all hyperplanes equal NumPy's" in res.stdout


def test_peers_equal_numpy(run):
    """The harness saw every peer return NumPy's hyperplane, with a time for each read."""
    repeat = run["report"]["config"]["repeat"]
    for case in run["report"]["cases"]:
        for ax in case["axes"]:
            assert len(ax["indices"]) == repeat
            for lib in slicing.PEERS:
                r = ax["results"][lib]
                assert r["mismatches"] == [], (case["shape"], ax["axis"], lib)
                assert len(r["times_s"]) == repeat and all(t > 0 for t in r["times_s"])
                assert r["median_s"] == pytest.approx(float(np.median(r["times_s"])))


def test_files_hold_the_field(run):
    """Independently of the harness's own check: each library's file, opened here, gives the
    benchmark's field at the timed indices and at both ends of every axis."""
    for case, rep in zip(slicing.QUICK, run["report"]["cases"]):
        arr = slicing.field(case.shape, run["report"]["config"]["seed"])
        assert arr.dtype == np.float64 and np.isfinite(arr).all()
        assert np.array_equal(arr, np.round(arr * 1024) / 1024)  # multiples of 1/1024
        for lib in slicing.PEERS:
            a, close = slicing.open_peer(lib, run["files"] / rep["libraries"][lib]["file"], 1)
            try:
                for ax in rep["axes"]:
                    k = ax["axis"]
                    for i in {*ax["indices"], 0, case.shape[k] - 1}:
                        key = slicing.hyperplane_key(len(case.shape), k, i)
                        np.testing.assert_array_equal(a[key], arr[key], err_msg=f"{lib} {case.name} axis {k} at {i}")
            finally:
                close()


def test_files_use_the_stated_parameters(run):
    """LZ4, clevel 5, shuffle and the case's chunks in all three files; b2nd with the case's blocks."""
    import h5py
    import zarr

    for case, rep in zip(slicing.QUICK, run["report"]["cases"]):
        libs = rep["libraries"]
        b = blosc2.open(str(run["files"] / libs["blosc2"]["file"]))
        assert (b.shape, b.chunks, b.blocks, b.dtype) == (case.shape, case.chunks, case.blocks, np.float64)
        cp = b.schunk.cparams
        assert (cp.codec, cp.clevel, cp.typesize) == (blosc2.Codec.LZ4, 5, 8)
        assert blosc2.Filter.SHUFFLE in cp.filters
        assert b.schunk.blocksize == libs["blosc2"]["blocksize"] == math.prod(case.blocks) * 8

        with h5py.File(run["files"] / libs["h5py"]["file"], "r") as f:
            ds = f["data"]
            assert ds.chunks == case.chunks
            opts = ds._filters["32026"]  # hdf5plugin's Blosc2 filter (HDF5 filter 32026)
            assert (opts[4], opts[5], opts[6]) == (5, 1, 1)  # clevel 5, SHUFFLE, lz4
            assert opts[7:] == (len(case.shape), *case.chunks)
        assert libs["h5py"]["blocksize"] == math.prod(libs["h5py"]["blockshape"]) * 8

        z = zarr.open_array(str(run["files"] / libs["zarr"]["file"]), mode="r")
        assert z.metadata.zarr_format == 3 and z.chunks == case.chunks
        blosc = z.metadata.codecs[-1].to_dict()
        assert blosc["name"] == "blosc"
        conf = blosc["configuration"]
        assert (conf["cname"], conf["clevel"], conf["shuffle"], conf["typesize"]) == ("lz4", 5, "shuffle", 8)
        assert 0 < libs["zarr"]["blocksize"] <= math.prod(case.chunks) * 8


@pytest.mark.parametrize("case", slicing.QUICK + slicing.FULL, ids=lambda c: c.name)
def test_theory_counts_blocks_as_brute_force(case):
    """The touched chunks and blocks of a hyperplane, against enumerating every block of every
    chunk (blocks reaching past the array count only by their part inside it, as C-Blosc2's
    get_slice skips blocks that lie wholly in padding)."""
    nch = [-(-n // c) for n, c in zip(case.shape, case.chunks)]
    bpc = [e // b for e, b in zip(case.extchunks, case.blocks)]
    for axis in range(len(case.shape)):
        for index in (0, case.shape[axis] // 2, case.shape[axis] - 1):
            chunks = blocks = 0
            for ci in itertools.product(*map(range, nch)):
                lo = [c * s for c, s in zip(ci, case.chunks)]
                hi = [min(l + s, n) for l, s, n in zip(lo, case.chunks, case.shape)]
                if not lo[axis] <= index < hi[axis]:
                    continue
                chunks += 1
                for bi in itertools.product(*map(range, bpc)):
                    blo = [l + b * s for l, b, s in zip(lo, bi, case.blocks)]
                    bhi = [min(b + s, h) for b, s, h in zip(blo, case.blocks, hi)]
                    inside = all(b < h for b, h in zip(blo, bhi))
                    blocks += inside and blo[axis] <= index < bhi[axis]
            t = slicing.theory(case, axis)
            assert (t["chunks"], t["b2nd_blocks"]) == (chunks, blocks), (axis, index)
            assert t["b2nd_bytes"] == blocks * math.prod(case.blocks) * 8
            assert t["chunked_bytes"] == chunks * math.prod(case.chunks) * 8


def test_strata_equals_numpy(run):
    """Strata's slice_bench, reading the .b2nd python-blosc2 wrote, returns NumPy's hyperplanes
    and decompresses exactly the blocks the geometry says. Skipped only when the example is not
    built, which the harness must then say."""
    report, stdout = run["report"], run["res"].stdout
    if not slicing.DEFAULT_STRATA_BENCH.is_file():
        assert report["config"]["strata_note"].startswith("strata: not available")
        assert "strata: not available" in stdout
        assert all("strata" not in ax["results"] for c in report["cases"] for ax in c["axes"])
        pytest.skip(f"no {slicing.DEFAULT_STRATA_BENCH}: cargo build --release --example slice_bench")
    assert report["config"]["strata_note"] is None
    repeat = report["config"]["repeat"]
    for case in report["cases"]:
        for ax in case["axes"]:
            r = ax["results"].get("strata")
            assert r is not None, (case["shape"], ax["axis"])
            assert r["mismatches"] == [], (case["shape"], ax["axis"])
            assert len(r["times_s"]) == repeat and all(t > 0 for t in r["times_s"])
            assert r["blocks_decompressed"] == [ax["theory"]["b2nd_blocks"]] * repeat
            assert r["chunks_touched"] == [ax["theory"]["chunks"]] * repeat
