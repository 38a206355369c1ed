"""Two or more stratad binaries side by side on the same data, without cat2-server.

The data root, workloads and wrk set-up are benches/daemon_vs_caterva2.py's (--quick shapes):
wrk -t1 pinned to CPU 0, each stratad pinned to CPU 1 with one pool worker and one I/O thread.
Before timing, every binary's answers to the workloads' requests are checked to decode
(blosc2.ndarray_from_cframe) to the same values. For each workload and number of connections,
the binaries take turns in rounds (each round starts with the next one), and the medians over
the rounds are printed: requests/s, p50 and p99 latency, server CPU ms per request, with the
p99 of each round. Use it to compare a change with the binary it started from:

  cp target/release/stratad /tmp/stratad-base   # before the change
  .venv/bin/python benches/stratad_ab.py /tmp/stratad-base target/release/stratad --rounds 5
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import daemon_vs_caterva2 as bench  # noqa: E402  (data root, workloads, wrk and servers)

import blosc2  # noqa: E402
import httpx  # noqa: E402
import numpy as np  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("stratad", nargs="+", help="the binaries")
    ap.add_argument("--seconds", type=int, default=3, help="per wrk run (default 3)")
    ap.add_argument("--rounds", type=int, default=3, help="alternating rounds (default 3)")
    ap.add_argument("--connections", type=int, nargs="+", default=bench.CONNECTIONS)
    ap.add_argument("--only", nargs="+", default=["hyper-80x60x30", "hyper-40x16x20x10"],
                    help="workloads (default the two hyperplane ones)")
    args = ap.parse_args()
    root = Path(tempfile.mkdtemp(prefix="stratad-ab-")) / "root"
    root.mkdir()
    work = bench.workloads(bench.make_root(root, True))
    env = dict(os.environ, STRATA_PIN="0", STRATAD_LOG="warn")
    servers = []
    try:
        for i, path in enumerate(args.stratad):
            servers.append(bench.Server(
                f"{i}: {path}",
                ["taskset", "-c", "1", path, "--root", f"{bench.ROOT}={root}", "--listen", "127.0.0.1:0",
                 "--workers", "1", "--io-threads", "1", "--cache-bytes", "512M", "--queue", "1024"],
                None, env=env,
            ))
        for name in args.only:
            for p, _ in work[name]:
                values = [blosc2.ndarray_from_cframe(httpx.get(s.url + p).content)[()] for s in servers]
                for v in values[1:]:
                    np.testing.assert_array_equal(values[0], v)
        print("same values from every binary; load average", os.getloadavg(), flush=True)
        for name in args.only:
            script = root.parent / f"{name}.lua"
            script.write_text(bench.lua_cycle(work[name]))
            for s in servers:
                bench.run_wrk(s.url, script, 8, 2)  # warm-up
            for conns in args.connections:
                runs = {s.name: [] for s in servers}
                for r in range(args.rounds):
                    for s in servers[r % len(servers):] + servers[: r % len(servers)]:
                        cpu0 = s.cpu_seconds()
                        res = bench.run_wrk(s.url, script, conns, args.seconds)
                        res["cpu"] = (s.cpu_seconds() - cpu0) * 1e3 / max(1, res["requests"])
                        runs[s.name].append(res)
                for s in servers:
                    m = {f: statistics.median(x[f] for x in runs[s.name]) for f in ("rps", "p50", "p99", "cpu")}
                    errors = sum(x["non2xx"] + x["socket_errors"] for x in runs[s.name])
                    print(f"{name} c={conns} [{s.name}] req/s {m['rps']:.0f} p50 {m['p50']:.2f} ms "
                          f"p99 {m['p99']:.2f} ms CPU {m['cpu']:.4f} ms/req "
                          f"(p99 per round {[round(x['p99'], 1) for x in runs[s.name]]}, errors {errors})", flush=True)
        print("load average", os.getloadavg(), flush=True)
    finally:
        for s in servers:
            s.stop()


if __name__ == "__main__":
    main()
