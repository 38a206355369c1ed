"""Fixtures of the Python package's tests: the release `strata` CLI (STRATA_BIN, else the
workspace's target/release/strata) for the xarray test's import."""

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


# Property tests draw the same examples on every run (a failure repeats) and keep no example
# database (nothing is written into the source tree).
settings.register_profile("strata", database=None, derandomize=True)
settings.load_profile("strata")
