"""Decompression releases the GIL, checked without timing: a Python thread that yields the
GIL after every step counts while the main thread reads a large array. The switch interval
is set far above the test's length, so the main thread gives the GIL away only where it is
released explicitly: a call that holds it (the control, a 64 MiB ``bytes`` copy) lets the
counter take a handful of steps at most; a read that releases it lets the counter run for
the whole decode."""

import sys
import threading
import time

import numpy as np

import strata


def steps_during(call, repeat=3):
    """How many steps the counter thread takes while ``call()`` runs ``repeat`` times."""
    done = threading.Event()
    started = threading.Event()
    ticks = [0]

    def count():
        started.set()
        while not done.is_set():
            ticks[0] += 1
            time.sleep(0)  # gives the GIL back after each step

    interval = sys.getswitchinterval()
    counter = threading.Thread(target=count)
    counter.start()
    started.wait()
    sys.setswitchinterval(100.0)
    try:
        before = ticks[0]
        for _ in range(repeat):
            call()
        return ticks[0] - before
    finally:
        sys.setswitchinterval(interval)
        done.set()
        counter.join()


def test_reading_releases_the_gil(tmp_path):
    a = np.random.default_rng(1).standard_normal(2 * 1024 * 1024)  # 16 MiB of noise
    strata.save(a, tmp_path / "big.b2nd", codec="zstd", clevel=1, chunks=(256 * 1024,))
    arr = strata.open(tmp_path / "big.b2nd")
    big = bytearray(64 * 1024 * 1024)
    strata.set_nthreads(1)
    try:
        held = steps_during(lambda: bytes(big))
        # Noise: the chunk's blocks are stored raw, so one decompress is about a copy of
        # 16 MiB; enough repeats that the counter gets hundreds of steps on a busy machine.
        released = steps_during(lambda: arr[:], repeat=6)
        chunk = strata.compress(a, codec="zstd", clevel=1)
        released_chunk = steps_during(lambda: strata.decompress(chunk), repeat=12)
    finally:
        strata.set_nthreads(0)
    np.testing.assert_array_equal(arr[:], a)
    assert held < 20, held
    assert released > 200 and released_chunk > 200, (held, released, released_chunk)
