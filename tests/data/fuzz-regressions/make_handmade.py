#!/usr/bin/env python3
"""Writes the hand-made inputs of this directory (the fuzzer's own finds are copied here as
they come, from fuzz/artifacts/<target>/, renamed <target>-<what>.bin).

Each file is a fuzz-target input: the target's prefix (see fuzz/src/lib.rs), then a chunk.
tests/bad_input.rs (`fuzz_regressions`) replays every file through that target's oracle. The
info-* files are whole files as `strata info` reads them (no prefix), replayed by
cli/tests/fuzz_regressions.rs; info-b2nd-shape-overflow.bin is fuzz/gen_corpus.rs's seed
array-shape-overflow (bit 62 of a b2nd array's first dimension set).
Run: python3 make_handmade.py   (writes into this directory)
"""
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))


def i32(v):
    return struct.pack("<i", v)


def header(version, flags, typesize, nbytes, blocksize, cbytes, codec=0, flags2=0, b2flags=0):
    h = bytes([version, 1, flags, typesize]) + i32(nbytes) + i32(blocksize) + i32(cbytes)
    return h + bytes(6) + bytes([codec, 0]) + bytes(6) + bytes([flags2, b2flags])


def decompress_input(chunk, fill=0xA5, slack=0):
    return bytes([fill]) + struct.pack("<h", slack) + chunk


def getitem_input(chunk, start, nitems):
    return struct.pack("<IH", start, nitems) + chunk


def lying_blocks(nblocks, blocksize, bad_last):
    """nblocks LZ4 blocks sharing one garbage stream; the last bstart points outside."""
    stream_at = 32 + 4 * nblocks
    payload = bytes([0xF0, 0xFF, 0x01, 0x02])
    cbytes = stream_at + 4 + len(payload)
    flags = 0x05 | 0x10 | (1 << 5)
    c = header(5, flags, 1, nblocks * blocksize, blocksize, cbytes, codec=1)
    starts = [stream_at] * nblocks
    if bad_last:
        starts[-1] = 7
    return c + b"".join(i32(s) for s in starts) + i32(len(payload)) + payload


def snappy():
    """A 16-byte-header Blosc1 chunk whose flags say Snappy (format code 2)."""
    data = bytes(range(64))
    flags = 0x10 | (2 << 5)
    body = i32(16 + 4 + 4) + i32(64) + data
    return bytes([2, 1, flags, 1]) + i32(64) + i32(64) + i32(16 + len(body)) + body


def vl(sizes_payloads, nbytes):
    base = 32 + 4 * len(sizes_payloads)
    streams = b""
    starts = []
    for size, payload in sizes_payloads:
        starts.append(base + len(streams))
        streams += i32(size) + payload
    c = header(6, 0x05 | (1 << 5), 1, nbytes, len(sizes_payloads), base + len(streams), codec=1, flags2=1)
    return c + b"".join(i32(s) for s in starts) + streams


def main():
    files = {
        # Framing errors anywhere are found before any block is decoded (or allocated), by
        # decompress and decompress_vec alike: both must say INVALID_HEADER (-11).
        "decompress-handmade-bad-last-bstart.bin": decompress_input(lying_blocks(3, 1 << 20, True)),
        "decompress-handmade-garbage-stream.bin": decompress_input(lying_blocks(3, 1 << 20, False)),
        # Blosc1 Snappy chunk: CODEC_SUPPORT (-7).
        "decompress-handmade-snappy.bin": decompress_input(snappy()),
        # VL blocks: a literal-only LZ4 block of 3 bytes, then a lying block; getitem of the
        # first block only decodes that block.
        "getitem-handmade-vl.bin": getitem_input(
            vl([(3, bytes([0x30]) + b"abc"), (1 << 20, bytes([0xF0]))], 3 + (1 << 20)), 0, 3
        ),
    }
    for name, data in files.items():
        with open(os.path.join(HERE, name), "wb") as f:
            f.write(data)
        print(f"{name}: {len(data)} bytes")


if __name__ == "__main__":
    main()
