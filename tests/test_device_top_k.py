"""coop.device.top_k against NumPy: key types with their special values (both zeros,
infinities, NaNs of both signs) and many ties, largest and smallest, keys and pairs,
every k from none to all, inputs whose keys share all but their last digits (the
buffers of candidates), caller's temporary storage, calls one after another on the kept
state; bad input raised before any launch. The output is in no particular order and ties
with the k-th best may be any of them, so the checks are: the selected keys are as good
as the k best (compared by the sort's order), and each value is its own key's."""

import sys

import numpy as np
import pytest

import coop
from numba import cuda

from helpers import FULL_MATRIX, ON_GPU, dtype_id
from test_device_sort import keys_of
from test_radix_sort import digit_keys
from test_radix_keys import KEY_DTYPES

TOP_K_DTYPES = KEY_DTYPES if FULL_MATRIX else [np.bool_, np.int8, np.uint16, np.float32, np.int64, np.float64]
N = 5000 if ON_GPU else 300


def order_key(keys, largest):
    """What the selection orders by, best first: the ordered bits, -0.0 as +0.0."""
    width = 8 if keys.dtype == np.bool_ else keys.dtype.itemsize * 8
    return digit_keys(keys, 0, width, largest)


def check_top_k(keys, k, largest=True, with_values=True, temp_storage=False, what=""):
    n = keys.size
    selected = min(k, n)
    d_keys = cuda.to_device(keys)
    d_out = cuda.to_device(np.zeros(n + 3, keys.dtype))
    args = {}
    if with_values:
        args = {"d_values": cuda.to_device(np.arange(n, dtype=np.int64)),
                "d_values_out": cuda.to_device(np.full(n + 3, -1, np.int64))}
    if temp_storage:
        size = coop.device.temp_storage_bytes(coop.device.top_k, d_keys, d_out, k, largest=largest, **args)
        args["temp_storage"] = cuda.device_array(size, np.uint8)
    coop.device.top_k(d_keys, d_out, k, largest=largest, **args)
    label = f"top_k({keys.dtype}, n={n}, k={k}, largest={largest}){what}"
    got = d_out.copy_to_host()
    assert (got[selected:].view(np.uint8) == 0).all(), f"{label}: written past the first k"
    best = np.sort(order_key(keys, largest))[:selected]
    assert (np.sort(order_key(got[:selected], largest)) == best).all(), f"{label}: not the k best keys"
    if with_values:
        values = args["d_values_out"].copy_to_host()
        assert (values[selected:] == -1).all(), f"{label}: values written past the first k"
        where = values[:selected]
        assert np.unique(where).size == selected and (where >= 0).all() and (where < n).all(), \
            f"{label}: the values are not distinct positions"
        bits = f"u{keys.dtype.itemsize}"
        assert (keys[where].view(bits) == got[:selected].view(bits)).all(), f"{label}: a value is not its key's"


@pytest.mark.parametrize("largest", [True, False])
@pytest.mark.parametrize("dtype", TOP_K_DTYPES, ids=dtype_id)
def test_keys_and_pairs(dtype, largest):
    keys = keys_of(np.dtype(dtype), N, 21)
    for k in (1, 7, N // 3, N - 1) if ON_GPU else (7, N // 3):
        check_top_k(keys, k, largest, with_values=True)
    check_top_k(keys, N // 5, largest, with_values=False)


@pytest.mark.parametrize("k", [0, 1, 2, 299, 300, 301, 10**9])
def test_every_k(k):
    """None, one, all but one, all, and past all (the keys copied)."""
    keys = np.random.default_rng(k % 97).permutation(300).astype(np.int32) - 150
    check_top_k(keys, k, largest=True)
    check_top_k(keys, k, largest=False, with_values=False)


@pytest.mark.parametrize("dtype", [np.uint32, np.float64], ids=dtype_id)
def test_shared_leading_digits(dtype):
    """Keys equal but in their last bits (every pass keeps them all as candidates), and
    all keys equal (ties only)."""
    n = N
    rng = np.random.default_rng(5)
    if dtype == np.uint32:
        keys = (np.uint32(0xABCDEF00) + rng.integers(0, 256, n)).astype(np.uint32)
    else:
        keys = (np.full(n, 0x3FF0000000000000, np.uint64) + rng.integers(0, 256, n).astype(np.uint64)).view(np.float64)
    for k in (1, n // 2, n - 1) if ON_GPU else (n // 2,):
        check_top_k(keys, k, largest=True)
        check_top_k(keys, k, largest=False)
    check_top_k(np.full(n, 3, dtype), n // 3, largest=True)


@pytest.mark.parametrize("buffer", ["never", "always"])
@pytest.mark.parametrize("dtype", [np.int16, np.float32, np.uint64], ids=dtype_id)
def test_candidate_buffer(dtype, buffer, monkeypatch):
    """Candidates never fitting the buffer (each pass reads all the keys, the last one
    writes) and always fitting it (each pass after the first reads the buffer); keys
    each alone in its first digit (every candidate is wanted after the first count:
    the select ends a pass early)."""
    top_k_module = sys.modules["coop.device.top_k"]
    monkeypatch.setattr(top_k_module, "candidate_buffer_length", lambda n: 1 if buffer == "never" else n)
    keys = keys_of(np.dtype(dtype), N, 3)
    for k in (7, N // 3) if ON_GPU else (N // 3,):
        check_top_k(keys, k, largest=True)
        check_top_k(keys, k, largest=False, with_values=False)
    width = np.dtype(dtype).itemsize * 8
    top_digits = np.random.default_rng(4).permutation(min(N, 2048)).astype(np.uint64) << np.uint64(width - 11)
    alone = top_digits.astype(f"u{width // 8}").view(dtype)
    for k in (1, alone.size // 2):
        check_top_k(alone, k, largest=True, what=" (keys alone in their first digit)")
        check_top_k(alone, k, largest=False, what=" (keys alone in their first digit)")


@pytest.mark.parametrize("dtype", [np.float32, np.uint64], ids=dtype_id)
def test_many_tiles(dtype):
    """More tiles than the grid's blocks (each block strides over several), and more
    candidates than one block holds after the first digit."""
    n = 3_000_017 if ON_GPU else 2_049
    rng = np.random.default_rng(17)
    keys = (rng.standard_normal(n).astype(np.float32) if dtype == np.float32
            else rng.integers(0, 1 << 20, n, dtype=np.uint64) << np.uint64(40))  # (only the top bits vary)
    for k in (1000, n // 3) if ON_GPU else (100,):
        check_top_k(keys, k, largest=True, with_values=k < n // 3)
    check_top_k(keys, 5, largest=False)


def test_temp_storage_and_repeated_calls():
    """The caller's storage, then coop's kept state for several calls in a row (the
    counters each call leaves at zero for the next)."""
    keys = keys_of(np.dtype(np.float32), N, 8)
    check_top_k(keys, 50, largest=True, temp_storage=True)
    for seed, k in enumerate((3, N // 2, 11, 1)):
        check_top_k(keys_of(np.dtype(np.float32), N, seed), k, largest=bool(seed % 2))


def test_bad_input():
    d_keys = cuda.to_device(np.arange(10, dtype=np.int32))
    d_out = cuda.device_array(10, np.int32)
    with pytest.raises(TypeError, match=r"coop.device.top_k: k must be an int"):
        coop.device.top_k(d_keys, d_out, 2.5)
    with pytest.raises(ValueError, match=r"coop.device.top_k: k must be 0 or more"):
        coop.device.top_k(d_keys, d_out, -1)
    with pytest.raises(ValueError, match=r"coop.device.top_k: d_keys_out is too short"):
        coop.device.top_k(d_keys, cuda.device_array(3, np.int32), 4)
    with pytest.raises(TypeError, match=r"d_keys_out's dtype float32 differs"):
        coop.device.top_k(d_keys, cuda.device_array(10, np.float32), 4)
    with pytest.raises(ValueError, match=r"d_keys_out is d_keys itself"):
        coop.device.top_k(d_keys, d_keys, 4)
    with pytest.raises(ValueError, match=r"d_values and d_values_out go together"):
        coop.device.top_k(d_keys, d_out, 4, d_values=d_keys)
    with pytest.raises(TypeError, match=r"largest must be a bool"):
        coop.device.top_k(d_keys, d_out, 4, largest=1)
