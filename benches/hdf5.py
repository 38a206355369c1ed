"""HDF5 files of Blosc2 chunks (filter 32026): Strata against the peers, side by side in one run.

Usage: hdf5.py [--rounds N] [--runs R] [--nthreads T] [--workdir DIR] [--json OUT] [--no-video]
               [--blocks B] [--strata PATH] [--bench PATH] [--plugin PATH]

Part 1, a 256 MiB float32 grid in 32 MiB chunks: the ETOPO5 relief (data/etopo5_rose.npy, real
measurements, 2161 x 4320) tiled to 8192 x 8192, chunks of 2048 x 4096, Zstd clevel 5 with
shuffle.

* Writes, each timed inside its own process from the file's creation to its close, the data
  already in memory: h5py with hdf5plugin's filter, as its users run it (one thread: it takes
  C-Blosc2's default) and with BLOSC_NTHREADS=2; h5py with Strata's plugin
  (HDF5_PLUGIN_PATH, hdf5plugin not imported), the same cd_values; Strata's direct path
  (`hdf5_bench write`: chunks compressed in parallel, H5Dwrite_chunk). File sizes reported.
* Reads of 100 rows [3000:3100, :], a column [:, 5000] and an item [1234, 5678], of the file
  hdf5plugin wrote and of the one Strata wrote: h5py through the filter (hdf5plugin imported;
  HDF5's chunk cache as h5py sets it, 1 MiB: a 32 MiB chunk is never kept); PyTables'
  optimized path (`node[...]`, which reads b2nd blocks with C-Blosc2 past HDF5's pipeline);
  h5py + b2h5py (`B2Dataset(ds)[...]`); Strata's direct path in-process (`hdf5_bench read`),
  and the `strata slice` command per read (a whole process: start, open, read, write .npy).
  Each reader opens its file once, reads every selection once untimed, then times each read
  alone; medians reported. Every read is compared with NumPy's slice of the data.

Part 2, the video workload of the HDF5 chunking study: frames x height x width x 3, uint8. The
video is real: the first 120 frames of OpenCV's sample vtest.avi (a street filmed by a fixed
camera, 576 x 768; scripts/fetch-video.sh takes it from Debian's opencv-doc, pinned), decoded
to RGB with PyAV (152 MiB). One file by Strata's direct path with big chunks (30 frames, 38 MiB)
and per-frame-band blocks (1 x 48 x 768 x 3), against h5py gzip (level 4, as h5py's default)
datasets chunked whole, per frame, per frame and channel. File sizes, and the time to read one
pixel, one frame and the whole video, the file reopened for each read.

Fairness: 2 threads everywhere (--nthreads): BLOSC_NTHREADS for hdf5plugin's filter and
python-blosc2 (b2h5py), tables.set_blosc_max_threads for PyTables, STRATA_NTHREADS and
--nthreads for Strata; HDF5's gzip is single-threaded by design. Libraries take turns: each of
--rounds rounds runs every reader once (fresh process, its own warm-up), the order rotating;
medians over all rounds. The OS page cache is warm (every file read once first). The load
average of the machine is printed before and after.

Wall and CPU: every write and read is timed twice over the same span, by the clock and by the
CPU time of its process (user + system, all threads; for the CLI, the whole command). The CPU
time is the work done, which the machine's load hardly changes; the wall time is what users
see, and on a busy machine it is that work divided by the share of the cores the run gets.
Linux with `sched_autogroup` gives each session an equal share, so when other sessions keep
the cores busy a process's second thread adds no share: then the wall-time gain of 2 threads
cannot show, and "threads at work" (CPU / wall) says how much of the cores the run had.
`--blocks` sets the blockshape of the grid Strata's direct path writes (default: Strata's
choice, for this grid C-Blosc2's too: 256 x 256), to measure what other blockshapes do to the reads.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
SHAPE = (8192, 8192)
CHUNKS = (2048, 4096)
CD = (0, 0, 0, 0, 5, 1, 5)  # zstd clevel 5 + shuffle, as hdf5plugin.Blosc2("zstd", 5, SHUFFLE)
SELECTIONS = {"100 rows": "3000:3100,:", "a column": ":,5000", "an item": "1234,5678"}
VIDEO = (120, 576, 768, 3)
VIDEO_CHUNKS = (30, 576, 768, 3)
VIDEO_BLOCKS = (1, 48, 768, 3)
VIDEO_FILE = REPO / "data" / "vtest.avi"
PIXEL = (57, 288, 384)  # frame, row, column of the one-pixel read; the one-frame read: frame 57


def index_of(spec: str) -> tuple:
    """NumPy's index for a selection spec: `a:b`, `:` or `i` (kept as a length-1 dimension) per dimension."""
    out = []
    for part in spec.split(","):
        if ":" in part:
            a, b = part.split(":")[:2]
            out.append(slice(int(a) if a else None, int(b) if b else None))
        else:
            out.append(slice(int(part), int(part) + 1))
    return tuple(out)


def grid() -> np.ndarray:
    etopo = np.load(REPO / "data" / "etopo5_rose.npy")
    return np.ascontiguousarray(np.tile(etopo, (4, 2))[: SHAPE[0], : SHAPE[1]], dtype="<f4")


def video() -> np.ndarray:
    """The first frames of data/vtest.avi as RGB, (frames, height, width, 3) uint8."""
    import av

    if not VIDEO_FILE.is_file():
        subprocess.run(["bash", str(REPO / "scripts" / "fetch-video.sh")], check=True)
    with av.open(str(VIDEO_FILE)) as container:
        frames = [f.to_ndarray(format="rgb24") for _, f in zip(range(VIDEO[0]), container.decode(video=0))]
    out = np.stack(frames)
    if out.shape != VIDEO:
        raise SystemExit(f"{VIDEO_FILE} decodes to {out.shape}, not {VIDEO}")
    return out


def cpu_seconds(who: int = resource.RUSAGE_SELF) -> float:
    """CPU time (user + system) of this process, all its threads (or of its waited-for children)."""
    r = resource.getrusage(who)
    return r.ru_utime + r.ru_stime


# ----------------------------------------------------------------------------- worker side
def worker(argv: list[str]) -> None:
    """One reader or writer in its own process; prints one JSON object."""
    kind, *rest = argv
    nthreads = int(os.environ.get("BLOSC_NTHREADS", "2"))
    if kind == "write":
        peer, raw, out, name = rest
        if peer == "hdf5plugin":
            import hdf5plugin  # noqa: F401
        import h5py

        data = np.load(raw)
        start, cpu_start = time.perf_counter(), cpu_seconds()
        with h5py.File(out, "w") as f:
            f.create_dataset(name, data=data, chunks=CHUNKS, compression=32026, compression_opts=CD)
        print(json.dumps({"seconds": time.perf_counter() - start, "cpu_seconds": cpu_seconds() - cpu_start}))
        return
    if kind == "read":
        peer, path, name, runs, *specs = rest
        import h5py

        if peer in ("h5py", "b2h5py"):
            import hdf5plugin  # noqa: F401
        reader = None
        if peer == "pytables":
            import tables

            tables.set_blosc_max_threads(nthreads)
            f = tables.open_file(path)
            node = f.get_node(name)
            reader = lambda ix: node[ix]  # noqa: E731
        else:
            f = h5py.File(path)
            ds = f[name]
            if peer == "b2h5py":
                import blosc2
                import b2h5py

                blosc2.set_nthreads(nthreads)
                b2 = b2h5py.B2Dataset(ds)
                reader = lambda ix: b2[ix]  # noqa: E731
            else:
                reader = lambda ix: ds[ix]  # noqa: E731
        import gc

        gc.disable()
        result = {}
        for spec in specs:
            ix = index_of(spec)
            first = reader(ix)
            times, cpu = [], []
            for _ in range(int(runs)):
                t, c = time.perf_counter(), cpu_seconds()
                out = reader(ix)
                times.append(time.perf_counter() - t)
                cpu.append(cpu_seconds() - c)
            result[spec] = {"times_s": times, "cpu_s": cpu, "sum": float(np.asarray(first, "f8").sum()), "equal": bool(np.array_equal(out, first))}
        print(json.dumps(result))
        return
    if kind == "video-read":
        path, name, what, runs = rest
        import h5py

        ix = {"pixel": (*PIXEL, slice(None)), "frame": (PIXEL[0],), "video": ()}[what]
        times = []
        for _ in range(int(runs)):
            t = time.perf_counter()
            with h5py.File(path) as f:
                f[name][ix]
            times.append(time.perf_counter() - t)
        print(json.dumps({"times_s": times}))
        return
    raise SystemExit(f"unknown worker {kind}")


# ----------------------------------------------------------------------------- driver side
class Runner:
    def __init__(self, args, work: Path) -> None:
        self.args, self.work = args, work
        self.plugin_dir = work / "hdf5-plugins"
        self.plugin_dir.mkdir(exist_ok=True)
        shutil.copy(args.plugin, self.plugin_dir)

    def env(self, strata_plugin: bool, blosc_default: bool = False) -> dict:
        env = {k: v for k, v in os.environ.items() if k not in ("HDF5_PLUGIN_PATH", "BLOSC_NTHREADS")}
        n = str(self.args.nthreads)
        env.update(STRATA_NTHREADS=n, PYTHONPATH=str(REPO / "benches"))
        if not blosc_default:
            env["BLOSC_NTHREADS"] = n
        if strata_plugin:
            env["HDF5_PLUGIN_PATH"] = str(self.plugin_dir)
        return env

    def run(self, cmd: list, strata_plugin: bool = False, blosc_default: bool = False) -> dict:
        res = subprocess.run([str(c) for c in cmd], env=self.env(strata_plugin, blosc_default), capture_output=True,
                             text=True, check=False)
        if res.returncode != 0:
            raise SystemExit(f"{cmd[:3]} failed:\n{res.stderr[-3000:]}")
        return json.loads(res.stdout.strip().splitlines()[-1]) if res.stdout.strip() else {}

    def py(self, *argv, strata_plugin: bool = False, blosc_default: bool = False) -> dict:
        return self.run([sys.executable, __file__, "--worker", *argv], strata_plugin, blosc_default)

    def strata_read(self, path: Path, name: str, specs: list[str], runs: int) -> dict:
        cmd = [self.args.bench, "read", path, name, "--runs", runs, "--nthreads", self.args.nthreads]
        for s in specs:
            cmd += ["--select", s]
        res = subprocess.run([str(c) for c in cmd], env=self.env(False), capture_output=True, text=True, check=False)
        if res.returncode != 0:
            raise SystemExit(f"hdf5_bench read failed:\n{res.stderr}")
        return {json.loads(line)["select"]: json.loads(line) for line in res.stdout.splitlines()}

    def strata_cli(self, path: Path, name: str, spec: str, runs: int) -> tuple[list[float], list[float]]:
        parts = spec.split(",")
        start = [p.split(":")[0] or "0" if ":" in p else p for p in parts]
        stop = [(p.split(":")[1] if ":" in p else str(int(p) + 1)) or str(n) for p, n in zip(parts, SHAPE)]
        out = self.work / "cli.npy"
        times, cpu = [], []
        for _ in range(runs):
            t, c = time.perf_counter(), cpu_seconds(resource.RUSAGE_CHILDREN)
            res = subprocess.run([str(self.args.strata), "slice", "-f", "--nthreads", str(self.args.nthreads),
                                  "--start", ",".join(start), "--stop", ",".join(stop), "-o", str(out), f"{path}:{name}"],
                                 env=self.env(False), capture_output=True, text=True, check=False)
            times.append(time.perf_counter() - t)
            cpu.append(cpu_seconds(resource.RUSAGE_CHILDREN) - c)
            if res.returncode != 0:
                raise SystemExit(f"strata slice failed: {res.stderr}")
        return times, cpu


def ms(x: float) -> str:
    return f"{x * 1e3:.2f}" if x < 0.1 else f"{x * 1e3:.0f}"


def part1(r: Runner, data: np.ndarray, report: dict) -> None:
    args, work = r.args, r.work
    raw = work / "grid.npy"
    np.save(raw, data)
    data.tofile(work / "grid.raw")
    files = {w: work / f"grid-{w}.h5" for w in ("hdf5plugin-1", "hdf5plugin", "strata-plugin", "strata-direct")}
    writes: dict = {w: [] for w in files}
    cpus: dict = {w: [] for w in files}
    for k in range(args.rounds):
        order = list(files)[k % len(files):] + list(files)[: k % len(files)]
        for w in order:
            if w == "strata-direct":
                res = r.run([args.bench, "write", work / "grid.raw", files[w], "/grid", "--shape", "8192,8192", "--dtype", "<f4",
                             "--chunks", "2048,4096", "--codec", 5, "--clevel", 5, "--filter", 1, "--nthreads", args.nthreads,
                             *(["--blocks", args.blocks] if args.blocks else [])])
            else:
                peer = "hdf5plugin" if w.startswith("hdf5plugin") else "strata"
                res = r.py("write", peer, raw, files[w], "/grid", strata_plugin=peer == "strata",
                           blosc_default=w == "hdf5plugin-1")
            writes[w].append(res["seconds"])
            cpus[w].append(res["cpu_seconds"])
    print(f"\n== write 256 MiB float32 (8192 x 8192, chunks 2048 x 4096, zstd 5 + shuffle), {args.nthreads} threads, {args.rounds} rounds")
    print("   wall: median seconds; CPU: median CPU seconds of the writing process (user + system, all threads);")
    print("   threads at work: CPU / wall (at most the cores the machine gives this run)")
    print(f"{'writer':<34}{'wall':>8}{'GB/s':>7}{'file':>10}{'vs hdf5plugin':>15}{'CPU':>8}{'threads':>9}")
    base = statistics.median(writes["hdf5plugin-1"])
    report["writes"] = {}
    print(f"{'':<34}{'':>8}{'':>7}{'':>10}{'(1 thread)':>15}")
    for w, label in (("hdf5plugin-1", "h5py + hdf5plugin (1 thread)"), ("hdf5plugin", f"h5py + hdf5plugin ({args.nthreads} threads)"),
                     ("strata-plugin", "h5py + Strata's plugin"), ("strata-direct", "Strata direct (write_array)")):
        m, c = statistics.median(writes[w]), statistics.median(cpus[w])
        size = files[w].stat().st_size
        report["writes"][w] = {"median_s": m, "times_s": writes[w], "cpu_median_s": c, "cpu_s": cpus[w], "file_bytes": size}
        print(f"{label:<34}{m:>7.2f}s{data.nbytes / m / 1e9:>7.2f}{size / 2**20:>8.1f}Mi{base / m:>14.2f}x{c:>7.2f}s{c / m:>9.2f}")

    specs = list(SELECTIONS.values())
    want = {s: data[index_of(s)] for s in specs}
    for source in ("hdf5plugin", "strata-direct"):
        path = files[source]
        times: dict = {p: {s: [] for s in specs} for p in ("h5py", "pytables", "b2h5py", "strata", "strata CLI")}
        cpu: dict = {p: {s: [] for s in specs} for p in times}
        readers = list(times)
        for k in range(args.rounds):
            order = readers[k % len(readers):] + readers[: k % len(readers)]
            for p in order:
                if p == "strata":
                    res = r.strata_read(path, "/grid", specs, args.runs)
                    for s in specs:
                        times[p][s] += res[s]["times_s"]
                        cpu[p][s] += res[s]["cpu_s"]
                        report.setdefault("blocks", {})[f"{source} {s}"] = res[s]["blocks_decompressed"]
                elif p == "strata CLI":
                    for s in specs:
                        wall, c = r.strata_cli(path, "/grid", s, max(1, args.runs // 3))
                        times[p][s] += wall
                        cpu[p][s] += c
                else:
                    res = r.py("read", p, path, "/grid", args.runs, *specs)
                    for s in specs:
                        if abs(res[s]["sum"] - float(want[s].astype("f8").sum())) > 1e-3 * max(1.0, abs(float(want[s].sum()))):
                            raise SystemExit(f"{p} reads other values for {s}")
                        times[p][s] += res[s]["times_s"]
                        cpu[p][s] += res[s]["cpu_s"]
        for kind, values in (("wall", times), ("CPU", cpu)):
            what = "ms" if kind == "wall" else "CPU ms of the reading process, user + system, all threads (the CLI's: the whole command)"
            print(f"\n== reads of the file {source} wrote, {kind} ({what}; median of {args.rounds} x {args.runs}; "
                  f"speed-up over h5py's filter path)")
            print(f"{'selection':<12}" + "".join(f"{p:>22}" for p in readers))
            report.setdefault(f"reads {source}" + ("" if kind == "wall" else " cpu"), {})
            for label, s in SELECTIONS.items():
                med = {p: statistics.median(values[p][s]) for p in readers}
                report[f"reads {source}" + ("" if kind == "wall" else " cpu")][label] = med
                base = med["h5py"]
                cells = "".join(f"{ms(med[p]) + ('' if p == 'h5py' else f' ({base / max(med[p], 1e-6):.1f}x)'):>22}" for p in readers)
                print(f"{label:<12}{cells}")
        blocks = ", ".join(f"{label} {report['blocks'][f'{source} {s}']}" for label, s in SELECTIONS.items())
        print(f"  Strata decompressed blocks: {blocks}")


def part2(r: Runner, report: dict) -> None:
    args, work = r.args, r.work
    v = video()
    raw = work / "video.raw"
    v.tofile(raw)
    strata = f"strata (chunks {VIDEO_CHUNKS[0]} frames, blocks {'x'.join(map(str, VIDEO_BLOCKS))})"
    files = {strata: work / "video-strata.h5"}
    r.run([args.bench, "write", raw, files[strata], "/video", "--shape",
           ",".join(map(str, VIDEO)), "--dtype", "|u1", "--chunks", ",".join(map(str, VIDEO_CHUNKS)), "--blocks",
           ",".join(map(str, VIDEO_BLOCKS)), "--codec", 5, "--clevel", 5, "--filter", 1, "--nthreads", args.nthreads])
    np.save(work / "video.npy", v)
    for label, chunks in (("gzip, chunked whole", VIDEO), ("gzip, per frame", (1, *VIDEO[1:])),
                          ("gzip, per frame+channel", (1, *VIDEO[1:3], 1))):
        path = work / f"video-{len(files)}.h5"
        code = (f"import h5py, numpy as np\nv = np.load({str(work / 'video.npy')!r})\n"
                f"with h5py.File({str(path)!r}, 'w') as f:\n    f.create_dataset('video', data=v, chunks={chunks!r}, compression='gzip')")
        subprocess.run([sys.executable, "-c", code], check=True)
        files[label] = path
    print(f"\n== video {VIDEO[0]} x {VIDEO[1]} x {VIDEO[2]} x 3 uint8 ({v.nbytes / 2**20:.0f} MiB, the first frames of {VIDEO_FILE.name}), file reopened for each read, ms")
    print(f"{'file':<48}{'size':>9}{'one pixel':>12}{'one frame':>12}{'whole video':>13}")
    report["video"] = {}
    for label, path in files.items():
        row = {}
        for what in ("pixel", "frame", "video"):
            runs = 3 if what == "video" else args.runs
            if label.startswith("strata"):
                spec = {"pixel": f"{','.join(map(str, PIXEL))},:", "frame": f"{PIXEL[0]},:,:,:", "video": ":,:,:,:"}[what]
                cmd = [args.bench, "read", path, "/video", "--reopen", "--runs", runs, "--nthreads", args.nthreads, "--select", spec]
                t = []
                for _ in range(args.rounds):
                    t += r.run(cmd)["times_s"]
            else:
                t = []
                for _ in range(args.rounds):
                    t += r.py("video-read", path, "video", what, runs)["times_s"]
            row[what] = statistics.median(t)
        report["video"][label] = {"file_bytes": path.stat().st_size, **row}
        print(f"{label:<48}{path.stat().st_size / 2**20:>7.1f}Mi{ms(row['pixel']):>12}{ms(row['frame']):>12}{ms(row['video']):>13}")


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        worker(sys.argv[2:])
        return
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--runs", type=int, default=9)
    p.add_argument("--nthreads", type=int, default=2)
    p.add_argument("--workdir", type=Path)
    p.add_argument("--json", type=Path)
    p.add_argument("--no-video", action="store_true")
    p.add_argument("--blocks", help="blockshape of the grid Strata's direct path writes, e.g. 128,512 (default: Strata's choice)")
    p.add_argument("--strata", type=Path, default=REPO / "target" / "release" / "strata")
    p.add_argument("--bench", type=Path, default=REPO / "target" / "release" / "examples" / "hdf5_bench")
    p.add_argument("--plugin", type=Path, default=REPO / "target" / "release" / "libstrata_hdf5_filter.so")
    args = p.parse_args()
    for f in (args.strata, args.bench, args.plugin):
        if not f.is_file():
            raise SystemExit(f"missing {f}: cargo build --release -p strata-cli -p strata-hdf5-filter && cargo build --release --features hdf5 --example hdf5_bench")
    work = args.workdir or Path(tempfile.mkdtemp(prefix="strata-hdf5-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    autogroup = Path("/proc/sys/kernel/sched_autogroup_enabled")
    groups = f"sched_autogroup {autogroup.read_text().strip()}" if autogroup.is_file() else "no sched_autogroup"
    print(f"load average before: {os.getloadavg()}; {os.cpu_count()} cores; {groups}; work dir {work}")
    r = Runner(args, work)
    report: dict = {"nthreads": args.nthreads, "rounds": args.rounds, "runs": args.runs}
    part1(r, grid(), report)
    if not args.no_video:
        part2(r, report)
    print(f"\nload average after: {os.getloadavg()}")
    if args.json:
        args.json.write_text(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
