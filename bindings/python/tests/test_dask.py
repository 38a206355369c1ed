"""Pickling by location and Dask: chunk-aligned Dask arrays, and a process cluster
(dask.distributed, two worker processes) reducing a 256 MiB Strata array and storing into a
new one, every task reopening the file by its path."""

import pickle
import warnings

import dask
import dask.array as da
import numpy as np
import pytest
from distributed import Client, LocalCluster, get_task_stream

import strata

# Long enough for a loaded two-core machine, short enough that a hang fails the test.
TIMEOUT = 300


def field(rows, cols):
    """Float64 values, all different, exact in binary (multiples of 1/8)."""
    return np.arange(rows * cols, dtype=np.float64).reshape(rows, cols) / 8


def test_pickles_as_location_and_mode(tmp_path):
    path = tmp_path / "p.b2nd"
    strata.save(field(300, 200), path, chunks=(100, 200))
    for mode in ("r", "r+"):
        arr = strata.open(path, mode=mode)
        blob = pickle.dumps(arr)
        assert len(blob) < 300 and str(path).encode() in blob
        back = pickle.loads(blob)
        assert (back.location, back.mode) == (str(path), mode)
        np.testing.assert_array_equal(back[:], field(300, 200))


def test_to_dask_aligns_chunks(tmp_path):
    a = field(250, 90)
    arr = strata.asarray(a, path=tmp_path / "d.b2nd", chunks=(100, 40), blocks=(20, 40))
    x = strata.to_dask(arr)
    assert x.chunks == ((100, 100, 50), (40, 40, 10))
    assert x.dtype == np.float64
    assert x.name == strata.to_dask(strata.open(tmp_path / "d.b2nd", mode="r+")).name
    with dask.config.set(scheduler="threads"):
        np.testing.assert_array_equal(x.compute(), a)
        np.testing.assert_array_equal(x[::-3, 7].compute(), a[::-3, 7])
        y = da.from_array(arr, chunks=arr.chunks)
        assert y.chunks == x.chunks
        np.testing.assert_allclose(y.sum(axis=1).compute(), a.sum(axis=1), rtol=1e-13)
    arr[0, 0] = 5.0  # the file changed: a new graph name
    assert strata.to_dask(arr).name != x.name


@pytest.fixture(scope="module")
def client():
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                      dashboard_address=None) as cluster, Client(cluster) as c:
        yield c


def test_cluster_mean_and_store(client, tmp_path):
    rows, cols, chunk_rows = 8192, 4096, 512
    a = field(rows, cols)
    assert a.nbytes == 256 * 1024 * 1024
    src = strata.asarray(a, path=tmp_path / "big.b2nd", chunks=(chunk_rows, cols), codec="lz4")
    x = strata.to_dask(src)
    assert x.numblocks == (16, 1)
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)  # "Sending large graph" fails the test
        with get_task_stream(client) as tasks:
            mean = client.compute(x.mean(axis=0)).result(timeout=TIMEOUT)
    np.testing.assert_allclose(mean, a.mean(axis=0), rtol=1e-12, atol=0)
    workers = {t["worker"] for t in tasks.data}
    assert len(workers) == 2, workers

    out = strata.zeros((rows, cols), dtype=np.float64, path=tmp_path / "out.b2nd",
                       chunks=src.chunks, codec="lz4")
    stored = da.store(x * 2 + 1, out, lock=False, compute=False)
    with get_task_stream(client) as tasks:
        client.compute(stored).result(timeout=TIMEOUT)
    assert len({t["worker"] for t in tasks.data}) == 2
    want = a * 2 + 1
    assert np.array_equal(out[:], want)  # the client's handle sees the workers' chunks
    out.close()
    assert np.array_equal(strata.load(tmp_path / "out.b2nd"), want)
