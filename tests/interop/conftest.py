"""Fixtures of the interop suite: the strata CLI (STRATA_BIN), the HDF5 peers (Strata's HDF5
plugin beside it) and the real grids in data/."""

from pathlib import Path

import blosc2
import numpy as np
import pytest
from hdf5_peers import Peers
from helpers import REPO, Strata, strata_binary

DATA = REPO / "data"


def pytest_report_header() -> str:
    return f"strata: {strata_binary()}; python-blosc2 {blosc2.__version__}, C-Blosc2 {blosc2.blosclib_version}"


@pytest.fixture(scope="session")
def strata_bin() -> Path:
    binary = strata_binary()
    if not binary.is_file():
        pytest.fail(f"no strata binary at {binary}: build it (cargo build --release) or set STRATA_BIN")
    return binary


@pytest.fixture
def strata(strata_bin: Path, tmp_path: Path) -> Strata:
    return Strata(strata_bin, tmp_path)


@pytest.fixture(scope="session")
def grids() -> dict:
    """The real grids as float32 arrays; scripts/fetch-data.sh makes them."""
    files = {"etopo5": DATA / "etopo5_rose.npy", "levitus": DATA / "levitus_temp.npy"}
    missing = [str(f) for f in files.values() if not f.is_file()]
    if missing:
        pytest.fail(f"missing {', '.join(missing)}: run scripts/fetch-data.sh")
    return {name: np.load(path) for name, path in files.items()}


@pytest.fixture(scope="session")
def peers(strata_bin: Path, tmp_path_factory: pytest.TempPathFactory) -> Peers:
    """The HDF5 peers, Strata's plugin and the ZFP plugin copied from the build beside strata."""
    return Peers.make(strata_bin.parent, tmp_path_factory.mktemp("hdf5-plugins"))
