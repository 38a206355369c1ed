"""Remote slices over loopback: Strata's remote arrays (libstrata through its C API, the array
opened once) against python-blosc2's blosc2.C2Array (server-side slicing through the Caterva2
API) and blosc2.Proxy over a C2Array (chunks and blocks fetched into a local cache), each
against stratad and against cat2-server (caterva2[server] 2026.9.2, login off), on the same
file. Thin slices and hyperplanes; per slice, the median time of first reads (nothing
cached: Strata's arrays have no block cache here, C2Array caches nothing, each Proxy round
gets a fresh cache file) and the bytes and requests that crossed the loopback, counted by a
TCP relay between client and server (headers and framing included, for every side alike).
Sides alternate within each round; the machine's load is reported with the table.

Usage (benches/remote_vs_c2array.sh builds and sets up what it needs):
  .venv/bin/python benches/remote_vs_c2array.py --lib target/release/libstrata.so \
      --stratad target/release/stratad [--rounds 5] [--out benches/results/remote_vs_c2array.md]
"""

from __future__ import annotations

import argparse
import ctypes
import os
import re
import shutil
import socket
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

import blosc2
import numpy as np
from daemon_vs_caterva2 import Server  # benches/ is this script's directory

SHAPE, CHUNKS, BLOCKS = (256, 512, 512), (64, 128, 128), (16, 32, 64)
CASES = {
    "row [100, 200, :]": (100, 200, slice(None)),
    "column [100, :, 300]": (100, slice(None), 300),
    "pencil [:, 200, 300]": (slice(None), 200, 300),
    "box [100:110, 200:210, 300:310]": (slice(100, 110), slice(200, 210), slice(300, 310)),
    "hyperplane [128, :, :]": (128, slice(None), slice(None)),
    "hyperplane [:, 256, :]": (slice(None), 256, slice(None)),
    "hyperplane [:, :, 256]": (slice(None), slice(None), 256),
}


class Relay:
    """A TCP relay on 127.0.0.1 to `target`, counting the bytes each way and the requests."""

    def __init__(self, target: tuple[str, int]):
        self.target = target
        self.down = self.up = self.requests = 0
        self.lock = threading.Lock()
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.port = self.sock.getsockname()[1]
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.sock.accept()
            except OSError:
                return
            server = socket.create_connection(self.target)
            for a, b, up in ((client, server, True), (server, client, False)):
                threading.Thread(target=self._pump, args=(a, b, up), daemon=True).start()

    def _pump(self, src: socket.socket, dst: socket.socket, up: bool) -> None:
        try:
            while data := src.recv(1 << 16):
                with self.lock:
                    if up:
                        self.up += len(data)
                        self.requests += len(re.findall(rb"(?:^|\r\n\r\n)(?:GET|POST|HEAD) ", data))
                    else:
                        self.down += len(data)
                dst.sendall(data)
        except OSError:
            pass
        finally:
            for s in (src, dst):
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    def counts(self) -> tuple[int, int]:
        with self.lock:
            return self.down, self.requests

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"


class Strata:
    """libstrata's C API through ctypes: an array opened by URL, slices read into a buffer."""

    def __init__(self, lib: Path):
        self.lib = ctypes.CDLL(str(lib))
        self.lib.strata_ndarray_open.argtypes = [ctypes.c_char_p, ctypes.c_uint8, ctypes.c_uint8,
                                                 ctypes.POINTER(ctypes.c_void_p)]
        self.lib.strata_ndarray_get_slice.argtypes = [ctypes.c_void_p, ctypes.c_size_t] + [
            ctypes.POINTER(ctypes.c_int64)] * 3 + [ctypes.c_void_p, ctypes.c_size_t]
        self.lib.strata_ndarray_get_slice.restype = ctypes.c_int64
        self.lib.strata_ndarray_free.argtypes = [ctypes.c_void_p]

    def open(self, url: str) -> ctypes.c_void_p:
        h = ctypes.c_void_p()
        rc = self.lib.strata_ndarray_open(url.encode(), 0, 1, ctypes.byref(h))
        if rc != 0:
            msg = ctypes.create_string_buffer(1024)
            self.lib.strata_last_error(msg, 1024)
            raise RuntimeError(f"strata_ndarray_open({url}): {rc}: {msg.value.decode()}")
        return h

    def read(self, h, key) -> np.ndarray:
        start, stop, shape = [], [], []
        for k, n in zip(key, SHAPE):
            if isinstance(k, int):
                start.append(k), stop.append(k + 1)
            else:
                a, b, _ = k.indices(n)
                start.append(a), stop.append(b), shape.append(b - a)
        out = np.empty(shape, dtype=np.float32)
        arr = lambda v: (ctypes.c_int64 * 3)(*v)  # noqa: E731
        rc = self.lib.strata_ndarray_get_slice(h, 3, arr(start), arr(stop), arr([1, 1, 1]),
                                               out.ctypes.data, out.nbytes)
        if rc < 0:
            raise RuntimeError(f"get_slice: {rc}")
        return out


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def loadavg() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--lib", type=Path, required=True)
    ap.add_argument("--stratad", type=Path, required=True)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    cat2 = Path(sys.executable).parent / "cat2-server"
    base = Path(tempfile.mkdtemp(prefix="remote-bench-"))
    root = base / "root"
    root.mkdir()
    rng = np.random.default_rng(3)
    z, y, x = np.meshgrid(*(np.arange(n, dtype=np.float32) for n in SHAPE), indexing="ij")
    data = (np.sin(z * 0.05) * np.cos(y * 0.03) * 100 + x * 0.01).astype(np.float32)
    data += rng.normal(0, 0.05, SHAPE).astype(np.float32)
    del z, y, x
    blosc2.asarray(data, chunks=CHUNKS, blocks=BLOCKS, urlpath=str(root / "big.b2nd"), mode="w",
                   cparams={"codec": blosc2.Codec.LZ4, "clevel": 5})
    fsize = (root / "big.b2nd").stat().st_size
    state = base / "cat2" / "state"
    shutil.copytree(root, state / "public")
    (base / "cat2" / "caterva2-server.toml").write_text("[server]\nlogin = false\n")
    servers = []
    try:
        s = Server("stratad", [str(args.stratad), "--root", f"pub={root}", "--listen", "127.0.0.1:0"], None,
                   env=dict(os.environ, STRATAD_LOG="warn"))
        servers.append(s)
        cport = free_port()
        c = Server("cat2-server", [str(cat2), "--listen", f"127.0.0.1:{cport}", "--statedir", str(state)],
                   f"http://127.0.0.1:{cport}", cwd=base / "cat2", env=dict(os.environ, CATERVA2_SECRET="bench"))
        servers.append(c)
        host, port = s.url.removeprefix("http://").rsplit(":", 1)
        sd = (host, int(port))
        relays = {"stratad": Relay(sd), "cat2-server": Relay(("127.0.0.1", cport))}
        strata = Strata(args.lib)
        raw = {"stratad": "/v1/raw/pub/big.b2nd", "cat2-server": "/api/fetch/%40public/big.b2nd"}
        c2path = {"stratad": "pub/big.b2nd", "cat2-server": "@public/big.b2nd"}
        opened = {srv: strata.open(relays[srv].url + raw[srv]) for srv in relays}
        c2 = {srv: blosc2.C2Array(c2path[srv], urlbase=relays[srv].url) for srv in relays}
        sides = [("Strata", srv) for srv in relays] + [("C2Array", srv) for srv in relays] + \
                [("Proxy", srv) for srv in relays]
        results: dict = {}
        for rnd in range(args.rounds):
            for case, key in CASES.items():
                want = data[key]
                order = sides if rnd % 2 == 0 else sides[::-1]
                for side, srv in order:
                    relay = relays[srv]
                    if side == "Proxy":
                        cache = base / f"proxy-{srv}-{rnd}-{len(results)}.b2nd"
                        src = blosc2.Proxy(c2[srv], urlpath=str(cache), mode="w")
                    d0, r0 = relay.counts()
                    t0 = time.perf_counter()
                    if side == "Strata":
                        got = strata.read(opened[srv], key)
                    elif side == "C2Array":
                        got = c2[srv][key]
                    else:
                        got = src[key]
                    dt = time.perf_counter() - t0
                    d1, r1 = relay.counts()
                    assert np.array_equal(np.asarray(got).reshape(want.shape), want), (side, srv, case)
                    results.setdefault((case, side, srv), []).append((dt, d1 - d0, r1 - r0))
                    if side == "Proxy":
                        del src
                        cache.unlink(missing_ok=True)
        lines = [
            f"Remote slices of a {SHAPE} float32 array (chunks {CHUNKS}, blocks {BLOCKS}, LZ4, "
            f"{fsize / 2**20:.1f} MiB file) over loopback; median of {args.rounds} first reads; "
            f"bytes and requests through a counting relay. python-blosc2 {blosc2.__version__}. "
            f"Load average at the end: {loadavg()} (2 cores, shared).",
            "",
            "| slice | client → server | ms | KiB moved | requests |",
            "|---|---|---:|---:|---:|",
        ]
        for case in CASES:
            for side, srv in sides:
                rows = results[(case, side, srv)]
                ms = statistics.median(r[0] for r in rows) * 1e3
                kib = statistics.median(r[1] for r in rows) / 1024
                req = statistics.median(r[2] for r in rows)
                lines.append(f"| {case} | {side} → {srv} | {ms:.1f} | {kib:.1f} | {req:g} |")
        table = "\n".join(lines)
        print(table)
        if args.out:
            args.out.parent.mkdir(parents=True, exist_ok=True)
            args.out.write_text(table + "\n")
    finally:
        for srv in servers:
            srv.stop()
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
