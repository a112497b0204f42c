"""coop.device.merge_sort against NumPy's and Python's stable sorts: every key type (and
complex keys by a comparator), keys and pairs, in place and out of place, comparators
(the default, operator.gt, a lambda, a device function, one ordering many keys as equal:
stability shows), sizes on every side of the tiles and of the merged pairs of runs
(partial last tiles, a pair with one run, a last pair ending where a tile does), on the
simulator (small sizes) and the GPU (up to 2^27 keys); CuPy / PyTorch arrays and streams
(GPU); bad input raised before any launch."""

import functools
import importlib
import operator

import numpy as np
import pytest

import coop
from numba import cuda

from helpers import FULL_MATRIX, ON_GPU, assert_equal_exact, dtype_id
from test_device_sort import assert_sorted

merge_sort_module = importlib.import_module("coop.device.merge_sort")  # (coop.device.merge_sort is the function)

KEY_DTYPES = ([np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64,
               np.float16, np.float32, np.float64] if FULL_MATRIX else [np.bool_, np.int8, np.float16, np.int64])
SIZES = (0, 1, 2, 31, 4097, 10**6 + 3) if FULL_MATRIX else (0, 1, 2, 31, 200)
# tiles of the sorted input: a last pair of one run (5, 9), a last pair ending where a
# tile does (4, 8), an odd and an even number of rounds (2-3 rounds on the simulator)
TILES = (2, 3, 4, 5, 8, 9) if FULL_MATRIX else (2, 4, 5)


def tile_size(dtype):
    return merge_sort_module.SORT_THREADS * merge_sort_module._items_per_thread(dtype)


def keys_of(dtype, n, seed):
    """Keys with many repeats (stability shows); floats with both zeros and infinities."""
    rng = np.random.default_rng(seed)
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return rng.integers(0, 2, n).astype(np.bool_)
    if dtype.kind == "f":
        pool = np.array([-np.inf, -2.5, -1, -0.0, 0.0, 0.5, 1, 3, 1000, np.inf], dtype)
        return pool[rng.integers(0, pool.size, n)]
    info = np.iinfo(dtype)
    wanted = (int(info.min), int(info.min) + 1, -3, -1, 0, 1, 2, 7, 100, int(info.max) - 1, int(info.max))
    pool = np.unique(np.array([v for v in wanted if info.min <= v <= info.max], dtype))
    return pool[rng.integers(0, pool.size, n)]


def stable_order(keys, compare):
    """The permutation a stable sort by ``compare`` (a Python function of two keys) makes."""

    def three_way(i, j):
        a, b = keys[i], keys[j]
        return -1 if compare(a, b) else 1 if compare(b, a) else 0

    return np.array(sorted(range(keys.size), key=functools.cmp_to_key(three_way)), dtype=np.int64)


def check_sort(keys, compare=None, reference=None, with_values=True, value_dtype=np.int32, out_of_place=False,
               what="", order=None):
    """Sorts ``keys`` (their positions as values) by ``compare`` (``reference``: the same
    order as a Python function; None: NumPy's stable argsort; or the stable ``order``
    itself), in place or into new outputs, and compares with the stable order, bit for
    bit."""
    n = keys.size
    values = np.arange(n, dtype=value_dtype)
    d_keys = cuda.to_device(keys)
    d_values = cuda.to_device(values) if with_values else None
    outputs = {}
    if out_of_place:
        outputs["d_keys_out"] = cuda.device_array(n, keys.dtype)
        if with_values:
            outputs["d_values_out"] = cuda.device_array(n, value_dtype)
    coop.device.merge_sort(d_keys, d_values, compare=compare, **outputs)
    if order is None:
        order = np.argsort(keys, kind="stable") if reference is None else stable_order(keys, reference)
    what = (f"merge_sort({keys.dtype}, n={n}{what}{f', {np.dtype(value_dtype)} values' if with_values else ''}"
            f"{', out of place' if out_of_place else ''})")
    assert_sorted(keys, values if with_values else None, order, d_keys, d_values, outputs, what)


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("dtype", KEY_DTYPES, ids=dtype_id)
def test_keys_and_pairs(dtype, n):
    keys = keys_of(dtype, n, seed=n)
    check_sort(keys, with_values=False)
    check_sort(keys, out_of_place=n % 2 == 1)


@pytest.mark.parametrize("tiles", TILES)
@pytest.mark.parametrize("extra", [-1, 0, 1])
def test_sizes_around_tiles_and_pairs(tiles, extra):
    """A last tile partial or whole, and the pairs of runs of ``TILES`` (the tile sort
    writing the temporary or the output)."""
    n = tiles * tile_size(np.int32) + extra
    keys = keys_of(np.int32, n, seed=tiles * 3 + extra)
    check_sort(keys, out_of_place=extra == 1)


@cuda.jit(device=True)
def _by_distance_from_ten(a, b):
    return abs(a - 10) < abs(b - 10)


COMPARATORS = {
    "operator.gt": (operator.gt, lambda a, b: a > b),
    "lambda": (lambda a, b: a % 7 < b % 7, lambda a, b: a % 7 < b % 7),  # (most keys equal: stability)
    "device_function": (_by_distance_from_ten, lambda a, b: abs(int(a) - 10) < abs(int(b) - 10)),
}


@pytest.mark.parametrize("out_of_place", [False, True])
@pytest.mark.parametrize("name", COMPARATORS)
def test_comparators(name, out_of_place):
    compare, reference = COMPARATORS[name]
    n = 5000 if ON_GPU else 300
    keys = np.random.default_rng(3).integers(-40, 40, n).astype(np.int32)
    check_sort(keys, compare, reference, value_dtype=np.float64, out_of_place=out_of_place, what=f", {name}")


def test_complex_keys_by_magnitude_and_wide_values():
    n = 20000 if ON_GPU else 250
    rng = np.random.default_rng(4)
    keys = (rng.integers(-3, 4, n) + 1j * rng.integers(-3, 4, n)).astype(np.complex128)
    check_sort(keys, lambda a, b: abs(a) < abs(b), lambda a, b: abs(a) < abs(b), value_dtype=np.complex128,
               what=", |a| < |b|")


def test_narrow_keys_wide_values():
    n = 100003 if ON_GPU else 400
    keys = keys_of(np.int8, n, seed=5)
    values = np.random.default_rng(5).normal(size=n)
    d_keys, d_values = cuda.to_device(keys), cuda.to_device(values)
    coop.device.merge_sort(d_keys, d_values, compare=operator.gt)
    order = stable_order(keys, lambda a, b: a > b) if n < 10**4 else np.argsort(-keys.astype(np.int64), kind="stable")
    assert_equal_exact(d_keys.copy_to_host(), keys[order], "int8 keys, descending")
    assert_equal_exact(d_values.copy_to_host(), values[order], "float64 values")


def test_outputs_that_are_the_inputs_sort_in_place():
    keys = keys_of(np.int16, 300, seed=12)
    d_keys, d_values = cuda.to_device(keys), cuda.to_device(np.arange(300, dtype=np.int32))
    coop.device.merge_sort(d_keys, d_values, d_keys_out=d_keys, d_values_out=d_values)
    order = np.argsort(keys, kind="stable")
    assert_equal_exact(d_keys.copy_to_host(), keys[order], "keys")
    assert_equal_exact(d_values.copy_to_host(), order.astype(np.int32), "values")


ALL_KEY_DTYPES = [np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64,
                  np.float16, np.float32, np.float64]


@pytest.mark.parametrize("seed", range(6 if ON_GPU else 2))
def test_random_sizes_and_types(seed):
    """Random key and value dtypes, sizes (empty included), comparators (the
    default, ``operator.gt``, by the remainder of 7 for integer keys), keys or pairs, in
    place or not; each call against the stable order (equal keys keep their order), its
    choices named in a mismatch."""
    rng = np.random.default_rng(2900 + seed)
    for _ in range(8 if ON_GPU else 3):
        dtype = np.dtype(ALL_KEY_DTYPES[rng.integers(len(ALL_KEY_DTYPES))])
        # (log-uniform on the GPU; on the simulator, whose tiles are 96 keys, uniform: rounds of merging)
        n = int(np.expm1(rng.uniform(0, np.log1p(300_000)))) if ON_GPU else int(rng.integers(0, 400))
        keys = keys_of(dtype, n, seed=int(rng.integers(2**31)))
        ranks = np.unique(keys, return_inverse=True)[1].reshape(-1)  # (equal keys, -0.0 and 0.0 too: one rank)
        by_remainder = dtype.kind == "i" or dtype.kind == "u" and dtype.itemsize < 8  # (uint64 % 7: a float)
        comparator = int(rng.integers(3 if by_remainder else 2))
        compare, order, name = (
            (None, np.argsort(ranks, kind="stable"), "default"),
            (operator.gt, np.argsort(-ranks, kind="stable"), "operator.gt"),
            (lambda a, b: a % 7 < b % 7, np.argsort(keys.astype(np.int64) % 7, kind="stable"), "a % 7 < b % 7"),
        )[comparator]
        value_dtype = (np.int32, np.int64, np.float64)[rng.integers(3)]
        check_sort(keys, compare, with_values=bool(rng.integers(2)), value_dtype=value_dtype,
                   out_of_place=bool(rng.integers(2)), what=f", {name}, seed {seed}", order=order)


@pytest.mark.skipif(not ON_GPU, reason="2^27 keys: GPU only")
def test_large():
    n = 1 << 27
    keys = np.random.default_rng(10).integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32)
    d_keys = cuda.to_device(keys)
    coop.device.merge_sort(d_keys)
    assert (d_keys.copy_to_host() == np.sort(keys)).all()
    d_keys = cuda.to_device(keys)
    d_values = cuda.to_device(np.arange(n, dtype=np.uint32))
    coop.device.merge_sort(d_keys, d_values, compare=operator.gt)
    order = np.argsort(~keys, kind="stable")
    assert (d_keys.copy_to_host() == keys[order]).all()
    assert (d_values.copy_to_host() == order).all()


@pytest.mark.skipif(not ON_GPU, reason="CuPy and PyTorch arrays, streams: GPU only")
def test_cupy_torch_and_streams():
    cupy = pytest.importorskip("cupy")
    torch = pytest.importorskip("torch")
    keys = keys_of(np.int32, 10**5 + 3, seed=11)
    stream = cupy.cuda.Stream(non_blocking=True)
    with stream:
        c_keys = cupy.asarray(keys)
    coop.device.merge_sort(c_keys, stream=stream)
    stream.synchronize()
    assert (cupy.asnumpy(c_keys) == np.sort(keys, kind="stable")).all()
    t_stream = torch.cuda.Stream()
    t_keys = torch.as_tensor(keys, device="cuda")
    t_values = torch.arange(keys.size, device="cuda", dtype=torch.int64)
    t_stream.wait_stream(torch.cuda.current_stream())
    coop.device.merge_sort(t_keys, t_values, compare=operator.gt, stream=t_stream)
    t_stream.synchronize()
    order = np.argsort(-keys.astype(np.int64), kind="stable")
    assert (t_keys.cpu().numpy() == keys[order]).all()
    assert (t_values.cpu().numpy() == order).all()


def test_bad_input():
    d_keys = cuda.to_device(np.arange(10, dtype=np.int32))
    with pytest.raises(TypeError, match=r"coop.device.merge_sort: d_keys is a NumPy array in host memory"):
        coop.device.merge_sort(np.arange(10))
    with pytest.raises(ValueError, match=r"coop.device.merge_sort: d_values is too short: 9 items, 10 needed"):
        coop.device.merge_sort(d_keys, cuda.to_device(np.zeros(9, np.int32)))
    with pytest.raises(TypeError, match=r"coop.device.merge_sort: compare must take 2 values, but it takes 1"):
        coop.device.merge_sort(d_keys, compare=lambda a: a)
    with pytest.raises(TypeError, match=r"coop.device.merge_sort: d_keys_out's dtype uint32 differs from d_keys's "
                                        r"int32"):
        coop.device.merge_sort(d_keys, d_keys_out=cuda.device_array(10, np.uint32))
    with pytest.raises(ValueError, match=r"coop.device.merge_sort: d_values_out is needed with d_keys_out and "
                                         r"d_values"):
        coop.device.merge_sort(d_keys, cuda.to_device(np.zeros(10, np.int32)),
                               d_keys_out=cuda.device_array(10, np.int32))
    d_both = cuda.to_device(np.arange(20, dtype=np.int32))
    with pytest.raises(ValueError, match=r"coop.device.merge_sort: d_keys_out overlaps d_keys"):
        coop.device.merge_sort(d_both[:10], d_keys_out=d_both[5:15])
