"""Writing slices into a `.b2nd` file: Strata (examples/b2nd_tool set) beside python-blosc2
(C-Blosc2), same file, data and selections, one thread each, in one run.

    .venv/bin/python benches/set_slice.py [repeats]

The array is 4096 x 4096 float64 (128 MiB), chunks 512 x 512, blocks 64 x 64, LZ4 + shuffle, a
smooth field. Each selection is written `repeats` times (default 5) into the file, each time
the field's values there scaled a little; the table gives the median milliseconds. Strata's times include starting the tool (a few ms).
"""

import dataclasses
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import blosc2
import numpy as np

REPO = Path(__file__).resolve().parents[1]
# STRATA_B2ND_TOOL: another build of the tool (e.g. an older commit's) to time instead.
TOOL = Path(os.environ.get("STRATA_B2ND_TOOL", REPO / "target/release/examples/b2nd_tool"))
repeats = int(sys.argv[1]) if len(sys.argv) > 1 else 5
N = 4096
y, x = np.mgrid[0:N, 0:N]
field = np.sin(y / 300.0) * np.cos(x / 200.0) + y * 1e-4

# (label, NumPy selection, b2nd_tool slices)
CASES = [
    ("one row", (1000, slice(None)), "1000,:"),
    ("one column", (slice(None), 1000), ":,1000"),
    ("one chunk", (slice(512, 1024), slice(512, 1024)), "512:1024,512:1024"),
    ("a 100x100 box", (slice(1000, 1100), slice(1000, 1100)), "1000:1100,1000:1100"),
    ("rows 0..512", (slice(0, 512), slice(None)), "0:512,:"),
]


def median_ms(f):
    times = []
    for k in range(repeats):
        t = time.perf_counter()
        f(k)
        times.append((time.perf_counter() - t) * 1e3)
    return statistics.median(times)


with tempfile.TemporaryDirectory(dir="/var/tmp") as d:
    subprocess.run(["cargo", "build", "--release", "--quiet", "--example", "b2nd_tool"], cwd=REPO, check=True)
    base = Path(d) / "base.b2nd"
    blosc2.asarray(
        field,
        urlpath=str(base),
        mode="w",
        chunks=(512, 512),
        blocks=(64, 64),
        cparams={"codec": blosc2.Codec.LZ4, "clevel": 5, "filters": [blosc2.Filter.SHUFFLE], "nthreads": 1},
    )
    print(f"| selection | Strata ms | python-blosc2 ms | Strata vs python-blosc2 |")
    print(f"|---|---|---|---|")
    for label, sel, text in CASES:
        shape = field[sel].shape
        # Real-like new values: the field there, changed a little each time (so the chunk's
        # compressed size changes too, and the bytes after it move in both libraries).
        values = [field[sel] * (1.0 + 0.01 * (k + 1)) for k in range(repeats)]
        ours = Path(d) / "strata.b2nd"
        theirs = Path(d) / "blosc2.b2nd"
        shutil.copy(base, ours)
        shutil.copy(base, theirs)
        raws = []
        for k, v in enumerate(values):
            raw = Path(d) / f"v{k}.raw"
            raw.write_bytes(v.tobytes())
            raws.append(raw)

        def strata(k):
            subprocess.run([TOOL, "set", ours, raws[k], text], check=True, capture_output=True)

        arr = blosc2.open(str(theirs), mode="a", dparams={"nthreads": 1})
        arr.schunk.cparams = dataclasses.replace(arr.schunk.cparams, nthreads=1)

        def peer(k):
            arr[sel] = values[k]

        s_ms = median_ms(strata)
        p_ms = median_ms(peer)
        del arr
        # Both files hold the same values afterwards.
        want = field.copy()
        want[sel] = values[-1]
        for path in (ours, theirs):
            got = blosc2.open(str(path))[:]
            assert np.array_equal(got, want), f"{label}: {path.name} differs"
        print(f"| {label} | {s_ms:.1f} | {p_ms:.1f} | {p_ms / s_ms:.2f}x |")
