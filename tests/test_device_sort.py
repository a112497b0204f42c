"""coop.device.radix_sort against NumPy's stable sorts: every key type, keys and pairs,
ascending and descending, bit ranges (narrower than a digit, not multiples of one),
special float keys (both zeros, infinities, NaNs of both signs), on the simulator (small
sizes) and the GPU (the issue's sizes); repeatability, CuPy / PyTorch arrays and
streams (GPU); bad input raised before any launch."""

import numpy as np
import pytest

import coop
from numba import cuda

from helpers import FULL_MATRIX, ON_GPU, assert_equal_exact, dtype_id
from test_radix_keys import KEY_DTYPES, special_keys
from test_radix_sort import digit_keys

SORT_DTYPES = KEY_DTYPES if FULL_MATRIX else [np.bool_, np.int8, np.uint16, np.int32, np.float32, np.int64]
SIZES = (0, 1, 31, 4097, 10**6 + 3) if FULL_MATRIX else (0, 1, 31, 700)
LARGE = 1 << 28


def keys_of(dtype, n, seed):
    """Keys with every special value and many repeats (stability shows)."""
    rng = np.random.default_rng(seed)
    pool = special_keys(dtype, rng)
    return pool[rng.integers(0, pool.size, n)] if n else pool[:0]


def expected_order(keys, begin, end, descending):
    """The stable permutation radix_sort makes: NumPy's stable argsort of the sort key."""
    width = 8 if keys.dtype == np.bool_ else keys.dtype.itemsize * 8
    end = width if end is None else end
    return np.argsort(digit_keys(keys, begin, end, descending), kind="stable")


def check_sort(keys, begin=0, end=None, descending=False, with_values=True, value_dtype=np.int32,
               out_of_place=False, seed=None):
    """Sorts ``keys`` (with their positions as values) in place or into new outputs, and
    compares with NumPy; ``seed`` (the keys') is named in a mismatch."""
    n = keys.size
    values = np.arange(n, dtype=value_dtype)
    d_keys = cuda.to_device(keys)
    d_values = cuda.to_device(values) if with_values else None
    outputs = {}
    if out_of_place:
        outputs["d_keys_out"] = cuda.device_array(n, keys.dtype)
        if with_values:
            outputs["d_values_out"] = cuda.device_array(n, value_dtype)
    coop.device.radix_sort(d_keys, d_values, descending=descending, begin_bit=begin, end_bit=end, **outputs)
    order = expected_order(keys, begin, end, descending)
    what = (f"radix_sort({keys.dtype}, n={n}, bits {begin}..{end}, descending={descending}"
            f"{f', {np.dtype(value_dtype)} values' if with_values else ''}{', out of place' if out_of_place else ''}"
            f"{'' if seed is None else f', seed {seed}'})")
    assert_sorted(keys, values if with_values else None, order, d_keys, d_values, outputs, what)


def assert_sorted(keys, values, order, d_keys, d_values, outputs, what):
    """A sort's results, bit for bit: the keys (and ``values``, positions, if not None) in
    ``order``, in ``outputs``' ``d_keys_out`` / ``d_values_out`` or else in place; given
    outputs, the inputs as they were."""

    def bits(array):  # (keys compared bit for bit, NaNs and -0.0 included, by item; complex by part)
        if array.dtype.kind == "c":
            array = array.view(f"f{array.dtype.itemsize // 2}")
        return array.view(f"u{array.dtype.itemsize}") if array.dtype.kind in "fb" else array

    assert_equal_exact(bits(outputs.get("d_keys_out", d_keys).copy_to_host()), bits(keys[order]), what + " keys")
    if values is not None:
        got = outputs.get("d_values_out", d_values).copy_to_host()
        assert_equal_exact(got, order.astype(values.dtype), what + " values")
    if outputs:
        assert_equal_exact(bits(d_keys.copy_to_host()), bits(keys), what + ": d_keys left as it was")
        if values is not None:
            assert_equal_exact(d_values.copy_to_host(), values, what + ": d_values left as it was")


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("dtype", SORT_DTYPES, ids=dtype_id)
def test_keys_and_pairs(dtype, n):
    keys = keys_of(dtype, n, seed=n)
    check_sort(keys, with_values=False)
    check_sort(keys, descending=True)


BIT_RANGES = [(0, 5), (3, 8), (4, 20), (0, 12), (9, 32), (13, 14), (7, 7)]


@pytest.mark.parametrize("begin,end", BIT_RANGES)
@pytest.mark.parametrize("descending", [False, True])
def test_bit_ranges(begin, end, descending):
    n = 10**5 + 7 if FULL_MATRIX else 500
    for dtype in (np.uint32, np.float32) if FULL_MATRIX else (np.float32,):
        check_sort(keys_of(dtype, n, seed=begin * 64 + end), begin, end, descending)


@pytest.mark.parametrize("dtype", [np.uint64, np.float64] if FULL_MATRIX else [np.int64], ids=dtype_id)
def test_wide_keys_bit_ranges(dtype):
    n = 10**5 + 7 if FULL_MATRIX else 300
    keys = keys_of(dtype, n, seed=5)
    check_sort(keys, 20, 61, descending=False, value_dtype=np.float64)
    check_sort(keys, 0, 64, descending=True, value_dtype=np.int16)


def test_values_wider_than_keys_and_in_place_aliases():
    """uint8 keys with float64 values (the tile shaped by the values); values longer than
    the keys keep their tail."""
    n = 20011 if FULL_MATRIX else 400
    keys = keys_of(np.uint8, n, seed=8)
    values = np.random.default_rng(8).normal(size=n + 5)
    d_keys, d_values = cuda.to_device(keys), cuda.to_device(values)
    coop.device.radix_sort(d_keys, d_values)
    order = np.argsort(keys, kind="stable")
    assert_equal_exact(d_keys.copy_to_host(), keys[order], "keys")
    got = d_values.copy_to_host()
    assert_equal_exact(got[:n], values[order], "values")
    assert_equal_exact(got[n:], values[n:], "the values past the keys")


@pytest.mark.parametrize("value_dtype", [np.bool_, np.int8, np.float16] if FULL_MATRIX else [np.float16],
                         ids=dtype_id)
def test_small_values(value_dtype):
    """bool, int8 and float16 values moved with their keys (keys of those types are in
    test_keys_and_pairs)."""
    n = 20011 if FULL_MATRIX else 400
    keys = keys_of(np.float16, n, seed=9)
    values = (np.arange(n) % 5).astype(value_dtype)
    d_keys, d_values = cuda.to_device(keys), cuda.to_device(values)
    coop.device.radix_sort(d_keys, d_values, descending=True)
    order = expected_order(keys, 0, None, True)
    assert_equal_exact(d_values.copy_to_host(), values[order], "values")


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("begin,end", [(0, 32), (9, 32), (0, 12), (3, 8), (7, 7)])  # (4, 3, 2, 1 and 0 passes)
def test_out_of_place(begin, end, n):
    """Into d_keys_out / d_values_out: the inputs unchanged, nothing past the outputs'
    first n items written, whatever the number of passes (none: a copy)."""
    keys = keys_of(np.uint32, n, seed=n + begin + 31 * end)
    values = np.arange(n, dtype=np.int64) * 3
    order = expected_order(keys, begin, end, False)
    d_keys, d_values = cuda.to_device(keys), cuda.to_device(values)
    d_keys_out = cuda.to_device(np.full(n + 3, 7, np.uint32))
    d_values_out = cuda.to_device(np.full(n + 3, -1, np.int64))
    what = f"radix_sort out of place, n={n}, bits {begin}..{end}"
    coop.device.radix_sort(d_keys, d_values, begin_bit=begin, end_bit=end, d_keys_out=d_keys_out,
                           d_values_out=d_values_out)
    assert_equal_exact(d_keys_out.copy_to_host(), np.concatenate((keys[order], [7, 7, 7])), what + " keys")
    assert_equal_exact(d_values_out.copy_to_host(), np.concatenate((values[order], [-1, -1, -1])), what + " values")
    assert_equal_exact(d_keys.copy_to_host(), keys, what + ": d_keys left as it was")
    assert_equal_exact(d_values.copy_to_host(), values, what + ": d_values left as it was")
    d_keys_out = cuda.device_array(n, np.uint32)
    coop.device.radix_sort(d_keys, begin_bit=begin, end_bit=end, descending=True, d_keys_out=d_keys_out)
    descending = expected_order(keys, begin, end, True)
    assert_equal_exact(d_keys_out.copy_to_host(), keys[descending], what + ", keys only, descending")
    assert_equal_exact(d_keys.copy_to_host(), keys, what + ", keys only: d_keys left as it was")


def test_outputs_that_are_the_inputs_sort_in_place():
    keys = keys_of(np.int16, 300, seed=12)
    d_keys, d_values = cuda.to_device(keys), cuda.to_device(np.arange(300, dtype=np.int32))
    coop.device.radix_sort(d_keys, d_values, d_keys_out=d_keys, d_values_out=d_values)
    order = np.argsort(keys, kind="stable")
    assert_equal_exact(d_keys.copy_to_host(), keys[order], "keys")
    assert_equal_exact(d_values.copy_to_host(), order.astype(np.int32), "values")


def test_repeatable():
    n = 10**6 + 3 if FULL_MATRIX else 500
    keys = keys_of(np.float32, n, seed=9)
    results = []
    for _ in range(3):
        d_keys, d_values = cuda.to_device(keys), cuda.to_device(np.arange(n, dtype=np.int32))
        coop.device.radix_sort(d_keys, d_values)
        results.append(d_values.copy_to_host())
    assert all((r == results[0]).all() for r in results)


@pytest.mark.skipif(not ON_GPU, reason="2^28 keys: GPU only")
def test_large():
    keys = np.random.default_rng(10).integers(0, 2**32, LARGE, dtype=np.uint64).astype(np.uint32)
    d_keys = cuda.to_device(keys)
    coop.device.radix_sort(d_keys)
    assert (d_keys.copy_to_host() == np.sort(keys)).all()
    d_keys = cuda.to_device(keys)
    d_values = cuda.to_device(np.arange(LARGE, dtype=np.uint32))
    coop.device.radix_sort(d_keys, d_values, descending=True)
    order = np.argsort(~keys, kind="stable")
    assert (d_keys.copy_to_host() == keys[order]).all()
    assert (d_values.copy_to_host() == order).all()


@pytest.mark.skipif(not ON_GPU, reason="CuPy and PyTorch arrays, streams: GPU only")
def test_cupy_torch_and_streams():
    cupy = pytest.importorskip("cupy")
    torch = pytest.importorskip("torch")
    keys = keys_of(np.int32, 10**5 + 3, seed=11)
    expected = np.sort(keys, kind="stable")
    stream = cupy.cuda.Stream(non_blocking=True)
    with stream:
        c_keys = cupy.asarray(keys)
    coop.device.radix_sort(c_keys, stream=stream)
    stream.synchronize()
    assert (cupy.asnumpy(c_keys) == expected).all()
    t_stream = torch.cuda.Stream()
    t_keys = torch.as_tensor(keys, device="cuda")
    t_values = torch.arange(keys.size, device="cuda", dtype=torch.int64)
    t_stream.wait_stream(torch.cuda.current_stream())
    coop.device.radix_sort(t_keys, t_values, descending=True, stream=t_stream)
    t_stream.synchronize()
    order = np.argsort(-keys.astype(np.int64), kind="stable")
    assert (t_keys.cpu().numpy() == keys[order]).all()
    assert (t_values.cpu().numpy() == order).all()


def test_bad_input():
    d_keys = cuda.to_device(np.arange(10, dtype=np.int32))
    with pytest.raises(TypeError, match=r"coop.device.radix_sort: d_keys is a NumPy array in host memory"):
        coop.device.radix_sort(np.arange(10))
    with pytest.raises(TypeError, match=r"coop.device.radix_sort: d_keys must hold radix keys .* got complex64"):
        coop.device.radix_sort(cuda.to_device(np.zeros(4, np.complex64)))
    with pytest.raises(ValueError, match=r"coop.device.radix_sort: d_values is too short: 9 items, 10 needed"):
        coop.device.radix_sort(d_keys, cuda.to_device(np.zeros(9, np.int32)))
    with pytest.raises(ValueError, match=r"coop.device.radix_sort: end_bit must be an integer from 0 to 32"):
        coop.device.radix_sort(d_keys, end_bit=33)
    with pytest.raises(ValueError, match=r"coop.device.radix_sort: begin_bit must be an integer from 0 to 16"):
        coop.device.radix_sort(d_keys, begin_bit=17, end_bit=16)
    with pytest.raises(TypeError, match=r"coop.device.radix_sort: descending must be a bool, got 'yes'"):
        coop.device.radix_sort(d_keys, descending="yes")
    with pytest.raises(ValueError, match=r"coop.device.radix_sort: d_keys must be contiguous"):
        coop.device.radix_sort(cuda.to_device(np.arange(20, dtype=np.int32))[::2])
    d_values = cuda.to_device(np.arange(10, dtype=np.int32))
    with pytest.raises(ValueError, match=r"coop.device.radix_sort: d_values_out is given without d_keys_out"):
        coop.device.radix_sort(d_keys, d_values, d_values_out=cuda.device_array(10, np.int32))
    with pytest.raises(ValueError, match=r"coop.device.radix_sort: d_values_out is needed with d_keys_out and "
                                         r"d_values"):
        coop.device.radix_sort(d_keys, d_values, d_keys_out=cuda.device_array(10, np.int32))
    with pytest.raises(ValueError, match=r"coop.device.radix_sort: d_values_out is given without d_values"):
        coop.device.radix_sort(d_keys, d_keys_out=cuda.device_array(10, np.int32),
                               d_values_out=cuda.device_array(10, np.int32))
    with pytest.raises(TypeError, match=r"coop.device.radix_sort: d_keys_out's dtype uint32 differs from d_keys's "
                                        r"int32"):
        coop.device.radix_sort(d_keys, d_keys_out=cuda.device_array(10, np.uint32))
    with pytest.raises(ValueError, match=r"coop.device.radix_sort: d_keys_out is too short: 9 items, 10 needed"):
        coop.device.radix_sort(d_keys, d_keys_out=cuda.device_array(9, np.int32))
    d_both = cuda.to_device(np.arange(20, dtype=np.int32))  # (an output overlapping its input: d_both[5:15])
    with pytest.raises(ValueError, match=r"coop.device.radix_sort: d_keys_out overlaps d_keys \(it may be d_keys "
                                         r"itself, or apart from it\)"):
        coop.device.radix_sort(d_both[:10], d_keys_out=d_both[5:15])
    with pytest.raises(ValueError, match=r"coop.device.radix_sort: d_keys_out and d_values_out must both be their "
                                         r"inputs \(in place\) or both apart from them"):
        coop.device.radix_sort(d_keys, d_values, d_keys_out=d_keys, d_values_out=cuda.device_array(10, np.int32))
    # nothing was launched: the keys and values are as they were
    assert (d_keys.copy_to_host() == np.arange(10)).all()
    assert (d_values.copy_to_host() == np.arange(10)).all()
    assert (d_both.copy_to_host() == np.arange(20)).all()
