"""coop.block.shuffle against NumPy: offset, rotate, up and down for several dtypes
(tuples too), block shapes (1-, 2- and 3-D, not only multiples of 32), items per thread,
with and without a constant ``threads``, with ``temp_storage``, and back-to-back calls
without barriers. What CUB leaves unchanged (offset's out-of-range threads, thread 0's
first item after up, the last thread's last item after down) must be unchanged."""

import functools

import numpy as np
import pytest
from numba import cuda

import coop
from helpers import ALL_DTYPES, FULL_MATRIX, ON_GPU, assert_equal_exact, integer_valued
from test_block import global_rank, jit_any_block, size

BLOCKS = 3 if ON_GPU else 2
if FULL_MATRIX:
    SHAPES = [1, 32, 33, 64, 500, 1024, (16, 4), (8, 8, 4)]
    DTYPES = ALL_DTYPES
    ITEMS = [1, 2, 3, 4, 7, 8, 16]
else:
    SHAPES = [33, 64, (16, 4)]
    DTYPES = [np.int8, np.int32, np.float64, np.complex64]
    ITEMS = [1, 3]


def sentinel(dtype):
    return np.asarray(99 if np.dtype(dtype) != np.bool_ else True).astype(dtype)[()]


def distances(threads):
    """Offsets within, at and past the block's edges, both ways."""
    return sorted({0, 1, -1, 3, -5, threads - 1, 1 - threads, threads, -threads, threads + 2})


def rotations(threads):
    return sorted({0, 1, -1, threads - 1, 1 - threads, threads // 2, -(threads // 3)})


@functools.lru_cache(maxsize=None)
def value_kernel(dtype, threads):
    """threads: the constant threads= (a kernel per block size), or None."""
    T = threads

    @jit_any_block
    def kernel(x, offsets, rotate_by, out_offset, out_rotate):
        g = global_rank()
        for k in range(len(offsets)):
            out_offset[k, g] = coop.block.shuffle.offset(x[g], offsets[k], threads=T)
        for k in range(len(rotate_by)):
            out_rotate[k, g] = coop.block.shuffle.rotate(x[g], rotate_by[k], threads=T)

    return kernel


@pytest.mark.parametrize("constant_threads", [True, False], ids=["threads", "no-threads"])
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_offset_and_rotate(dtype, constant_threads):
    rng = np.random.default_rng(1)
    for shape in SHAPES if FULL_MATRIX or dtype == np.int32 else SHAPES[:1]:
        threads = size(shape)
        x = integer_valued(dtype, BLOCKS * threads, rng, -50, 50)
        offsets = np.array(distances(threads), np.int32)
        rotate_by = np.array(rotations(threads), np.int64)
        out_offset = np.zeros((len(offsets), BLOCKS * threads), dtype)
        out_rotate = np.zeros((len(rotate_by), BLOCKS * threads), dtype)
        kernel = value_kernel(dtype, threads if constant_threads else None)
        kernel[BLOCKS, shape](x, offsets, rotate_by, out_offset, out_rotate)
        ranks = np.arange(threads)
        for b in range(BLOCKS):
            block = x[b * threads : (b + 1) * threads]
            mine = slice(b * threads, (b + 1) * threads)
            for k, d in enumerate(offsets):
                source = ranks + d
                inside = (source >= 0) & (source < threads)
                expected = np.where(inside, block[np.clip(source, 0, threads - 1)], block)
                assert_equal_exact(out_offset[k, mine], expected, f"offset {d}, shape {shape}, block {b}")
            for k, d in enumerate(rotate_by):
                expected = block[(ranks + d) % threads]
                assert_equal_exact(out_rotate[k, mine], expected, f"rotate {d}, shape {shape}, block {b}")


@functools.lru_cache(maxsize=None)
def items_kernel(dtype, n, threads):
    N, DT, T = n, dtype, threads

    @jit_any_block
    def kernel(x, up_out, up_in_place, down_out, down_in_place, ends, fill):
        g = global_rank()
        items = cuda.local.array(N, DT)
        shifted = cuda.local.array(N, DT)
        for i in range(N):
            items[i] = x[g * N + i]
            shifted[i] = fill[0]
        ends[0, g] = coop.block.shuffle.up(items, shifted, threads=T)
        for i in range(N):
            up_out[g * N + i] = shifted[i]
            shifted[i] = fill[0]
        ends[1, g] = coop.block.shuffle.down(items, shifted, threads=T)
        for i in range(N):
            down_out[g * N + i] = shifted[i]
        ends[2, g] = coop.block.shuffle.up(items, items, threads=T)
        for i in range(N):
            up_in_place[g * N + i] = items[i]
            items[i] = x[g * N + i]
        ends[3, g] = coop.block.shuffle.down(items, items, threads=T)
        for i in range(N):
            down_in_place[g * N + i] = items[i]

    return kernel


def items_cases():
    cases = []
    for dtype in DTYPES:
        for n in ITEMS if dtype in (np.int32, np.float64) else ITEMS[-1:] if not FULL_MATRIX else [1, 3, 8]:
            for constant_threads in (True, False):
                label = f"{np.dtype(dtype).name}-items{n}-{'threads' if constant_threads else 'no-threads'}"
                cases.append(pytest.param(dtype, n, constant_threads, id=label))
    return cases


@pytest.mark.parametrize("dtype,n,constant_threads", items_cases())
def test_up_and_down(dtype, n, constant_threads):
    rng = np.random.default_rng(n)
    fill = np.array([sentinel(dtype)], dtype)
    main_dtype = dtype in ((np.int32, np.float64) if FULL_MATRIX else (np.int32,))
    for shape in SHAPES if main_dtype or not constant_threads else SHAPES[-1:]:
        threads = size(shape)
        tile = threads * n
        x = integer_valued(dtype, BLOCKS * tile, rng, -50, 50)
        outs = [np.zeros(BLOCKS * tile, dtype) for _ in range(4)]
        ends = np.zeros((4, BLOCKS * threads), dtype)
        items_kernel(dtype, n, threads if constant_threads else None)[BLOCKS, shape](x, *outs, ends, fill)
        up_out, up_in_place, down_out, down_in_place = outs
        where = f"shape {shape}"
        for b in range(BLOCKS):
            block = x[b * tile : (b + 1) * tile]
            mine = slice(b * tile, (b + 1) * tile)
            # up: tile item k gets item k-1; thread 0's first item unchanged
            expected = np.concatenate([[sentinel(dtype)], block[:-1]]).astype(dtype)
            assert_equal_exact(up_out[mine], expected, f"up, {where}, block {b}")
            expected[0] = block[0]
            assert_equal_exact(up_in_place[mine], expected, f"up in place, {where}, block {b}")
            # down: tile item k gets item k+1; the last thread's last item unchanged
            expected = np.concatenate([block[1:], [sentinel(dtype)]]).astype(dtype)
            assert_equal_exact(down_out[mine], expected, f"down, {where}, block {b}")
            expected[-1] = block[-1]
            assert_equal_exact(down_in_place[mine], expected, f"down in place, {where}, block {b}")
            threads_of_block = slice(b * threads, (b + 1) * threads)
            for row, value, what in ((0, block[-1], "block_suffix"), (1, block[0], "block_prefix"),
                                     (2, block[-1], "block_suffix in place"), (3, block[0], "block_prefix in place")):
                assert_equal_exact(ends[row, threads_of_block], np.full(threads, value), f"{what}, {where}, block {b}")


def test_tuples_and_shared_temp_storage():
    """(value, index) tuples, and one temp_storage array shared with a block scan."""
    T = 64
    BYTES = max(
        coop.block.shuffle.offset.temp_storage_bytes((np.float32, np.int32), T),
        coop.block.exclusive_sum.temp_storage_bytes(np.int64, T),
    )

    @jit_any_block
    def kernel(x, values, indices, sums):
        temp = cuda.shared.array(BYTES, np.uint8, alignment=8)
        g = global_rank()
        r = cuda.threadIdx.x
        v, i = coop.block.shuffle.offset((x[g], np.int32(r)), 2, threads=T, temp_storage=temp)
        sums[g] = coop.block.exclusive_sum(np.int64(i), threads=T, temp_storage=temp)
        v, i = coop.block.shuffle.rotate((v, i), -1, threads=T, temp_storage=temp)
        values[g] = v
        indices[g] = i

    rng = np.random.default_rng(4)
    x = integer_valued(np.float32, BLOCKS * T, rng)
    values, indices, sums = np.zeros(BLOCKS * T, np.float32), np.zeros(BLOCKS * T, np.int32), np.zeros(BLOCKS * T, np.int64)
    kernel[BLOCKS, T](x, values, indices, sums)
    ranks = np.arange(T)
    shifted_index = np.where(ranks + 2 < T, ranks + 2, ranks)  # offset 2: the last two keep their own
    expected_index = shifted_index[(ranks - 1) % T]
    for b in range(BLOCKS):
        mine = slice(b * T, (b + 1) * T)
        assert_equal_exact(indices[mine], expected_index, f"tuple index, block {b}")
        assert_equal_exact(values[mine], x[mine][expected_index], f"tuple value, block {b}")
        assert_equal_exact(sums[mine], np.cumsum(shifted_index) - shifted_index, f"shared scan, block {b}")


def test_consecutive_calls_need_no_barrier():
    """Chains of shuffles (same and different specialisations) with no syncthreads."""
    T = 96

    @jit_any_block
    def kernel(x, out):
        g = global_rank()
        v = x[g]
        for _ in range(3):
            v = coop.block.shuffle.rotate(v, 1, threads=T) + coop.block.shuffle.offset(v, -1)
            v = coop.block.shuffle.rotate(v, 5)
        out[g] = v

    x = (np.arange(T, dtype=np.int64) * 7) % 23
    out = np.zeros_like(x)
    kernel[1, T](x, out)
    ranks = np.arange(T)
    expected = x.copy()
    for _ in range(3):
        left = np.where(ranks - 1 >= 0, expected[np.clip(ranks - 1, 0, T - 1)], expected)
        expected = expected[(ranks + 1) % T] + left
        expected = expected[(ranks + 5) % T]
    assert_equal_exact(out, expected, "chained shuffles")
