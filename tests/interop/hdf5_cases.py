"""The HDF5 datasets of the Blosc2-filter (ID 32026) interop tests: what each writer makes and
what each reader returns.

Each peer runs in a fresh interpreter, so that it sees only the filters it is meant to (h5py
with Strata's plugin from HDF5_PLUGIN_PATH and hdf5plugin not imported, h5py with hdf5plugin,
PyTables with its own filter, or with Strata's plugin in PyTables' HDF5 once PyTables' own
filter class is unregistered):

    python hdf5_cases.py write h5py FILE.h5            # every H5PY_CASES dataset, 32026
    python hdf5_cases.py write hdf5plugin FILE.h5      # the same, hdf5plugin imported first
    python hdf5_cases.py write userblock FILE.h5       # a few, after a 4096-byte user block
    python hdf5_cases.py write raw FILE.h5             # the same, uncompressed (for h5repack)
    python hdf5_cases.py write pytables FILE.h5        # every PYTABLES_CASES node
    python hdf5_cases.py read h5py|hdf5plugin|pytables|pytables-plugin FILE.h5 OUT.npz
    python hdf5_cases.py dump h5py|hdf5plugin|pytables FILE.h5 DIR

A read saves every dataset it could read under its path, and the errors of the others as JSON
under "__errors__"; the test compares them with `expected(name)`. A dump writes each dataset's
items as raw bytes (C order) to a file in DIR, and DIR/index.json, {name: {"shape", "dtype",
"file", "error"}}, for tests in other languages (tests/hdf5_direct.rs).
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass

import numpy as np

CODECS = {"blosclz": 0, "lz4": 1, "lz4hc": 2, "zlib": 4, "zstd": 5}
FILTERS = {"nofilter": 0, "shuffle": 1, "bitshuffle": 2, "delta": 3, "trunc_prec": 4}
ZFP = {"zfp_acc": 33, "zfp_prec": 34, "zfp_rate": 35}


def field_data(shape: tuple, dtype: str, seed: int) -> np.ndarray:
    """Real-like values: a random walk along the last axis plus a smooth trend, as in gridded
    measurements (compressible, not trivially)."""
    rng = np.random.default_rng(seed)
    n = int(np.prod(shape))
    kind = np.dtype(dtype).kind
    if kind in "iu":
        walk = np.cumsum(rng.integers(-3, 4, size=n)) % 200
        return walk.astype(dtype).reshape(shape)
    walk = np.cumsum(rng.normal(size=n)) + 50 * np.sin(np.arange(n) / 997)
    return walk.astype(dtype).reshape(shape)


@dataclass(frozen=True)
class Case:
    """One dataset: its data, chunks and the 32026 `compression_opts` (None: no options)."""

    name: str
    shape: tuple
    dtype: object
    chunks: tuple
    opts: tuple | None = (0, 0, 0, 0, 5, 1, 5)
    seed: int = 0
    lossy: bool = False
    fletcher32: bool = False  # after Blosc2, as h5py and PyTables >= 3.10 put it
    fletcher32_first: bool = False  # before Blosc2: the filter gets the chunk + 4 bytes
    hdf5_shuffle: bool = False  # HDF5's own shuffle before Blosc2
    fill: float | None = None
    written: tuple = ()  # only these regions are written (partly written datasets)
    zfp: bool = False
    kind: str = "field"  # field, random, zeros, compound

    def data(self) -> np.ndarray:
        if self.kind == "random":
            rng = np.random.default_rng(self.seed)
            nbytes = int(np.prod(self.shape)) * np.dtype(self.dtype).itemsize
            return rng.integers(0, 256, size=nbytes, dtype=np.uint8).view(self.dtype).reshape(self.shape)
        if self.kind == "zeros":
            return np.zeros(self.shape, self.dtype)
        if self.kind == "compound":
            out = np.zeros(self.shape, self.dtype)
            for i, name in enumerate(out.dtype.names):
                out[name] = field_data(self.shape, out.dtype[name].str, self.seed + i)
            return out
        dt = np.dtype(self.dtype)
        if dt.subdtype is not None:
            base, sub = dt.subdtype
            return field_data(self.shape + sub, base.str, self.seed)  # as NumPy and h5py give it
        return field_data(self.shape, dt.str, self.seed)


def opts(codec: str, filt: str, clevel: int = 5) -> tuple:
    """hdf5plugin's `compression_opts` for Blosc2(cname, clevel, filters)."""
    return (0, 0, 0, 0, clevel, FILTERS[filt], CODECS[codec])


H5PY_CASES = [
    *(Case(f"{c}_{f}_2d", (120, 150), "<f4", (50, 60), opts(c, f), seed=i, lossy=f == "trunc_prec")
      for i, (c, f) in enumerate((c, f) for c in CODECS for f in FILTERS)),
    *(Case(f"{c}_shuffle_1d", (5000,), "<f8", (1200,), opts(c, "shuffle"), seed=30 + i) for i, c in enumerate(CODECS)),
    *(Case(f"zstd_{f}_1d", (5000,), "<f8", (1200,), opts("zstd", f), seed=40 + i, lossy=f == "trunc_prec")
      for i, f in enumerate(FILTERS) if f != "shuffle"),
    Case("f4_3d", (20, 90, 180), "<f4", (8, 45, 64), opts("zstd", "shuffle", 1)),
    Case("i2_rank9", (3,) * 9, "<i2", (2,) * 9, opts("lz4", "shuffle")),
    Case("i2_rank10", (3,) * 10, "<i2", (2,) * 10, opts("blosclz", "shuffle")),
    Case("u1_rank16", (2,) * 15 + (3,), "|u1", (2,) * 16, opts("zstd", "bitshuffle")),
    Case("one_f4", (1,), "<f4", (1,), opts("blosclz", "shuffle")),
    Case("ten_f8", (10,), "<f8", (10,), opts("lz4", "shuffle"), kind="random", seed=7),
    Case("random_1mib", (1 << 20,), "|u1", (1 << 20,), opts("zstd", "shuffle"), kind="random", seed=8),
    Case("zeros_2d", (200, 300), "<f4", (100, 100), kind="zeros"),
    Case("noopts_1d", (1000,), "<f4", (100,), None),
    Case("noopts_2d", (100, 200), "<f4", (50, 100), None),
    Case("fletcher32_2d", (120, 150), "<f4", (50, 60), fletcher32=True),
    Case("fletcher32_first_2d", (120, 150), "<f4", (50, 60), fletcher32_first=True),
    Case("hdf5shuffle_2d", (120, 150), "<f4", (50, 60), hdf5_shuffle=True),
    Case("compound_1d", (1000,), np.dtype([("a", "<i4"), ("b", "<f8")]), (100,), kind="compound"),
    Case("array_type_1d", (500,), np.dtype(("<f4", (3,))), (100,)),
    Case("bigendian_2d", (120, 150), ">f4", (50, 60)),
    Case("partial_2d", (400, 400), "<f4", (100, 100), fill=-1.0,
         written=((slice(100, 200), slice(0, 100)), (slice(300, 400), slice(250, 400)))),
    Case("big_chunk_2d", (1024, 1024), "<f4", (1024, 1024), opts("zstd", "shuffle", 1)),
    Case("zfp_acc_2d", (120, 150), "<f4", (50, 60), (0, 0, 0, 0, 5, 0, ZFP["zfp_acc"]), lossy=True, zfp=True),
    Case("zfp_prec_3d", (20, 90, 180), "<f4", (8, 45, 64), (0, 0, 0, 0, 5, 0, ZFP["zfp_prec"]), lossy=True, zfp=True),
    Case("zfp_rate_2d", (120, 150), "<f8", (50, 60), (0, 0, 0, 0, 5, 0, ZFP["zfp_rate"]), lossy=True, zfp=True),
]

# PyTables' own kinds of nodes: (name, kind, shape, atom dtype, chunkshape, complib, shuffle,
# bitshuffle, fletcher32). EArrays grow along axis 0 by appends of 37 rows.
PYTABLES_CASES = [
    *((f"carray_{c}_2d", "carray", (120, 150), "<f4", (50, 60), f"blosc2:{c}", True, False, False) for c in CODECS),
    ("carray_bitshuffle_3d", "carray", (20, 90, 180), "<f4", (8, 45, 64), "blosc2:zstd", False, True, False),
    ("carray_noshuffle_1d", "carray", (5000,), "<f8", (1200,), "blosc2", False, False, False),
    ("carray_fletcher32_2d", "carray", (120, 150), "<f4", (50, 60), "blosc2:lz4", True, False, True),
    ("carray_rank8", "carray", (3,) * 8, "<i2", (2,) * 8, "blosc2:zstd", True, False, False),
    ("carray_zeros_2d", "carray", (200, 300), "<f4", (100, 100), "blosc2:zstd", True, False, False),
    ("earray_2d", "earray", (0, 90), "<f4", (64, 90), "blosc2:zstd", True, False, False),
    ("table", "table", (1000,), np.dtype([("a", "<i4"), ("b", "<f8")]), (100,), "blosc2:lz4", True, False, False),
    ("table_fletcher32", "table", (1000,), np.dtype([("a", "<i4"), ("b", "<f8")]), (128,), "blosc2:zstd", True, False, True),
]
EARRAY_ROWS = 37 * 7


def case(name: str) -> Case:
    return next(c for c in H5PY_CASES if c.name == name)


def pytables_case(name: str) -> tuple:
    return next(c for c in PYTABLES_CASES if c[0] == name)


def expected(name: str) -> np.ndarray:
    """What a correct reader returns for the dataset `name` of either writer."""
    if any(c.name == name for c in H5PY_CASES):
        c = case(name)
        data = c.data()
        if c.written:
            out = np.full(c.shape, c.fill, c.dtype)
            for region in c.written:
                out[region] = data[region]
            return out
        return data
    _, kind, shape, dtype, _, _, _, _, _ = pytables_case(name)
    seed = PYTABLES_CASES.index(pytables_case(name))
    if kind == "table":
        return Case(name, shape, dtype, (), kind="compound", seed=seed).data()
    if kind == "earray":
        shape = (EARRAY_ROWS,) + shape[1:]
    if "zeros" in name:
        return np.zeros(shape, dtype)
    return field_data(shape, dtype, seed)


USERBLOCK_CASES = ("zstd_shuffle_2d", "f4_3d", "lz4_shuffle_1d", "noopts_1d", "partial_2d")


def write_h5py(path: str, compress: bool, userblock: bool = False) -> None:
    import h5py

    with h5py.File(path, "w", userblock_size=4096 if userblock else 0) as f:
        for c in H5PY_CASES:
            if userblock and c.name not in USERBLOCK_CASES:
                continue
            kw = {"chunks": c.chunks}
            if c.fill is not None:
                kw["fillvalue"] = c.fill
            if not compress:
                ds = f.create_dataset(c.name, shape=c.shape, dtype=c.dtype, **kw)
            elif c.fletcher32_first:
                # HDF5's pipeline runs filters in the order they were added.
                dcpl = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
                dcpl.set_chunk(c.chunks)
                dcpl.set_fletcher32()
                dcpl.set_filter(32026, h5py.h5z.FLAG_OPTIONAL, c.opts)
                space = h5py.h5s.create_simple(c.shape)
                dsid = h5py.h5d.create(f.id, c.name.encode(), h5py.h5t.py_create(np.dtype(c.dtype)), space, dcpl=dcpl)
                ds = h5py.Dataset(dsid)
            else:
                if c.opts is not None:
                    kw["compression_opts"] = c.opts
                ds = f.create_dataset(c.name, shape=c.shape, dtype=c.dtype, compression=32026,
                                      fletcher32=c.fletcher32, shuffle=c.hdf5_shuffle, **kw)
            data = c.data()
            if c.written:
                for region in c.written:
                    ds[region] = data[region]
            else:
                ds[...] = data


def write_pytables(path: str) -> None:
    import tables

    with tables.open_file(path, "w") as f:
        for seed, (name, kind, shape, dtype, chunkshape, complib, shuffle, bitshuffle, fletcher32) in enumerate(PYTABLES_CASES):
            filters = tables.Filters(complevel=5, complib=complib, shuffle=shuffle, bitshuffle=bitshuffle,
                                     fletcher32=fletcher32)
            data = expected(name)
            if kind == "carray":
                node = f.create_carray("/", name, atom=tables.Atom.from_dtype(np.dtype(dtype)), shape=shape,
                                       chunkshape=chunkshape, filters=filters)
                node[...] = data
            elif kind == "earray":
                node = f.create_earray("/", name, atom=tables.Atom.from_dtype(np.dtype(dtype)), shape=shape,
                                       chunkshape=chunkshape, filters=filters)
                for start in range(0, EARRAY_ROWS, 37):
                    node.append(data[start:start + 37])
            else:
                node = f.create_table("/", name, description=np.dtype(dtype), chunkshape=chunkshape,
                                      filters=filters)
                node.append(data)
            assert seed == PYTABLES_CASES.index(pytables_case(name))


def unregister_pytables_filter() -> None:
    """Removes the Blosc2 filter class PyTables registers at import from the HDF5 its wheel
    bundles (1.14), which then looks for filter 32026 in HDF5_PLUGIN_PATH as any HDF5 program
    does. (PyTables registers its own class unconditionally, so HDF5 never asks a plugin.)"""
    import ctypes

    import tables  # noqa: F401 - loads PyTables' HDF5 and registers its filter there

    with open("/proc/self/maps") as maps:
        libs = {line.split()[-1] for line in maps if "/tables.libs/libhdf5-" in line}
    assert len(libs) == 1, libs
    hdf5 = ctypes.CDLL(libs.pop())  # the copy already loaded: dlopen of the same file
    assert hdf5.H5Zunregister(ctypes.c_int(32026)) >= 0, "H5Zunregister(32026) failed"


def read_all(reader: str, path: str, out: str | None = None) -> tuple[dict, dict]:
    arrays, errors = {}, {}
    if reader == "pytables-plugin":
        unregister_pytables_filter()
        reader = "pytables"
    if reader == "pytables":
        import tables

        with tables.open_file(path) as f:
            for node in f.walk_nodes("/", "Leaf"):
                try:
                    arrays[node._v_pathname.lstrip("/")] = node.read()
                except Exception as e:  # noqa: BLE001 - the test reports every failure
                    errors[node._v_pathname.lstrip("/")] = f"{type(e).__name__}: {e}"
    else:
        import h5py

        if reader == "hdf5plugin":
            import hdf5plugin  # noqa: F401 - registers its filters in h5py's HDF5
        with h5py.File(path) as f:
            names = []
            f.visititems(lambda name, obj: names.append(name) if isinstance(obj, h5py.Dataset) else None)
            for name in names:
                try:
                    arrays[name] = f[name][()]
                except Exception as e:  # noqa: BLE001
                    errors[name] = f"{type(e).__name__}: {e}"
    if out is not None:
        np.savez(out, __errors__=np.array(json.dumps(errors)), **arrays)
    return arrays, errors


def dump(reader: str, path: str, out: str) -> None:
    from pathlib import Path

    arrays, errors = read_all(reader, path)
    root = Path(out)
    root.mkdir(parents=True, exist_ok=True)
    index = {name: {"error": e} for name, e in errors.items()}
    for i, (name, a) in enumerate(arrays.items()):
        (root / f"{i}.bin").write_bytes(np.ascontiguousarray(a).tobytes())
        index[name] = {"shape": list(a.shape), "dtype": str(a.dtype), "file": f"{i}.bin", "error": None}
    (root / "index.json").write_text(json.dumps(index))


def main(argv: list[str]) -> None:
    action, who, path, *rest = argv
    if action == "write":
        if who in ("hdf5plugin", "userblock"):
            import hdf5plugin  # noqa: F401 - registers its filters in h5py's HDF5
        if who == "pytables":
            write_pytables(path)
        else:
            write_h5py(path, compress=who != "raw", userblock=who == "userblock")
    elif action == "dump":
        dump(who, path, rest[0])
    else:
        read_all(who, path, rest[0])


if __name__ == "__main__":
    main(sys.argv[1:])
