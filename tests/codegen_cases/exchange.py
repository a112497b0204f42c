"""Exchanges (coop.block.exchange, coop.warp.exchange) and tiles too large for static shared memory."""

import operator

import numpy as np
from numba import cuda
from numba.cuda import types

import coop

from ._registry import SCALARS, case, misuse


# -- exchanges (coop.block.exchange, coop.warp.exchange) ---------------------------------
# Names start with "exchange-", not "warp": warp exchanges move items through shared
# memory, not shuffles.


def block_exchange_kernel(dtype, threads, items, time_slicing):
    T, N, TS = threads, items, time_slicing

    @cuda.jit
    def kernel(x, out):
        i = cuda.grid(1)
        values = cuda.local.array(N, dtype)
        for j in range(N):
            values[j] = x[i * N + j]
        coop.block.exchange.blocked_to_striped(values, values, threads=T, items_per_thread=N, warp_time_slicing=TS)
        coop.block.exchange.striped_to_blocked(values, values, threads=T, items_per_thread=N, warp_time_slicing=TS)
        coop.block.exchange.blocked_to_warp_striped(values, values, threads=T, items_per_thread=N,
                                                    warp_time_slicing=TS)
        coop.block.exchange.warp_striped_to_blocked(values, values, threads=T, items_per_thread=N,
                                                    warp_time_slicing=TS)
        for j in range(N):
            out[i * N + j] = values[j]

    return kernel


def block_scatter_kernel(dtype, threads, items, time_slicing):
    T, N, TS = threads, items, time_slicing

    @cuda.jit
    def kernel(x, rank_in, out):
        i = cuda.grid(1)
        values = cuda.local.array(N, dtype)
        ranks = cuda.local.array(N, np.int32)
        valid = cuda.local.array(N, np.bool_)
        for j in range(N):
            values[j] = x[i * N + j]
            ranks[j] = rank_in[i * N + j]
            valid[j] = ranks[j] % 3 != 0
        coop.block.exchange.scatter_to_blocked(values, values, ranks, threads=T, items_per_thread=N,
                                               warp_time_slicing=TS)
        coop.block.exchange.scatter_to_striped(values, values, ranks, threads=T, items_per_thread=N,
                                               warp_time_slicing=TS)
        coop.block.exchange.scatter_to_striped_guarded(values, values, ranks, threads=T, items_per_thread=N,
                                                       warp_time_slicing=TS)
        coop.block.exchange.scatter_to_striped_flagged(values, values, ranks, valid, threads=T,
                                                       items_per_thread=N, warp_time_slicing=TS)
        for j in range(N):
            out[i * N + j] = values[j]

    return kernel


def warp_exchange_kernel(dtype, threads, items, width):
    T, N, W = threads, items, width

    @cuda.jit
    def kernel(x, rank_in, out):
        i = cuda.grid(1)
        values = cuda.local.array(N, dtype)
        ranks = cuda.local.array(N, np.int32)
        for j in range(N):
            values[j] = x[i * N + j]
            ranks[j] = rank_in[i * N + j]
        coop.warp.exchange.blocked_to_striped(values, values, threads=T, items_per_thread=N, width=W)
        coop.warp.exchange.striped_to_blocked(values, values, threads=T, items_per_thread=N, width=W)
        coop.warp.exchange.scatter_to_striped(values, values, ranks, threads=T, items_per_thread=N, width=W)
        for j in range(N):
            out[i * N + j] = values[j]

    return kernel


_EXCHANGE_SHAPES = [(128, 4, False), (96, 8, False), (500, 3, True), (1024, 16, True)]
for _name in ("bool", "int8", "int32", "float16", "float64", "complex128"):
    _np_dtype, _nb_type = SCALARS[_name]
    # (each of a kernel's four exchanges has a static buffer of its own: complex128's would
    # take 50688 bytes at 96 x 8, past the 48 KiB a kernel may have, which ptxas refuses)
    _shapes = [(128, 4, False), (96, 4, False)] if _name == "complex128" else _EXCHANGE_SHAPES[:2]
    for _t, _n, _ts in _EXCHANGE_SHAPES if _name in ("int32", "float64") else _shapes:
        _suffix = f"{_name}-threads{_t}-items{_n}{'-sliced' if _ts else ''}"
        case(f"exchange-block-{_suffix}", (_nb_type[::1], _nb_type[::1]))(
            block_exchange_kernel(_np_dtype, _t, _n, _ts)
        )
        case(f"exchange-scatter-{_suffix}", (_nb_type[::1], types.int32[::1], _nb_type[::1]))(
            block_scatter_kernel(_np_dtype, _t, _n, _ts)
        )
    for _t, _n, _w in [(128, 4, 32), (64, 8, 8)]:
        case(f"exchange-warp-{_name}-threads{_t}-items{_n}-w{_w}", (_nb_type[::1], types.int32[::1], _nb_type[::1]))(
            warp_exchange_kernel(_np_dtype, _t, _n, _w)
        )

EXCHANGE_TEMP_BYTES = max(
    coop.block.exclusive_sum.temp_storage_bytes(np.int32, 128),
    coop.block.exchange.blocked_to_striped.temp_storage_bytes(np.int32, 128, 4),
)


@case("exchange-temp-storage-shared-with-scan", (types.int32[::1], types.int32[::1]))
def exchange_temp_storage_shared_with_scan(x, out):
    temp = cuda.shared.array(EXCHANGE_TEMP_BYTES, np.uint8, alignment=8)
    i = cuda.grid(1)
    items = cuda.local.array(4, np.int32)
    for k in range(4):
        items[k] = x[i * 4 + k]
    coop.block.exchange.striped_to_blocked(items, items, threads=128, items_per_thread=4, temp_storage=temp)
    coop.block.exclusive_sum(items, items, threads=128, temp_storage=temp)
    coop.block.exchange.blocked_to_warp_striped(items, items, threads=128, items_per_thread=4, temp_storage=temp)
    for k in range(4):
        out[i * 4 + k] = items[k]


@misuse(
    "exchange-items-per-thread-missing",
    (types.int32[::1], types.int32[::1]),
    "coop.block.exchange.blocked_to_striped: items_per_thread is required",
)
def exchange_items_per_thread_missing(x, out):
    items = cuda.local.array(4, np.int32)
    items[0] = x[0]
    coop.block.exchange.blocked_to_striped(items, items, threads=128)
    out[0] = items[0]


@misuse(
    "exchange-items-per-thread-not-constant",
    (types.int32[::1], types.int32[::1]),
    "coop.block.exchange.striped_to_blocked: items_per_thread must be a compile-time constant",
)
def exchange_items_per_thread_not_constant(x, out):
    items = cuda.local.array(4, np.int32)
    items[0] = x[0]
    coop.block.exchange.striped_to_blocked(items, items, threads=128, items_per_thread=x[1])
    out[0] = items[0]


@misuse(
    "exchange-threads-not-constant",
    (types.int32[::1], types.int32[::1]),
    "coop.block.exchange.scatter_to_striped: threads must be a compile-time constant",
)
def exchange_threads_not_constant(x, out):
    items = cuda.local.array(4, np.int32)
    ranks = cuda.local.array(4, np.int32)
    items[0] = x[0]
    ranks[0] = 0
    coop.block.exchange.scatter_to_striped(items, items, ranks, threads=cuda.blockDim.x, items_per_thread=4)
    out[0] = items[0]


@misuse(
    "exchange-threads-missing",
    (types.int32[::1], types.int32[::1]),
    "coop.warp.exchange.striped_to_blocked: threads is required",
)
def exchange_threads_missing(x, out):
    items = cuda.local.array(4, np.int32)
    items[0] = x[0]
    coop.warp.exchange.striped_to_blocked(items, items, items_per_thread=4)
    out[0] = items[0]


@misuse(
    "exchange-output-dtype",
    (types.int32[::1], types.int32[::1]),
    "coop.block.exchange.blocked_to_warp_striped: output must hold int32 items like the input, got int64",
)
def exchange_output_dtype(x, out):
    items = cuda.local.array(4, np.int32)
    wide = cuda.local.array(4, np.int64)
    items[0] = x[0]
    coop.block.exchange.blocked_to_warp_striped(items, wide, threads=128, items_per_thread=4)
    out[0] = wide[0]


@misuse(
    "exchange-ranks-not-integers",
    (types.float32[::1], types.float32[::1]),
    "coop.block.exchange.scatter_to_blocked: ranks must hold integer ranks",
)
def exchange_ranks_not_integers(x, out):
    items = cuda.local.array(2, np.float32)
    ranks = cuda.local.array(2, np.float32)
    items[0] = x[0]
    ranks[0] = x[1]
    coop.block.exchange.scatter_to_blocked(items, items, ranks, threads=64, items_per_thread=2)
    out[0] = items[0]


@misuse(
    "exchange-items-wrong-length",
    (types.int32[::1], types.int32[::1]),
    "coop_error__coop_block_exchange_scatter_to_striped_flagged__is_valid_wrong_length",
    threads=32,
)
def exchange_items_wrong_length(x, out):
    items = cuda.local.array(4, np.int32)
    ranks = cuda.local.array(4, np.int32)
    valid = cuda.local.array(3, np.bool_)
    for k in range(4):
        items[k] = x[k]
        ranks[k] = k
    for k in range(3):
        valid[k] = True
    coop.block.exchange.scatter_to_striped_flagged(items, items, ranks, valid, threads=32, items_per_thread=4)
    out[0] = items[0]


@misuse(
    "exchange-tile-too-large",
    (types.float64[::1], types.float64[::1]),
    "coop.block.exchange.blocked_to_striped: items_per_thread makes a tile of 1024 x 16 float64 items",
)
def exchange_tile_too_large(x, out):
    items = cuda.local.array(16, np.float64)
    items[0] = x[0]
    coop.block.exchange.blocked_to_striped(items, items, threads=1024, items_per_thread=16)
    out[0] = items[0]


# Past a kernel's 48 KiB of static shared memory, without temp_storage= (one check,
# coop._core.exchange.check_static_shared, for every primitive with a tile in shared memory)
STATIC_SHARED_PAST = ("bytes of static shared memory a kernel may have; pass a temp_storage= array: a dynamic shared "
                      "array (cuda.shared.array(0, np.uint8)) of temp_storage_bytes, given at launch after "
                      "coop.allow_dynamic_shared_memory")


@misuse(
    "warp-exchange-tile-too-large",
    (types.float64[::1], types.float64[::1]),
    "coop.warp.exchange.blocked_to_striped: items_per_thread makes 1024 x 16 float64 items, 135680 bytes of shared "
    "memory: more than the 49152 " + STATIC_SHARED_PAST,
)
def warp_exchange_tile_too_large(x, out):
    items = cuda.local.array(16, np.float64)
    items[0] = x[0]
    coop.warp.exchange.blocked_to_striped(items, items, threads=1024, items_per_thread=16)
    out[0] = items[0]


@misuse(
    "radix-sort-tile-too-large",
    (types.int32[::1], types.int32[::1]),
    "coop.block.radix_sort: items_per_thread makes a tile of 1024 x 16 keys, 67584 bytes of shared memory: more "
    "than the 49152 " + STATIC_SHARED_PAST,
)
def radix_sort_tile_too_large(x, out):
    keys = cuda.local.array(16, np.int32)
    keys[0] = x[0]
    coop.block.radix_sort(keys, threads=1024, items_per_thread=16)
    out[0] = keys[0]


@misuse(
    "merge-sort-tile-too-large",
    (types.int64[::1], types.int64[::1]),
    "coop.block.merge_sort: items_per_thread makes a tile of 1024 x 8 keys, 65544 bytes of shared memory: more "
    "than the 49152 " + STATIC_SHARED_PAST,
)
def merge_sort_tile_too_large(x, out):
    keys = cuda.local.array(8, np.int64)
    keys[0] = x[0]
    coop.block.merge_sort(keys, operator.lt, threads=1024, items_per_thread=8)
    out[0] = keys[0]


@misuse(
    "warp-merge-sort-tile-too-large",
    (types.int64[::1], types.int64[::1]),
    "coop.warp.merge_sort: items_per_thread makes 32 logical warps of 32 x 8 keys, 66048 bytes of shared memory: "
    "more than the 49152 " + STATIC_SHARED_PAST,
)
def warp_merge_sort_tile_too_large(x, out):
    keys = cuda.local.array(8, np.int64)
    keys[0] = x[0]
    coop.warp.merge_sort(keys, operator.lt, threads=1024, items_per_thread=8)
    out[0] = keys[0]


@misuse(
    "exchange-warp-threads-not-multiple-of-width",
    (types.int32[::1], types.int32[::1]),
    "coop.warp.exchange.blocked_to_striped: threads must be a multiple of width (16)",
)
def exchange_warp_threads_not_multiple_of_width(x, out):
    items = cuda.local.array(4, np.int32)
    items[0] = x[0]
    coop.warp.exchange.blocked_to_striped(items, items, threads=40, items_per_thread=4, width=16)
    out[0] = items[0]


@misuse(
    "exchange-time-slicing-not-constant",
    (types.int32[::1], types.int32[::1]),
    "coop.block.exchange.blocked_to_striped: warp_time_slicing must be a compile-time constant True or False",
)
def exchange_time_slicing_not_constant(x, out):
    items = cuda.local.array(4, np.int32)
    items[0] = x[0]
    coop.block.exchange.blocked_to_striped(items, items, threads=64, items_per_thread=4,
                                           warp_time_slicing=x[1] > 0)
    out[0] = items[0]
