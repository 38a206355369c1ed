"""stratad against cat2-server (caterva2 2026.9.2, login off), side by side in one run.

Both serve copies of one data root: the Caterva2 baseline array (2000 x 2000 float64, a
linspace, LZ4 clevel 5 with shuffle, chunks 500 x 500, blocks 100 x 100: 16 chunks of about
2 MB) and the three shapes of the Caterva study (benches/slicing.py's field, LZ4 clevel 5,
shuffle; --quick: its small shapes). wrk 4.1.0 (Debian) runs pinned to CPU 0 with one
thread; each server is pinned to CPU 1 (stratad with one pool worker and one I/O thread, so
both have one core). For each workload and each number of connections (1, 8, 64), after a
warm-up, the servers take turns (rounds alternate which goes first); the table has the
median over the rounds of requests/s, p50 and p99 latency, server CPU time per request
(utime + stime from /proc/<pid>/stat over the run) and each server's peak RSS (VmHWM).

Workloads:
  info        GET /api/info of the baseline array
  chunk       GET /api/chunk?nchunk=i, round-robin over its 16 chunks
  slice10     a 10 x 10 slice inside one block (slice_=100:110, 100:110)
  hyper-<s>   hyperplanes of Caterva shape <s>: random indices along every axis in turn
  proxy-open  what blosc2.Proxy sends to open an array: info, Range: bytes=0-8191, the tail

The chunk workload also runs against nginx (one process, sendfile, on CPU 1) serving the same
chunk bytes as static files: the most wrk on its one core takes of bodies that size, the
ceiling of any server in this set-up.

Before timing, the answers are checked to be the same from both servers: chunk and range
bytes identical, slices decoding to the same values, metadata equal but for nthreads,
urlpath and mtime.

Usage (see benches/daemon_vs_caterva2.sh, which installs wrk and builds stratad):
  .venv/bin/python benches/daemon_vs_caterva2.py --stratad target/release/stratad
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.parse
from pathlib import Path

import blosc2
import httpx
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import slicing  # noqa: E402  (the Caterva shapes and their data)

CONNECTIONS = [1, 8, 64]
CLK_TCK = os.sysconf("SC_CLK_TCK")
ROOT = "@public"
Q = urllib.parse.quote(ROOT)


def make_root(root: Path, quick: bool) -> dict:
    """The data root; returns {name: (shape, nchunks)}."""
    cparams = {"codec": blosc2.Codec.LZ4, "clevel": 5, "filters": [blosc2.Filter.SHUFFLE], "filters_meta": [0]}
    out = {}
    grid = np.linspace(0, 1, 2000 * 2000).reshape(2000, 2000)
    a = blosc2.asarray(grid, chunks=(500, 500), blocks=(100, 100), urlpath=str(root / "grid.b2nd"), mode="w", cparams=cparams)
    out["grid.b2nd"] = (a.shape, a.schunk.nchunks)
    for i, case in enumerate(slicing.QUICK if quick else slicing.FULL):
        name = f"caterva{i}-{case.name}.b2nd"
        a = blosc2.asarray(
            slicing.field(case.shape), chunks=case.chunks, blocks=case.blocks,
            urlpath=str(root / name), mode="w", cparams=cparams,
        )
        out[name] = (a.shape, a.schunk.nchunks)
    return out


def lua_cycle(paths: list[tuple[str, dict]]) -> str:
    """A wrk script sending `paths` (path, headers) in turn."""
    items = []
    for p, h in paths:
        hs = ", ".join(f'["{k}"] = "{v}"' for k, v in h.items())
        items.append(f'{{"{p}", {{{hs}}}}}')
    return (
        "local reqs = {" + ",\n".join(items) + "}\n"
        "local i = 0\n"
        "request = function()\n"
        "  i = i % #reqs + 1\n"
        "  return wrk.format('GET', reqs[i][1], reqs[i][2])\n"
        "end\n"
    )


def hyperplanes(name: str, shape: tuple, n: int = 8) -> list[str]:
    rng = np.random.default_rng(len(shape))
    out = []
    for axis, size in enumerate(shape):
        for i in rng.choice(size, size=min(n, size), replace=False):
            key = ", ".join(str(int(i)) if d == axis else ":" for d in range(len(shape)))
            out.append(f"/api/fetch/{Q}/{name}?slice_={urllib.parse.quote(key)}")
    return out


def workloads(data: dict) -> dict:
    grid = f"/api/fetch/{Q}/grid.b2nd"
    w = {
        "info": [(f"/api/info/{Q}/grid.b2nd", {})],
        "chunk": [(f"/api/chunk/{Q}/grid.b2nd?nchunk={n}", {}) for n in range(data["grid.b2nd"][1])],
        "slice10": [(f"{grid}?slice_={urllib.parse.quote('100:110, 100:110')}", {})],
    }
    for name, (shape, _) in data.items():
        if name.startswith("caterva"):
            w["hyper-" + name.split("-", 1)[1].removesuffix(".b2nd")] = [(p, {}) for p in hyperplanes(name, shape)]
    w["proxy-open"] = [
        (f"/api/info/{Q}/grid.b2nd", {}),
        (grid, {"Range": "bytes=0-8191"}),
        (grid, {"Range": "bytes=-4096"}),
    ]
    return w


class Server:
    def __init__(self, name: str, cmd: list[str], url: str | None, cwd: Path | None = None, env=None):
        self.name = name
        # Only stratad's first line is read; anything else would fill a pipe and stall the server.
        out = subprocess.PIPE if url is None else subprocess.DEVNULL
        self.proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=out, stderr=subprocess.DEVNULL, text=True)
        if url is None:
            line = self.proc.stdout.readline()
            m = re.search(r"listening on (http://\S+)", line)
            if not m:
                self.stop()
                raise SystemExit(f"{name} did not start: {line!r}")
            url = m.group(1)
        self.url = url
        deadline = time.time() + 120
        while True:
            try:
                if httpx.get(f"{url}/api/roots", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.time() > deadline or self.proc.poll() is not None:
                self.stop()
                raise SystemExit(f"{name} did not answer at {url}")
            time.sleep(0.3)

    def cpu_seconds(self) -> float:
        fields = Path(f"/proc/{self.proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / CLK_TCK

    def peak_rss_mib(self) -> float:
        for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
        return 0.0

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


NGINX_CONF = """daemon off;
master_process off;
worker_processes 1;
pid {tmp}/nginx.pid;
error_log {tmp}/nginx-error.log;
events {{ worker_connections 1024; }}
http {{
  access_log off;
  sendfile on;
  tcp_nopush on;
  keepalive_requests 1000000;
  client_body_temp_path {tmp}/nginx-body;
  proxy_temp_path {tmp}/nginx-proxy;
  fastcgi_temp_path {tmp}/nginx-fastcgi;
  uwsgi_temp_path {tmp}/nginx-uwsgi;
  scgi_temp_path {tmp}/nginx-scgi;
  server {{
    listen 127.0.0.1:{port};
    root {root};
  }}
}}
"""


def start_nginx(tmp: Path, chunks: list[bytes], port: int) -> Server | None:
    """nginx serving `chunks` as /c0, /c1, ... (None when nginx is not installed)."""
    nginx = shutil.which("nginx") or ("/usr/sbin/nginx" if Path("/usr/sbin/nginx").exists() else None)
    if nginx is None:
        print("nginx is missing: no ceiling row", flush=True)
        return None
    static = tmp / "static"
    (static / "api").mkdir(parents=True)
    (static / "api" / "roots").write_text("{}")
    for n, c in enumerate(chunks):
        (static / f"c{n}").write_bytes(c)
    conf = tmp / "nginx.conf"
    conf.write_text(NGINX_CONF.format(tmp=tmp, port=port, root=static))
    return Server("nginx", ["taskset", "-c", "1", nginx, "-c", str(conf), "-p", str(tmp), "-e", str(tmp / "nginx-error.log")], f"http://127.0.0.1:{port}")


def to_ms(v: str) -> float:
    m = re.fullmatch(r"([\d.]+)(us|ms|s|m)", v)
    n, unit = float(m.group(1)), m.group(2)
    return n * {"us": 1e-3, "ms": 1.0, "s": 1e3, "m": 6e4}[unit]


def run_wrk(url: str, script: Path, conns: int, seconds: int) -> dict:
    out = subprocess.run(
        ["taskset", "-c", "0", "wrk", "-t1", f"-c{conns}", f"-d{seconds}s", "--latency", "-s", str(script), url],
        capture_output=True, text=True, check=True,
    ).stdout
    reqs = int(re.search(r"(\d+) requests in", out).group(1))
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))
    p50 = to_ms(re.search(r"^\s+50%\s+(\S+)", out, re.M).group(1))
    p99 = to_ms(re.search(r"^\s+99%\s+(\S+)", out, re.M).group(1))
    bad = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    errs = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", out)
    return {
        "requests": reqs, "rps": rps, "p50": p50, "p99": p99,
        "non2xx": int(bad.group(1)) if bad else 0,
        "socket_errors": sum(map(int, errs.groups())) if errs else 0,
    }


def check_same(a: str, b: str, w: dict, data: dict) -> None:
    """The same answers from both servers (see the module docs)."""
    volatile = {"nthreads", "urlpath", "mtime"}

    def clean(v):
        if isinstance(v, dict):
            return {k: clean(x) for k, x in v.items() if k not in volatile}
        return v

    ia = httpx.get(a + w["info"][0][0]).json()
    ib = httpx.get(b + w["info"][0][0]).json()
    assert clean(ia) == clean(ib), (ia, ib)
    for p, _ in w["chunk"]:
        assert httpx.get(a + p).content == httpx.get(b + p).content, p
    for name, reqs in w.items():
        if name in ("slice10",) or name.startswith("hyper-"):
            for p, _ in reqs[:: max(1, len(reqs) // 6)]:
                ra, rb = httpx.get(a + p, timeout=120), httpx.get(b + p, timeout=120)
                assert ra.status_code == rb.status_code == 200, (p, ra.status_code, rb.status_code)
                np.testing.assert_array_equal(blosc2.ndarray_from_cframe(ra.content)[()], blosc2.ndarray_from_cframe(rb.content)[()])
    for p, h in w["proxy-open"][1:]:
        ra, rb = httpx.get(a + p, headers=h), httpx.get(b + p, headers=h)
        assert (ra.status_code, ra.content, ra.headers["content-range"]) == (rb.status_code, rb.content, rb.headers["content-range"]), p


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--stratad", default="target/release/stratad")
    ap.add_argument("--seconds", type=int, default=5, help="per wrk run (default 5)")
    ap.add_argument("--rounds", type=int, default=2, help="alternating rounds (default 2)")
    ap.add_argument("--connections", type=int, nargs="+", default=CONNECTIONS)
    ap.add_argument("--only", nargs="*", help="workloads to run (default all)")
    ap.add_argument("--quick", action="store_true", help="the small Caterva shapes")
    ap.add_argument("--out", type=Path, help="write the table (markdown) here too")
    args = ap.parse_args()
    for tool in ("wrk", "taskset"):
        if shutil.which(tool) is None:
            raise SystemExit(f"{tool} is missing (benches/daemon_vs_caterva2.sh installs wrk)")
    cat2 = Path(sys.executable).parent / "cat2-server"
    tmp = Path(tempfile.mkdtemp(prefix="stratad-bench-"))
    servers = []
    try:
        root = tmp / "root"
        root.mkdir()
        t = time.time()
        data = make_root(root, args.quick)
        print(f"data: {', '.join(data)} in {time.time() - t:.0f} s", flush=True)
        state = tmp / "cat2" / "state"
        shutil.copytree(root, state / "public")
        (tmp / "cat2" / "caterva2-server.toml").write_text("[server]\nlogin = false\n")
        env = dict(os.environ, STRATA_PIN="0", STRATAD_LOG="warn")
        s = Server(
            "stratad",
            ["taskset", "-c", "1", args.stratad, "--root", f"{ROOT}={root}", "--listen", "127.0.0.1:0",
             "--workers", "1", "--io-threads", "1", "--cache-bytes", "512M", "--queue", "1024"],
            None, env=env,
        )
        servers.append(s)
        port = 47000 + os.getpid() % 1000
        c = Server(
            "cat2-server",
            ["taskset", "-c", "1", str(cat2), "--listen", f"127.0.0.1:{port}", "--statedir", str(state)],
            f"http://127.0.0.1:{port}", cwd=tmp / "cat2", env=dict(os.environ, CATERVA2_SECRET="bench"),
        )
        servers.append(c)
        w = workloads(data)
        check_same(s.url, c.url, w, data)
        print("same answers from both servers: ok", flush=True)
        ngx = None
        if not args.only or "chunk" in args.only:
            ngx = start_nginx(tmp, [httpx.get(s.url + p).content for p, _ in w["chunk"]], port + 1)
            if ngx:
                servers.append(ngx)
                ngx_script = tmp / "chunk-nginx.lua"
                ngx_script.write_text(lua_cycle([(f"/c{n}", {}) for n in range(len(w["chunk"]))]))
        load = os.getloadavg()
        results = {}
        for name, reqs in w.items():
            if args.only and name not in args.only:
                continue
            script = tmp / f"{name}.lua"
            script.write_text(lua_cycle(reqs))
            side = [s, c] + ([ngx] if ngx and name == "chunk" else [])
            scripts = {srv.name: ngx_script if srv is ngx else script for srv in side}
            for srv in side:
                run_wrk(srv.url, scripts[srv.name], 8, 2)  # warm-up: caches, connections, page cache
            for conns in args.connections:
                runs = {srv.name: [] for srv in side}
                for r in range(args.rounds):
                    order = side[r % len(side):] + side[: r % len(side)]
                    for srv in order:
                        cpu0 = srv.cpu_seconds()
                        res = run_wrk(srv.url, scripts[srv.name], conns, args.seconds)
                        res["cpu_ms_per_req"] = (srv.cpu_seconds() - cpu0) * 1e3 / max(1, res["requests"])
                        runs[srv.name].append(res)
                med = {
                    k: {f: statistics.median(x[f] for x in v) for f in v[0]} for k, v in runs.items()
                }
                results[(name, conns)] = med
                a, b = med["stratad"], med["cat2-server"]
                print(
                    f"{name:>18} c={conns:<3} stratad {a['rps']:9.0f}/s p50 {a['p50']:8.2f} p99 {a['p99']:8.2f} ms "
                    f"cpu {a['cpu_ms_per_req']:.3f} ms/req | cat2 {b['rps']:8.0f}/s p50 {b['p50']:8.2f} p99 {b['p99']:8.2f} ms "
                    f"cpu {b['cpu_ms_per_req']:.3f} ms/req | x{a['rps'] / max(b['rps'], 1e-9):.1f}"
                    f"{'  (errors: ' + str(a['non2xx'] + a['socket_errors']) + '/' + str(b['non2xx'] + b['socket_errors']) + ')' if a['non2xx'] + a['socket_errors'] + b['non2xx'] + b['socket_errors'] else ''}",
                    flush=True,
                )
                if "nginx" in med:
                    g = med["nginx"]
                    print(
                        f"{'chunk ceiling':>18} c={conns:<3} nginx {g['rps']:9.0f}/s p50 {g['p50']:8.2f} p99 {g['p99']:8.2f} ms "
                        f"cpu {g['cpu_ms_per_req']:.3f} ms/req | stratad at {a['rps'] / max(g['rps'], 1e-9):.0%} of it",
                        flush=True,
                    )
        rss = {srv.name: srv.peak_rss_mib() for srv in servers}
        lines = [
            f"stratad vs cat2-server, {args.rounds} rounds x {args.seconds} s per cell, medians; "
            f"wrk -t1 on CPU 0, each server on CPU 1; load average at start {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}",
            "",
            "| workload | conns | stratad req/s | p50 ms | p99 ms | CPU ms/req | cat2-server req/s | p50 ms | p99 ms | CPU ms/req | speed-up | errors (s/c) |",
            "|---|---|---|---|---|---|---|---|---|---|---|---|",
        ]
        for (name, conns), med in results.items():
            a, b = med["stratad"], med["cat2-server"]
            lines.append(
                f"| {name} | {conns} | {a['rps']:.0f} | {a['p50']:.2f} | {a['p99']:.2f} | {a['cpu_ms_per_req']:.3f} "
                f"| {b['rps']:.0f} | {b['p50']:.2f} | {b['p99']:.2f} | {b['cpu_ms_per_req']:.3f} "
                f"| {a['rps'] / max(b['rps'], 1e-9):.1f}x | {a['non2xx'] + a['socket_errors']:.0f}/{b['non2xx'] + b['socket_errors']:.0f} |"
            )
        ceiling = [(conns, med["nginx"], med["stratad"]) for (name, conns), med in results.items() if "nginx" in med]
        if ceiling:
            lines += [
                "",
                "The same chunk bytes as static files from nginx (one process, sendfile, CPU 1): what wrk on its one core takes.",
                "",
                "| conns | nginx req/s | p50 ms | p99 ms | CPU ms/req | stratad / nginx |",
                "|---|---|---|---|---|---|",
            ]
            for conns, g, a in ceiling:
                lines.append(
                    f"| {conns} | {g['rps']:.0f} | {g['p50']:.2f} | {g['p99']:.2f} | {g['cpu_ms_per_req']:.3f} | {a['rps'] / max(g['rps'], 1e-9):.0%} |"
                )
        lines += ["", f"peak RSS: stratad {rss['stratad']:.0f} MiB, cat2-server {rss['cat2-server']:.0f} MiB"]
        text = "\n".join(lines)
        print("\n" + text)
        if args.out:
            args.out.parent.mkdir(parents=True, exist_ok=True)
            args.out.write_text(text + "\n")
    finally:
        for srv in servers:
            srv.stop()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
