"""The dtype strings Strata writes into .b2nd arrays are NumPy's: over a grid of candidate
strings (byte orders × kinds × counts, datetime units, structured dtypes, and malformed ones),
every string Strata accepts is one NumPy accepts, and the array python-blosc2 opens has that
dtype and the bytes written; every string NumPy refuses, Strata refuses with a usage error
naming it; and NumPy's own spelling (`dtype.str`) of every dtype it accepted is accepted."""

import ast
import itertools
import warnings
from concurrent.futures import ThreadPoolExecutor

import blosc2
import numpy as np

ORDERS = ["", "<", ">", "|", "=", "!"]
KINDS = ["?", "b", "i", "u", "f", "c", "S", "U", "V", "a", "M", "m", "O", "x"]
COUNTS = ["", "0", "1", "2", "3", "4", "8", "16", "32", "99", "010"]
UNITS = ["[ns]", "[D]", "[10ms]", "[generic]", "[\u03bcs]", "[0s]", "[xx]", "[]", "[ns"]
STRUCTURED = [
    "[('a', '<i4'), ('b', '<f8', (2, 3))]",
    "[('a', '<i4'), ('n', [('x', 'u1')])]",
    "{'names': ['a', 'b'], 'formats': ['<i4', '<f8'], 'offsets': [0, 8], 'itemsize': 16}",
    "[('a', '<f99')]",
    "[('a', '<i3'), ('b', '<f8')]",
    "[('a', '<i4')",
]
SHAPE = 3


def candidates() -> list[str]:
    typestrs = [o + k + c for o, k, c in itertools.product(ORDERS, KINDS, COUNTS)]
    times = [o + k + "8" + u for o, k, u in itertools.product(["<", ">"], ["M", "m"], UNITS)]
    return typestrs + times + STRUCTURED + [" <f8", "<f8 ", "<f 8", "<S+5"]


def numpy_dtype(s: str) -> np.dtype | None:
    """What NumPy makes of `s` the way python-blosc2 reads it back (`np.dtype(s)`, else the
    Python literal); None when it refuses (deprecated spellings included)."""

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        try:
            return np.dtype(s)
        except (TypeError, ValueError, SyntaxError, DeprecationWarning):
            pass
        try:
            return np.dtype(ast.literal_eval(s))
        except (TypeError, ValueError, SyntaxError, DeprecationWarning):
            return None


def import_raw(strata, tmp_path, i: int, dtype: str, data: bytes):
    raw, out = tmp_path / f"{i}.raw", tmp_path / f"{i}.b2nd"
    raw.write_bytes(data)
    return out, strata.run("import", "--shape", str(SHAPE), "--dtype", dtype, raw, out)


def test_written_dtypes_are_numpys(strata, tmp_path):
    cands = candidates()
    rng = np.random.default_rng(3)
    wanted = [numpy_dtype(s) for s in cands]
    datas = [rng.integers(0, 256, SHAPE * (w.itemsize if w else 8), dtype=np.uint8).tobytes() for w in wanted]
    with ThreadPoolExecutor(2) as pool:
        runs = list(pool.map(lambda a: import_raw(strata, tmp_path, *a), zip(range(len(cands)), cands, datas)))
    accepted = refused_by_both = refused_by_strata = 0
    problems = []
    for s, want, data, (out, res) in zip(cands, wanted, datas, runs):
        if res.returncode == 0:
            accepted += 1
            if want is None:
                problems.append(f"{s!r}: Strata wrote it, NumPy refuses it")
                continue
            arr = blosc2.open(str(out))
            if arr.dtype != want or arr.shape != (SHAPE,) or arr[:].tobytes() != data:
                problems.append(f"{s!r}: python-blosc2 reads {arr.dtype} {arr.shape}, expected {want}")
        elif want is None:
            refused_by_both += 1
            if res.returncode != 2 or "--dtype: " not in res.stderr or s not in res.stderr:
                problems.append(f"{s!r}: exit {res.returncode}, {res.stderr.strip()!r}")
        else:
            refused_by_strata += 1
            if res.returncode != 2:
                problems.append(f"{s!r}: exit {res.returncode}, {res.stderr.strip()!r}")
    # NumPy's canonical spelling of every dtype it accepted is accepted, but for those a b2nd item
    # cannot hold: 0 bytes, Python objects.
    canon = sorted({str(w) if w.fields else w.str for w in wanted if w is not None and w.itemsize > 0 and w.kind != "O"})
    args = [(f"c{i}", s, bytes(SHAPE * numpy_dtype(s).itemsize)) for i, s in enumerate(canon)]
    with ThreadPoolExecutor(2) as pool:
        runs = list(pool.map(lambda a: import_raw(strata, tmp_path, *a), args))
    for s, (_, res) in zip(canon, runs):
        if res.returncode != 0:
            problems.append(f"NumPy's own {s!r}: {res.stderr.strip()!r}")
    assert problems == [], "\n".join(problems)
    # The grid covers all three outcomes (of its 970 strings: 242 accepted, 636 refused by both,
    # 92 NumPy spellings refused: no count ('<f', platform-dependent), 0 bytes ('|S0'), leading
    # zeros ('|S010'), objects ('|O8'), '<f 8' and '<S+5').
    assert accepted > 150 and refused_by_both > 400 and refused_by_strata > 50, (accepted, refused_by_both, refused_by_strata)
    assert len(canon) > 30
