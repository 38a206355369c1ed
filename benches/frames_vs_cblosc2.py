"""Append throughput to a frame file: Strata (examples/frame_bench) beside python-blosc2
(C-Blosc2 3.3.5), same data, codec and chunk size, one thread each, in one run.

    .venv/bin/python benches/frames_vs_cblosc2.py [nchunks] [chunk KiB]
"""

import subprocess
import sys
import tempfile
import time
from pathlib import Path

import blosc2
import numpy as np

REPO = Path(__file__).resolve().parents[1]
nchunks = int(sys.argv[1]) if len(sys.argv) > 1 else 200
kib = int(sys.argv[2]) if len(sys.argv) > 2 else 1024
n = kib * 1024
i = np.arange(n // 4, dtype=np.uint32)
data = ((i // 3) ^ (i % 7)).astype(np.uint32).tobytes()

with tempfile.TemporaryDirectory(dir="/var/tmp") as d:
    subprocess.run(["cargo", "build", "--release", "--quiet", "--example", "frame_bench"], cwd=REPO, check=True)
    print(subprocess.run([REPO / "target/release/examples/frame_bench", str(nchunks), str(kib), d], check=True, capture_output=True, text=True).stdout, end="")
    cp = {"codec": blosc2.Codec.LZ4, "typesize": 4, "nthreads": 1, "clevel": 5}
    chunk = blosc2.compress2(data, **cp)
    for what in ("append_data", "append_chunk"):
        path = Path(d) / "c.b2frame"
        t = time.perf_counter()
        s = blosc2.SChunk(chunksize=n, urlpath=str(path), contiguous=True, mode="w", cparams=cp, dparams={"nthreads": 1})
        for _ in range(nchunks):
            if what == "append_data":
                s.append_data(data)
            else:
                s.append_chunk(chunk)
        del s
        secs = time.perf_counter() - t
        print(f"C-Blosc2 (no fsync) {what:<13} {nchunks / secs:8.1f} appends/s {nchunks * n / secs / 1e6:8.1f} MB/s")
        path.unlink()
