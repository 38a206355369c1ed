"""stratad against the stock Caterva2 clients: `caterva2.Client` (caterva2 2026.9.2) and
python-blosc2 4.14.1's `blosc2.C2Array` and `blosc2.Proxy`, unmodified, on a loopback
daemon started for the module (STRATAD_BIN, else target/release/stratad).

Every answer is compared with NumPy on the same file as python-blosc2 reads it: roots,
listings, metadata (the exact keys the clients read, with python-blosc2's values), slices
(integers, negative, clamped, empty, steps where the client allows them and over raw HTTP
where it does not), `indices`, fields, stored chunks and whole files byte for byte, byte
ranges, Proxy block reads, plain frames, sparse frames, the ZFP plugin's arrays and errors.
"""

from __future__ import annotations

import os
import re
import subprocess
import urllib.parse
from pathlib import Path

import blosc2
import caterva2 as cat2
import httpx
import numpy as np
import pytest
from helpers import REPO

ROOT = "@public"


def stratad_binary() -> Path:
    return Path(os.environ.get("STRATAD_BIN", REPO / "target" / "release" / "stratad"))


def make_datasets(root: Path) -> dict:
    """The datasets served, as python-blosc2 writes them; returns their relative paths."""
    rng = np.random.default_rng(7)
    (root / "dir1").mkdir()
    (root / "dir1" / "deeper").mkdir()
    paths = {}

    def put(rel, arr, **kw):
        paths[rel] = rel
        return blosc2.asarray(arr, urlpath=str(root / rel), mode="w", **kw)

    put("ds-1d.b2nd", np.arange(1000, dtype=np.int64), chunks=(100,), blocks=(10,))
    a = put(
        "dir1/ds-2d.b2nd",
        np.arange(200, dtype=np.uint16).reshape(10, 20),
        chunks=(5, 5),
        blocks=(2, 3),
    )
    a.vlmeta["a"] = 1
    a.vlmeta["b"] = "foo"
    a.vlmeta["c"] = 123.456
    put(
        "dir1/deeper/ds-3d.b2nd",
        np.linspace(-1, 1, 3 * 40 * 50, dtype=np.float32).reshape(3, 40, 50),
        chunks=(2, 16, 16),
        blocks=(1, 8, 8),
        cparams={"codec": blosc2.Codec.LZ4, "clevel": 5},
    )
    put(
        "ds-4d.b2nd",
        rng.integers(0, 1000, size=(6, 7, 8, 9), dtype=np.int32),
        chunks=(3, 4, 5, 6),
        blocks=(2, 2, 3, 3),
        cparams={"filters": [blosc2.Filter.BITSHUFFLE], "filters_meta": [0]},
    )
    dt = np.dtype([("a", "<f4"), ("b", "<f8"), ("c", "<i2", (2,))])
    x = np.zeros(50, dtype=dt)
    x["a"] = np.arange(50)
    x["b"] = np.arange(50) * 2.5
    x["c"] = np.arange(100).reshape(50, 2)
    put("fields.b2nd", x, chunks=(16,), blocks=(4,))
    put("strings.b2nd", np.array([f"s{i}" for i in range(30)], dtype="<U6"), chunks=(8,), blocks=(4,))
    put("zeros.b2nd", np.zeros((30, 40), dtype=np.float64), chunks=(10, 20), blocks=(5, 5))
    put("scalar.b2nd", np.array(3.5), chunks=(), blocks=())
    put(
        "sparse.b2nd",
        np.linspace(0, 1, 60 * 70).reshape(60, 70),
        chunks=(20, 30),
        blocks=(10, 10),
        contiguous=False,
    )
    # Chunks of 2 MiB that do not compress: what makes Proxy read blocks through ranges.
    put(
        "big.b2nd",
        rng.random((1024, 1024)),
        chunks=(512, 512),
        blocks=(64, 64),
        cparams={"codec": blosc2.Codec.LZ4, "clevel": 1},
    )
    # C-Blosc2's ZFP codec (served through Strata's ZFP plugin).
    grid = np.sin(np.linspace(0, 20, 64 * 80, dtype=np.float32)).reshape(64, 80)
    put(
        "zfp.b2nd",
        grid,
        chunks=(32, 40),
        blocks=(16, 20),
        cparams={"codec": blosc2.Codec.ZFP_ACC, "codec_meta": -3 & 0xFF, "filters": [], "filters_meta": []},
    )
    paths["f.b2frame"] = "f.b2frame"
    blosc2.SChunk(
        chunksize=4000,
        data=np.arange(3000, dtype=np.int32),
        urlpath=str(root / "f.b2frame"),
        mode="w",
        cparams={"typesize": 4},
    )
    # Not datasets: never listed or served.
    (root / "README.md").write_text("not served\n")
    (root / "dir1" / ".hidden.b2nd").write_bytes(b"")
    return paths


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """(base URL, data root) of a stratad started for this module."""
    binary = stratad_binary()
    if not binary.is_file():
        pytest.fail(f"no stratad at {binary}: cargo build --release -p strata-daemon, or set STRATAD_BIN")
    zfp = binary.parent / "libstrata_zfp.so"
    if not zfp.is_file():
        pytest.fail(f"no ZFP plugin at {zfp}: cargo build --release --workspace")
    root = tmp_path_factory.mktemp("root")
    make_datasets(root)
    plugins = tmp_path_factory.mktemp("plugins")
    (plugins / zfp.name).symlink_to(zfp)
    env = dict(os.environ, STRATA_PLUGIN_PATH=str(plugins), STRATAD_LOG="warn")
    # The daemon's log goes to a file (a pipe nobody reads would stall it once full).
    log = open(root.parent / "stratad.log", "w")
    proc = subprocess.Popen(
        [str(binary), "--root", f"{ROOT}={root}", "--listen", "127.0.0.1:0", "--cache-bytes", "64M"],
        stdout=subprocess.PIPE,
        stderr=log,
        env=env,
        text=True,
    )
    try:
        line = proc.stdout.readline()
        m = re.match(r"stratad listening on (http://127\.0\.0\.1:\d+)", line)
        if not m:
            proc.kill()
            pytest.fail(f"stratad did not start: {line!r} {(root.parent / 'stratad.log').read_text()}")
        yield m.group(1), root
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()
    assert proc.returncode == 0, f"stratad exited with {proc.returncode} on SIGTERM"


@pytest.fixture(scope="module")
def url(served):
    return served[0]


@pytest.fixture(scope="module")
def root(served):
    return served[1]


@pytest.fixture(scope="module")
def client(url):
    c = cat2.Client(url)
    yield c
    c.close()


def local(root: Path, rel: str):
    return blosc2.open(str(root / rel))


def numpy_of(root: Path, rel: str) -> np.ndarray:
    a = local(root, rel)
    return a[()] if a.ndim == 0 else a[...]


# ------------------------------------------------------------------ roots, list, info

def test_roots(client):
    assert client.get_roots() == {ROOT: {"name": ROOT}}


def test_recursive_list(client):
    want = [
        "big.b2nd",
        "dir1/deeper/ds-3d.b2nd",
        "dir1/ds-2d.b2nd",
        "ds-1d.b2nd",
        "ds-4d.b2nd",
        "f.b2frame",
        "fields.b2nd",
        "scalar.b2nd",
        "sparse.b2nd",
        "strings.b2nd",
        "zeros.b2nd",
        "zfp.b2nd",
    ]
    assert list(client.get(ROOT)) == want
    assert client.get_list(f"{ROOT}/dir1") == ["deeper/ds-3d.b2nd", "ds-2d.b2nd"]
    assert client.get_list(f"{ROOT}/ds-1d.b2nd") == ["ds-1d.b2nd"]
    assert "dir1/ds-2d.b2nd" in client.get(ROOT)
    assert len(client.get(ROOT)) == len(want)


@pytest.mark.parametrize("path", ["nope", f"{ROOT}/nope", f"{ROOT}/README.md", f"{ROOT}/dir1/nope"])
def test_list_unknown_is_404(client, path):
    with pytest.raises(httpx.HTTPStatusError) as e:
        client.get_list(path)
    assert e.value.response.status_code == 404


ARRAYS = [
    "ds-1d.b2nd",
    "dir1/ds-2d.b2nd",
    "dir1/deeper/ds-3d.b2nd",
    "ds-4d.b2nd",
    "fields.b2nd",
    "strings.b2nd",
    "zeros.b2nd",
    "scalar.b2nd",
    "sparse.b2nd",
    "big.b2nd",
    "zfp.b2nd",
]
CPARAMS_KEYS = {
    "codec", "codec_meta", "clevel", "use_dict", "typesize", "nthreads", "blocksize",
    "splitmode", "filters", "filters_meta", "tuner",
}


@pytest.mark.parametrize("rel", ARRAYS)
def test_info_matches_python_blosc2(client, root, rel):
    info = client.get_info(f"{ROOT}/{rel}")
    a = local(root, rel)
    s = a.schunk
    assert set(info) == {"shape", "chunks", "blocks", "dtype", "schunk", "mtime", "accept_ranges"}
    assert tuple(info["shape"]) == a.shape
    assert tuple(info["chunks"]) == a.chunks
    assert tuple(info["blocks"]) == a.blocks
    assert np.dtype(eval(info["dtype"]) if info["dtype"].startswith("[") else info["dtype"]) == a.dtype
    assert info["dtype"] == str(a.dtype)
    assert info["accept_ranges"] == ("none" if rel == "sparse.b2nd" else "bytes")
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z", info["mtime"])
    sc = info["schunk"]
    assert set(sc) == {
        "cbytes", "chunkshape", "chunksize", "contiguous", "cparams", "cratio", "nbytes",
        "urlpath", "vlmeta", "nchunks", "mtime",
    }
    assert (sc["cbytes"], sc["nbytes"], sc["nchunks"]) == (s.cbytes, s.nbytes, s.nchunks)
    assert (sc["chunkshape"], sc["chunksize"], sc["contiguous"]) == (s.chunkshape, s.chunksize, s.contiguous)
    assert sc["cratio"] == pytest.approx(s.cratio)
    assert sc["vlmeta"] == s.vlmeta[:]
    assert not str(sc["urlpath"]).startswith("/")
    cp = sc["cparams"]
    assert set(cp) == CPARAMS_KEYS | {"filters, meta"}
    ref = s.cparams
    for k in CPARAMS_KEYS - {"nthreads"}:
        want = getattr(ref, k)
        value = lambda v: v if isinstance(v, bool) else int(getattr(v, "value", v))
        want = [value(f) for f in want] if isinstance(want, list) else value(want)
        assert cp[k] == want, k
    assert cp["filters, meta"] == [[f, m] for f, m in zip(cp["filters"], cp["filters_meta"]) if f]
    # What C2Array does with it.
    cp.pop("filters, meta")
    blosc2.CParams(**cp)


def test_info_of_frames_and_groups(client, root):
    info = client.get_info(f"{ROOT}/f.b2frame")
    s = local(root, "f.b2frame")
    assert "shape" not in info
    assert (info["nbytes"], info["cbytes"], info["nchunks"], info["chunksize"]) == (
        s.nbytes, s.cbytes, s.nchunks, s.chunksize)
    g = client.get_info(f"{ROOT}/dir1")
    assert (g["kind"], g["nfiles"]) == ("group", 2)
    assert isinstance(client.get(f"{ROOT}/dir1"), cat2.client.Group)
    assert isinstance(client.get(f"{ROOT}/sparse.b2nd"), cat2.client.Array)


def test_info_has_an_etag(url):
    r = httpx.get(f"{url}/api/info/{ROOT}/ds-1d.b2nd")
    etag = r.headers["etag"]
    again = httpx.get(f"{url}/api/info/{ROOT}/ds-1d.b2nd", headers={"If-None-Match": etag})
    assert again.status_code == 304


# ------------------------------------------------------------------ slices

KEYS_1D = [3, -1, -5, slice(None), slice(-5, None), slice(2000, 3000), slice(0, 0), slice(5, 2),
           slice(10, 20), slice(None, 7), (slice(990, 2000),), ()]


@pytest.mark.parametrize("key", KEYS_1D, ids=repr)
def test_slices_1d(client, root, key):
    want = numpy_of(root, "ds-1d.b2nd")[key]
    got = client.get(f"{ROOT}/ds-1d.b2nd")[key]
    np.testing.assert_array_equal(got, want)
    assert np.asarray(got).shape == np.asarray(want).shape


KEYS_ND = {
    "dir1/ds-2d.b2nd": [(3, slice(1, 4)), (slice(2, 4), slice(5, 9)), (-1,), (slice(None), -3),
                        (slice(8, 30), slice(-4, None)), (slice(3, 3),), (Ellipsis, 2), (4, 5)],
    "dir1/deeper/ds-3d.b2nd": [(1,), (slice(None), 7), (slice(None), slice(None), -1),
                               (0, slice(10, 30), slice(5, 45)), (Ellipsis,)],
    "ds-4d.b2nd": [(1, 2), (slice(None), slice(1, 5), 3), (Ellipsis, 4), (slice(-2, None),) * 4],
    "sparse.b2nd": [(5, slice(1, 3)), (slice(15, 45), slice(25, 65)), (-1,)],
    "zeros.b2nd": [(slice(5, 25), slice(10, 30))],
    "strings.b2nd": [(slice(3, 12),), (7,)],
    "big.b2nd": [(slice(10, 20), slice(10, 20)), (slice(500, 530), slice(500, 530))],
    "zfp.b2nd": [(slice(None), 7), (3,), (slice(20, 50), slice(30, 70))],
}


@pytest.mark.parametrize(
    "rel,key", [(r, k) for r, ks in KEYS_ND.items() for k in ks], ids=lambda v: repr(v)
)
def test_slices_nd(client, root, rel, key):
    want = numpy_of(root, rel)[key]
    np.testing.assert_array_equal(client.get(f"{ROOT}/{rel}")[key], want)
    got = client.get(f"{ROOT}/{rel}").slice(key)  # as a blosc2 array
    assert got.shape == want.shape
    np.testing.assert_array_equal(got[()] if got.ndim == 0 else got[:], want)


def test_scalar(client, root):
    assert client.get(f"{ROOT}/scalar.b2nd")[()] == numpy_of(root, "scalar.b2nd")


def fetch_raw(url, rel, **params):
    r = httpx.get(f"{url}/api/fetch/{ROOT}/{rel}", params=params)
    return r


@pytest.mark.parametrize(
    "slice_,key",
    [("::2", np.s_[::2]), ("::-3", np.s_[::-3]), ("990:1000:3", np.s_[990:1000:3]),
     ("-1:-10:-2", np.s_[-1:-10:-2])],
)
def test_steps_over_raw_http(url, root, slice_, key):
    # caterva2.Client refuses steps; the grammar has them and stratad serves them.
    r = fetch_raw(url, "ds-1d.b2nd", slice_=slice_)
    assert r.status_code == 200
    assert r.headers["accept-ranges"] == "none"
    got = blosc2.ndarray_from_cframe(r.content)[:]
    np.testing.assert_array_equal(got, numpy_of(root, "ds-1d.b2nd")[key])


def test_client_refuses_steps(client):
    with pytest.raises(IndexError):
        client.get(f"{ROOT}/ds-1d.b2nd")[::2]


@pytest.mark.parametrize(
    "slice_,detail",
    [
        ("5000", "index 5000 is out of bounds for axis 0 with size 1000"),
        ("1,2", "too many indices"),
        ("x", "slice_ is not a slice"),
        ("0:10:0", "slice step cannot be zero"),
        ("1.5", "slice_ is not a slice"),
    ],
)
def test_bad_slices_are_400_with_detail(url, client, slice_, detail):
    r = fetch_raw(url, "ds-1d.b2nd", slice_=slice_)
    assert r.status_code == 400
    assert detail in r.json()["detail"]
    if slice_ == "5000":
        with pytest.raises(httpx.HTTPStatusError, match="out of bounds"):
            client.get(f"{ROOT}/ds-1d.b2nd")[5000]


def test_whole_slice_is_the_stored_file(url, root):
    stored = (root / "dir1/ds-2d.b2nd").read_bytes()
    for s in ["", "0:10, 0:20", ":, :", "0:1000"]:
        r = fetch_raw(url, "dir1/ds-2d.b2nd", slice_=s)
        assert r.status_code == 200
        assert r.content == stored, s
        assert r.headers["accept-ranges"] == "bytes"
        assert r.headers["content-disposition"] == 'attachment; filename="ds-2d.b2nd"'


def test_slice_limit_is_413(url):
    # big.b2nd is 8 MiB of float64; the fixture's daemon allows 256 MiB, so ask for more via
    # a fancy key that repeats points.
    idx = "[" + ",".join(["0"] * 1000) + "]"
    r = httpx.post(f"{url}/api/fetch/{ROOT}/big.b2nd", json={"indices": f"[{idx},{idx}]"})
    assert r.status_code == 200  # 1000 points
    assert blosc2.ndarray_from_cframe(r.content).shape == (1000,)


# ------------------------------------------------------------------ indices and fields

FANCY = {
    "ds-1d.b2nd": [[1, 5, 9], [999, 0, 0], [-1, -2]],
    "dir1/ds-2d.b2nd": [([1, 3], slice(2, 4)), (slice(None), [0, 19, 5]), ([1, 2, 3], [4, 5, 6]),
                        ([0, 9], 7), (3, [1, 2])],
    "dir1/deeper/ds-3d.b2nd": [([0, 2], slice(None), 7), (slice(None), [1, 30], [2, 40]),
                               (1, [5, 6, 7])],
    "ds-4d.b2nd": [([0, 5], [1, 6], slice(2, 4), 3), (slice(None), [0, 1], 2)],
}


@pytest.mark.parametrize(
    "rel,key", [(r, k) for r, ks in FANCY.items() for k in ks], ids=lambda v: repr(v)
)
def test_indices(client, root, rel, key):
    want = numpy_of(root, rel)[key if not isinstance(key, list) else (key,)]
    got = client.get(f"{ROOT}/{rel}")[key]
    assert got.shape == want.shape
    np.testing.assert_array_equal(got, want)


def test_indices_by_post_and_mask(client, root, url):
    a = numpy_of(root, "ds-1d.b2nd")
    mask = a % 7 == 0
    np.testing.assert_array_equal(client.get(f"{ROOT}/ds-1d.b2nd")[mask], a[mask])
    # Enough coordinates to go over the client's query limit: it POSTs them.
    many = list(range(0, 1000, 1)) * 3
    np.testing.assert_array_equal(client.get(f"{ROOT}/ds-1d.b2nd")[many], a[many])
    r = httpx.post(f"{url}/api/fetch/{ROOT}/ds-1d.b2nd", json={"nope": 1})
    assert r.status_code == 422


def test_indices_errors(url):
    r = fetch_raw(url, "ds-1d.b2nd", indices="[[1, 5000]]")
    assert (r.status_code, r.json()["detail"]) == (400, "index 5000 is out of bounds for axis 0 with size 1000")
    r = fetch_raw(url, "ds-1d.b2nd", indices="[[1]]", slice_="1:2")
    assert r.status_code == 400
    r = fetch_raw(url, "ds-1d.b2nd", indices="not json")
    assert r.status_code == 400


@pytest.mark.parametrize("field", ["a", "b", "c"])
def test_fields(client, root, field):
    want = numpy_of(root, "fields.b2nd")[field]
    got = client.get(f"{ROOT}/fields.b2nd")[field]
    assert got.shape == want.shape
    np.testing.assert_array_equal(got[:], want)


def test_structured_slices_and_bad_field(client, root, url):
    want = numpy_of(root, "fields.b2nd")[10:20]
    got = client.get(f"{ROOT}/fields.b2nd")[10:20]
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)
    assert fetch_raw(url, "fields.b2nd", field="zz").status_code == 400
    assert fetch_raw(url, "ds-1d.b2nd", field="a").status_code == 400
    r = fetch_raw(url, "fields.b2nd", filter="a < 3")
    assert (r.status_code, r.json()["detail"]) == (400, "filter is not supported")


# ------------------------------------------------------------------ chunks, files, ranges

@pytest.mark.parametrize("rel", ["ds-1d.b2nd", "dir1/ds-2d.b2nd", "zeros.b2nd", "sparse.b2nd", "zfp.b2nd", "f.b2frame"])
def test_chunks_byte_identical(client, root, url, rel):
    opened = local(root, rel)  # kept alive: its .schunk does not hold the array
    s = getattr(opened, "schunk", opened)
    for n in range(s.nchunks):
        assert client.get_chunk(f"{ROOT}/{rel}", n) == s.get_chunk(n), n
    r = httpx.get(f"{url}/api/chunk/{ROOT}/{rel}", params={"nchunk": s.nchunks})
    assert r.status_code == 404
    assert httpx.get(f"{url}/api/chunk/{ROOT}/{rel}").status_code == 422
    assert httpx.get(f"{url}/api/chunk/{ROOT}/{rel}", params={"nchunk": "x"}).status_code == 422


@pytest.mark.parametrize("rel", ["ds-1d.b2nd", "big.b2nd", "f.b2frame", "zfp.b2nd"])
def test_whole_file_and_download_byte_identical(client, root, url, rel, tmp_path):
    stored = (root / rel).read_bytes()
    assert fetch_raw(url, rel).content == stored
    got = client.download(f"{ROOT}/{rel}", tmp_path / "x")
    assert got.read_bytes() == stored
    r = httpx.get(f"{url}/api/download/{ROOT}/{rel}")
    assert r.headers["content-disposition"] == f'attachment; filename="{Path(rel).name}"'
    assert "content-encoding" not in r.headers


def test_sparse_whole_fetch_is_a_cframe(client, root, url, tmp_path):
    r = fetch_raw(url, "sparse.b2nd")
    assert r.headers["accept-ranges"] == "none"
    a = blosc2.ndarray_from_cframe(r.content)
    np.testing.assert_array_equal(a[:], numpy_of(root, "sparse.b2nd"))
    assert fetch_raw(url, "sparse.b2nd").content == r.content
    assert httpx.get(f"{url}/api/fetch/{ROOT}/sparse.b2nd", headers={"Range": "bytes=0-9"}).status_code == 416


def test_ranges(url, root):
    stored = (root / "ds-1d.b2nd").read_bytes()
    n = len(stored)
    u = f"{url}/api/fetch/{ROOT}/ds-1d.b2nd"
    r = httpx.get(u, headers={"Range": "bytes=0-31"})
    assert (r.status_code, r.content, r.headers["content-range"]) == (206, stored[:32], f"bytes 0-31/{n}")
    r = httpx.get(u, headers={"Range": "bytes=-100"})
    assert (r.status_code, r.content) == (206, stored[-100:])
    r = httpx.get(u, headers={"Range": f"bytes={n - 10}-"})
    assert r.content == stored[-10:]
    r = httpx.get(u, headers={"Range": "bytes=99999999-"})
    assert (r.status_code, r.headers["content-range"]) == (416, f"bytes */{n}")
    r = httpx.get(u, headers={"Range": "bytes=0-3,100-103,50-60"})
    assert r.status_code == 206
    ctype = r.headers["content-type"]
    assert ctype.startswith("multipart/byteranges; boundary=")
    b = ctype.split("boundary=")[1].encode()
    parts = [p for p in r.content.split(b"--" + b) if p.strip(b"\r\n-")]
    assert len(parts) == 3
    for part, (a, z) in zip(parts, [(0, 3), (50, 60), (100, 103)]):
        head, body = part.split(b"\r\n\r\n", 1)
        assert f"Content-Range: bytes {a}-{z}/{n}".encode() in head
        assert body[: z - a + 1] == stored[a : z + 1]
    # touching spans merge into one part
    r = httpx.get(u, headers={"Range": "bytes=0-3,4-7"})
    assert (r.status_code, r.content) == (206, stored[:8])
    etag = r.headers["etag"]
    assert httpx.get(u, headers={"Range": "bytes=0-3", "If-Range": etag}).status_code == 206
    r = httpx.get(u, headers={"Range": "bytes=0-3", "If-Range": '"other"'})
    assert (r.status_code, r.content) == (200, stored)
    assert httpx.get(u, headers={"If-None-Match": etag}).status_code == 304
    assert httpx.get(u, headers={"Range": "bytes=x"}).status_code == 400
    # a computed answer is never ranged
    r = httpx.get(u, params={"slice_": "1:5"}, headers={"Range": "bytes=0-3"})
    assert r.status_code == 416
    assert httpx.get(f"{url}/api/download/{ROOT}/ds-1d.b2nd", headers={"Range": "bytes=0-3"}).status_code == 416


def test_head_works(url, root):
    r = httpx.head(f"{url}/v1/raw/{ROOT}/ds-1d.b2nd")
    assert (r.status_code, int(r.headers["content-length"])) == (200, (root / "ds-1d.b2nd").stat().st_size)
    assert httpx.head(f"{url}/api/info/{ROOT}/ds-1d.b2nd").status_code == 200


# ------------------------------------------------------------------ frames

@pytest.mark.parametrize("key", [slice(10, 15), slice(2990, 4000), 7, slice(None), slice(0, 0)], ids=repr)
def test_plain_frame_slices(client, root, key):
    s = local(root, "f.b2frame")
    got = client.get_slice(f"{ROOT}/f.b2frame", key, as_blosc2=False)
    assert bytes(got) == bytes(s[key] if not isinstance(key, int) else s[key:key + 1])


# ------------------------------------------------------------------ C2Array and Proxy

@pytest.mark.parametrize("rel", ["dir1/ds-2d.b2nd", "ds-4d.b2nd", "big.b2nd", "sparse.b2nd", "zfp.b2nd"])
def test_c2array(url, root, rel):
    a = blosc2.C2Array(f"{ROOT}/{rel}", urlbase=url)
    ref = local(root, rel)
    assert (a.shape, a.chunks, a.blocks, a.dtype) == (ref.shape, ref.chunks, ref.blocks, ref.dtype)
    want = ref[...]
    key = tuple(slice(1, max(2, d - 1)) for d in a.shape)
    np.testing.assert_array_equal(a[key], want[key])
    np.testing.assert_array_equal(a.slice(key)[...], want[key])
    assert a.get_chunk(0) == ref.schunk.get_chunk(0)
    assert a.cparams.codec == ref.cparams.codec


def metric(url: str, route: str, status: int) -> int:
    text = httpx.get(f"{url}/metrics").text
    m = re.search(rf'stratad_requests_total{{route="{re.escape(route)}",status="{status}"}} (\d+)', text)
    return int(m.group(1)) if m else 0


def test_proxy_reads_blocks_through_ranges(url, root, tmp_path):
    ranged_before = metric(url, "/api/fetch", 206)
    chunks_before = metric(url, "/api/chunk", 200)
    a = blosc2.C2Array(f"{ROOT}/big.b2nd", urlbase=url)
    p = blosc2.Proxy(a, urlpath=str(tmp_path / "cache.b2nd"), mode="w")
    want = numpy_of(root, "big.b2nd")
    np.testing.assert_array_equal(p[10:20, 10:20], want[10:20, 10:20])
    np.testing.assert_array_equal(p[600:610, 100:300], want[600:610, 100:300])
    # The frame header, the index and the blocks came as ranges, no chunk whole.
    assert metric(url, "/api/fetch", 206) - ranged_before >= 3
    assert metric(url, "/api/chunk", 200) == chunks_before
    # The whole array through the proxy (chunks fetched whole now).
    np.testing.assert_array_equal(p[...], want)


def test_proxy_of_small_chunks(url, root, tmp_path):
    a = blosc2.C2Array(f"{ROOT}/dir1/deeper/ds-3d.b2nd", urlbase=url)
    p = blosc2.Proxy(a, urlpath=str(tmp_path / "c.b2nd"), mode="w")
    want = numpy_of(root, "dir1/deeper/ds-3d.b2nd")
    np.testing.assert_array_equal(p[1, 5:30, 10:20], want[1, 5:30, 10:20])
    np.testing.assert_array_equal(p[...], want)


# ------------------------------------------------------------------ refusals

@pytest.mark.parametrize(
    "method,path,status",
    [
        ("POST", "/api/upload/@public/x.b2nd", 405),
        ("POST", "/api/remove/@public/ds-1d.b2nd", 405),
        ("POST", "/api/chunk/@public/ds-1d.b2nd?nchunk=0", 405),
        ("POST", "/auth/jwt/login", 405),
        ("GET", "/api/info/@public/README.md", 404),
        ("GET", "/api/fetch/@public/nope.b2nd", 404),
        ("GET", "/api/info/nope/x.b2nd", 404),
        ("GET", "/api/nothing", 404),
    ],
)
def test_unsupported_answers_json_detail(url, method, path, status):
    r = httpx.request(method, url + path)
    assert r.status_code == status
    assert "detail" in r.json()


def test_client_write_calls_fail_cleanly(client, tmp_path):
    f = tmp_path / "up.b2nd"
    blosc2.asarray(np.arange(10), urlpath=str(f), mode="w")
    with pytest.raises(httpx.HTTPStatusError) as e:
        client.upload(f, f"{ROOT}/up.b2nd")
    assert e.value.response.status_code == 405


def test_a_codec_no_plugin_provides_is_501_not_500(root, tmp_path):
    """The same root served with no plugin directory: the ZFP array's metadata and stored
    bytes are served, decoding it is a 501 naming the codec (not a 500)."""
    empty = tmp_path / "no-plugins"
    empty.mkdir()
    env = dict(os.environ, STRATA_PLUGIN_PATH=str(empty), STRATAD_LOG="error", HOME=str(tmp_path))
    proc = subprocess.Popen(
        [str(stratad_binary()), "--root", f"{ROOT}={root}", "--listen", "127.0.0.1:0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=env,
        text=True,
    )
    try:
        base = re.match(r"stratad listening on (http://127\.0\.0\.1:\d+)", proc.stdout.readline()).group(1)
        whole = httpx.get(f"{base}/api/fetch/{ROOT}/zfp.b2nd")
        assert whole.status_code == 200
        assert whole.content == (root / "zfp.b2nd").read_bytes()
        r = httpx.get(f"{base}/api/fetch/{ROOT}/zfp.b2nd", params={"slice_": "0:2"})
        assert r.status_code == 501
        assert r.json() == {"detail": "the dataset needs codec ID 33, which this server has no plugin for"}
    finally:
        proc.terminate()
        proc.wait(timeout=20)
