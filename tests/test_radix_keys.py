"""coop._core.radix (the ordered bits radix ranking and sorting see) against NumPy, for
every key type, with the special values a sort meets: both zeros, infinities, NaNs of
both signs, denormals, extremes."""

import numpy as np
import pytest
from numba import cuda

import coop  # noqa: F401  (before numba.cuda is used: chooses the backend)
from coop._core import radix
from coop._core.values import value_type_of
from helpers import INTEGER_DTYPES, assert_equal_exact

KEY_DTYPES = [np.bool_] + INTEGER_DTYPES + [np.float16, np.float32, np.float64]


def special_keys(dtype, rng, n=64):
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return rng.integers(0, 2, n).astype(np.bool_)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        edges = [info.min, info.min + 1, -1 if dtype.kind == "i" else 1, 0, 1, info.max - 1, info.max]
        body = rng.integers(info.min, info.max, n - len(edges), dtype=dtype, endpoint=True)
        return np.concatenate([np.array(edges, dtype), body])
    info = np.finfo(dtype)
    edges = [-0.0, 0.0, np.inf, -np.inf, info.max, -info.max, info.tiny, -info.tiny,
             info.smallest_subnormal, -info.smallest_subnormal, 1.0, -1.0]
    body = (rng.standard_normal(n - len(edges) - 2) * 100).astype(dtype)
    nans = np.array([np.nan, -np.nan], dtype)
    nans[1] = -np.abs(nans[1])  # a NaN with the sign bit set
    return np.concatenate([np.array(edges, dtype), body, nans])


def ordered_kernel(dtype):
    key_type = value_type_of(np.dtype(dtype))
    to_ordered = radix.to_ordered(key_type)
    from_ordered = radix.from_ordered(key_type)
    digit = radix.digit(key_type)
    width = radix.key_bits(key_type)

    @cuda.jit
    def kernel(keys, ordered, back, digits):
        i = cuda.grid(1)
        if i < keys.size:
            bits = to_ordered(keys[i])
            ordered[i] = bits
            back[i] = from_ordered(bits)
            for d in range(width // 4):
                digits[i, d] = digit(bits, d * 4, 4)

    return kernel


def reference_ordered(keys):
    """The ordered bits, from NumPy's own order: a rank-preserving check follows."""
    dtype = keys.dtype
    if dtype == np.bool_:
        return keys.astype(np.uint8)
    unsigned = np.dtype("uint%d" % (dtype.itemsize * 8))
    bits = keys.view(unsigned)
    high = unsigned.type(1 << (dtype.itemsize * 8 - 1))
    if dtype.kind == "u":
        return bits
    if dtype.kind == "i":
        return bits ^ high
    return np.where(bits & high, ~bits, bits ^ high).astype(unsigned)


@pytest.mark.parametrize("dtype", [pytest.param(d, id=np.dtype(d).name) for d in KEY_DTYPES])
def test_ordered_bits_round_trip_and_order(dtype):
    keys = special_keys(dtype, np.random.default_rng(3))
    n = keys.size
    unsigned = np.dtype("uint8" if keys.dtype == np.bool_ else "uint%d" % (keys.dtype.itemsize * 8))
    width = unsigned.itemsize * 8
    ordered = np.zeros(n, unsigned)
    back = np.zeros_like(keys)
    digits = np.zeros((n, width // 4), np.uint32)
    ordered_kernel(dtype)[1, n](keys, ordered, back, digits)

    assert_equal_exact(ordered, reference_ordered(keys), "ordered bits")
    # the round trip gives every key back, bit for bit (NaN payloads and -0.0 included)
    assert_equal_exact(back.view(unsigned) if keys.dtype != np.bool_ else back,
                       keys.view(unsigned) if keys.dtype != np.bool_ else keys, "round trip")
    # sorting by the ordered bits sorts the keys (NaNs aside, which NumPy puts last)
    finite = ~np.isnan(keys) if keys.dtype.kind == "f" else np.ones(n, bool)
    by_bits = keys[finite][np.argsort(ordered[finite], kind="stable")]
    assert_equal_exact(by_bits, np.sort(keys[finite], kind="stable"), "order")
    # digits: 4-bit fields of the ordered bits, with -0.0 read as +0.0
    expected_bits = ordered.astype(np.uint64)
    if keys.dtype.kind == "f":
        minus_zero = (1 << (width - 1)) - 1
        expected_bits = np.where(expected_bits == minus_zero, 1 << (width - 1), expected_bits)
    for d in range(width // 4):
        assert_equal_exact(digits[:, d], ((expected_bits >> np.uint64(4 * d)) & np.uint64(15)).astype(np.uint32),
                           f"digit {d}")
    if keys.dtype.kind == "f":
        zeros = np.flatnonzero(keys == 0)
        assert (digits[zeros] == digits[zeros[0]]).all(), "-0.0 and +0.0 must have equal digits"
