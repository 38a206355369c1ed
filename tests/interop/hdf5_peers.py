"""How the HDF5 interop tests run the peers: each in a fresh process, with exactly the filters it
is meant to see.

* `h5py` + Strata's plugin: HDF5_PLUGIN_PATH names a directory holding only
  `libstrata_hdf5_filter.so`, hdf5plugin is not imported (STRATA_PLUGIN_PATH names one holding
  the ZFP plugin, which Strata's registry loads by ID);
* `hdf5plugin`: h5py with `import hdf5plugin` (its own filter registered in h5py's HDF5);
* `pytables`: PyTables with its own filter and optimized path (`pytables-filter`: only its
  filter, `BLOSC2_FILTER=1`); `pytables-plugin`: PyTables through HDF5's pipeline only
  (`BLOSC2_FILTER=1`), its own filter class unregistered, so that its HDF5 (1.14) loads
  Strata's plugin from the same directory;
* Debian's `h5dump` / `h5repack` 1.10.8 with the same plugin directory.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
CASES = HERE / "hdf5_cases.py"
PLUGIN = "libstrata_hdf5_filter.so"


@dataclass(frozen=True)
class Peers:
    """The plugin directories and the environment each peer runs in."""

    plugin_dir: Path  # only Strata's HDF5 plugin
    zfp_dir: Path  # only Strata's ZFP plugin

    @classmethod
    def make(cls, build: Path, root: Path) -> Peers:
        plugin_dir, zfp_dir = root / "hdf5-plugins", root / "strata-plugins"
        for lib, d in ((build / PLUGIN, plugin_dir), (build / "libstrata_zfp.so", zfp_dir)):
            if not lib.is_file():
                raise FileNotFoundError(f"no {lib}: build it (cargo build --release --workspace)")
            d.mkdir(exist_ok=True)
            shutil.copy(lib, d)
        return cls(plugin_dir, zfp_dir)

    def env(self, who: str) -> dict:
        env = {k: v for k, v in os.environ.items()
               if k not in ("HDF5_PLUGIN_PATH", "STRATA_PLUGIN_PATH", "BLOSC2_FILTER")}
        env["PYTHONPATH"] = str(HERE)
        if who in ("strata", "h5dump", "h5repack", "pytables-plugin"):
            env["HDF5_PLUGIN_PATH"] = str(self.plugin_dir)
            env["STRATA_PLUGIN_PATH"] = str(self.zfp_dir)
        if who in ("pytables-filter", "pytables-plugin"):
            env["BLOSC2_FILTER"] = "1"
        return env

    def python(self, who: str, code: str, check: bool = True) -> subprocess.CompletedProcess:
        """Runs `code` as `who` (`strata`, `hdf5plugin`, `pytables`, `pytables-filter`,
        `pytables-plugin`); with `hdf5plugin` it is imported first."""
        if who == "hdf5plugin":
            code = "import hdf5plugin\n" + code
        res = subprocess.run([sys.executable, "-c", code], env=self.env(who), capture_output=True,
                             text=True, timeout=300, check=False)
        if check and res.returncode != 0:
            raise AssertionError(f"{who} exited {res.returncode}:\n{res.stderr[-3000:]}")
        return res

    def write(self, writer: str, path: Path) -> None:
        """The datasets of hdf5_cases written by `writer` (`strata` and `hdf5plugin` through
        h5py, `pytables`, `raw`: uncompressed)."""
        kind = {"strata": "h5py", "hdf5plugin": "h5py", "pytables": "pytables", "raw": "raw"}[writer]
        self.python(writer, f"import hdf5_cases; hdf5_cases.main(['write', {kind!r}, {str(path)!r}])")

    def read(self, reader: str, path: Path, out: Path) -> tuple[dict, dict]:
        """Every dataset `reader` reads from `path`, and its errors for the others."""
        if reader == "h5dump":
            return self.h5dump_all(path)
        kind = {"strata": "h5py", "hdf5plugin": "hdf5plugin", "pytables": "pytables",
                "pytables-filter": "pytables", "pytables-plugin": "pytables-plugin"}[reader]
        self.python(reader, f"import hdf5_cases; hdf5_cases.main(['read', {kind!r}, {str(path)!r}, {str(out)!r}])")
        with np.load(out) as z:
            errors = json.loads(str(z["__errors__"]))
            return {k: z[k] for k in z.files if k != "__errors__"}, errors

    def h5dump(self, *args: str | Path) -> subprocess.CompletedProcess:
        return subprocess.run(["h5dump", *map(str, args)], env=self.env("h5dump"), capture_output=True,
                              text=True, timeout=120, check=False)

    def h5dump_all(self, path: Path) -> tuple[dict, dict]:
        """Every dataset as h5dump's binary output (`-b NATIVE`, items packed) gives it."""
        import hdf5_cases

        arrays, errors = {}, {}
        listing = self.h5dump("-n", path).stdout
        names = [line.split()[1].lstrip("/") for line in listing.splitlines() if line.strip().startswith("dataset ")]
        for name in names:
            out = path.parent / f"{path.stem}-{name}.bin"
            res = self.h5dump("-d", f"/{name}", "-b", "NATIVE", "-o", out, path)
            if res.returncode != 0:
                errors[name] = f"h5dump exited {res.returncode}: {res.stderr.strip()[-500:]}"
                continue
            want = hdf5_cases.expected(name)
            native = want.dtype.newbyteorder("=") if want.dtype.names is None else want.dtype
            arrays[name] = np.frombuffer(out.read_bytes(), native).reshape(want.shape)
        return arrays, errors

    def h5repack(self, src: Path, dst: Path, *filter_args: str) -> subprocess.CompletedProcess:
        return subprocess.run(["h5repack", *filter_args, str(src), str(dst)], env=self.env("h5repack"),
                              capture_output=True, text=True, timeout=300, check=False)
