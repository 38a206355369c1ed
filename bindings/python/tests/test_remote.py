"""Arrays opened by URL: the library's remote store reading byte ranges from a stratad
started on 127.0.0.1 for this module (its raw route /v1/raw/{root}/{path} serves the files
of a directory), against the same files read locally."""

import os
import pickle
import re
import subprocess

import numpy as np
import pytest

import strata
from strata import ERROR_CODES

ROOT = "data"


@pytest.fixture(scope="module")
def served(tmp_path_factory, stratad_bin):
    """(base URL of the root's files, the directory served)."""
    root = tmp_path_factory.mktemp("served")
    data = np.sin(np.arange(60 * 50 * 40, dtype=np.float64)).reshape(60, 50, 40)
    strata.save(data, root / "a.b2nd", chunks=(16, 20, 40), blocks=(8, 10, 20))
    strata.save(np.arange(1000, dtype=np.int16), root / "b.b2nd", chunks=(300,), blocks=(100,))
    with strata.open(root / "b.b2nd", mode="r+") as b:
        b.vlmeta["units"] = "counts"
    log = open(root.parent / "stratad.log", "w")
    proc = subprocess.Popen(
        [str(stratad_bin), "--root", f"{ROOT}={root}", "--listen", "127.0.0.1:0"],
        stdout=subprocess.PIPE, stderr=log, text=True,
        env=dict(os.environ, STRATAD_LOG="warn"),
    )
    try:
        line = proc.stdout.readline()
        m = re.match(r"stratad listening on (http://127\.0\.0\.1:\d+)", line)
        if not m:
            proc.kill()
            pytest.fail(f"stratad did not start: {line!r} {(root.parent / 'stratad.log').read_text()}")
        yield f"{m.group(1)}/v1/raw/{ROOT}", root
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()
    assert proc.returncode == 0, f"stratad exited with {proc.returncode} on SIGTERM"


KEYS = [
    (),
    (5,),
    (slice(3, 41, 7), -1),
    (slice(None, None, -3), slice(2, 48), slice(-5, None)),
    (Ellipsis, 17),
    (slice(59, 0, -16), None, 0, slice(None, None, 9)),
    (slice(100, 200),),
]


def test_remote_reads_equal_local(served):
    base, root = served
    remote, local = strata.open(f"{base}/a.b2nd"), strata.open(root / "a.b2nd")
    assert remote.location == f"{base}/a.b2nd" and remote.mode == "r"
    assert (remote.shape, remote.dtype, remote.chunks, remote.blocks) == (
        local.shape, local.dtype, local.chunks, local.blocks) == (
        (60, 50, 40), np.float64, (16, 20, 40), (8, 10, 20))
    assert (remote.nbytes, remote.cbytes, remote.cparams) == (local.nbytes, local.cbytes, local.cparams)
    for key in KEYS:
        np.testing.assert_array_equal(remote[key], local[key], err_msg=str(key))
        assert remote[key].shape == local[key].shape
    np.testing.assert_array_equal(np.asarray(remote), np.asarray(local))
    b = strata.open(f"{base}/b.b2nd")
    assert dict(b.vlmeta) == {"units": "counts"}
    np.testing.assert_array_equal(b[::-7], np.arange(1000, dtype=np.int16)[::-7])


def test_remote_array_pickles_as_its_url(served):
    base, root = served
    url = f"{base}/a.b2nd"
    remote = strata.open(url)
    assert remote.__reduce__() == (strata.open, (url, "r"))
    back = pickle.loads(pickle.dumps(remote))
    assert back.location == url
    np.testing.assert_array_equal(back[7, ::3], strata.open(root / "a.b2nd")[7, ::3])
    # Dask's chunks are Strata's, read through the URL: the same sums as over the local file.
    sums = strata.to_dask(remote).sum(axis=(1, 2)).compute(scheduler="threads")
    local = strata.to_dask(strata.open(root / "a.b2nd")).sum(axis=(1, 2))
    np.testing.assert_array_equal(sums, local.compute(scheduler="threads"))


def test_remote_errors(served):
    base, _ = served
    url = f"{base}/missing.b2nd"
    with pytest.raises(strata.StrataIOError, match=re.escape(f"{url}: HTTP 404 Not Found")) as e:
        strata.open(url)
    assert isinstance(e.value, OSError) and e.value.code == ERROR_CODES["REMOTE"]
    with pytest.raises(strata.ParamError, match="a remote frame opens read-only") as e:
        strata.open(f"{base}/a.b2nd", mode="r+")
    assert e.value.code == ERROR_CODES["INVALID_PARAM"]
    remote = strata.open(f"{base}/a.b2nd")
    with pytest.raises(strata.ReadOnlyError) as e:
        remote[0] = 1.0
    assert e.value.code == ERROR_CODES["FILE_WRITE"]
