"""coop.device's scans by key against a NumPy reference: key and value dtypes (an output
type wider than the values', float16 keys, bool keys), sizes around the tile (none, one,
a tile less one, a tile, a tile and one, several and a part; runs across tiles, a run
over a whole tile), inclusive and exclusive, sums and a non-commutative operator, an
equality, in place; bad input raised before any launch. Integer-valued data, checked
exactly."""

import operator

import numpy as np
import pytest

import coop
from numba import cuda

from helpers import FULL_MATRIX, assert_equal_exact


def tile_of(key_dtype, value_dtype, out_dtype):
    """The kernel's tile (coop/device/scan_by_key.py)."""
    from coop.device import scan_by_key

    widest = max(np.dtype(d).itemsize for d in (key_dtype, value_dtype, out_dtype, scan_by_key.FLAG))
    return scan_by_key.THREADS * max(1, scan_by_key.TILE_BYTES_PER_THREAD // widest)


def sizes_for(*dtypes):
    tile = tile_of(*dtypes)
    return [0, 1, tile - 1, tile, tile + 1, 3 * tile + 5] + ([1000 * tile + 77] if FULL_MATRIX else [])


def keys_of(dtype, n, seed, longest=9):
    """Sorted-looking keys: runs of 1 to ``longest`` equal keys (neighbouring runs of one
    key merge), in ``dtype``."""
    rng = np.random.default_rng(seed)
    values = np.cumsum(rng.integers(0, 2, n)) % (2 if np.dtype(dtype) == np.bool_ else 100)
    return np.repeat(values, rng.integers(1, longest + 1, n))[:n].astype(dtype)


def by_key_reference(keys, values, out_dtype, op, initial=None, equal=None):
    """The scan by key in Python: exclusive with ``initial``, else inclusive."""
    out = np.empty(keys.size, out_dtype)
    running = None
    for i in range(keys.size):
        value = out_dtype.type(values[i])
        if i == 0 or not (equal(keys[i - 1], keys[i]) if equal else keys[i - 1] == keys[i]):
            running = None
        if initial is None:
            running = value if running is None else out_dtype.type(op(running, value))
            out[i] = running
        else:
            out[i] = initial if running is None else out_dtype.type(op(initial, running))
            running = value if running is None else out_dtype.type(op(running, value))
    return out


CASES = [(np.int32, np.int32, np.int32), (np.int8, np.int16, np.int64), (np.float16, np.uint8, np.uint32),
         (np.bool_, np.int32, np.int32), (np.uint64, np.float64, np.float64), (np.float32, np.int8, np.float32)]


@pytest.mark.parametrize("exclusive", [False, True], ids=["inclusive", "exclusive"])
@pytest.mark.parametrize("key_dtype, value_dtype, out_dtype", CASES, ids=lambda d: np.dtype(d).name)
def test_sums_by_key(key_dtype, value_dtype, out_dtype, exclusive):
    out_dtype = np.dtype(out_dtype)
    for n in sizes_for(key_dtype, value_dtype, out_dtype):
        keys = keys_of(key_dtype, n, n)
        values = np.random.default_rng(n + 1).integers(-4, 5, n).astype(value_dtype)
        if np.dtype(value_dtype).kind == "u":
            values = np.random.default_rng(n + 1).integers(0, 9, n).astype(value_dtype)
        d_out = cuda.to_device(np.full(n, 77, out_dtype))
        function = coop.device.exclusive_sum_by_key if exclusive else coop.device.inclusive_sum_by_key
        function(cuda.to_device(keys), cuda.to_device(values), d_out)
        expected = by_key_reference(keys, values, out_dtype, operator.add, 0 if exclusive else None)
        assert_equal_exact(d_out.copy_to_host(), expected,
                           f"{function.__name__}(keys {np.dtype(key_dtype)}, values {np.dtype(value_dtype)} -> "
                           f"{out_dtype}, n={n})")


@cuda.jit(device=True)
def then(f, g):
    """x -> g(f(x)) for affine maps packed as a * 2**8 + b, modulo 2**8 in each
    coefficient: associative, not commutative."""
    fa, fb, ga, gb = f >> 8, f & 0xFF, g >> 8, g & 0xFF
    return ((ga * fa) & 0xFF) << 8 | ((ga * fb + gb) & 0xFF)


def then_on_host(f, g):
    f, g = int(f), int(g)
    return ((g >> 8) * (f >> 8) & 0xFF) << 8 | (((g >> 8) * (f & 0xFF) + (g & 0xFF)) & 0xFF)


START = 3 << 8 | 5  # (x -> 3x + 5: not the identity, so that it is seen combined first)


@pytest.mark.parametrize("exclusive", [False, True], ids=["inclusive", "exclusive"])
def test_a_non_commutative_operator_an_equality_and_in_place(exclusive):
    for n in sizes_for(np.int64, np.int64, np.int64)[1:]:
        rng = np.random.default_rng(n + 2)
        keys = keys_of(np.int64, n, n + 3, longest=40)
        maps = (rng.integers(0, 256, n) << 8 | rng.integers(0, 256, n)).astype(np.int64)
        d_maps = cuda.to_device(maps)
        tens = (lambda a, b: a // 10 == b // 10)  # (runs of keys by their tens)
        if exclusive:
            coop.device.exclusive_scan_by_key(cuda.to_device(keys), d_maps, d_maps, then, START, equality=tens)
        else:
            coop.device.inclusive_scan_by_key(cuda.to_device(keys), d_maps, d_maps, then, equality=tens)
        expected = by_key_reference(keys, maps, np.dtype(np.int64), then_on_host, START if exclusive else None,
                                    equal=lambda a, b: a // 10 == b // 10)
        assert_equal_exact(d_maps.copy_to_host(), expected, f"affine maps composed by key, in place, n={n}")


def test_one_run_and_all_distinct():
    n = 3 * tile_of(np.int32, np.int32, np.int32) + 5
    ones = cuda.to_device(np.ones(n, np.int32))
    d_out = cuda.device_array(n, np.int32)
    coop.device.inclusive_sum_by_key(cuda.to_device(np.zeros(n, np.int32)), ones, d_out)
    assert_equal_exact(d_out.copy_to_host(), np.arange(1, n + 1, dtype=np.int32), "one run over every tile")
    coop.device.exclusive_sum_by_key(cuda.to_device(np.arange(n, dtype=np.int32)), ones, d_out)
    assert_equal_exact(d_out.copy_to_host(), np.zeros(n, np.int32), "every key a run of its own")


def test_bad_input():
    d_keys, d_values = cuda.to_device(np.arange(10, dtype=np.int32)), cuda.to_device(np.ones(10, np.int32))
    d_out = cuda.device_array(10, np.int32)
    with pytest.raises(ValueError, match=r"coop.device.inclusive_sum_by_key: d_values is too short: 9 items, 10 "
                                         r"needed"):
        coop.device.inclusive_sum_by_key(d_keys, d_values[:9], d_out)
    with pytest.raises(ValueError, match=r"coop.device.exclusive_scan_by_key: d_out is d_keys itself"):
        coop.device.exclusive_scan_by_key(d_keys, d_values, d_keys, operator.add, 0)
    with pytest.raises(ValueError, match=r"coop.device.exclusive_scan_by_key: initial is required"):
        coop.device.exclusive_scan_by_key(d_keys, d_values, d_out, operator.add, None)
    with pytest.raises(TypeError, match=r"coop.device.inclusive_scan_by_key: op must be an operator"):
        coop.device.inclusive_scan_by_key(d_keys, d_values, d_out, 5)
    with pytest.raises(TypeError, match=r"coop.device.inclusive_scan_by_key: d_keys is a NumPy array in host memory"):
        coop.device.inclusive_scan_by_key(np.arange(10), d_values, d_out, operator.add)
