#!/usr/bin/env python3
"""Generates the filter fixtures in this folder (fixtures.txt).

Run with a Python that has numpy and python-blosc2 (checked with numpy 2.x, python-blosc2
4.14.1 bundling C-Blosc2 3.3.5):

    python tests/data/filters/gen.py > tests/data/filters/fixtures.txt

Two kinds of fixture, one per line, `key=value` fields separated by spaces:

* `source=numpy`: the filter output computed here with numpy, straight from the definitions in
  docs/filters.md (transpose for shuffle, unpackbits/packbits for bitshuffle, ...).
* `source=c-blosc2`: the filter output of C-Blosc2 itself. A chunk is compressed with only the
  filter(s) under test, codec ZLIB, split mode NEVER_SPLIT (one stream per block); each block's
  stream is then zlib-decompressed here, which gives exactly what the filter pipeline produced.
  The numpy reference must agree (the script asserts it).

Fields: `filter` (Blosc2 ID), `typesize`, `meta`, `blocksize` (the chunk's blocks; the last
one may be shorter), `input` (hex: the filter's input, all blocks concatenated; for delta this
is also the raw chunk, i.e. the reference), `output` (hex: the filter's output per block,
concatenated).
"""
import struct
import sys
import zlib

import blosc2
import numpy as np

SHUFFLE, BITSHUFFLE, DELTA, TRUNC_PREC, BYTEDELTA_BUGGY, BYTEDELTA = 1, 2, 3, 4, 34, 35


# ---------------------------------------------------------------- numpy references (per block)
def ref_shuffle(block, ts):
    n = len(block) // ts
    a = np.frombuffer(block[: n * ts], dtype=np.uint8).reshape(n, ts)
    return a.T.tobytes() + block[n * ts:]


def ref_bitshuffle(block, ts):
    n = len(block) // ts
    n8 = n - n % 8
    a = np.frombuffer(block[: n8 * ts], dtype=np.uint8).reshape(n8, ts)
    # bits[i, j, k] = bit k of byte j of element i
    bits = np.unpackbits(a, axis=1, bitorder="little").reshape(n8, ts, 8)
    rows = bits.transpose(1, 2, 0)  # row (j, k), element i
    return np.packbits(rows, axis=2, bitorder="little").tobytes() + block[n8 * ts:]


def delta_word(ts):
    if ts in (1, 2, 4, 8):
        return ts
    return 8 if ts % 8 == 0 else 1


def ref_delta(block, ts, first, reference):
    w = delta_word(ts)
    m = len(block) - len(block) % w
    a = np.frombuffer(block, dtype=np.uint8).copy()
    out = a.copy()
    if first:
        out[w:m] = a[w:m] ^ a[: m - w]
    else:
        out[:m] = a[:m] ^ np.frombuffer(reference[:m], dtype=np.uint8)
    return out.tobytes()


def ref_trunc_prec(block, ts, meta):
    p = meta - 256 if meta > 127 else meta
    mant = {4: 23, 8: 52}[ts]
    zeroed = mant - p if p >= 0 else -p
    dt = {4: np.uint32, 8: np.uint64}[ts]
    n = len(block) // ts
    a = np.frombuffer(block[: n * ts], dtype=dt)
    mask = dt(~((1 << zeroed) - 1) & ((1 << (8 * ts)) - 1))
    return (a & mask).tobytes() + block[n * ts:]


def ref_bytedelta(block, ts, buggy):
    l = len(block) // ts
    a = np.frombuffer(block[: l * ts], dtype=np.uint8).reshape(ts, l).astype(np.int32)
    prev = np.zeros_like(a)
    prev[:, 1:] = a[:, :-1]
    if buggy and l > 15 and l % 16:
        prev[:, l - l % 16] = 0
    return ((a - prev) % 256).astype(np.uint8).tobytes() + block[l * ts:]


def reference(filt, block, ts, meta, first, chunk):
    if filt == SHUFFLE:
        return ref_shuffle(block, meta or ts)
    if filt == BITSHUFFLE:
        return ref_bitshuffle(block, ts)
    if filt == DELTA:
        return ref_delta(block, ts, first, chunk)
    if filt == TRUNC_PREC:
        return ref_trunc_prec(block, ts, meta)
    return ref_bytedelta(block, meta or ts, filt == BYTEDELTA_BUGGY)


# ---------------------------------------------------------------- C-Blosc2 filter output
def c_blosc2_blocks(data, ts, filters, metas, blocksize):
    """Compresses `data` and returns (blocksize, [decoded stream of each block])."""
    chunk = blosc2.compress2(
        data, typesize=ts, clevel=5, codec=blosc2.Codec.ZLIB, filters=filters,
        filters_meta=metas, splitmode=blosc2.SplitMode.NEVER_SPLIT, blocksize=blocksize,
    )
    version, _, flags, hts, nbytes, bsize, cbytes = struct.unpack("<BBBBiii", chunk[:16])
    assert version == 5 and hts == ts and nbytes == len(data), (version, hts, nbytes)
    assert not flags & 0x02, "chunk was memcpyed: pick more compressible data"
    assert flags & 0x10, "expected one stream per block"
    assert list(chunk[16:16 + len(filters)]) == filters
    nblocks = -(-nbytes // bsize)
    bstarts = struct.unpack("<%di" % nblocks, chunk[32:32 + 4 * nblocks])
    out = []
    for b, start in enumerate(bstarts):
        size = min(bsize, nbytes - b * bsize)
        (csize,) = struct.unpack("<i", chunk[start:start + 4])
        payload = chunk[start + 4:]
        if csize == 0:
            out.append(bytes(size))
        elif csize < 0:
            assert payload[0] & 1
            out.append(bytes([-csize & 0xFF]) * size)
        elif csize == size:
            out.append(payload[:size])
        else:
            raw = zlib.decompress(payload[:csize])
            assert len(raw) == size
            out.append(raw)
    return bsize, out


def emit(source, filt, ts, meta, bsize, inp, outp):
    print(f"source={source} filter={filt} typesize={ts} meta={meta} blocksize={bsize} "
          f"input={inp.hex()} output={outp.hex()}")


def numpy_case(filt, ts, meta, bsize, data):
    blocks = [data[i:i + bsize] for i in range(0, len(data), bsize)]
    out = b"".join(reference(filt, blk, ts, meta, i == 0, data) for i, blk in enumerate(blocks))
    emit("numpy", filt, ts, meta, bsize, data, out)


def c_case(filt, ts, meta, blocksize, data, pre_shuffle=False):
    """C-Blosc2 output for `filt` (after a SHUFFLE when `pre_shuffle`)."""
    filters = [SHUFFLE, filt] if pre_shuffle else [filt]
    signed = meta - 256 if meta > 127 else meta  # python-blosc2 takes filters_meta as int8
    metas = [0, signed] if pre_shuffle else [signed]
    bsize, got = c_blosc2_blocks(data, ts, filters, metas, blocksize)
    blocks = [data[i:i + bsize] for i in range(0, len(data), bsize)]
    if pre_shuffle:
        blocks = [ref_shuffle(b, ts) for b in blocks]
        # C's own shuffle output must be what numpy says it is.
        _, c_shuffled = c_blosc2_blocks(data, ts, [SHUFFLE], [0], blocksize)
        assert c_shuffled == blocks
    want = [reference(filt, blk, ts, meta, i == 0, data) for i, blk in enumerate(blocks)]
    if got != want:
        raise SystemExit(f"C-Blosc2 and numpy disagree: filter {filt} ts {ts} meta {meta}")
    emit("c-blosc2", filt, ts, meta, bsize, b"".join(blocks), b"".join(got))


def smooth(n, ts, seed):
    """Compressible, non-trivial data: a slow ramp plus small noise, as ts-byte integers."""
    rng = np.random.RandomState(seed)
    if ts in (1, 2, 4, 8):
        dt = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[ts]
        step = 3 if ts > 1 else 0.125
        v = (np.arange(n) * step + rng.randint(0, 3 if ts == 1 else 7, n)).astype(dt)
        return v.tobytes()
    ramp = np.arange(n * ts) // ts
    return ((ramp + rng.randint(0, 3, n * ts)) % 256).astype(np.uint8).tobytes()


def floats(n, ts, seed):
    rng = np.random.RandomState(seed)
    dt = {4: np.float32, 8: np.float64}[ts]
    return (np.sin(np.arange(n) / 50.0) * 100 + rng.rand(n) * 1e-3).astype(dt).tobytes()


def noise(n, seed):
    return np.random.RandomState(seed).randint(0, 256, n).astype(np.uint8).tobytes()


def main():
    print(f"# generated by gen.py with numpy {np.__version__}, python-blosc2 {blosc2.__version__}"
          f" (C-Blosc2 {blosc2.blosclib_version.split()[0]})", file=sys.stdout)
    # numpy references: odd sizes and tails, several blocks.
    for ts, length, bsize in [(1, 77, 77), (2, 130, 64), (3, 100, 48), (4, 203, 96),
                              (7, 300, 140), (8, 517, 256), (16, 390, 256), (32, 330, 320),
                              (5, 41, 41)]:
        data = noise(length, ts * 100 + length)
        numpy_case(SHUFFLE, ts, 0, bsize, data)
        numpy_case(BITSHUFFLE, ts, 0, bsize, data)
        numpy_case(DELTA, ts, 0, bsize, data)
        numpy_case(BYTEDELTA, ts, 0, bsize, data)
        numpy_case(BYTEDELTA_BUGGY, ts, 0, bsize, data)
    numpy_case(SHUFFLE, 8, 2, 96, noise(100, 1))
    numpy_case(TRUNC_PREC, 4, 10, 128, floats(64, 4, 2) + b"\x01\x02\x03")
    numpy_case(TRUNC_PREC, 8, 256 - 20, 256, floats(48, 8, 3))

    # C-Blosc2 itself.
    c_case(SHUFFLE, 4, 0, 256, smooth(150, 4, 10))           # leftover block
    c_case(SHUFFLE, 8, 0, 512, smooth(100, 8, 11))
    c_case(SHUFFLE, 2, 0, 128, smooth(250, 2, 12) + b"\x07")  # nbytes % typesize != 0
    c_case(SHUFFLE, 12, 0, 240, smooth(50, 12, 13))
    c_case(SHUFFLE, 8, 4, 256, smooth(64, 8, 14))            # meta = element size 4
    c_case(BITSHUFFLE, 4, 0, 256, smooth(151, 4, 20))        # leftover block, N % 8 != 0
    c_case(BITSHUFFLE, 8, 0, 512, smooth(100, 8, 21))
    c_case(BITSHUFFLE, 3, 0, 192, smooth(150, 3, 22))
    c_case(BITSHUFFLE, 16, 0, 512, smooth(50, 16, 23))
    c_case(BITSHUFFLE, 1, 0, 128, smooth(350, 1, 24))
    c_case(DELTA, 4, 0, 128, smooth(150, 4, 30))
    c_case(DELTA, 8, 0, 256, smooth(100, 8, 31))
    c_case(DELTA, 1, 0, 64, smooth(250, 1, 32))
    c_case(DELTA, 2, 0, 128, smooth(200, 2, 33))
    c_case(DELTA, 16, 0, 256, smooth(50, 16, 34))             # word size 8
    c_case(DELTA, 3, 0, 96, smooth(100, 3, 35))               # word size 1
    c_case(TRUNC_PREC, 4, 12, 256, floats(150, 4, 40))
    c_case(TRUNC_PREC, 8, 256 - 30, 512, floats(100, 8, 41))
    c_case(TRUNC_PREC, 8, 40, 512, floats(100, 8, 42))
    # Stream lengths L = 44 / 20 and 50 / 20 (not multiples of 16: ID 34 restarts at 16*floor(L/16)).
    c_case(BYTEDELTA, 4, 4, 176, smooth(129, 4, 50), pre_shuffle=True)
    c_case(BYTEDELTA, 8, 8, 400, smooth(120, 8, 51), pre_shuffle=True)
    c_case(BYTEDELTA, 2, 2, 250, smooth(300, 1, 52))                     # alone, L = 125
    c_case(BYTEDELTA_BUGGY, 4, 4, 176, smooth(129, 4, 53), pre_shuffle=True)
    c_case(BYTEDELTA_BUGGY, 8, 8, 400, smooth(120, 8, 54), pre_shuffle=True)
    c_case(BYTEDELTA_BUGGY, 2, 2, 250, smooth(300, 1, 55))

if __name__ == "__main__":
    main()
