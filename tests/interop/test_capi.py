"""Strata's C API against python-blosc2, both ways.

C programs built against include/strata.h and target/release/libstrata.a write frames and
b2nd arrays that python-blosc2 opens with the same data and metadata, and read back through
the C API what python-blosc2 wrote:

* c-examples/frame.c writes frame.b2frame (a metalayer, a vlmetalayer, ten chunks, the last
  shorter) and an edited copy as a sparse frame directory;
* tests/interop/capi_reader.c reads python-blosc2's contiguous and sparse frames;
* c-examples/climate.c writes the Levitus temperature grid as a .b2nd array and reads slices
  of it; capi_reader.c reads arrays python-blosc2 wrote (whole and strided);
* c-examples/attrs.c writes an array with a metalayer and typed vlmetalayers that
  python-blosc2 reads as `arr.schunk.meta` and `arr.vlmeta`; capi_reader.c reads back
  through the typed helpers the attributes python-blosc2 wrote;
* bindings/fortran/examples/slice_array.f90 writes a real(8) Fortran array t(i, j, k) that
  python-blosc2 reads as arr[k, j, i].
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import blosc2
import msgpack
import numpy as np
import pytest
from helpers import REPO, strata_binary

CFLAGS = ["-std=c11", "-Wall", "-Wextra", "-Werror", "-pedantic"]
# libstrata is built with HDF5 support: a program linking libstrata.a links Debian's libhdf5.
HDF5_LIBS = subprocess.run(["pkg-config", "--libs", "hdf5"], capture_output=True, text=True, check=True).stdout.split()


@pytest.fixture(scope="module")
def libstrata() -> Path:
    lib = strata_binary().parent / "libstrata.a"
    if not lib.is_file():
        pytest.fail(f"no {lib}: build it (cargo build --release)")
    return lib


def build(src: Path, out_dir: Path, lib: Path) -> Path:
    """Compiles `src` against the header and libstrata.a; returns the executable."""
    exe = out_dir / src.stem
    subprocess.run(
        ["cc", *CFLAGS, "-I", REPO / "include", src, lib, *HDF5_LIBS, "-lm", "-lpthread", "-ldl", "-o", exe],
        check=True,
        capture_output=True,
        text=True,
    )
    return exe


def run(*args: str | Path) -> str:
    out = subprocess.run([str(a) for a in args], capture_output=True, text=True)
    assert out.returncode == 0, f"{args}: {out.returncode}\n{out.stdout}\n{out.stderr}"
    return out.stdout


# --------------------------------------------------------------------------- frames


def frame_c_values(first: int, n: int) -> np.ndarray:
    """value() of c-examples/frame.c for items [first, first + n)."""
    k = np.arange(first, first + n, dtype=np.int64)
    return ((k // 10) * 3 + (k % 7)).astype(np.int32)


CHUNK_ITEMS, NFULL, LAST_ITEMS = 25000, 9, 12345


def test_frame_written_by_c_opens_in_python_blosc2(tmp_path: Path, libstrata: Path) -> None:
    exe = build(REPO / "c-examples" / "frame.c", tmp_path, libstrata)
    assert run(exe, tmp_path).endswith("ok\n")

    s = blosc2.open(str(tmp_path / "frame.b2frame"))
    assert (s.nchunks, s.typesize, s.chunksize) == (NFULL + 1, 4, CHUNK_ITEMS * 4)
    assert s.nbytes == (NFULL * CHUNK_ITEMS + LAST_ITEMS) * 4
    assert s.cparams.codec == blosc2.Codec.ZSTD and s.cparams.clevel == 5
    assert s.meta["units"] == "degC"
    assert s.vlmeta["history"] == "made by frame.c"
    for c in range(s.nchunks):
        items = CHUNK_ITEMS if c < NFULL else LAST_ITEMS
        got = np.frombuffer(s.decompress_chunk(c), dtype=np.int32)
        np.testing.assert_array_equal(got, frame_c_values(c * CHUNK_ITEMS, items), err_msg=f"chunk {c}")
    whole = np.frombuffer(s[:], dtype=np.int32)
    np.testing.assert_array_equal(whole, frame_c_values(0, NFULL * CHUNK_ITEMS + LAST_ITEMS))

    # The edited copy: chunk 0 negated, chunk 1 deleted and inserted again, no vlmetalayer.
    d = blosc2.open(str(tmp_path / "frame_sparse.b2frame"))
    assert (tmp_path / "frame_sparse.b2frame").is_dir()
    assert d.nchunks == NFULL + 1
    np.testing.assert_array_equal(np.frombuffer(d.decompress_chunk(0), np.int32), -frame_c_values(0, CHUNK_ITEMS))
    for c in range(1, d.nchunks):
        items = CHUNK_ITEMS if c < NFULL else LAST_ITEMS
        np.testing.assert_array_equal(
            np.frombuffer(d.decompress_chunk(c), np.int32), frame_c_values(c * CHUNK_ITEMS, items)
        )
    assert d.meta["units"] == "degC"
    assert list(d.vlmeta.getall()) == []


@pytest.mark.parametrize("contiguous", [True, False], ids=["cframe", "sframe"])
def test_python_blosc2_frame_reads_through_the_c_api(tmp_path: Path, libstrata: Path, contiguous: bool) -> None:
    rng = np.random.default_rng(7)
    data = np.cumsum(rng.normal(size=300_000)).astype(np.float64)
    path = tmp_path / "py.b2frame"
    chunksize = 40_000 * 8
    s = blosc2.SChunk(
        chunksize=chunksize,
        data=data,
        urlpath=str(path),
        contiguous=contiguous,
        cparams={"codec": blosc2.Codec.LZ4, "clevel": 7, "typesize": 8, "filters": [blosc2.Filter.BITSHUFFLE]},
        meta={"grid": [3, 4, "xy"], "flag": True},
    )
    s.vlmeta["station"] = "Mauna Loa"
    s.vlmeta["scale"] = 0.25
    del s

    exe = build(REPO / "tests" / "interop" / "capi_reader.c", tmp_path, libstrata)
    out = run(exe, path, tmp_path / "out.raw").splitlines()
    fields = dict(line.split(" ", 1) for line in out if not line.startswith(("meta ", "vlmeta ")))
    assert fields == {
        "nchunks": str(-(-data.nbytes // chunksize)),
        "typesize": "8",
        "chunksize": str(chunksize),
        "nbytes": str(data.nbytes),
    }
    layers = [line.split(" ") for line in out if line.startswith(("meta ", "vlmeta "))]
    metas = {name: bytes.fromhex(h) for kind, name, h in layers if kind == "meta"}
    vlmetas = {name: bytes.fromhex(h) for kind, name, h in layers if kind == "vlmeta"}
    assert {k: msgpack.unpackb(v) for k, v in metas.items()} == {"grid": [3, 4, "xy"], "flag": True}
    assert {k: msgpack.unpackb(v) for k, v in vlmetas.items()} == {"station": "Mauna Loa", "scale": 0.25}
    assert (tmp_path / "out.raw").read_bytes() == data.tobytes()


# --------------------------------------------------------------------------- N-d arrays


def test_climate_b2nd_written_by_c_opens_in_python_blosc2(
    tmp_path: Path, libstrata: Path, grids: dict
) -> None:
    exe = build(REPO / "c-examples" / "climate.c", tmp_path, libstrata)
    assert run(exe, tmp_path, REPO / "data").endswith("ok\n")
    t = grids["levitus"]

    arr = blosc2.open(str(tmp_path / "levitus_temp.b2nd"))
    assert isinstance(arr, blosc2.NDArray)
    assert (arr.shape, arr.dtype, arr.chunks, arr.blocks) == (t.shape, np.float32, (4, 90, 180), (2, 30, 60))
    assert arr.schunk.cparams.codec == blosc2.Codec.ZSTD
    np.testing.assert_array_equal(arr[:], t)
    np.testing.assert_array_equal(arr[5, ::10, ::10], t[5, ::10, ::10])

    # The edited copy: a box of -5, two more depth levels of zeros.
    want = np.concatenate([t, np.zeros((2, 180, 360), np.float32)])
    want[3:5, 88:91, 178:182] = -5
    edit = blosc2.open(str(tmp_path / "levitus_edit.b2nd"))
    assert edit.shape == (22, 180, 360)
    np.testing.assert_array_equal(edit[:], want)


def nd_cases(t: np.ndarray) -> dict:
    rng = np.random.default_rng(3)
    return {
        "levitus": (t, {"chunks": (5, 45, 90), "blocks": (1, 15, 30), "contiguous": True}),
        "int16-4d-sparse": (
            rng.integers(-3000, 3000, size=(6, 7, 30, 11), dtype=np.int16),
            {"chunks": (4, 4, 16, 8), "blocks": (2, 2, 8, 4), "contiguous": False},
        ),
        "complex64": (
            (rng.normal(size=(33, 17)) + 1j * rng.normal(size=(33, 17))).astype(np.complex64),
            {"chunks": (10, 10), "blocks": (5, 5), "contiguous": True},
        ),
    }


@pytest.mark.parametrize("case", ["levitus", "int16-4d-sparse", "complex64"])
def test_python_blosc2_b2nd_reads_through_the_c_api(tmp_path: Path, libstrata: Path, grids: dict, case: str) -> None:
    data, kw = nd_cases(grids["levitus"])[case]
    path = tmp_path / "py.b2nd"
    blosc2.asarray(data, urlpath=str(path), mode="w", cparams={"codec": blosc2.Codec.LZ4}, **kw)

    exe = build(REPO / "tests" / "interop" / "capi_reader.c", tmp_path, libstrata)
    out = dict(line.split(" ", 1) for line in run(exe, "nd", path, tmp_path / "out.raw").splitlines())
    assert out == {
        "ndim": str(data.ndim),
        "shape": " ".join(map(str, data.shape)),
        "chunkshape": " ".join(map(str, kw["chunks"])),
        "blockshape": " ".join(map(str, kw["blocks"])),
        "dtype": data.dtype.str,
    }
    assert (tmp_path / "out.raw").read_bytes() == data.tobytes()
    step = data[(slice(1, -1, 2),) * data.ndim]
    assert (tmp_path / "out.raw.step").read_bytes() == np.ascontiguousarray(step).tobytes()


def test_fortran_array_opens_in_python_blosc2_transposed(tmp_path: Path, libstrata: Path) -> None:
    gfortran = shutil.which("gfortran")
    assert gfortran, "gfortran is not installed: run scripts/setup-build-deps.sh"
    fdir = REPO / "bindings" / "fortran"
    flags = ["-std=f2008", "-Wall", "-Werror"]
    subprocess.run([gfortran, *flags, "-J", tmp_path, "-c", fdir / "strata.f90", "-o", tmp_path / "strata.o"], check=True)
    exe = tmp_path / "slice_array"
    subprocess.run(
        [gfortran, *flags, "-I", tmp_path, fdir / "examples" / "slice_array.f90", tmp_path / "strata.o", libstrata,
         *HDF5_LIBS, "-lm", "-lpthread", "-ldl", "-o", exe],
        check=True,
    )
    assert run(exe, tmp_path).endswith("ok\n")

    ni, nj, nk = 64, 50, 30
    i, j, k = np.meshgrid(np.arange(1, ni + 1), np.arange(1, nj + 1), np.arange(1, nk + 1), indexing="ij")
    t = 1000.0 * k + 10.0 * j + 0.01 * i  # t[i-1, j-1, k-1] as Fortran's t(i, j, k)
    t[60:64, 47:50, 28:30] = -1.0
    arr = blosc2.open(str(tmp_path / "field.b2nd"))
    assert (arr.shape, arr.dtype, arr.chunks) == ((nk, nj, ni), np.float64, (5, nj, ni))
    np.testing.assert_array_equal(arr[:], t.T)  # python sees arr[k, j, i]


# --------------------------------------------------------------------------- attributes


def test_attributes_written_by_c_read_in_python_blosc2(tmp_path: Path, libstrata: Path) -> None:
    exe = build(REPO / "c-examples" / "attrs.c", tmp_path, libstrata)
    assert run(exe, tmp_path).endswith("ok\n")

    arr = blosc2.open(str(tmp_path / "attrs.b2nd"))
    assert (arr.shape, arr.dtype, arr.chunks, arr.blocks) == ((4, 180, 360), np.float32, (1, 180, 360), (1, 45, 90))
    assert arr.vlmeta.getall() == {
        "step": 4,
        "dt": 1800.5,
        "units": "degC",
        "levels": [0, 10, 250],
        "bounds": [-90.0, 90.0, -180.0, 180.0],
        "done": True,
    }
    assert list(arr.schunk.meta.keys()) == ["b2nd", "version"]
    assert arr.schunk.meta["version"] == 8
    cp = arr.schunk.cparams
    assert (cp.codec, cp.clevel) == (blosc2.Codec.ZSTD, 7)
    assert list(cp.filters)[-2:] == [blosc2.Filter.DELTA, blosc2.Filter.SHUFFLE]
    np.testing.assert_array_equal(arr[:], np.zeros((4, 180, 360), np.float32))


def test_attributes_written_by_python_blosc2_read_from_c(tmp_path: Path, libstrata: Path) -> None:
    path = tmp_path / "py_attrs.b2nd"
    arr = blosc2.zeros(
        (10, 20),
        dtype=np.float64,
        urlpath=str(path),
        mode="w",
        meta={"version": 3, "grid": "latlon"},
        cparams={"codec": blosc2.Codec.LZ4HC, "clevel": 4, "filters": [blosc2.Filter.BITSHUFFLE]},
    )
    values = {
        "step": 12,
        "big": 2**40,
        "neg": -5,
        "dt": 0.1,
        "name": "océan",
        "levels": [1, 2, 300000],
        "bounds": [0.5, -1.25],
        "shape": (1, 2, 3),
        "flag": True,
        "huge": 2**63,
        "mixed": [1, "a"],
    }
    for k, v in values.items():
        arr.vlmeta[k] = v
    del arr

    exe = build(REPO / "tests" / "interop" / "capi_reader.c", tmp_path, libstrata)
    out = run(exe, "attrs", path).splitlines()
    assert out[:3] == ["codec lz4hc", "clevel 4", "filters 2 0 0 0 0 0"]
    meta_lines = [line for line in out if line.startswith("meta ")]
    assert [line.split(" ")[1] for line in meta_lines] == ["b2nd", "version", "grid"]
    got = {line.split(" ")[1]: msgpack.unpackb(bytes.fromhex(line.split(" ")[2])) for line in meta_lines[1:]}
    assert got == {"version": 3, "grid": "latlon"}
    attrs = [line for line in out if not line.startswith(("codec ", "clevel ", "filters ", "meta "))]
    assert attrs == [
        "int step 12",
        f"int big {2**40}",
        "int neg -5",
        "float dt 0.10000000000000001",
        "str name océan",
        "ints levels 1 2 300000",
        "floats bounds 0.5 -1.25",
        "ints shape 1 2 3",
        "raw flag c3",
        "raw huge cf8000000000000000",
        "raw mixed 9201a161",
    ]
