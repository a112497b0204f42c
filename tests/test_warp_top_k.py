"""coop.warp.top_k against NumPy's stable sorts: every key type (NaNs, -0.0, the
extremes), logical warp widths, k from none to more than the tile, largest and
smallest, sorted and unsorted, ties, partial tiles, values (the original positions,
which shows where every key went, and a tuple of value arrays), a caller's
temp_storage. The arrangement is checked exactly, for every logical warp's tile:
unsorted, the selected keys in tile order (the earliest of those tied with the k-th
best), then the others in tile order, then the positions past valid_items, where they
were; sorted, the stable sort best first, the positions past valid_items last, in
order. Misuse is in the table of tests/codegen_cases."""

import numpy as np
import pytest
from numba import cuda

import coop
from helpers import FULL_MATRIX, INTEGER_DTYPES, assert_equal_exact
from test_block_top_k import expected_arrangement
from test_radix_keys import special_keys

KEY_DTYPES = [np.bool_] + INTEGER_DTYPES + [np.float16, np.float32, np.float64]
if FULL_MATRIX:
    WIDTHS = [1, 2, 4, 8, 16, 32]
    ITEMS = [1, 2, 3, 4, 8, 16]
else:
    WIDTHS = [1, 4, 32]
    ITEMS = [1, 3]


def top_k_kernel(threads, width, n, key_dtype, largest, is_sorted, partial, with_temp_storage=False,
                 tuple_values=False):
    T, W, N, KT = threads, width, n, key_dtype
    TILE = W * N
    TEMP = coop.warp.top_k.temp_storage_bytes(key_dtype, threads, n, width=width, sorted=is_sorted,
                                              value_dtype=(np.int32, np.float64) if tuple_values else np.int32)

    @cuda.jit
    def kernel(x, k, valid, out, positions, doubled):
        lane = cuda.threadIdx.x % W
        base = cuda.blockIdx.x * T * N + cuda.threadIdx.x // W * TILE
        keys = cuda.local.array(N, KT)
        values = cuda.local.array(N, np.int32)
        twice = cuda.local.array(N, np.float64)
        for i in range(N):
            keys[i] = x[base + lane * N + i]
            values[i] = lane * N + i
            twice[i] = 2.0 * (lane * N + i)
        if with_temp_storage:
            temp = cuda.shared.array(TEMP, np.uint8, alignment=8)
            if tuple_values:
                coop.warp.top_k(keys, k[0], (values, twice), threads=T, items_per_thread=N, width=W, largest=largest,
                                sorted=is_sorted, valid_items=valid[0], temp_storage=temp)
            else:
                coop.warp.top_k(keys, k[0], values, threads=T, items_per_thread=N, width=W, largest=largest,
                                sorted=is_sorted, valid_items=valid[0], temp_storage=temp)
        elif partial:
            coop.warp.top_k(keys, k[0], values, threads=T, items_per_thread=N, width=W, largest=largest,
                            sorted=is_sorted, valid_items=valid[0])
        else:
            coop.warp.top_k(keys, k[0], values, threads=T, items_per_thread=N, width=W, largest=largest,
                            sorted=is_sorted)
        for i in range(N):
            out[base + lane * N + i] = keys[i]
            positions[base + lane * N + i] = values[i]
            doubled[base + lane * N + i] = twice[i]

    return kernel


def check_top_k(key_dtype, threads, width, n, ks, largest=True, is_sorted=False, valids=(None,), keys_of=None,
                with_temp_storage=False, tuple_values=False, seed=0):
    rng = np.random.default_rng(seed)
    tile = width * n
    size = 2 * threads * n  # (two blocks)
    if keys_of is None:
        x = np.concatenate([special_keys(key_dtype, rng, size) for _ in range(2)])[:size]
        rng.shuffle(x)
    else:
        x = keys_of(rng, size)
    partial = any(v is not None for v in valids)
    kernel = top_k_kernel(threads, width, n, key_dtype, largest, is_sorted, partial, with_temp_storage, tuple_values)
    for valid in valids:
        for k in ks:
            out, positions, doubled = np.zeros_like(x), np.zeros(size, np.int32), np.zeros(size)
            kernel[2, threads](x, np.array([k], np.int64), np.array([tile if valid is None else valid]), out,
                               positions, doubled)
            for w in range(size // tile):
                part = slice(w * tile, (w + 1) * tile)
                tile_keys = x[part]
                arranged = expected_arrangement(tile_keys, k, tile if valid is None else min(max(valid, 0), tile),
                                                largest, is_sorted)
                what = (f"warp tile {w}, k={k}, valid_items={valid}, {'largest' if largest else 'smallest'}, "
                        f"{'sorted' if is_sorted else 'unsorted'}")
                assert_equal_exact(positions[part], arranged.astype(np.int32), f"{what}: positions")
                got, expected = out[part], tile_keys[positions[part]]
                if got.dtype.kind == "f":  # bit for bit: NaN payloads, -0.0 against +0.0
                    unsigned = np.dtype("uint%d" % (got.dtype.itemsize * 8))
                    got, expected = got.view(unsigned), expected.view(unsigned)
                assert_equal_exact(got, expected, f"{what}: keys moved with their positions")
                if tuple_values:
                    assert_equal_exact(doubled[part], 2.0 * positions[part], f"{what}: second values")


@pytest.mark.parametrize("key_dtype", [pytest.param(d, id=np.dtype(d).name) for d in KEY_DTYPES])
def test_top_k_every_key_type(key_dtype):
    check_top_k(key_dtype, 64, 32, 3, ks=(0, 1, 17, 95, 96, 500))
    check_top_k(key_dtype, 64, 16, 3, ks=(5, 40), largest=False, seed=1)
    check_top_k(key_dtype, 64, 32, 3, ks=(9,), is_sorted=True, seed=2)
    check_top_k(key_dtype, 32, 8, 2, ks=(3,), largest=False, is_sorted=True, seed=3)


@pytest.mark.parametrize("n", ITEMS)
@pytest.mark.parametrize("width", WIDTHS)
def test_top_k_widths(width, n):
    tile = width * n
    for largest in (True, False):
        check_top_k(np.float32 if largest else np.int32, 64, width, n, ks=(1, max(tile // 8, 1), tile - 1),
                    largest=largest)


@pytest.mark.parametrize("key_dtype", [np.uint8, np.int32, np.float64] if FULL_MATRIX else [np.int32])
def test_top_k_ties(key_dtype):
    """Few distinct keys: the k-th best is tied with many, and the earliest ties are chosen
    (every bit after the first is tied too: the select runs to the last bit)."""
    def few_values(rng, size):
        return rng.integers(0, 4, size).astype(key_dtype)

    for largest in (True, False):
        check_top_k(key_dtype, 64, 32, 2, ks=(1, 2, 20, 40, 63), largest=largest, keys_of=few_values)


@pytest.mark.parametrize("is_sorted", [False, True])
def test_top_k_partial_tiles(is_sorted):
    check_top_k(np.float32, 64, 32, 3, ks=(0, 3, 40, 150), is_sorted=is_sorted, valids=(-1, 0, 1, 70, 95, 96, 400))
    check_top_k(np.int16, 32, 8, 2, ks=(7,), largest=False, is_sorted=is_sorted, valids=(3, 12))


@pytest.mark.parametrize("is_sorted", [False, True])
def test_top_k_temp_storage_and_value_tuples(is_sorted):
    check_top_k(np.int64, 64, 32, 2, ks=(10,), is_sorted=is_sorted, valids=(50,), with_temp_storage=True)
    check_top_k(np.float32, 32, 8, 4, ks=(3, 31), is_sorted=is_sorted, valids=(32, 20), with_temp_storage=True,
                tuple_values=True)


@pytest.mark.parametrize("seed", range(8 if FULL_MATRIX else 2))
def test_random_configurations(seed):
    rng = np.random.default_rng(2000 + seed)
    width = WIDTHS[rng.integers(len(WIDTHS))]
    threads = width * int(rng.integers(1, 4)) if width < 32 else 32 * int(rng.integers(1, 3))
    n = int(rng.integers(1, 6))
    tile = width * n
    key_dtype = KEY_DTYPES[rng.integers(len(KEY_DTYPES))]
    ks = tuple(int(v) for v in rng.integers(-1, tile + 2, 3))
    valids = (None,) if rng.random() < 0.5 else tuple(int(v) for v in rng.integers(0, tile + 2, 2))
    check_top_k(key_dtype, threads, width, n, ks=ks, largest=bool(rng.random() < 0.5),
                is_sorted=bool(rng.random() < 0.25), valids=valids, seed=seed)
