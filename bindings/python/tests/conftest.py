"""Fixtures of the Python package's tests: the release `strata` CLI (STRATA_BIN, else the
workspace's target/release/strata) for the xarray test's import."""

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="session")
def strata_bin() -> Path:
    binary = Path(os.environ.get("STRATA_BIN", REPO / "target" / "release" / "strata"))
    if not binary.is_file():
        pytest.fail(f"no strata binary at {binary}: build it (cargo build --release) or set STRATA_BIN")
    return binary
