"""Fixtures of the Python package's tests: the release `strata` CLI (STRATA_BIN, else the
workspace's target/release/strata) for the xarray tests' imports, the release `stratad`
(STRATAD_BIN) serving the remote tests' files, and the Levitus climatology in data/
(scripts/fetch-data.sh fetches it)."""

import os
from pathlib import Path

import pytest
from hypothesis import settings

REPO = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="session")
def strata_bin() -> Path:
    binary = Path(os.environ.get("STRATA_BIN", REPO / "target" / "release" / "strata"))
    if not binary.is_file():
        pytest.fail(f"no strata binary at {binary}: build it (cargo build --release) or set STRATA_BIN")
    return binary


@pytest.fixture(scope="session")
def stratad_bin() -> Path:
    """The release daemon (STRATAD_BIN, else the workspace's target/release/stratad)."""
    binary = Path(os.environ.get("STRATAD_BIN", REPO / "target" / "release" / "stratad"))
    if not binary.is_file():
        pytest.fail(f"no stratad at {binary}: cargo build --release -p strata-daemon, or set STRATAD_BIN")
    return binary


@pytest.fixture(scope="session")
def levitus_nc() -> Path:
    """The Levitus ocean climatology, netCDF-3 (TEMP and SALT, float32 (20, 180, 360))."""
    path = REPO / "data" / "levitus_climatology.cdf"
    if not path.is_file():
        pytest.fail(f"no {path}: run scripts/fetch-data.sh")
    return path


# Property tests draw the same examples on every run (a failure repeats) and keep no example
# database (nothing is written into the source tree).
settings.register_profile("strata", database=None, derandomize=True)
settings.load_profile("strata")
