"""Merge sorts (coop.block.merge_sort, coop.warp.merge_sort)."""

import operator

import numpy as np
from numba import cuda
from numba.cuda import types

import coop

from ._registry import SCALARS, case, misuse


# -- merge sorts ----------------------------------------------------------------------------


def block_merge_sort_kernel(dtype, threads, n, with_values, descending):
    T, N = threads, n
    compare = operator.gt if descending else operator.lt

    @cuda.jit
    def kernel(x, out):
        i = cuda.grid(1)
        keys = cuda.local.array(N, dtype)
        values = cuda.local.array(N, np.int32)
        for j in range(N):
            keys[j] = x[i * N + j]
            values[j] = i * N + j
        if with_values:
            coop.block.merge_sort(keys, compare, values, threads=T, items_per_thread=N)
        else:
            coop.block.merge_sort(keys, compare, threads=T, items_per_thread=N)
        for j in range(N):
            out[i * N + j] = keys[j] + values[j]

    return kernel


def warp_merge_sort_kernel(dtype, threads, n, width, partial):
    T, N, W = threads, n, width

    @cuda.jit
    def kernel(x, out):
        i = cuda.grid(1)
        keys = cuda.local.array(N, dtype)
        values = cuda.local.array(N, np.int32)
        for j in range(N):
            keys[j] = x[i * N + j]
            values[j] = i * N + j
        if partial:
            coop.warp.merge_sort(keys, operator.lt, values, threads=T, items_per_thread=N, width=W,
                                 valid_items=x.size % 97, oob_default=x[0])
        else:
            coop.warp.merge_sort(keys, operator.lt, values, threads=T, items_per_thread=N, width=W)
        for j in range(N):
            out[i * N + j] = keys[j] + values[j]

    return kernel


def tuple_merge_sort_kernel(group, threads, n, partial):
    """Tuple keys (int16 high, float32 low), compared as tuples, carrying a tuple of value
    arrays (int32, float64), by the block or by logical warps of 16."""
    T, N = threads, n

    @cuda.jit
    def kernel(x, out):
        i = cuda.grid(1)
        high = cuda.local.array(N, np.int16)
        low = cuda.local.array(N, np.float32)
        positions = cuda.local.array(N, np.int32)
        halves = cuda.local.array(N, np.float64)
        for j in range(N):
            high[j] = x[i * N + j] >> 16
            low[j] = x[i * N + j] & 0xFFFF
            positions[j] = i * N + j
            halves[j] = 0.5 * j
        oob = (np.int16(32767), np.float32(np.inf))
        if group == "block" and partial:
            coop.block.merge_sort((high, low), operator.lt, (positions, halves), threads=T, items_per_thread=N,
                                  valid_items=x.size % 97, oob_default=oob)
        elif group == "block":
            coop.block.merge_sort((high, low), operator.lt, (positions, halves), threads=T, items_per_thread=N)
        else:
            coop.warp.merge_sort((high, low), operator.lt, (positions, halves), threads=T, items_per_thread=N,
                                 width=16, valid_items=x.size % 97, oob_default=oob)
        for j in range(N):
            out[i * N + j] = high[j] + low[j] + positions[j] + halves[j]

    return kernel


for _group, _partial in (("block", False), ("block", True), ("warp", True)):
    case(f"merge_sort-{_group}-tuple-128x4{'-partial' if _partial else ''}", (types.int32[::1], types.float64[::1]))(
        tuple_merge_sort_kernel(_group, 128, 4, _partial)
    )
for _name, _threads, _n, _values, _descending in (
    ("int32", 128, 4, False, False),
    ("int32", 256, 8, True, False),
    ("int32", 512, 8, False, False),
    ("float32", 96, 7, True, True),
    ("int32", 256, 17, False, False),  # (CUB's device tuning; 17 rounds of one loop stayed rolled, in local memory)
):
    _np_dtype, _nb_type = SCALARS[_name]
    case(f"merge_sort-block-{_name}-{_threads}x{_n}{'-values' if _values else ''}", (_nb_type[::1], _nb_type[::1]))(
        block_merge_sort_kernel(_np_dtype, _threads, _n, _values, _descending)
    )
for _threads, _n, _width, _partial in ((128, 4, 32, False), (256, 8, 32, False), (128, 3, 16, True)):
    case(f"merge_sort-warp-int32-{_width}x{_n}{'-partial' if _partial else ''}", (types.int32[::1], types.int32[::1]))(
        warp_merge_sort_kernel(np.int32, _threads, _n, _width, _partial)
    )


@misuse(
    "merge-sort-compare-arity",
    (types.int32[::1], types.int32[::1]),
    "coop.block.merge_sort: compare must take 2 values, but it takes 1",
    threads=32,
)
def merge_sort_compare_arity(x, out):
    keys = cuda.local.array(2, np.int32)
    coop.block.merge_sort(keys, lambda a: a < 0, threads=32, items_per_thread=2)
    out[0] = keys[0]


@misuse(
    "merge-sort-items-per-thread-run-time",
    (types.int32[::1], types.int32[::1]),
    "coop.block.merge_sort: items_per_thread must be a compile-time constant integer",
    threads=32,
)
def merge_sort_items_per_thread_run_time(x, out):
    keys = cuda.local.array(2, np.int32)
    coop.block.merge_sort(keys, operator.lt, threads=32, items_per_thread=x[0])
    out[0] = keys[0]


@misuse(
    "merge-sort-values-wrong-length",
    (types.int32[::1], types.int32[::1]),
    "coop_error__coop_block_merge_sort__values_wrong_length",
    threads=32,
)
def merge_sort_values_wrong_length(x, out):
    keys = cuda.local.array(4, np.int32)
    values = cuda.local.array(3, np.int32)
    for k in range(4):
        keys[k] = x[k]
    for k in range(3):
        values[k] = k
    coop.block.merge_sort(keys, operator.lt, values, threads=32, items_per_thread=4)
    out[0] = keys[0] + values[0]


@misuse(
    "merge-sort-valid-items-without-oob-default",
    (types.int32[::1], types.int32[::1]),
    "coop.block.merge_sort: oob_default is required with valid_items: a key that sorts after every valid key",
    threads=32,
)
def merge_sort_valid_items_without_oob_default(x, out):
    keys = cuda.local.array(2, np.int32)
    coop.block.merge_sort(keys, operator.lt, threads=32, items_per_thread=2, valid_items=x[0])
    out[0] = keys[0]


@misuse(
    "warp-merge-sort-width",
    (types.int32[::1], types.int32[::1]),
    "coop.warp.merge_sort: width must be a power of two from 1 to 32 (1, 2, 4, 8, 16, 32), got 12",
    threads=32,
)
def warp_merge_sort_width(x, out):
    keys = cuda.local.array(2, np.int32)
    coop.warp.merge_sort(keys, operator.lt, threads=32, items_per_thread=2, width=12)
    out[0] = keys[0]


@misuse(
    "merge-sort-tuple-keys-scalar-oob-default",
    (types.int32[::1], types.int32[::1]),
    "coop.block.merge_sort: oob_default must be convertible to UniTuple(int32 x 2), got int32",
    threads=32,
)
def merge_sort_tuple_keys_scalar_oob_default(x, out):
    high = cuda.local.array(2, np.int32)
    low = cuda.local.array(2, np.int32)
    coop.block.merge_sort((high, low), operator.lt, threads=32, items_per_thread=2, valid_items=x[0], oob_default=x[1])
    out[0] = high[0] + low[0]


@misuse(
    "merge-sort-tuple-keys-member-wrong-length",
    (types.int32[::1], types.int32[::1]),
    "coop_error__coop_block_merge_sort__keys_wrong_length",
    threads=32,
)
def merge_sort_tuple_keys_member_wrong_length(x, out):
    high = cuda.local.array(2, np.int32)
    low = cuda.local.array(3, np.int32)
    for k in range(2):
        high[k] = x[k]
        low[k] = x[k]
    low[2] = 0
    coop.block.merge_sort((high, low), operator.lt, threads=32, items_per_thread=2)
    out[0] = high[0] + low[0]


@misuse(
    "warp-merge-sort-24-byte-tuple-keys-temp-storage",
    (types.float64[::1], types.int32[::1]),
    "coop.warp.merge_sort: temp_storage cannot hold Tuple(float64, float64, int8) items (24 bytes in shared memory)",
    threads=32,
)
def warp_merge_sort_24_byte_tuple_keys_temp_storage(x, out):
    temp = cuda.shared.array(8192, np.uint8)
    a = cuda.local.array(2, np.float64)
    b = cuda.local.array(2, np.float64)
    c = cuda.local.array(2, np.int8)
    for k in range(2):
        a[k] = x[k]
        b[k] = x[k]
        c[k] = k
    coop.warp.merge_sort((a, b, c), operator.lt, threads=32, items_per_thread=2, temp_storage=temp)
    out[0] = c[0]

