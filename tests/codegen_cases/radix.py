"""Radix keys, ranking and sorting (coop.block.radix_rank, coop.block.radix_sort)."""

import numpy as np
from numba import cuda
from numba.cuda import types

import coop

from ._registry import ORDERED, SCALARS, case, misuse


# -- radix keys: the ordered bits of every key type ------------------------------------


def radix_keys_kernel(key_type):
    from coop._core import radix

    to_ordered, from_ordered, digit = radix.to_ordered(key_type), radix.from_ordered(key_type), radix.digit(key_type)

    @cuda.jit
    def kernel(keys, ordered, back, digits):
        i = cuda.grid(1)
        bits = to_ordered(keys[i])
        ordered[i] = bits
        back[i] = from_ordered(bits)
        digits[i] = digit(bits, 3, 5)

    return kernel


for _name in ORDERED:
    _nb_type = SCALARS[_name][1]
    _bits = types.Integer.from_bitwidth(8 if _name == "bool" else _nb_type.bitwidth, signed=False)
    case(f"radix_keys-{_name}", (_nb_type[::1], _bits[::1], _nb_type[::1], types.uint32[::1]))(
        radix_keys_kernel(_nb_type)
    )


# -- radix ranking and sorting ----------------------------------------------------------


def radix_sort_kernel(dtype, threads, n, with_values, descending, striped):
    T, N = threads, n

    @cuda.jit
    def kernel(x, out):
        i = cuda.grid(1)
        keys = cuda.local.array(N, dtype)
        values = cuda.local.array(N, np.int32)
        for j in range(N):
            keys[j] = x[i * N + j]
            values[j] = i * N + j
        if with_values:
            coop.block.radix_sort(keys, values, threads=T, items_per_thread=N, descending=descending,
                                  blocked_to_striped=striped)
        else:
            coop.block.radix_sort(keys, threads=T, items_per_thread=N, descending=descending)
        for j in range(N):
            out[i * N + j] = keys[j] + values[j]

    return kernel


def radix_rank_kernel(dtype, threads, n, algorithm, num_bits=5):
    T, N, B = threads, n, num_bits
    TRACKED = -(-(1 << B) // int(np.prod(T)))  # (each thread's digits of the exclusive_digit_prefix)

    @cuda.jit
    def kernel(x, out):
        i = cuda.grid(1)
        keys = cuda.local.array(N, dtype)
        ranks = cuda.local.array(N, np.int32)
        prefix = cuda.local.array(TRACKED, np.int32)
        for j in range(N):
            keys[j] = x[i * N + j]
        coop.block.radix_rank(keys, ranks, x.size % 5, B, threads=T, items_per_thread=N, algorithm=algorithm,
                              exclusive_digit_prefix=prefix)
        for j in range(N):
            out[i * N + j] = ranks[j] + prefix[0]

    return kernel


for _name, _threads, _n, _values, _descending, _striped in (
    ("uint32", 128, 4, True, False, False),
    ("float64", 64, 3, True, True, True),
    ("int8", 96, 7, False, False, False),
    ("float16", 256, 8, True, False, True),
):
    _np_dtype, _nb_type = SCALARS[_name]
    case(f"radix_sort-{_name}-{_threads}x{_n}", (_nb_type[::1], _nb_type[::1]))(
        radix_sort_kernel(_np_dtype, _threads, _n, _values, _descending, _striped)
    )
for _algorithm in ("memoize", "basic", "match", "match_early_counts"):
    case(f"radix_rank-{_algorithm}", (types.int32[::1], types.int32[::1]))(
        radix_rank_kernel(np.int32, 128, 4, _algorithm)
    )
# a partial last warp (of a 2-D block of 48): its lanes' mask for the ballots and syncwarp
for _algorithm in ("match", "match_early_counts"):
    case(f"radix_rank-{_algorithm}-16x3-threads", (types.int32[::1], types.int32[::1]))(
        radix_rank_kernel(np.int32, (16, 3), 4, _algorithm)
    )
# partial last warps with 7 and 8 bits: one ballot per bit a key (ptxas ran out of
# predicate registers, C7600, when the ballots' mask depended on the lane)
for _algorithm in ("match", "match_early_counts"):
    for _threads in (33, 63, 100):
        for _bits in (7, 8):
            case(f"radix_rank-{_algorithm}-{_threads}-threads-{_bits}-bits", (types.int32[::1], types.int32[::1]))(
                radix_rank_kernel(np.int32, _threads, 4, _algorithm, _bits)
            )


def tuple_radix_rank_kernel(algorithm):
    """Tuple keys (uint64, int32) by a 6-bit digit from a run-time bit: the digit may take
    bits of both of the key's words."""

    @cuda.jit
    def kernel(x, out):
        high = cuda.local.array(4, np.uint64)
        low = cuda.local.array(4, np.int32)
        ranks = cuda.local.array(4, np.int32)
        for j in range(4):
            high[j] = x[cuda.threadIdx.x * 4 + j]
            low[j] = np.int32(x[cuda.threadIdx.x * 4 + j] >> 3)
        coop.block.radix_rank((high, low), ranks, x.size % 90, 6, threads=128, items_per_thread=4, algorithm=algorithm)
        for j in range(4):
            out[cuda.threadIdx.x * 4 + j] = ranks[j]

    return kernel


for _algorithm in ("memoize", "match"):
    case(f"radix_rank-{_algorithm}-tuple-keys", (types.uint64[::1], types.int32[::1]))(
        tuple_radix_rank_kernel(_algorithm)
    )


@cuda.jit(device=True)
def _record_counts(state, counts):
    out, = state
    out[cuda.threadIdx.x] = counts[0]


@case("radix_rank-match_early_counts-counts", (types.uint32[::1], types.uint32[::1]))
def radix_rank_counts(x, out):
    """Onesweep's use: 8-bit digits of 384 x 20 keys, digit counts and the counts callback."""
    keys = cuda.local.array(20, np.uint32)
    ranks = cuda.local.array(20, np.int32)
    prefix = cuda.local.array(1, np.int32)
    counts = cuda.local.array(1, np.uint32)
    for j in range(20):
        keys[j] = x[cuda.threadIdx.x * 20 + j]
    coop.block.radix_rank(keys, ranks, 8, 8, threads=384, items_per_thread=20, algorithm="match_early_counts",
                          exclusive_digit_prefix=prefix, digit_counts=counts, counts_op=_record_counts,
                          counts_state=(out,))
    for j in range(20):
        out[ranks[j]] = keys[j] + prefix[0] + counts[0]


@case("load_store-int32-warp_striped-80-threads", (types.int32[::1], types.int32[::1], types.int32))
def load_store_warp_striped(x, out, valid):
    values = cuda.local.array(4, np.int32)
    base = cuda.blockIdx.x * 80 * 4
    coop.block.load(x[base:], values, threads=80, algorithm="warp_striped")
    coop.block.store(out[base:], values, threads=80, algorithm="warp_striped")
    coop.block.load(x[base:], values, threads=80, algorithm="warp_striped", valid_items=valid, oob_default=x[0])
    coop.block.store(out[base:], values, threads=80, algorithm="warp_striped", valid_items=valid)


def radix_sort_shared_kernel(dtype, threads, n):
    """A user's kernel as CUB's examples write it: one temp_storage for a warp-transpose
    load, a key-value sort and a warp-transpose store."""
    T, N = threads, n
    BYTES = max(
        coop.block.load.temp_storage_bytes(dtype, T, N, algorithm="warp_transpose"),
        coop.block.radix_sort.temp_storage_bytes(dtype, T, N, value_dtype=np.int32),
    )

    @cuda.jit
    def kernel(x, out):
        temp = cuda.shared.array(BYTES, np.uint8, alignment=8)
        base = cuda.blockIdx.x * T * N
        keys = cuda.local.array(N, dtype)
        values = cuda.local.array(N, np.int32)
        coop.block.load(x[base:], keys, threads=T, items_per_thread=N, algorithm="warp_transpose", temp_storage=temp)
        for j in range(N):
            values[j] = j
        coop.block.radix_sort(keys, values, threads=T, items_per_thread=N, temp_storage=temp)
        for j in range(N):
            keys[j] += values[j]
        coop.block.store(out[base:], keys, threads=T, items_per_thread=N, algorithm="warp_transpose",
                         temp_storage=temp)

    return kernel


case("radix_sort-uint32-128x16-temp_storage", (types.uint32[::1], types.uint32[::1]))(
    radix_sort_shared_kernel(np.uint32, 128, 16)
)


def radix_sort_tuple_kernel(high_dtype, low_dtype, threads, n):
    """Tuple keys (high, low) carrying a tuple of value arrays."""
    T, N = threads, n

    @cuda.jit
    def kernel(x, out):
        i = cuda.grid(1)
        high = cuda.local.array(N, high_dtype)
        low = cuda.local.array(N, low_dtype)
        positions = cuda.local.array(N, np.int32)
        weights = cuda.local.array(N, np.float32)
        for j in range(N):
            high[j] = x[i * N + j]
            low[j] = x[i * N + j] * 3
            positions[j] = i * N + j
            weights[j] = x[j]
        coop.block.radix_sort((high, low), (positions, weights), threads=T, items_per_thread=N, begin_bit=x[0],
                              blocked_to_striped=True)
        for j in range(N):
            out[i * N + j] = high[j] + low[j] + positions[j] + weights[j]

    return kernel


for _high, _low in (("int32", "float32"), ("uint64", "int64")):
    case(f"radix_sort-tuple-{_high}-{_low}-128x4", (types.int32[::1], types.float64[::1]))(
        radix_sort_tuple_kernel(SCALARS[_high][0], SCALARS[_low][0], 128, 4)
    )


@misuse(
    "radix-sort-tuple-keys-complex-member",
    (types.int32[::1], types.int32[::1]),
    "coop.block.radix_sort: keys must hold radix keys (bool, int8-int64, uint8-uint64, float16, float32 and "
    "float64), got complex64",
    threads=32,
)
def radix_sort_tuple_keys_complex_member(x, out):
    high = cuda.local.array(2, np.int32)
    low = cuda.local.array(2, np.complex64)
    coop.block.radix_sort((high, low), threads=32, items_per_thread=2)
    out[0] = high[0]


@misuse(
    "radix-rank-tuple-keys-complex-member",
    (types.int32[::1], types.int32[::1]),
    "coop.block.radix_rank: keys must hold radix keys (bool, int8-int64, uint8-uint64, float16, float32 and "
    "float64), got complex64",
    threads=32,
)
def radix_rank_tuple_keys_complex_member(x, out):
    high = cuda.local.array(2, np.int32)
    low = cuda.local.array(2, np.complex64)
    ranks = cuda.local.array(2, np.int32)
    coop.block.radix_rank((high, low), ranks, 0, 4, threads=32, items_per_thread=2)
    out[0] = ranks[0]


@misuse(
    "radix-rank-tuple-keys-short-member",
    (types.int32[::1], types.int32[::1]),
    "coop_error__coop_block_radix_rank__keys_wrong_length",
    threads=32,
)
def radix_rank_tuple_keys_short_member(x, out):
    high = cuda.local.array(2, np.int32)
    low = cuda.local.array(1, np.uint8)
    ranks = cuda.local.array(2, np.int32)
    coop.block.radix_rank((high, low), ranks, 0, 4, threads=32, items_per_thread=2)
    out[0] = ranks[0]


@misuse(
    "radix-sort-complex-keys",
    (types.complex64[::1], types.complex64[::1]),
    "coop.block.radix_sort: keys must hold radix keys (bool, int8-int64, uint8-uint64, float16, float32 and "
    "float64), got complex64",
    threads=32,
)
def radix_sort_complex_keys(x, out):
    keys = cuda.local.array(2, np.complex64)
    coop.block.radix_sort(keys, threads=32, items_per_thread=2)
    out[0] = keys[0]


@misuse(
    "radix-sort-end-bit-out-of-range",
    (types.uint8[::1], types.uint8[::1]),
    "coop.block.radix_sort: end_bit must be from 0 to 8 (the key's width in bits), got 9",
    threads=32,
)
def radix_sort_end_bit_out_of_range(x, out):
    keys = cuda.local.array(2, np.uint8)
    coop.block.radix_sort(keys, threads=32, items_per_thread=2, end_bit=9)
    out[0] = keys[0]


@misuse(
    "radix-sort-radix-bits-past-the-counters",
    (types.int32[::1], types.int32[::1]),
    "coop.block.radix_sort: radix_bits 8 needs 66072 bytes of digit counters in blocks of 128 threads: more "
    "than the 49152 bytes of shared memory a ranking may count in (a caller's temp_storage too: its counters "
    "are indexed in 16 bits); use at most 7 bits in blocks of 128 threads",
    threads=128,
)
def radix_sort_radix_bits_past_the_counters(x, out):
    keys = cuda.local.array(2, np.int32)
    coop.block.radix_sort(keys, threads=128, items_per_thread=2, radix_bits=8)
    out[0] = keys[0]


@misuse(
    "radix-sort-radix-bits-run-time",
    (types.int32[::1], types.int32[::1]),
    "coop.block.radix_sort: radix_bits must be a compile-time constant integer",
    threads=32,
)
def radix_sort_radix_bits_run_time(x, out):
    keys = cuda.local.array(2, np.int32)
    coop.block.radix_sort(keys, threads=32, items_per_thread=2, radix_bits=x[0])
    out[0] = keys[0]


@misuse(
    "radix-sort-values-wrong-length",
    (types.int32[::1], types.int32[::1]),
    "coop_error__coop_block_radix_sort__values_wrong_length",
    threads=32,
)
def radix_sort_values_wrong_length(x, out):
    keys = cuda.local.array(4, np.int32)
    values = cuda.local.array(3, np.int32)
    for k in range(4):
        keys[k] = x[k]
    for k in range(3):
        values[k] = k
    coop.block.radix_sort(keys, values, threads=32, items_per_thread=4)
    out[0] = keys[0] + values[0]


@misuse(
    "radix-rank-num-bits-run-time",
    (types.int32[::1], types.int32[::1]),
    "coop.block.radix_rank: num_bits must be a compile-time constant integer",
    threads=32,
)
def radix_rank_num_bits_run_time(x, out):
    keys = cuda.local.array(2, np.int32)
    ranks = cuda.local.array(2, np.int32)
    coop.block.radix_rank(keys, ranks, 0, x[0], threads=32, items_per_thread=2)
    out[0] = ranks[0]


@misuse(
    "radix-rank-unknown-algorithm",
    (types.int32[::1], types.int32[::1]),
    "coop.block.radix_rank: algorithm must be one of 'memoize', 'basic', 'match', 'match_early_counts'; "
    "got 'onesweep'",
    threads=32,
)
def radix_rank_unknown_algorithm(x, out):
    keys = cuda.local.array(2, np.int32)
    ranks = cuda.local.array(2, np.int32)
    coop.block.radix_rank(keys, ranks, 0, 4, threads=32, items_per_thread=2, algorithm="onesweep")
    out[0] = ranks[0]


@misuse(
    "radix-rank-digit-counts-wrong-length",
    (types.int32[::1], types.int32[::1]),
    "coop_error__coop_block_radix_rank__digit_counts_wrong_length",
    threads=32,
)
def radix_rank_digit_counts_wrong_length(x, out):
    keys = cuda.local.array(2, np.int32)
    ranks = cuda.local.array(2, np.int32)
    counts = cuda.local.array(2, np.int32)  # (32 threads, 16 digits: one a thread)
    keys[0], keys[1] = x[0], x[1]
    coop.block.radix_rank(keys, ranks, 0, 4, threads=32, items_per_thread=2, algorithm="match_early_counts",
                          digit_counts=counts)
    out[0] = ranks[0] + counts[0]


# -- top-k (coop.block.top_k) -----------------------------------------------------------


def top_k_kernel(dtype, threads, n, largest, is_sorted, partial):
    T, N = threads, n

    @cuda.jit
    def kernel(x, out):
        i = cuda.grid(1)
        keys = cuda.local.array(N, dtype)
        values = cuda.local.array(N, np.int32)
        for j in range(N):
            keys[j] = x[i * N + j]
            values[j] = i * N + j
        if partial:
            coop.block.top_k(keys, x.size % 97, values, threads=T, items_per_thread=N, largest=largest,
                             sorted=is_sorted, valid_items=x.size % 301)
        else:
            coop.block.top_k(keys, x.size % 97, values, threads=T, items_per_thread=N, largest=largest,
                             sorted=is_sorted)
        for j in range(N):
            out[i * N + j] = keys[j] + values[j]

    return kernel


for _name, _threads, _n, _largest, _sorted, _partial in (
    ("uint32", 256, 8, True, False, False),
    ("float32", 128, 4, False, False, True),
    ("float64", 64, 3, True, False, True),
    ("int8", 96, 5, True, False, False),
    ("float16", (16, 4), 4, True, True, True),
    ("int64", 128, 2, False, True, False),
):
    _np_dtype, _nb_type = SCALARS[_name]
    case(f"block_top_k-{_name}-{_threads}x{_n}{'-sorted' if _sorted else ''}", (_nb_type[::1], _nb_type[::1]))(
        top_k_kernel(_np_dtype, _threads, _n, _largest, _sorted, _partial)
    )


@misuse(
    "top-k-complex-keys",
    (types.complex64[::1], types.complex64[::1]),
    "coop.block.top_k: keys must hold radix keys (bool, int8-int64, uint8-uint64, float16, float32 and "
    "float64), got complex64",
    threads=32,
)
def top_k_complex_keys(x, out):
    keys = cuda.local.array(2, np.complex64)
    coop.block.top_k(keys, 3, threads=32, items_per_thread=2)
    out[0] = keys[0]


@misuse(
    "top-k-sorted-run-time",
    (types.int32[::1], types.int32[::1]),
    "coop.block.top_k: sorted must be a compile-time constant",
    threads=32,
)
def top_k_sorted_run_time(x, out):
    keys = cuda.local.array(2, np.int32)
    coop.block.top_k(keys, 3, threads=32, items_per_thread=2, sorted=x[0] > 0)
    out[0] = keys[0]


@misuse(
    "top-k-k-not-an-integer",
    (types.float32[::1], types.float32[::1]),
    "coop.block.top_k: k must be an integer",
    threads=32,
)
def top_k_k_not_an_integer(x, out):
    keys = cuda.local.array(2, np.float32)
    coop.block.top_k(keys, x[0], threads=32, items_per_thread=2)
    out[0] = keys[0]


# -- warp top-k (coop.warp.top_k) -------------------------------------------------------


def warp_top_k_kernel(dtype, threads, width, n, largest, is_sorted, partial):
    T, W, N = threads, width, n

    @cuda.jit
    def kernel(x, out):
        i = cuda.grid(1)
        keys = cuda.local.array(N, dtype)
        values = cuda.local.array(N, np.int32)
        for j in range(N):
            keys[j] = x[i * N + j]
            values[j] = i * N + j
        if partial:
            coop.warp.top_k(keys, x.size % 97, values, threads=T, items_per_thread=N, width=W, largest=largest,
                            sorted=is_sorted, valid_items=x.size % 301)
        else:
            coop.warp.top_k(keys, x.size % 97, values, threads=T, items_per_thread=N, width=W, largest=largest,
                            sorted=is_sorted)
        for j in range(N):
            out[i * N + j] = keys[j] + values[j]

    return kernel


for _name, _threads, _width, _n, _largest, _sorted, _partial in (
    ("float32", 128, 32, 8, True, False, False),
    ("uint8", 64, 16, 4, False, False, True),
    ("int64", 96, 32, 3, True, False, True),
    ("float64", 64, 8, 2, False, False, False),
    ("int32", 128, 32, 4, True, True, True),
    ("float16", 64, 16, 3, False, True, False),
):
    _np_dtype, _nb_type = SCALARS[_name]
    # (sorted: a warp merge sort and exchanges, no shuffles; named as the other warp
    # primitives through shared memory, exempt from test_codegen's shuffle check)
    case(f"top_k-warp-{_name}-{_threads}-width{_width}x{_n}-sorted" if _sorted else
         f"warp_top_k-{_name}-{_threads}-width{_width}x{_n}",
         (_nb_type[::1], _nb_type[::1]))(warp_top_k_kernel(_np_dtype, _threads, _width, _n, _largest, _sorted, _partial))


@misuse(
    "warp-top-k-threads-not-whole-warps",
    (types.int32[::1], types.int32[::1]),
    "coop.warp.top_k: threads must be a multiple of width (16): every logical warp of the block must be complete, "
    "got 40",
    threads=40,
)
def warp_top_k_threads_not_whole_warps(x, out):
    keys = cuda.local.array(2, np.int32)
    coop.warp.top_k(keys, 3, threads=40, items_per_thread=2, width=16)
    out[0] = keys[0]


@misuse(
    "warp-top-k-largest-run-time",
    (types.float32[::1], types.float32[::1]),
    "coop.warp.top_k: largest must be a compile-time constant",
    threads=32,
)
def warp_top_k_largest_run_time(x, out):
    keys = cuda.local.array(2, np.float32)
    coop.warp.top_k(keys, 3, threads=32, items_per_thread=2, largest=x[0] > 0)
    out[0] = keys[0]
