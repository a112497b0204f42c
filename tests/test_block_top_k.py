"""coop.block.top_k against NumPy's stable sorts: every key type (NaNs, -0.0, the
extremes), block shapes, k from none to more than the tile, largest and smallest,
sorted and unsorted, ties, partial tiles, values (the original positions, which shows
where every key went, and a tuple of value arrays), a caller's temp_storage. The
arrangement is checked exactly: unsorted, the selected keys in tile order (the
earliest of those tied with the k-th best), then the others in tile order, then the
positions past valid_items in tile order; sorted, the stable sort best first (the positions
past valid_items after the others, sorted the same way). Misuse is in the table
of tests/codegen_cases."""

import numpy as np
import pytest
from numba import cuda

import coop
from helpers import (
    FULL_MATRIX,
    INTEGER_DTYPES,
    STATIC_SHARED_BYTES,
    assert_equal_exact,
    jit_any_block,
    launch_shape,
    launch_with_dynamic_shared,
    shape_id,
    size_of,
)
from test_radix_keys import special_keys
from test_radix_sort import digit_keys

KEY_DTYPES = [np.bool_] + INTEGER_DTYPES + [np.float16, np.float32, np.float64]
if FULL_MATRIX:
    SHAPES = [32, 64, 96, 128, 256, 512, 1024, (16, 8), (8, 4, 4)]
    ITEMS = [1, 2, 3, 4, 8, 16]
else:
    SHAPES = [32, 96, (16, 4), (4, 4, 4)]
    ITEMS = [1, 3]


def temp_bytes(key_dtype, shape, n, is_sorted, tuple_values=False):
    return coop.block.top_k.temp_storage_bytes(key_dtype, shape, n, (np.int32, np.float64) if tuple_values else
                                               np.int32, sorted=is_sorted)


def top_k_kernel(shape, n, key_dtype, largest, is_sorted, partial, with_temp_storage=False, tuple_values=False,
                 dynamic=False):
    """``dynamic``: the scratch a dynamic shared temp_storage (past 48 KiB)."""
    T, N, KT = shape, n, key_dtype
    THREADS = size_of(shape)
    TILE = THREADS * n
    TEMP = temp_bytes(key_dtype, shape, n, is_sorted, tuple_values) if with_temp_storage and not dynamic else 0

    @jit_any_block
    def kernel(x, k, valid, out, positions, doubled):
        rank = cuda.threadIdx.x + cuda.threadIdx.y * cuda.blockDim.x + cuda.threadIdx.z * cuda.blockDim.x * cuda.blockDim.y
        base = cuda.blockIdx.x * TILE
        keys = cuda.local.array(N, KT)
        values = cuda.local.array(N, np.int32)
        twice = cuda.local.array(N, np.float64)
        for i in range(N):
            keys[i] = x[base + rank * N + i]
            values[i] = rank * N + i
            twice[i] = 2.0 * (rank * N + i)
        if dynamic:
            coop.block.top_k(keys, k[0], values, threads=T, items_per_thread=N, largest=largest, sorted=is_sorted,
                             temp_storage=cuda.shared.array(0, np.uint8))
        elif with_temp_storage:
            temp = cuda.shared.array(TEMP, np.uint8, alignment=8)
            if tuple_values:
                coop.block.top_k(keys, k[0], (values, twice), threads=T, items_per_thread=N, largest=largest,
                                 sorted=is_sorted, valid_items=valid[0], temp_storage=temp)
            else:
                coop.block.top_k(keys, k[0], values, threads=T, items_per_thread=N, largest=largest,
                                 sorted=is_sorted, valid_items=valid[0], temp_storage=temp)
        elif partial:
            coop.block.top_k(keys, k[0], values, threads=T, items_per_thread=N, largest=largest, sorted=is_sorted,
                             valid_items=valid[0])
        else:
            coop.block.top_k(keys, k[0], values, threads=T, items_per_thread=N, largest=largest, sorted=is_sorted)
        for i in range(N):
            out[base + rank * N + i] = keys[i]
            positions[base + rank * N + i] = values[i]
            doubled[base + rank * N + i] = twice[i]

    return kernel


def expected_arrangement(tile_keys, k, valid, largest, is_sorted, past_sorted=False):
    """The tile positions in the order top_k leaves them (``past_sorted``: sorted, the
    positions past ``valid`` sorted the same way, as coop.block.top_k's; else in tile
    order, as coop.warp.top_k's)."""
    tile = tile_keys.size
    width = 8 if tile_keys.dtype == np.bool_ else tile_keys.dtype.itemsize * 8
    key = digit_keys(tile_keys, 0, width, largest)  # (ascending: best first)
    order = np.argsort(key[:valid], kind="stable")
    past = np.arange(valid, tile)
    if is_sorted:
        return np.concatenate([order, valid + np.argsort(key[valid:], kind="stable") if past_sorted else past])
    wanted = max(min(k, valid), 0)
    if wanted in (0, valid):
        return np.arange(tile)
    selected = np.sort(order[:wanted])
    return np.concatenate([selected, np.setdiff1d(np.arange(valid), selected), past])


def check_top_k(key_dtype, shape, n, ks, largest=True, is_sorted=False, valids=(None,), keys_of=None,
                with_temp_storage=False, tuple_values=False, seed=0):
    rng = np.random.default_rng(seed)
    tile = size_of(shape) * n
    if keys_of is None:
        x = np.concatenate([special_keys(key_dtype, rng, tile) for _ in range(2)])[:2 * tile]
        rng.shuffle(x)
    else:
        x = keys_of(rng, 2 * tile)
    partial = any(v is not None for v in valids)
    nbytes = temp_bytes(key_dtype, shape, n, is_sorted)
    dynamic = nbytes > STATIC_SHARED_BYTES  # (more than a kernel's static shared memory: a dynamic temp_storage)
    assert not (dynamic and (partial or with_temp_storage)), "a test of a big tile takes the whole tile"
    kernel = top_k_kernel(shape, n, key_dtype, largest, is_sorted, partial, with_temp_storage, tuple_values, dynamic)
    for valid in valids:
        for k in ks:
            out, positions, doubled = np.zeros_like(x), np.zeros(x.size, np.int32), np.zeros(x.size)
            args = (x, np.array([k], np.int64), np.array([tile if valid is None else valid]), out, positions, doubled)
            if dynamic:
                launch_with_dynamic_shared(kernel, 2, launch_shape(shape), nbytes, *args)
            else:
                kernel[2, launch_shape(shape)](*args)
            for b in range(2):
                tile_keys = x[b * tile:(b + 1) * tile]
                arranged = expected_arrangement(tile_keys, k, tile if valid is None else min(valid, tile), largest,
                                                is_sorted, past_sorted=True)
                what = (f"block {b}, k={k}, valid_items={valid}, {'largest' if largest else 'smallest'}, "
                        f"{'sorted' if is_sorted else 'unsorted'}")
                got_positions = positions[b * tile:(b + 1) * tile]
                assert_equal_exact(got_positions, arranged.astype(np.int32), f"{what}: positions")
                got, expected = out[b * tile:(b + 1) * tile], tile_keys[positions[b * tile:(b + 1) * tile]]
                if got.dtype.kind == "f":  # bit for bit: NaN payloads, -0.0 against +0.0
                    unsigned = np.dtype("uint%d" % (got.dtype.itemsize * 8))
                    got, expected = got.view(unsigned), expected.view(unsigned)
                assert_equal_exact(got, expected, f"{what}: keys moved with their positions")
                if tuple_values:
                    assert_equal_exact(doubled[b * tile:(b + 1) * tile], 2.0 * positions[b * tile:(b + 1) * tile],
                                       f"{what}: second values")


@pytest.mark.parametrize("key_dtype", [pytest.param(d, id=np.dtype(d).name) for d in KEY_DTYPES])
def test_top_k_every_key_type(key_dtype):
    check_top_k(key_dtype, 64, 3, ks=(0, 1, 17, 191, 192, 500))
    check_top_k(key_dtype, 64, 3, ks=(5, 100), largest=False, seed=1)
    check_top_k(key_dtype, 64, 3, ks=(9,), is_sorted=True, seed=2)


@pytest.mark.parametrize("n", ITEMS)
@pytest.mark.parametrize("shape", SHAPES, ids=shape_id)
def test_top_k_shapes(shape, n):
    tile = size_of(shape) * n
    for largest in (True, False):
        check_top_k(np.float32 if largest else np.int32, shape, n, ks=(1, max(tile // 8, 1), tile - 1),
                    largest=largest)


@pytest.mark.parametrize("key_dtype", [np.uint8, np.int32, np.float64] if FULL_MATRIX else [np.int32])
def test_top_k_ties(key_dtype):
    """Few distinct keys: the k-th best is tied with many, and the earliest ties are chosen
    (and every digit after the first is tied too: the passes run to the last digit)."""
    def few_values(rng, size):
        return rng.integers(0, 4, size).astype(key_dtype)

    for largest in (True, False):
        check_top_k(key_dtype, 96, 2, ks=(1, 2, 50, 100, 191), largest=largest, keys_of=few_values)


@pytest.mark.parametrize("is_sorted", [False, True])
def test_top_k_partial_tiles(is_sorted):
    check_top_k(np.float32, 64, 3, ks=(0, 3, 40, 150), is_sorted=is_sorted, valids=(0, 1, 70, 191, 192, 400))
    check_top_k(np.int16, (8, 4, 2), 2, ks=(7,), largest=False, is_sorted=is_sorted, valids=(33, 100))


@pytest.mark.parametrize("is_sorted", [False, True])
def test_top_k_temp_storage_and_value_tuples(is_sorted):
    check_top_k(np.int64, 64, 2, ks=(10,), is_sorted=is_sorted, valids=(100,), with_temp_storage=True)
    check_top_k(np.float32, 32, 4, ks=(3, 64), is_sorted=is_sorted, valids=(128, 90), with_temp_storage=True,
                tuple_values=True)


@pytest.mark.parametrize("seed", range(8 if FULL_MATRIX else 2))
def test_random_configurations(seed):
    rng = np.random.default_rng(1000 + seed)
    shapes = [32, 64, 96, 128, (16, 4), (4, 4, 4)] + ([256, (32, 8)] if FULL_MATRIX else [])
    shape = shapes[rng.integers(len(shapes))]
    n = int(rng.integers(1, 6))
    tile = size_of(shape) * n
    key_dtype = KEY_DTYPES[rng.integers(len(KEY_DTYPES))]
    ks = tuple(int(v) for v in rng.integers(-1, tile + 2, 3))
    valids = (None,) if rng.random() < 0.5 else tuple(int(v) for v in rng.integers(0, tile + 2, 2))
    check_top_k(key_dtype, shape, n, ks=ks, largest=bool(rng.random() < 0.5), is_sorted=bool(rng.random() < 0.25),
                valids=valids, seed=seed)
