"""coop.device.lower_bound / upper_bound against NumPy's searchsorted: ranges of several
dtypes with repeated items, values below, inside, between and above the range (and equal
to its items), empty ranges and no values, an output of each integer width that holds the
positions, a descending range with its comparator; bad input raised before any launch."""

import importlib

import numpy as np
import pytest

import coop
from numba import cuda

from helpers import ON_GPU, assert_equal_exact, dtype_id

M = 100_003 if ON_GPU else 300
N = 200_000 if ON_GPU else 500


@pytest.mark.parametrize("dtype", [np.uint8, np.int32, np.int64, np.float16, np.float32, np.float64], ids=dtype_id)
def test_against_searchsorted(dtype):
    rng = np.random.default_rng(1)
    high = {np.uint8: 200, np.float16: 2000}.get(dtype, 10**6)  # (float16: integers exact up to 2048)
    sorted_range = np.sort(rng.integers(20, high - 20, M)).astype(dtype)  # (repeats: the bounds differ there)
    values = np.concatenate([rng.integers(0, high, N - 4), [0, high - 1], sorted_range[[0, -1]]]).astype(dtype)
    d_range, d_values = cuda.to_device(sorted_range), cuda.to_device(values)
    for output_dtype in (np.int64, np.uint32, np.int32):
        for function, side in ((coop.device.lower_bound, "left"), (coop.device.upper_bound, "right")):
            d_out = cuda.to_device(np.full(N + 1, 7, output_dtype))
            function(d_range, d_values, d_out)
            got = d_out.copy_to_host()
            assert_equal_exact(got[:N], np.searchsorted(sorted_range, values, side=side).astype(output_dtype),
                               f"{function.__name__}({np.dtype(dtype)} -> {np.dtype(output_dtype)})")
            assert got[N] == 7, f"{function.__name__}: written past the values"


def test_descending_with_a_comparator_and_empty_inputs():
    scores = -np.sort(-np.random.default_rng(2).integers(0, 50, M)).astype(np.int32)
    values = np.arange(-1, 52, dtype=np.int32)
    d_scores, d_values = cuda.to_device(scores), cuda.to_device(values)
    d_out = cuda.device_array(values.size, np.int64)
    coop.device.lower_bound(d_scores, d_values, d_out, comp=lambda a, b: a > b)
    assert_equal_exact(d_out.copy_to_host(), np.array([(scores > v).sum() for v in values]), "lower_bound, descending")
    coop.device.upper_bound(d_scores, d_values, d_out, comp=lambda a, b: a > b)
    assert_equal_exact(d_out.copy_to_host(), np.array([(scores >= v).sum() for v in values]), "upper_bound, descending")
    coop.device.lower_bound(d_scores[:0], d_values, d_out)  # an empty range: every position 0
    assert_equal_exact(d_out.copy_to_host(), np.zeros(values.size, np.int64), "an empty range")
    coop.device.upper_bound(d_scores, d_values[:0], d_out[:0])  # no values: nothing to do


def test_bad_input():
    d_range, d_values = cuda.to_device(np.arange(300, dtype=np.int32)), cuda.to_device(np.arange(5, dtype=np.int32))
    with pytest.raises(TypeError, match=r"coop.device.lower_bound: d_output must hold integers"):
        coop.device.lower_bound(d_range, d_values, cuda.device_array(5, np.float32))
    with pytest.raises(ValueError, match=r"coop.device.upper_bound: d_output is too short: 4 items, 5 needed"):
        coop.device.upper_bound(d_range, d_values, cuda.device_array(4, np.int32))
    with pytest.raises(ValueError, match=r"coop.device.lower_bound: d_output's dtype int8 cannot hold positions up "
                                         r"to 300"):
        coop.device.lower_bound(d_range, d_values, cuda.device_array(5, np.int8))
    with pytest.raises(TypeError, match=r"coop.device.upper_bound: d_values is a NumPy array in host memory"):
        coop.device.upper_bound(d_range, np.arange(5), cuda.device_array(5, np.int32))


@pytest.mark.parametrize("seed", range(8 if ON_GPU else 2))
def test_random_sizes_and_types(seed):
    """Random dtypes, range and value counts (empty included), both bounds, against
    searchsorted; the values merge-sorted (pairs: their positions, stable); and unique,
    run_length_encode, non_trivial_runs, unique_by_key, exclusive_sum_by_key,
    three_way_partition and subtract_left of the same random sorted data against NumPy."""
    rng = np.random.default_rng(100 + seed)
    for _ in range(6 if ON_GPU else 2):
        dtype = rng.choice([np.int8, np.uint16, np.int32, np.int64, np.float32, np.float64])
        m, n = (int(v) for v in rng.integers(0, 40_000 if ON_GPU else 700, 2))
        sorted_range = np.sort(rng.integers(0, 100, m)).astype(dtype)
        values = rng.integers(-5, 105, n).astype(dtype)
        d_range, d_values = cuda.to_device(sorted_range), cuda.to_device(values)
        d_out = cuda.device_array(max(n, 1), np.int64)
        for function, side in ((coop.device.lower_bound, "left"), (coop.device.upper_bound, "right")):
            function(d_range, d_values, d_out[:n])
            assert_equal_exact(d_out[:n].copy_to_host(), np.searchsorted(sorted_range, values, side=side),
                               f"{function.__name__}({np.dtype(dtype)}, m={m}, n={n})")
        if n:  # (the values, unsorted: a stable merge sort of them, with their positions)
            d_sorted, d_order = cuda.device_array(n, dtype), cuda.device_array(n, np.int64)
            coop.device.merge_sort(d_values, cuda.to_device(np.arange(n, dtype=np.int64)), d_keys_out=d_sorted,
                                   d_values_out=d_order)
            order = np.argsort(values, kind="stable")
            assert_equal_exact(d_sorted.copy_to_host(), values[order], f"merge_sort({np.dtype(dtype)}, n={n})")
            assert_equal_exact(d_order.copy_to_host(), order, f"merge_sort's values ({np.dtype(dtype)}, n={n})")
        if m == 0:
            continue
        heads = np.flatnonzero(np.r_[True, sorted_range[1:] != sorted_range[:-1]])
        d_unique, d_lengths = cuda.device_array(m, dtype), cuda.device_array(m, np.int64)
        runs = coop.device.run_length_encode(d_range, d_unique, d_lengths)
        assert runs == heads.size and coop.device.unique(d_range, d_unique) == heads.size
        assert_equal_exact(d_unique[:runs].copy_to_host(), sorted_range[heads], f"unique({np.dtype(dtype)}, m={m})")
        assert_equal_exact(d_lengths[:runs].copy_to_host(), np.diff(np.r_[heads, m]), "run lengths")
        lengths = np.diff(np.r_[heads, m])
        d_offsets, d_long = cuda.device_array(m, np.int64), cuda.device_array(m, np.int32)
        long_runs = coop.device.non_trivial_runs(d_range, d_offsets, d_long)
        assert long_runs == (lengths > 1).sum()
        assert_equal_exact(d_offsets[:long_runs].copy_to_host(), heads[lengths > 1], "non_trivial_runs' offsets")
        assert_equal_exact(d_long[:long_runs].copy_to_host(), lengths[lengths > 1].astype(np.int32), "their lengths")
        positions = np.arange(m, dtype=np.int64)
        d_first = cuda.device_array(m, np.int64)
        assert coop.device.unique_by_key(d_range, cuda.to_device(positions), d_unique, d_first) == heads.size
        assert_equal_exact(d_first[:heads.size].copy_to_host(), heads, "unique_by_key's values (positions)")
        d_within = cuda.device_array(m, np.int64)
        coop.device.exclusive_sum_by_key(d_range, cuda.to_device(np.ones(m, np.int32)), d_within)
        assert_equal_exact(d_within.copy_to_host(), positions - np.repeat(heads, lengths), "exclusive_sum_by_key")
        low, high = np.dtype(dtype).type(30), np.dtype(dtype).type(70)
        parts = [cuda.device_array(m, dtype) for _ in range(3)]
        small, medium = coop.device.three_way_partition(d_range, *parts, lambda v: v < low, lambda v: v < high)
        for part, size, expected in zip(parts, (small, medium, m - small - medium),
                                        (sorted_range[sorted_range < low],
                                         sorted_range[(sorted_range >= low) & (sorted_range < high)],
                                         sorted_range[sorted_range >= high])):
            assert_equal_exact(part[:size].copy_to_host(), expected, f"three_way_partition({np.dtype(dtype)}, m={m})")
        d_gaps = cuda.device_array(m, dtype)
        coop.device.subtract_left(d_range, d_gaps)
        assert_equal_exact(d_gaps.copy_to_host(), np.diff(sorted_range, prepend=sorted_range[:0].dtype.type(0)),
                           f"subtract_left({np.dtype(dtype)}, m={m})")


@pytest.mark.parametrize("seed", range(6 if ON_GPU else 3))
def test_runs_across_tile_edges(seed):
    """unique, run_length_encode and non_trivial_runs of runs whose ends fall on, just
    before and just after the select kernel's tile edges (lengths 1, 2, 3 and a tile's
    less one, exactly or plus one), against NumPy."""
    select = importlib.import_module("coop.device.select")
    rng = np.random.default_rng(500 + seed)
    dtype = rng.choice([np.int8, np.int32, np.int64, np.float64])
    _, tile = select._select_kernel(None, dtype, None, np.int32, False, differs=select.adjacent_differs(None),
                                    with_positions=True, run_edges=True, with_items=False)
    lengths = rng.choice([1, 2, 3, tile - 1, tile, tile + 1], size=int(rng.integers(1, 12)))
    x = np.repeat(np.arange(lengths.size) % 5, lengths).astype(dtype)  # (no two neighbouring runs alike)
    n = x.size
    d_x = cuda.to_device(x)
    d_unique, d_counts = cuda.device_array(n, dtype), cuda.device_array(n, np.int32)
    runs = coop.device.run_length_encode(d_x, d_unique, d_counts)
    assert runs == lengths.size and coop.device.unique(d_x, d_unique) == lengths.size
    assert_equal_exact(d_unique[:runs].copy_to_host(), (np.arange(runs) % 5).astype(dtype), "unique")
    assert_equal_exact(d_counts[:runs].copy_to_host(), lengths.astype(np.int32), "run_length_encode's lengths")
    d_offsets, d_long = cuda.to_device(np.full(n, -1, np.int64)), cuda.to_device(np.full(n, -1, np.int32))
    long_runs = coop.device.non_trivial_runs(d_x, d_offsets, d_long)
    starts = np.r_[0, np.cumsum(lengths)[:-1]]
    assert long_runs == (lengths > 1).sum(), f"non_trivial_runs({np.dtype(dtype)}, lengths {lengths.tolist()})"
    offsets, long = d_offsets.copy_to_host(), d_long.copy_to_host()
    assert_equal_exact(offsets[:long_runs], starts[lengths > 1], f"non_trivial_runs' offsets ({lengths.tolist()})")
    assert_equal_exact(long[:long_runs], lengths[lengths > 1].astype(np.int32), "non_trivial_runs' lengths")
    assert (offsets[long_runs:] == -1).all() and (long[long_runs:] == -1).all(), "written past the runs"
