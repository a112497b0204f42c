"""coop.device.segmented_sort against NumPy's stable sorts, segment by segment: key types
with their special values (both zeros, infinities, NaNs of both signs), keys and pairs,
ascending and descending, in place and out of place, empty segments, segments of one
tile and of several (the sort through global memory, an odd and an even number of
passes), keys outside every segment; bad input raised before any launch."""

import numpy as np
import pytest

import coop
from numba import cuda

from helpers import FULL_MATRIX, ON_GPU, assert_equal_exact, dtype_id
from test_device_sort import keys_of
from test_radix_sort import digit_keys
from test_radix_keys import KEY_DTYPES

from coop.device.segmented_sort import THREADS, tile_classes

SORT_DTYPES = KEY_DTYPES if FULL_MATRIX else [np.bool_, np.int8, np.uint16, np.float32, np.int64, np.float64]


def tile_of(dtype, value_dtype=np.int32):
    """The largest segment a block sorts in shared memory."""
    return THREADS * tile_classes(np.dtype(dtype), None if value_dtype is None else np.dtype(value_dtype))[1][-1]


def segment_lengths(dtype, seed):
    """Empty segments, one item, each warp and block tile size (keys, and with int32
    values) and one more, several tiles; on the GPU also many small segments."""
    tile = tile_of(dtype)
    lengths = [0, 1, tile - 1, tile, tile + 1, 0, 3 * tile + 5, 7]
    for value_dtype in (None, np.dtype(np.int32)):
        warp, block = tile_classes(np.dtype(dtype), value_dtype)
        for size in [32 * items for items in warp] + [THREADS * items for items in block]:
            lengths += [length for length in (size, size + 1) if length not in lengths]  # (each class once)
    if ON_GPU:
        lengths += list(np.random.default_rng(seed).integers(0, 3 * tile, 300))
    return np.array(lengths)


def check_segmented_sort(keys, offsets, descending=False, with_values=True, out_of_place=False, what=""):
    n = keys.size
    values = np.arange(n, dtype=np.int32)
    d_keys, d_offsets = cuda.to_device(keys), cuda.to_device(offsets)
    d_values = cuda.to_device(values) if with_values else None
    outputs = {}
    if out_of_place:
        outputs["d_keys_out"] = cuda.to_device(np.zeros_like(keys))
        if with_values:
            outputs["d_values_out"] = cuda.to_device(np.full(n, -1, np.int32))
    coop.device.segmented_sort(d_keys, d_offsets, d_values, descending=descending, **outputs)
    # outside every segment: the input's items in place, nothing written out of place
    expected_keys = np.zeros_like(keys) if out_of_place else keys.copy()
    expected_values = np.full(n, -1, np.int32) if out_of_place else values.copy()
    width = 8 if keys.dtype == np.bool_ else keys.dtype.itemsize * 8
    for begin, end in zip(offsets[:-1], offsets[1:]):
        order = begin + np.argsort(digit_keys(keys[begin:end], 0, width, descending), kind="stable")
        expected_keys[begin:end] = keys[order]
        expected_values[begin:end] = order
    label = (f"segmented_sort({keys.dtype}, descending={descending}{', pairs' if with_values else ''}"
             f"{', out of place' if out_of_place else ''}{what})")

    def bits(array):  # (keys compared bit for bit, NaNs and -0.0 included)
        return array.view(f"u{array.dtype.itemsize}")

    assert_equal_exact(bits(outputs.get("d_keys_out", d_keys).copy_to_host()), bits(expected_keys), label + " keys")
    if with_values:
        got = outputs.get("d_values_out", d_values).copy_to_host()
        assert_equal_exact(got, expected_values, label + " values")


@pytest.mark.parametrize("descending", [False, True])
@pytest.mark.parametrize("dtype", SORT_DTYPES, ids=dtype_id)
def test_keys_and_pairs(dtype, descending):
    lengths = segment_lengths(dtype, 3)
    offsets = np.concatenate(([0], np.cumsum(lengths))).astype(np.int64)
    keys = keys_of(np.dtype(dtype), int(offsets[-1]) + 5, 17)  # (5 keys past the last segment)
    check_segmented_sort(keys, offsets, descending, with_values=True)
    if ON_GPU or descending:  # (on the simulator, keys alone sorted descending only: CI's time)
        check_segmented_sort(keys, offsets, descending, with_values=False)


@pytest.mark.parametrize("with_values", [False, True])
@pytest.mark.parametrize("dtype", [np.uint8, np.int16], ids=dtype_id)
def test_out_of_place(dtype, with_values):
    """One pass (8-bit keys: the first writes the output) and two (the first writes the
    temporary); int32 offsets, segments apart from the start of the keys."""
    tile = tile_of(dtype, np.int32 if with_values else None)
    lengths = np.array([2 * tile + 3, 0, tile, 5])
    offsets = (np.concatenate(([0], np.cumsum(lengths))) + 4).astype(np.int32)
    keys = keys_of(np.dtype(dtype), int(offsets[-1]) + 3, 5)
    check_segmented_sort(keys, offsets, descending=False, with_values=with_values, out_of_place=True)
    check_segmented_sort(keys, offsets, descending=True, with_values=with_values, out_of_place=True)


def test_odd_passes_in_place_copy_back():
    """8-bit keys in place: their one pass writes the temporary, copied back."""
    tile = tile_of(np.int8)
    offsets = np.array([0, 4 * tile + 1], np.int64)
    check_segmented_sort(keys_of(np.dtype(np.int8), 4 * tile + 1, 9), offsets, with_values=True)


def test_no_segments():
    keys = np.arange(10, dtype=np.int32)[::-1].copy()
    d_keys = cuda.to_device(keys)
    coop.device.segmented_sort(d_keys, cuda.to_device(np.zeros(1, np.int64)))
    assert_equal_exact(d_keys.copy_to_host(), keys, "keys outside every segment")


def test_bad_input():
    keys = cuda.to_device(np.zeros(8, np.int32))
    offsets = cuda.to_device(np.array([0, 8], np.int64))
    with pytest.raises(TypeError, match=r"coop.device.segmented_sort: d_keys must hold radix keys .* got complex64"):
        coop.device.segmented_sort(cuda.to_device(np.zeros(8, np.complex64)), offsets)
    with pytest.raises(TypeError, match="coop.device.segmented_sort: offsets must be int32 or int64, got float32"):
        coop.device.segmented_sort(keys, cuda.to_device(np.zeros(2, np.float32)))
    with pytest.raises(ValueError, match="coop.device.segmented_sort: offsets must hold at least one offset"):
        coop.device.segmented_sort(keys, cuda.to_device(np.zeros(0, np.int64)))
    with pytest.raises(ValueError, match="coop.device.segmented_sort: d_values_out is given without d_keys_out"):
        coop.device.segmented_sort(keys, offsets, keys, d_values_out=keys)
    with pytest.raises(TypeError, match="coop.device.segmented_sort: descending must be a bool, got 1"):
        coop.device.segmented_sort(keys, offsets, descending=1)
    with pytest.raises(TypeError, match="coop.device.segmented_sort: d_keys_out's dtype int64 differs from d_keys'"):
        coop.device.segmented_sort(keys, offsets, d_keys_out=cuda.to_device(np.zeros(8, np.int64)))
    with pytest.raises(TypeError, match="coop.device.segmented_sort: d_keys"):
        coop.device.segmented_sort(np.zeros(8, np.int32), offsets)


@pytest.mark.parametrize("seed", range(16 if ON_GPU else 2))
def test_random_segments(seed):
    """A random key type, direction and form, over segment lengths spread evenly over
    orders of magnitude up to three block tiles (one at least for each of the warps, a
    block's tiles and the passes), the segments starting past the first keys."""
    rng = np.random.default_rng(1000 + seed)
    dtype = np.dtype(SORT_DTYPES[rng.integers(len(SORT_DTYPES))])
    descending, with_values, out_of_place = (bool(b) for b in rng.integers(0, 2, 3))
    value_dtype = np.dtype(np.int32) if with_values else None
    warp_tile, tile = (size * items[-1] for size, items in zip((32, THREADS), tile_classes(dtype, value_dtype)))
    segments = int(rng.integers(100, 400)) if ON_GPU else 9
    lengths = np.exp(rng.uniform(0, np.log(3 * tile), segments)).astype(np.int64)
    lengths[:3] = rng.integers(0, warp_tile + 1), rng.integers(warp_tile + 1, tile + 1), rng.integers(tile + 1, 3 * tile)
    rng.shuffle(lengths)
    offsets = (np.concatenate(([0], np.cumsum(lengths))) + rng.integers(0, 9)).astype(np.int64)
    keys = keys_of(dtype, int(offsets[-1]) + 3, seed)
    check_segmented_sort(keys, offsets, descending, with_values, out_of_place, what=f" (seed {seed})")
