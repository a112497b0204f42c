"""Tile analytics: histogram, discontinuity, adjacent difference, run-length coding."""

import operator

import numpy as np
from numba import cuda
from numba.cuda import types

import coop

from ._registry import SCALARS, case, misuse


# -- tile analytics: histogram, discontinuity, adjacent difference, run-length coding ------


def histogram_kernel(dtype, threads, n, bins, algorithm, partial, counter=np.int32):
    T, N, BINS = threads, n, bins

    @cuda.jit
    def kernel(x, out):
        counts = cuda.shared.array(BINS, counter)
        items = cuda.local.array(N, dtype)
        base = cuda.blockIdx.x * T * N
        coop.block.load(x[base:], items, threads=T, items_per_thread=N, algorithm="warp_transpose")
        if partial:
            coop.block.histogram(items, counts, BINS, threads=T, items_per_thread=N, algorithm=algorithm,
                                 valid_items=x.size - base)
        else:
            coop.block.histogram(items, counts, BINS, threads=T, items_per_thread=N, algorithm=algorithm)
        cuda.syncthreads()
        for b in range(cuda.threadIdx.x, BINS, T):
            cuda.atomic.add(out, b, counts[b])

    return kernel


for _dtype, _algorithm, _partial in (("uint8", "atomic", False), ("uint8", "sort", False),
                                     ("int32", "sort", True), ("int16", "atomic", True)):
    case(f"histogram-{_algorithm}-{_dtype}{'-partial' if _partial else ''}-128x4",
         (SCALARS[_dtype][1][::1], types.int32[::1]))(
        histogram_kernel(SCALARS[_dtype][0], 128, 4, 256, _algorithm, _partial)
    )


def discontinuity_kernel(dtype, threads, n):
    T, N = threads, n

    @cuda.jit
    def kernel(x, heads, tails):
        items = cuda.local.array(N, dtype)
        h = cuda.local.array(N, np.int32)
        t = cuda.local.array(N, np.uint8)
        base = cuda.blockIdx.x * T * N
        coop.block.load(x[base:], items, threads=T, items_per_thread=N, algorithm="warp_transpose")
        coop.block.flag_heads_and_tails(items, h, t, operator.ne, tile_predecessor=x[0], threads=T,
                                        valid_items=x.size - base)
        coop.block.store(heads[base:], h, threads=T, items_per_thread=N, algorithm="warp_transpose")
        coop.block.store(tails[base:], t, threads=T, items_per_thread=N, algorithm="warp_transpose")

    return kernel


case("flag_heads_and_tails-float64-128x4", (types.float64[::1], types.int32[::1], types.uint8[::1]))(
    discontinuity_kernel(np.float64, 128, 4)
)


@case("flag_tails-tuple-index-(16,8)x3", (types.int16[::1], types.float32[::1], types.int32[::1]))
def flag_tails_tuple_kernel(keys, values, out):
    k = cuda.local.array(3, np.int16)
    v = cuda.local.array(3, np.float32)
    flags = cuda.local.array(3, np.int32)
    r = cuda.threadIdx.x + cuda.threadIdx.y * 16
    for i in range(3):
        k[i] = keys[r * 3 + i]
        v[i] = values[r * 3 + i]
    coop.block.flag_tails((k, v), flags, lambda a, b, index: a[0] != b[0] or index % 7 == 0, threads=(16, 8))
    for i in range(3):
        out[r * 3 + i] = flags[i]


def adjacent_difference_kernel(dtype, out_dtype, threads, n, left):
    T, N = threads, n

    @cuda.jit
    def kernel(x, out):
        items = cuda.local.array(N, dtype)
        result = cuda.local.array(N, out_dtype)
        base = cuda.blockIdx.x * T * N
        coop.block.load(x[base:], items, threads=T, items_per_thread=N, algorithm="warp_transpose")
        if left:
            coop.block.subtract_left(items, result, tile_predecessor=x[0], threads=T)
        else:
            coop.block.subtract_right(items, result, threads=T, valid_items=x.size - base)
        coop.block.store(out[base:], result, threads=T, items_per_thread=N, algorithm="warp_transpose")

    return kernel


case("subtract_left-int32-256x8", (types.int32[::1], types.int32[::1]))(
    adjacent_difference_kernel(np.int32, np.int32, 256, 8, True)
)
case("subtract_right-uint8-int16-partial-128x4", (types.uint8[::1], types.int16[::1]))(
    adjacent_difference_kernel(np.uint8, np.int16, 128, 4, False)
)


def run_length_decode_kernel(dtype, threads, runs, decoded):
    T, R, D = threads, runs, decoded

    @cuda.jit
    def kernel(values, lengths, out, offsets_out):
        v = cuda.local.array(R, dtype)
        n = cuda.local.array(R, np.int32)
        items = cuda.local.array(D, dtype)
        offsets = cuda.local.array(D, np.int32)
        base = cuda.blockIdx.x * T * R
        coop.block.load(values[base:], v, threads=T, items_per_thread=R, algorithm="warp_transpose")
        coop.block.load(lengths[base:], n, threads=T, items_per_thread=R, algorithm="warp_transpose")
        window = 0
        while True:
            total = coop.block.run_length_decode(v, n, items, offsets, from_decoded_offset=window, threads=T,
                                                 runs_per_thread=R, runs_stored=window > 0)
            for i in range(D):
                position = window + cuda.threadIdx.x * D + i
                if position < total:
                    out[position] = items[i]
                    offsets_out[position] = offsets[i]
            window += T * D
            if window >= total:
                break

    return kernel


case("run_length_decode-float32-128x4-4", (types.float32[::1], types.int32[::1], types.float32[::1],
                                           types.int32[::1]))(
    run_length_decode_kernel(np.float32, 128, 4, 4)
)


def run_length_encode_kernel(threads, n):
    T, N = threads, n

    @cuda.jit
    def kernel(keys, values, unique_keys, unique_values, counts_out, runs_out):
        k = cuda.local.array(N, np.int32)
        v = cuda.local.array(N, np.uint8)
        counts = cuda.local.array(N, np.int32)
        base = cuda.blockIdx.x * T * N
        coop.block.load(keys[base:], k, threads=T, items_per_thread=N, algorithm="warp_transpose")
        coop.block.load(values[base:], v, threads=T, items_per_thread=N, algorithm="warp_transpose")
        runs = coop.block.run_length_encode((k, v), (k, v), counts, threads=T, items_per_thread=N,
                                            valid_items=keys.size - base)
        coop.block.store(unique_keys[base:], k, threads=T, items_per_thread=N, algorithm="warp_transpose")
        coop.block.store(unique_values[base:], v, threads=T, items_per_thread=N, algorithm="warp_transpose")
        coop.block.store(counts_out[base:], counts, threads=T, items_per_thread=N, algorithm="warp_transpose")
        if cuda.threadIdx.x == 0:
            runs_out[cuda.blockIdx.x] = runs

    return kernel


case("run_length_encode-tuple-128x4", (types.int32[::1], types.uint8[::1], types.int32[::1], types.uint8[::1],
                                       types.int32[::1], types.int32[::1]))(
    run_length_encode_kernel(128, 4)
)


@misuse(
    "histogram-bins-run-time",
    (types.uint8[::1], types.int32[::1]),
    "coop.block.histogram: bins must be a compile-time constant",
)
def histogram_bins_run_time(x, out):
    items = cuda.local.array(4, np.uint8)
    for i in range(4):
        items[i] = x[i]
    coop.block.histogram(items, out, out.size)


@misuse(
    "histogram-float16-counters",
    (types.uint8[::1], types.float16[::1]),
    "coop.block.histogram: histogram must be a 1-D array of counters (int32, uint32, int64, uint64, float32, "
    "float64), got a 1-D array of float16",
)
def histogram_float16_counters(x, out):
    items = cuda.local.array(4, np.uint8)
    for i in range(4):
        items[i] = x[i]
    coop.block.histogram(items, out, 16)


@misuse(
    "histogram-sort-items-per-thread-missing",
    (types.uint8[::1], types.int32[::1]),
    "coop.block.histogram: items_per_thread is required by algorithm 'sort'",
)
def histogram_sort_items_per_thread_missing(x, out):
    items = cuda.local.array(4, np.uint8)
    for i in range(4):
        items[i] = x[i]
    coop.block.histogram(items, out, 16, threads=128, algorithm="sort")


@misuse(
    "histogram-counters-too-short",
    (types.uint8[::1], types.int32[::1]),
    "coop_error__coop_block_histogram__histogram_too_short",
)
def histogram_counters_too_short(x, out):
    items = cuda.local.array(4, np.uint8)
    counts = cuda.shared.array(15, np.int32)
    for i in range(4):
        items[i] = x[i]
    coop.block.histogram(items, counts, 16)
    out[0] = counts[0]


@misuse(
    "flag-heads-flag-op-arity",
    (types.int32[::1], types.int32[::1]),
    "coop.block.flag_heads: flag_op must take 2 arguments (a, b) or 3 (a, b, b_index), but it takes 1",
)
def flag_heads_flag_op_arity(x, out):
    items = cuda.local.array(2, np.int32)
    flags = cuda.local.array(2, np.int32)
    for i in range(2):
        items[i] = x[i]
    coop.block.flag_heads(items, flags, lambda a: a > 0)
    out[0] = flags[0]


@misuse(
    "flag-tails-flags-too-short",
    (types.int32[::1], types.int32[::1]),
    "coop_error__coop_block_flag_tails__flags_too_short",
)
def flag_tails_flags_too_short(x, out):
    items = cuda.local.array(4, np.int32)
    flags = cuda.local.array(3, np.int32)
    for i in range(4):
        items[i] = x[i]
    coop.block.flag_tails(items, flags, operator.ne)
    out[0] = flags[0]


@misuse(
    "subtract-left-output-too-short",
    (types.int32[::1], types.int32[::1]),
    "coop_error__coop_block_subtract_left__output_too_short",
)
def subtract_left_output_too_short(x, out):
    items = cuda.local.array(4, np.int32)
    result = cuda.local.array(2, np.int32)
    for i in range(4):
        items[i] = x[i]
    coop.block.subtract_left(items, result)
    out[0] = result[0]


@misuse(
    "subtract-right-tuple-default-op",
    (types.int32[::1], types.int32[::1]),
    "coop.block.subtract_right: op is required for Tuple(int32, float32) items: the default subtracts numbers",
)
def subtract_right_tuple_default_op(x, out):
    a = cuda.local.array(2, np.int32)
    b = cuda.local.array(2, np.float32)
    for i in range(2):
        a[i] = x[i]
        b[i] = x[i]
    coop.block.subtract_right((a, b), (a, b))
    out[0] = a[0]


@misuse(
    "run-length-encode-counts-too-short",
    (types.int32[::1], types.int32[::1]),
    "coop_error__coop_block_run_length_encode__counts_too_short",
)
def run_length_encode_counts_too_short(x, out):
    items = cuda.local.array(4, np.int32)
    counts = cuda.local.array(3, np.int32)
    for i in range(4):
        items[i] = x[i]
    coop.block.run_length_encode(items, items, counts, threads=128, items_per_thread=4)
    out[0] = counts[0]


@misuse(
    "run-length-decode-runs-per-thread-missing",
    (types.int32[::1], types.int32[::1]),
    "coop.block.run_length_decode: runs_per_thread is required",
)
def run_length_decode_runs_per_thread_missing(x, out):
    items = cuda.local.array(2, np.int32)
    lengths = cuda.local.array(2, np.int32)
    for i in range(2):
        items[i] = x[i]
        lengths[i] = 1
    coop.block.run_length_decode(items, lengths, items, threads=128)
    out[0] = items[0]



@misuse(
    "run-length-decode-runs-stored-not-a-bool",
    (types.int32[::1], types.int32[::1]),
    "coop.block.run_length_decode: runs_stored must be True or False",
)
def run_length_decode_runs_stored_not_a_bool(x, out):
    items = cuda.local.array(2, np.int32)
    lengths = cuda.local.array(2, np.int32)
    for i in range(2):
        items[i] = x[i]
        lengths[i] = 1
    coop.block.run_length_decode(items, lengths, items, threads=128, runs_per_thread=2, runs_stored=x[0])
    out[0] = items[0]
