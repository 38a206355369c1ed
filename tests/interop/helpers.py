"""What the interop tests share: the `strata` CLI, C-Blosc2 (through python-blosc2) with the
same parameters, generated data, and the two-way check of one case."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import blosc2
import numpy as np

REPO = Path(__file__).resolve().parents[2]

CODECS = ["blosclz", "lz4", "lz4hc", "zlib", "zstd"]
CLEVELS = [0, 1, 5, 9]
TYPESIZES = [1, 2, 4, 8, 16, 200, 300]
SPLITMODES = {
    "always": blosc2.SplitMode.ALWAYS_SPLIT,
    "never": blosc2.SplitMode.NEVER_SPLIT,
    "auto": blosc2.SplitMode.AUTO_SPLIT,
    "forward-compat": blosc2.SplitMode.FORWARD_COMPAT_SPLIT,
}
FILTER_IDS = {
    "noshuffle": blosc2.Filter.NOFILTER,
    "shuffle": blosc2.Filter.SHUFFLE,
    "bitshuffle": blosc2.Filter.BITSHUFFLE,
    "delta": blosc2.Filter.DELTA,
    "trunc_prec": blosc2.Filter.TRUNC_PREC,
    "bytedelta": blosc2.Filter.BYTEDELTA,
}
# Filter pipelines by name: (filter, meta) from slot 0; meta None = the default of each side.
FILTER_SETS = {
    "noshuffle": (("noshuffle", None),),
    "shuffle": (("shuffle", None),),
    "bitshuffle": (("bitshuffle", None),),
    "delta+shuffle": (("delta", None), ("shuffle", None)),
    "trunc_prec": (("trunc_prec", 10),),
    "shuffle+bytedelta": (("shuffle", None), ("bytedelta", None)),
}
HEADER = 32
CBYTES = slice(12, 16)
FLAGS = 2
MEMCPYED = 0x02


@dataclass(frozen=True)
class Params:
    """One set of chunk parameters, spelled for both the CLI and python-blosc2."""

    codec: str
    clevel: int
    typesize: int
    filters: tuple = FILTER_SETS["shuffle"]
    splitmode: str = "forward-compat"
    blocksize: int = 0
    use_dict: bool = False
    nthreads: int = 1  # Strata's; C-Blosc2 runs on one (see cparams)

    def __post_init__(self) -> None:
        # bytedelta's meta is its typesize; python-blosc2 fills it in only up to 255.
        if self.typesize > 255:
            filters = tuple((n, 1 if n == "bytedelta" and m is None else m) for n, m in self.filters)
            object.__setattr__(self, "filters", filters)

    @property
    def lossy(self) -> bool:
        return any(name == "trunc_prec" for name, _ in self.filters)

    @property
    def has_delta(self) -> bool:
        return any(name == "delta" for name, _ in self.filters)

    @property
    def cblosc2_drops_filters(self) -> bool:
        """python-blosc2 silently removes bytedelta at typesize 1, so its chunk differs."""
        return self.typesize == 1 and any(name == "bytedelta" for name, _ in self.filters)

    def cli_args(self) -> list[str]:
        args = ["--codec", self.codec, "--clevel", str(self.clevel), "--typesize", str(self.typesize)]
        args += ["--splitmode", self.splitmode, "--blocksize", str(self.blocksize), "--nthreads", str(self.nthreads)]
        for name, meta in self.filters:
            args += ["--filter", name if meta is None else f"{name}:{meta}"]
        if self.use_dict:
            args.append("--dict")
        return args

    def cparams(self) -> dict:
        """python-blosc2's parameters, on one thread: with more, C-Blosc2 stores the blocks in the
        order they finish, so its chunks are not reproducible byte for byte."""
        return {
            "codec": getattr(blosc2.Codec, self.codec.upper()),
            "clevel": self.clevel,
            "typesize": self.typesize,
            "filters": [FILTER_IDS[name] for name, _ in self.filters],
            "filters_meta": [meta or 0 for _, meta in self.filters],
            "splitmode": SPLITMODES[self.splitmode],
            "blocksize": self.blocksize,
            "use_dict": self.use_dict,
            "nthreads": 1,
        }


def cblosc2_compress(data: bytes, p: Params) -> bytes:
    """The chunk C-Blosc2 makes of `data` with `p`."""
    return blosc2.compress2(data, **p.cparams())


class StrataError(Exception):
    """The strata CLI exited non-zero."""


@dataclass
class Strata:
    """The `strata` binary, run on files in a scratch directory."""

    binary: Path
    scratch: Path
    _count: list = field(default_factory=lambda: [0])

    def _path(self, suffix: str) -> Path:
        self._count[0] += 1
        return self.scratch / f"{self._count[0]}{suffix}"

    def run(self, *args: str | Path) -> subprocess.CompletedProcess:
        return subprocess.run([str(self.binary), *map(str, args)], capture_output=True, text=True, check=False)

    def output(self, *args: str | Path) -> str:
        """stdout of a successful run; StrataError otherwise."""
        res = self.run(*args)
        if res.returncode != 0:
            raise StrataError(f"strata {' '.join(map(str, args[:2]))} exited {res.returncode}: {res.stderr.strip()}")
        return res.stdout

    def compress(self, data: bytes, p: Params) -> bytes:
        src, dst = self._path(".raw"), self._path(".b2")
        src.write_bytes(data)
        self.output("chunk", "compress", *p.cli_args(), src, dst)
        return dst.read_bytes()

    def decompress(self, chunk: bytes, nthreads: int = 1) -> bytes:
        src, dst = self._path(".b2"), self._path(".raw")
        src.write_bytes(chunk)
        self.output("chunk", "decompress", "--nthreads", str(nthreads), src, dst)
        return dst.read_bytes()

    def getitem(self, chunk: bytes, start: int, nitems: int) -> bytes:
        src, dst = self._path(".b2"), self._path(".raw")
        src.write_bytes(chunk)
        self.output("chunk", "getitem", src, "--start", str(start), "--nitems", str(nitems), dst)
        return dst.read_bytes()

    def info(self, chunk: bytes) -> dict:
        src = self._path(".b2")
        src.write_bytes(chunk)
        return json.loads(self.output("chunk", "info", src, "--json"))


def strata_binary() -> Path:
    """STRATA_BIN, else the release build in this repository."""
    return Path(os.environ.get("STRATA_BIN", REPO / "target" / "release" / "strata"))


KINDS = ["arange", "random", "smooth", "zeros", "runs"]
INT_DTYPES = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


def make_data(kind: str, nbytes: int, typesize: int, seed: int = 0) -> bytes:
    """`nbytes` bytes of one kind, shaped by items of `typesize` where that matters.

    arange: counting integers of the item width; random: uniform bytes (incompressible);
    smooth: a slow sine as float32 (typesize 4) or float64; zeros; runs: random bytes repeated
    in runs of 37.
    """
    rng = np.random.default_rng(seed)
    n8 = nbytes // 8 + 1
    if kind == "arange":
        dtype = INT_DTYPES.get(typesize, np.uint32)
        arr = np.arange(nbytes // np.dtype(dtype).itemsize + 1, dtype=dtype)
    elif kind == "random":
        arr = rng.integers(0, 256, nbytes, dtype=np.uint8)
    elif kind == "smooth":
        dtype = np.float32 if typesize == 4 else np.float64
        arr = (1000 * np.sin(np.linspace(0, 20, nbytes // np.dtype(dtype).itemsize + 1))).astype(dtype)
    elif kind == "zeros":
        arr = np.zeros(n8, dtype=np.uint64)
    elif kind == "runs":
        arr = np.repeat(rng.integers(0, 256, nbytes // 37 + 1, dtype=np.uint8), 37)
    else:
        raise ValueError(kind)
    return arr.tobytes()[:nbytes]


def float_data(kind: str, nitems: int, typesize: int, seed: int = 0) -> bytes:
    """Floats of `typesize` 4 or 8 (for trunc_prec): a smooth curve or normal noise."""
    dtype = np.float32 if typesize == 4 else np.float64
    if kind == "smooth":
        return (1000 * np.sin(np.linspace(0, 20, nitems))).astype(dtype).tobytes()
    return np.random.default_rng(seed).standard_normal(nitems).astype(dtype).tobytes()


def check_case(strata: Strata, data: bytes, p: Params, what: str) -> list[str]:
    """Both directions for one input; returns the problems found (empty when all agree).

    1. C-Blosc2's chunk → `strata chunk decompress` → the input.
    2. `strata chunk compress` → C-Blosc2's decompress2 → the input (lossy filters: what
       C-Blosc2 makes of its own chunk).
    3. BloscLZ and LZ4 chunks are identical. Other codecs: the headers agree but for cbytes and the
       memcpyed flag, which follow the compressed size and so the compressor build (C-Blosc2's
       zlib is zlib-ng, for one); instead, Strata's chunk must not be grossly larger (1.5 times
       + 64 bytes), as it would be if Strata stored raw what C-Blosc2 compresses.
    """
    problems = []
    c_chunk = cblosc2_compress(data, p)
    c_own = blosc2.decompress2(c_chunk)
    expected = c_own if p.lossy else data
    # C-Blosc2 does not round-trip delta when a block's length is not a multiple of the delta
    # word (its encoder leaves those last bytes unwritten): there Strata must decode C-Blosc2's
    # chunk as C-Blosc2 itself does, and its own chunks must still round-trip in C-Blosc2.
    c_tail_bug = not p.lossy and c_own != data
    if c_tail_bug and not p.has_delta:
        problems.append(f"{what}: C-Blosc2 does not round-trip its own chunk")
    try:
        got = strata.decompress(c_chunk)
        if got != c_own:
            problems.append(f"{what}: C-Blosc2 → Strata: {describe_difference(got, expected)}")
    except StrataError as e:
        problems.append(f"{what}: C-Blosc2 → Strata: {e}")
    try:
        s_chunk = strata.compress(data, p)
    except StrataError as e:
        return [*problems, f"{what}: Strata compress: {e}"]
    try:
        got = blosc2.decompress2(s_chunk)
        if got != expected:
            problems.append(f"{what}: Strata → C-Blosc2: {describe_difference(got, expected)}")
    except (ValueError, RuntimeError) as e:
        problems.append(f"{what}: Strata → C-Blosc2: {e}")
    if p.cblosc2_drops_filters:
        return problems
    if c_tail_bug:
        return problems
    if p.codec in ("blosclz", "lz4") and not p.use_dict:
        if s_chunk != c_chunk:
            problems.append(
                f"{what}: chunks differ: Strata's {describe_difference(s_chunk, c_chunk)}; headers Strata "
                f"{s_chunk[:HEADER].hex()} C-Blosc2 {c_chunk[:HEADER].hex()}"
            )
        return problems
    s_head, c_head = bytearray(s_chunk[:HEADER]), bytearray(c_chunk[:HEADER])
    for head in (s_head, c_head):
        head[CBYTES] = b"\0\0\0\0"
        head[FLAGS] &= ~MEMCPYED
    if s_head != c_head:
        problems.append(
            f"{what}: headers differ (cbytes and memcpyed aside): Strata {s_chunk[:HEADER].hex()} "
            f"C-Blosc2 {c_chunk[:HEADER].hex()}"
        )
    if len(s_chunk) > 1.5 * len(c_chunk) + 64:
        problems.append(f"{what}: Strata's chunk has {len(s_chunk)} bytes, C-Blosc2's {len(c_chunk)}")
    return problems


def describe_difference(got: bytes, want: bytes) -> str:
    """Sizes and first differing byte of two byte strings, for failure messages."""
    n = min(len(got), len(want))
    diff = np.flatnonzero(np.frombuffer(got, np.uint8, n) != np.frombuffer(want, np.uint8, n))
    at = int(diff[0]) if diff.size else n
    return f"{len(got)} bytes, expected {len(want)}, first difference at byte {at}"


def assert_same(got: bytes, want: bytes, what: str) -> None:
    """Fails with a short message; pytest's own diff of large byte strings takes minutes."""
    if got != want:
        raise AssertionError(f"{what}: {describe_difference(got, want)}")


# --------------------------------------------------------------------------- servers


def free_port() -> int:
    """A TCP port on 127.0.0.1 free now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_cat2_server(base: Path, public: Path) -> tuple[subprocess.Popen, str]:
    """cat2-server (caterva2[server], login off) on 127.0.0.1 serving a copy of `public` as
    @public (state in base/cat2: Caterva2 rewrites plain files in place on a GET); returns the
    process and its URL once it answers. Fails the test when it cannot start."""
    import httpx
    import pytest

    cat2 = Path(sys.executable).parent / "cat2-server"
    if not cat2.is_file():
        pytest.fail(f"no {cat2}: scripts/setup-venv.sh installs caterva2[server]")
    state = base / "cat2" / "state"
    shutil.copytree(public, state / "public")
    (base / "cat2" / "caterva2-server.toml").write_text("[server]\nlogin = false\n")
    port = free_port()
    proc = subprocess.Popen(
        [str(cat2), "--listen", f"127.0.0.1:{port}", "--statedir", str(state)],
        cwd=base / "cat2",
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=dict(os.environ, CATERVA2_SECRET="interop-test"),
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.time() + 120
    while True:
        try:
            if httpx.get(f"{url}/api/roots", timeout=2).status_code == 200:
                return proc, url
        except httpx.HTTPError:
            pass
        if time.time() > deadline or proc.poll() is not None:
            stop_all([proc])
            pytest.fail("cat2-server did not start")
        time.sleep(0.3)


def stop_all(procs: list[subprocess.Popen]) -> None:
    """Terminates the servers a test started (killed after 20 s)."""
    for p in procs:
        p.terminate()
        try:
            p.wait(timeout=20)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
