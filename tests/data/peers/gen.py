#!/usr/bin/env python3
"""Generates the small files in this folder, written by python-blosc2 (and so by C-Blosc2):
frames, b2nd arrays and chunks that the tests read as other users' files would come, and that
cli/tests/hostile.rs corrupts bit by bit.

Run with a Python that has numpy, python-blosc2 4.14.1 (C-Blosc2 3.x) and python-blosc
(tests/interop/requirements.txt):

    python tests/data/peers/gen.py tests/data/peers

Files:
* frame.b2frame: a contiguous frame, typesize 4, zstd + shuffle, three chunks of 4000 bytes
  and a short one, a metalayer and two vlmetalayers.
* variable.b2frame: a contiguous frame whose chunks differ in size (300, 5000, 1400 bytes),
  which C-Blosc2 writes with chunksize 0.
* sparse.b2frame/: a sparse frame (chunks.b2frame and one file per chunk), lz4 + bitshuffle.
* f8.b2nd: a 30 x 20 float64 array, chunks 10 x 8, blocks 4 x 4, lz4 + shuffle.
* u2.b2nd: a 6 x 7 x 5 uint16 array, chunks 4 x 4 x 5, blocks 2 x 2 x 5, zlib + bitshuffle,
  with a zero chunk.
* zfp.b2nd: a 16 x 16 float32 array, chunks 8 x 8, blocks 4 x 4, ZFP_RATE meta 50.
* chunk-*.b2: chunks of compress2 (lz4/shuffle, zstd/delta+shuffle, blosclz/bytedelta,
  zlib/bitshuffle, memcpyed (clevel 0), special zeros) and one Blosc1 chunk (python-blosc
  1.x, lz4).
"""

import shutil
import sys
from pathlib import Path

import blosc
import blosc2
import numpy as np

F = blosc2.Filter


def chunk_data(n: int, typesize: int) -> bytes:
    """A smooth curve with some noise, as measured data looks."""
    rng = np.random.default_rng(n + typesize)
    x = 1000 * np.sin(np.linspace(0, 12, n // typesize)) + rng.normal(0, 3, n // typesize)
    dtype = {1: np.int8, 2: np.int16, 4: np.float32, 8: np.float64}[typesize]
    return x.astype(dtype).tobytes()


def main(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    cp = {"codec": blosc2.Codec.ZSTD, "clevel": 5, "typesize": 4, "filters": [F.SHUFFLE], "nthreads": 1}
    path = out / "frame.b2frame"
    s = blosc2.SChunk(chunksize=4000, cparams=cp, urlpath=str(path), contiguous=True, mode="w",
                      meta={"grid": [30, 110]})
    data = chunk_data(4000 * 3 + 1200, 4)
    for at in range(0, len(data), 4000):
        s.append_data(data[at : at + 4000])
    s.vlmeta["units"] = "K"
    s.vlmeta["range"] = [-2, 40]
    del s

    path = out / "variable.b2frame"
    s = blosc2.SChunk(chunksize=1000, urlpath=str(path), contiguous=True, mode="w", cparams={"typesize": 1})
    for piece in [bytes(range(100)) * 3, b"x" * 5000, b"yz" * 700]:
        s.append_chunk(blosc2.compress2(piece, typesize=1))
    del s

    path = out / "sparse.b2frame"
    shutil.rmtree(path, ignore_errors=True)
    cp = {"codec": blosc2.Codec.LZ4, "typesize": 8, "filters": [F.BITSHUFFLE], "nthreads": 1}
    s = blosc2.SChunk(chunksize=2048, cparams=cp, urlpath=str(path), contiguous=False, mode="w")
    data = chunk_data(2048 * 2, 8)
    s.append_data(data[:2048])
    s.append_data(data[2048:])
    del s

    a = np.frombuffer(chunk_data(30 * 20 * 8, 8), np.float64).reshape(30, 20)
    cp = {"codec": blosc2.Codec.LZ4, "filters": [F.SHUFFLE], "nthreads": 1}
    blosc2.asarray(a, chunks=(10, 8), blocks=(4, 4), urlpath=str(out / "f8.b2nd"), mode="w", cparams=cp)
    u = np.arange(6 * 7 * 5, dtype=np.uint16).reshape(6, 7, 5) * 3
    u[:4, :4] = 0
    cp = {"codec": blosc2.Codec.ZLIB, "filters": [F.BITSHUFFLE], "nthreads": 1}
    blosc2.asarray(u, chunks=(4, 4, 5), blocks=(2, 2, 5), urlpath=str(out / "u2.b2nd"), mode="w", cparams=cp)
    z = np.linspace(0, 10, 256, dtype=np.float32).reshape(16, 16)
    cp = {"codec": blosc2.Codec.ZFP_RATE, "codec_meta": 50, "filters": [], "nthreads": 1}
    blosc2.asarray(z, chunks=(8, 8), blocks=(4, 4), urlpath=str(out / "zfp.b2nd"), mode="w", cparams=cp)

    data4, data8 = chunk_data(6000, 4), chunk_data(6000, 8)
    chunks = {
        "lz4-shuffle": blosc2.compress2(data4, codec=blosc2.Codec.LZ4, typesize=4, filters=[F.SHUFFLE]),
        "zstd-delta": blosc2.compress2(data8, codec=blosc2.Codec.ZSTD, typesize=8, filters=[F.DELTA, F.SHUFFLE]),
        "blosclz-bytedelta": blosc2.compress2(data4, typesize=4, filters=[F.SHUFFLE, F.BYTEDELTA]),
        "zlib-bitshuffle": blosc2.compress2(data8, codec=blosc2.Codec.ZLIB, typesize=8, filters=[F.BITSHUFFLE]),
        "memcpyed": blosc2.compress2(data4[:2000], clevel=0, typesize=4),
        "zeros": blosc2.compress2(bytes(6000), typesize=4),
        "blosc1": blosc.compress(data4, typesize=4, cname="lz4"),
    }
    for name, c in chunks.items():
        (out / f"chunk-{name}.b2").write_bytes(c)


if __name__ == "__main__":
    main(Path(sys.argv[1]))
