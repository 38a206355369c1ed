"""Basic indexing checked against NumPy on random shapes, partitions and keys (hypothesis):
reads, and writes of the same keys."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import strata


@st.composite
def arrays_and_keys(draw):
    ndim = draw(st.integers(0, 4))
    shape = tuple(draw(st.lists(st.integers(0, 9), min_size=ndim, max_size=ndim)))
    chunks = tuple(draw(st.integers(1, max(n, 1))) for n in shape)
    blocks = tuple(draw(st.integers(1, c)) for c in chunks)
    parts = []
    for n in shape:
        bound = st.one_of(st.none(), st.integers(-n - 3, n + 3))
        if n and draw(st.booleans()):
            parts.append(draw(st.integers(-n, n - 1)))
        else:
            step = draw(st.one_of(st.none(), st.integers(-4, 4).filter(lambda s: s != 0)))
            parts.append(slice(draw(bound), draw(bound), step))
    if draw(st.booleans()):
        # `...` stands for `gap` dimensions after the first `at`.
        at = draw(st.integers(0, ndim))
        gap = draw(st.integers(0, ndim - at))
        parts = parts[:at] + [Ellipsis] + parts[at + gap:]
    else:
        parts = parts[:draw(st.integers(0, ndim))]
    for _ in range(draw(st.integers(0, 2))):
        parts.insert(draw(st.integers(0, len(parts))), None)
    key = parts[0] if len(parts) == 1 and draw(st.booleans()) else tuple(parts)
    return shape, chunks, blocks, key


@settings(max_examples=300, deadline=None)
@given(arrays_and_keys())
def test_getitem_and_setitem_match_numpy(case):
    shape, chunks, blocks, key = case
    a = np.arange(int(np.prod(shape)), dtype=np.int32).reshape(shape)
    arr = strata.asarray(a, chunks=chunks, blocks=blocks)
    got, want = arr[key], a[key]
    assert np.shape(got) == np.shape(want)
    assert np.asarray(got).dtype == np.int32
    np.testing.assert_array_equal(got, want)
    value = -1 - np.arange(np.size(want), dtype=np.int32).reshape(np.shape(want))
    a[key] = value
    arr[key] = value
    np.testing.assert_array_equal(arr[...], a)
