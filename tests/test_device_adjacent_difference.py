"""coop.device.subtract_left / subtract_right against NumPy: integer and float items, sizes
around the tile (none, one, a tile less one, a tile, a tile and one, several and a part),
out of place, in place (``d_out`` left out, or ``d_in`` itself: the tiles' neighbours are
read before any tile is overwritten), a wider output type, operators given on the host;
bad input raised before any launch. Integer-valued data, checked exactly."""

import operator

import numpy as np
import pytest

import coop
from numba import cuda

from helpers import ON_GPU, assert_equal_exact, dtype_id

DTYPES = [np.int8, np.int32, np.uint64, np.float32, np.float64]


def tile_of(dtype):
    """The kernel's tile (coop/device/adjacent_difference.py): 16 bytes of items a thread."""
    from coop.device import adjacent_difference

    return adjacent_difference.THREADS * max(1, 16 // np.dtype(dtype).itemsize)


def sizes_for(dtype):
    tile = tile_of(dtype)
    sizes = [0, 1, tile - 1, tile, tile + 1, 3 * tile + 5]
    return sizes + ([1000 * tile + 77] if ON_GPU else [])


def items_of(dtype, n, seed):
    rng = np.random.default_rng(seed)
    if np.dtype(dtype).kind == "f":
        return rng.integers(-1000, 1000, n).astype(dtype)  # (integer-valued: differences exact)
    info = np.iinfo(dtype)
    return rng.integers(max(info.min, -50), min(info.max, 50), n, endpoint=True).astype(dtype)


def expected_of(x, left, op=np.subtract, out_dtype=None):
    out = x.astype(out_dtype or x.dtype)
    if x.size > 1:
        with np.errstate(over="ignore"):
            if left:
                out[1:] = op(x[1:], x[:-1]).astype(out.dtype)
            else:
                out[:-1] = op(x[:-1], x[1:]).astype(out.dtype)
    return out


@pytest.mark.parametrize("left", [True, False], ids=["left", "right"])
@pytest.mark.parametrize("dtype", DTYPES, ids=dtype_id)
def test_out_of_place_and_in_place(dtype, left):
    function = coop.device.subtract_left if left else coop.device.subtract_right
    for n in sizes_for(dtype):
        x = items_of(dtype, n, n)
        expected = expected_of(x, left)
        d_x = cuda.to_device(x)
        d_out = cuda.to_device(np.full(n + 2, 77, dtype))
        function(d_x, d_out)
        got = d_out.copy_to_host()
        assert_equal_exact(got[:n], expected, f"{function.__name__}({np.dtype(dtype)}, n={n})")
        assert (got[n:] == 77).all(), f"{function.__name__}: written past n"
        assert_equal_exact(d_x.copy_to_host(), x, f"{function.__name__}: its input changed")
        function(d_x)  # in place
        assert_equal_exact(d_x.copy_to_host(), expected, f"{function.__name__}({np.dtype(dtype)}, n={n}) in place")
        d_x = cuda.to_device(x)
        function(d_x, d_x)  # in place, d_out given as d_in
        assert_equal_exact(d_x.copy_to_host(), expected, f"{function.__name__} with d_out=d_in")


@pytest.mark.parametrize("left", [True, False], ids=["left", "right"])
def test_wider_output_and_operators(left):
    function = coop.device.subtract_left if left else coop.device.subtract_right
    n = 3 * tile_of(np.int16) + 9
    x = np.random.default_rng(3).integers(-30000, 30000, n).astype(np.int16)  # (differences overflow int16)
    d_out = cuda.device_array(n, np.int32)
    function(cuda.to_device(x), d_out)
    assert_equal_exact(d_out.copy_to_host(), expected_of(x.astype(np.int32), left), "int16 -> int32 differences")
    function(cuda.to_device(x), d_out, op=operator.sub)
    assert_equal_exact(d_out.copy_to_host(), expected_of(x.astype(np.int32), left), "operator.sub, int16 -> int32")
    function(cuda.to_device(x), d_out, op=lambda a, b: 1 if a > b else 0)
    assert_equal_exact(d_out.copy_to_host(), expected_of(x, left, lambda a, b: (a > b).astype(np.int32), np.int32),
                       "an operator given on the host")
    function(cuda.to_device(x), d_out, op=coop.ops.max)
    assert_equal_exact(d_out.copy_to_host(), expected_of(x, left, np.maximum, np.int32), "coop.ops.max")


def test_bad_input():
    x = np.arange(10, dtype=np.int32)
    d_x = cuda.to_device(x)
    with pytest.raises(TypeError, match=r"coop.device.subtract_left: d_in is a NumPy array in host memory"):
        coop.device.subtract_left(x)
    with pytest.raises(ValueError, match=r"coop.device.subtract_right: d_out is too short: 9 items, 10 needed"):
        coop.device.subtract_right(d_x, cuda.device_array(9, np.int32))
    with pytest.raises(ValueError, match=r"coop.device.subtract_left: d_out"):  # (overlapping, not the same)
        coop.device.subtract_left(d_x[:9], d_x[1:])
    assert_equal_exact(d_x.copy_to_host(), x, "the input after refused calls")
