"""Remote frames: every CLI command that reads arrays (info, slice, export, bench, decompress),
the C API (strata_schunk_open, strata_ndarray_open through capi_reader.c, their errors
through capi_remote_errors.c) and the Fortran module given http://
URLs of three real servers, each started here on 127.0.0.1 and stopped after:

* stratad: its native raw route /v1/raw/{root}/{path} and the Caterva2-compatible whole-file
  route /api/fetch/{root}/{path};
* nginx (Debian's) serving the data directory: a third-party range server, and the one that
  serves a sparse frame directory (its chunks.b2frame and chunk files) as plain files;
* cat2-server (caterva2[server] 2026.9.2, login off): /api/fetch/@public/{path}.

Every answer must equal what the same command gives for the local file (python-blosc2 wrote
the datasets, so the data is also checked against it).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import time
from pathlib import Path

import blosc2
import httpx
import numpy as np
import pytest
from helpers import REPO, free_port, start_cat2_server, stop_all
from test_capi import HDF5_LIBS, build, libstrata, run  # noqa: F401  (libstrata is a fixture)

ROOT = "pub"
NGINX = shutil.which("nginx") or "/usr/sbin/nginx"


def stratad_binary() -> Path:
    return Path(os.environ.get("STRATAD_BIN", REPO / "target" / "release" / "stratad"))


def make_datasets(root: Path) -> dict[str, np.ndarray]:
    """python-blosc2 writes the datasets; returns their data."""
    rng = np.random.default_rng(7)
    a = (np.sin(np.arange(60 * 70 * 80) * 0.013).reshape(60, 70, 80) * 1000).round()
    a3 = blosc2.asarray(a, chunks=(25, 30, 40), blocks=(10, 10, 20), urlpath=str(root / "a3.b2nd"), mode="w")
    i2 = rng.integers(-1000, 1000, size=(300, 500), dtype=np.int32)
    blosc2.asarray(
        i2,
        chunks=(100, 250),
        blocks=(20, 50),
        urlpath=str(root / "sp.b2nd"),
        contiguous=False,
        mode="w",
        cparams={"codec": blosc2.Codec.ZSTD, "clevel": 3},
    )
    frame = np.arange(200_000, dtype=np.int64) // 3
    blosc2.SChunk(chunksize=64_000 * 8, data=frame, urlpath=str(root / "f.b2frame"), contiguous=True, mode="w")
    assert a3.shape == (60, 70, 80)
    return {"a3.b2nd": a, "sp.b2nd": i2, "f.b2frame": frame}


def wait_for(url: str, proc: subprocess.Popen, what: str, limit: float = 60) -> None:
    deadline = time.time() + limit
    while True:
        try:
            if httpx.get(url, timeout=2).status_code < 500:
                return
        except httpx.HTTPError:
            pass
        if time.time() > deadline or proc.poll() is not None:
            pytest.fail(f"{what} did not start")
        time.sleep(0.2)


@pytest.fixture(scope="module")
def servers(tmp_path_factory):
    """The data root, its datasets' data, and for each server a function of a dataset's
    relative path giving its URL there (None where that server does not serve it)."""
    binary = stratad_binary()
    if not binary.is_file():
        pytest.fail(f"no stratad at {binary}: cargo build --release -p strata-daemon, or set STRATAD_BIN")
    if not Path(NGINX).is_file():
        pytest.fail("no nginx: scripts/setup-build-deps.sh installs Debian's nginx")
    base = tmp_path_factory.mktemp("remote")
    root = base / "root"
    root.mkdir()
    data = make_datasets(root)
    procs: list[subprocess.Popen] = []
    try:
        # stratad
        log = open(base / "stratad.log", "w")
        s = subprocess.Popen(
            [str(binary), "--root", f"{ROOT}={root}", "--listen", "127.0.0.1:0"],
            stdout=subprocess.PIPE,
            stderr=log,
            env=dict(os.environ, STRATAD_LOG="warn"),
            text=True,
        )
        procs.append(s)
        m = re.match(r"stratad listening on (http://\S+)", s.stdout.readline())
        assert m, f"stratad did not start: {(base / 'stratad.log').read_text()}"
        surl = m.group(1)
        # nginx: foreground, one process, as this user, everything in the temp dir.
        ngx = base / "nginx"
        ngx.mkdir()
        nport = free_port()
        (ngx / "nginx.conf").write_text(
            f"""daemon off;
master_process off;
worker_processes 1;
pid {ngx}/nginx.pid;
error_log {ngx}/error.log warn;
events {{ worker_connections 64; }}
http {{
    access_log {ngx}/access.log;
    client_body_temp_path {ngx}/body;
    proxy_temp_path {ngx}/proxy;
    fastcgi_temp_path {ngx}/fastcgi;
    uwsgi_temp_path {ngx}/uwsgi;
    scgi_temp_path {ngx}/scgi;
    default_type application/octet-stream;
    server {{
        listen 127.0.0.1:{nport};
        root {root};
        autoindex on;
    }}
}}
"""
        )
        n = subprocess.Popen(
            [NGINX, "-p", str(ngx), "-c", str(ngx / "nginx.conf"), "-e", str(ngx / "error.log")],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        procs.append(n)
        nurl = f"http://127.0.0.1:{nport}"
        wait_for(nurl + "/", n, "nginx")
        # cat2-server, login off, serving a copy of the root as @public.
        c, curl = start_cat2_server(base, root)
        procs.append(c)
        contiguous = lambda rel: not (root / rel).is_dir()  # noqa: E731
        urls = {
            "stratad-raw": lambda rel: f"{surl}/v1/raw/{ROOT}/{rel}" if contiguous(rel) else None,
            "stratad-fetch": lambda rel: f"{surl}/api/fetch/{ROOT}/{rel}" if contiguous(rel) else None,
            "nginx": lambda rel: f"{nurl}/{rel}",
            "cat2-server": lambda rel: f"{curl}/api/fetch/%40public/{rel}" if contiguous(rel) else None,
        }
        yield root, data, urls
    finally:
        stop_all(procs)


SERVERS = ["stratad-raw", "stratad-fetch", "nginx", "cat2-server"]
ARRAYS = ["a3.b2nd", "sp.b2nd"]


def cases(rels: list[str]) -> list[tuple[str, str]]:
    """(server, dataset) pairs: a sparse frame directory (sp.b2nd) only from nginx, which
    serves its chunk files as files (stratad and cat2-server serve datasets, not the files of
    a directory)."""
    return [(s, r) for s in SERVERS for r in rels if r != "sp.b2nd" or s == "nginx"]


def url_of(servers, server: str, rel: str) -> str:
    url = servers[2][server](rel)
    assert url is not None, (server, rel)
    return url


def cli(strata_bin: Path, *args) -> str:
    out = subprocess.run([str(strata_bin), *map(str, args)], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, f"strata {args}: {out.returncode}\n{out.stderr}"
    return out.stdout


@pytest.mark.parametrize("server,rel", cases([*ARRAYS, "f.b2frame"]))
def test_info_of_a_url_is_the_local_files(servers, strata_bin, server, rel):
    root = servers[0]
    url = url_of(servers, server, rel)
    remote = json.loads(cli(strata_bin, "info", "--json", url))
    local = json.loads(cli(strata_bin, "info", "--json", root / rel))
    assert remote.pop("path") == url
    local.pop("path")
    assert remote == local


SELECTIONS = {
    "a3.b2nd": [("5,0,0", "6,70,80"), ("0,33,7", "60,34,70"), ("12,3,17", "49,66,79")],
    "sp.b2nd": [("150,0", "151,500"), ("17,230", "260,260")],
}


@pytest.mark.parametrize("server,rel", cases(ARRAYS))
def test_slice_and_export_of_a_url_equal_the_data(servers, strata_bin, server, rel, tmp_path):
    root, data = servers[0], servers[1][rel]
    url = url_of(servers, server, rel)
    for k, (start, stop_) in enumerate(SELECTIONS[rel]):
        out = tmp_path / f"s{k}.npy"
        cli(strata_bin, "slice", "--start", start, "--stop", stop_, "-o", out, url)
        lo, hi = [int(v) for v in start.split(",")], [int(v) for v in stop_.split(",")]
        want = data[tuple(slice(a, b) for a, b in zip(lo, hi))]
        assert np.array_equal(np.load(out), want), (server, rel, start, stop_)
    # A thin selection printed, as for the local file.
    start, stop_ = SELECTIONS[rel][0]
    stop_thin = ",".join(str(int(a) + 1) for a in start.split(","))
    printed = cli(strata_bin, "slice", "--start", start, "--stop", stop_thin, url)
    assert printed == cli(strata_bin, "slice", "--start", start, "--stop", stop_thin, root / rel)
    whole = tmp_path / "whole.npy"
    cli(strata_bin, "export", url, whole)
    assert np.array_equal(np.load(whole), data)


@pytest.mark.parametrize("server", SERVERS)
def test_bench_and_decompress_of_urls(servers, strata_bin, server, tmp_path):
    root, data = servers[0], servers[1]
    url = url_of(servers, server, "a3.b2nd")
    report = json.loads(cli(strata_bin, "bench", "--runs", "1", "--json", url))
    assert (report["shape"], report["nbytes"]) == ([60, 70, 80], data["a3.b2nd"].nbytes)
    assert [h["axis"] for h in report["hyperplanes"]] == [0, 1, 2]
    out = tmp_path / "f.raw"
    cli(strata_bin, "decompress", url_of(servers, server, "f.b2frame"), out)
    assert out.read_bytes() == data["f.b2frame"].tobytes()
    # --cold (drops local files from the page cache) is refused for a URL, clearly.
    bad = subprocess.run(
        [str(strata_bin), "bench", "--cold", "--runs", "1", url], capture_output=True, text=True, timeout=60
    )
    assert bad.returncode != 0 and "not a URL" in bad.stderr


@pytest.mark.parametrize("server,rel", cases([*ARRAYS, "f.b2frame"]))
def test_the_c_api_opens_urls(servers, server, rel, tmp_path, libstrata):  # noqa: F811
    root = servers[0]
    url = url_of(servers, server, rel)
    exe = build(REPO / "tests" / "interop" / "capi_reader.c", tmp_path, libstrata)
    args = ["nd"] if rel.endswith(".b2nd") else []
    remote = run(exe, *args, url, tmp_path / "remote.raw")
    local = run(exe, *args, root / rel, tmp_path / "local.raw")
    assert remote == local
    assert (tmp_path / "remote.raw").read_bytes() == (tmp_path / "local.raw").read_bytes()
    if args:
        assert (tmp_path / "remote.raw.step").read_bytes() == (tmp_path / "local.raw.step").read_bytes()


def test_errors_name_the_url_and_the_status(servers, strata_bin):
    for server in SERVERS:
        url = servers[2][server]("a3.b2nd").replace("a3.b2nd", "missing.b2nd")
        out = subprocess.run([str(strata_bin), "info", url], capture_output=True, text=True, timeout=60)
        assert out.returncode != 0
        assert url in out.stderr and "404" in out.stderr, (server, out.stderr)


@pytest.mark.parametrize("server", SERVERS)
def test_the_c_api_errors_on_urls(servers, server, tmp_path, libstrata):  # noqa: F811
    """strata_ndarray_open and strata_schunk_open: a missing file is STRATA_ERROR_REMOTE naming
    the URL and the status; a write mode is STRATA_ERROR_INVALID_PARAM; the read still works."""
    good = url_of(servers, server, "a3.b2nd")
    missing = good.replace("a3.b2nd", "missing.b2nd")
    exe = build(REPO / "tests" / "interop" / "capi_remote_errors.c", tmp_path, libstrata)
    lines = dict(line.split(" ", 1) for line in run(exe, good, missing).splitlines())
    assert lines.pop("remote_code") == "-1004"
    for call in ["ndarray_open_missing", "schunk_open_missing"]:
        name, msg = lines.pop(call).split(" ", 1)
        assert name == "STRATA_ERROR_REMOTE" and msg.startswith(missing) and "HTTP 404" in msg, (call, msg)
    for call in ["ndarray_open_readwrite", "schunk_open_append"]:
        name, msg = lines.pop(call).split(" ", 1)
        assert name == "STRATA_ERROR_INVALID_PARAM" and "read-only" in msg, (call, msg)
    assert lines == {"ndarray_open_read": "ok "}


@pytest.mark.parametrize("server", SERVERS)
def test_the_fortran_module_opens_urls(servers, server, tmp_path, libstrata):  # noqa: F811
    """bindings/fortran's strata_ndarray_open given a URL: the same numbers as for the file."""
    if shutil.which("gfortran") is None:
        pytest.fail("no gfortran: scripts/setup-build-deps.sh installs it")
    flags = ["-std=f2008", "-Wall", "-Werror"]
    mod = REPO / "bindings" / "fortran" / "strata.f90"
    subprocess.run(["gfortran", *flags, "-J", tmp_path, "-c", mod, "-o", tmp_path / "strata.o"], check=True)
    exe = tmp_path / "remote_reader"
    subprocess.run(
        [
            "gfortran", *flags, "-I", tmp_path, REPO / "tests" / "interop" / "remote_reader.f90",
            tmp_path / "strata.o", libstrata, *HDF5_LIBS, "-lm", "-lpthread", "-ldl", "-o", exe,
        ],
        check=True,
    )
    root = servers[0]
    remote = run(exe, url_of(servers, server, "a3.b2nd"))
    assert remote == run(exe, root / "a3.b2nd")
    assert remote.startswith("shape 60 70 80\n")
