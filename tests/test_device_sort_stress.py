"""coop.device.radix_sort called many times over, each call against NumPy's stable
argsort (tests/test_device_sort.py's check_sort): random sizes (log-uniform), every key
dtype in turn, keys or pairs, both directions, now and then a random bit range, in place
or into new outputs. A wrong result that shows only under some schedules gets many
chances: issue 22's, seen once on the simulator (threads of a block reaching a
``cuda.shared.array`` line together could each keep an array of their own). A short run
on the simulator, with Python's threads switched far more often than by default so that
its threads interleave in more ways; 3000 calls of up to 2^20 keys on the GPU, in chunks
that pytest-xdist spreads over its workers.
Each call's choices come from its seed, which a mismatch names."""

import sys

import numpy as np
import pytest

from helpers import ON_GPU
from test_device_sort import check_sort, keys_of
from test_radix_keys import KEY_DTYPES

# in chunks that pytest-xdist's workers share on the GPU (a chunk's calls run in turn)
CHUNKS, CALLS_PER_CHUNK = (15, 200) if ON_GPU else (1, 16)
MAX_ITEMS = 2**20 if ON_GPU else 400
FIRST_SEED = 22_000_000  # (call c's seed is FIRST_SEED + c)
# values are the keys' positions, exactly (float64 holds every position up to 2^53)
VALUE_DTYPES = (np.int32, np.int64, np.float64)
BIT_RANGE_SHARE = 0.3
SIMULATOR_SWITCH_INTERVAL_S = 1e-5


@pytest.fixture
def threads_switched_often():
    if ON_GPU:
        yield
        return
    default = sys.getswitchinterval()
    sys.setswitchinterval(SIMULATOR_SWITCH_INTERVAL_S)
    try:
        yield
    finally:
        sys.setswitchinterval(default)


def random_sort(seed, call):
    """Sorts and checks call ``call``'s keys; returns how many there were."""
    rng = np.random.default_rng(seed)
    dtype = np.dtype(KEY_DTYPES[call % len(KEY_DTYPES)])
    n = int(np.expm1(rng.uniform(0, np.log1p(MAX_ITEMS))))
    begin, end = 0, None
    if rng.random() < BIT_RANGE_SHARE:
        begin, end = sorted(int(bit) for bit in rng.integers(0, dtype.itemsize * 8 + 1, 2))
    check_sort(keys_of(dtype, n, seed), begin, end, descending=bool(rng.integers(2)),
               with_values=bool(rng.integers(2)), value_dtype=VALUE_DTYPES[rng.integers(len(VALUE_DTYPES))],
               out_of_place=bool(rng.integers(2)), seed=seed)
    return n


@pytest.mark.parametrize("chunk", range(CHUNKS))
def test_many_random_sorts(threads_switched_often, record_property, chunk):
    calls = keys = 0
    first = chunk * CALLS_PER_CHUNK
    try:
        for call in range(first, first + CALLS_PER_CHUNK):
            keys += random_sort(FIRST_SEED + call, call)
            calls += 1
    finally:
        record_property("radix_sort_calls", calls)
        record_property("radix_sort_keys", keys)
        print(f"radix_sort stress, chunk {chunk}: {calls} of {CALLS_PER_CHUNK} calls made, {keys} keys sorted")
    assert calls == CALLS_PER_CHUNK
