"""Kernels compiled to sm_90 PTX with the real NVVM, without running them.

``CASES``: kernels whose PTX must assemble (``codegen_toolchain.compile_for_sm90``), keep
items in registers (no local memory) and make no calls. ``MISUSES``: kernels that must
fail to compile with a message naming the primitive and the parameter.
``test_codegen.py`` checks both; under the simulator it runs this file as a script in a
subprocess (``python tests/codegen_cases.py``), which prints one JSON line per case.
"""

import importlib
import json
import operator
import re
import sys

import numpy as np
from numba import cuda, typeof
from numba.cuda import types

import coop
from codegen_toolchain import compile_for_sm90

SCALARS = {
    "bool": (np.bool_, types.boolean),
    "int8": (np.int8, types.int8),
    "int16": (np.int16, types.int16),
    "int32": (np.int32, types.int32),
    "int64": (np.int64, types.int64),
    "uint8": (np.uint8, types.uint8),
    "uint16": (np.uint16, types.uint16),
    "uint32": (np.uint32, types.uint32),
    "uint64": (np.uint64, types.uint64),
    "float16": (np.float16, types.float16),
    "float32": (np.float32, types.float32),
    "float64": (np.float64, types.float64),
    "complex64": (np.complex64, types.complex64),
    "complex128": (np.complex128, types.complex128),
}
NUMERIC = [name for name in SCALARS if name != "bool"]
ORDERED = [name for name in SCALARS if not name.startswith("complex")]

CASES = {}
MISUSES = {}
LAUNCH_THREADS = {}


def case(name, sig):
    def register(fn):
        CASES[name] = (fn, sig)
        return fn

    return register


def misuse(name, sig, message, threads=128):
    """A kernel that must fail with ``message``: compiled here (``test_codegen.py``) and
    launched with ``threads`` threads on the simulator or the GPU (``test_misuse.py``)."""

    def register(fn):
        MISUSES[name] = (fn, sig, message)
        LAUNCH_THREADS[name] = threads
        return fn

    return register


def _op_for(name):
    if name == "bool":
        return coop.ops.logical_or
    if name.startswith("complex"):
        return coop.ops.mul
    return coop.ops.max


# -- every dtype through the warp and thread primitives ----------------------------------


def warp_reduce_kernel(dtype, op):
    @cuda.jit
    def kernel(x, valid, out):
        i = cuda.grid(1)
        items = cuda.local.array(4, dtype)
        for j in range(4):
            items[j] = x[i * 4 + j]
        out[0, i] = coop.warp.reduce(x[i], op)
        out[1, i] = coop.warp.all_reduce(x[i], op, 8)
        out[2, i] = coop.warp.reduce(items, op, 16, valid[i])
        out[3, i] = coop.warp.all_reduce(items, op, valid_items=valid[i])
        out[4, i] = coop.warp.broadcast(x[i], 3)
        out[5, i] = coop.warp.head_segmented_reduce(x[i], valid[i] > 2, op, 4)

    return kernel


def warp_scan_kernel(dtype, op):
    @cuda.jit
    def kernel(x, out):
        i = cuda.grid(1)
        items = cuda.local.array(4, dtype)
        for j in range(4):
            items[j] = x[i * 4 + j]
        out[0, i] = coop.warp.inclusive_scan(x[i], op)
        e, a = coop.warp.exclusive_scan(x[i], op, x[0], width=16, return_aggregate=True)
        out[1, i] = e
        out[2, i] = a
        out[3, i] = coop.warp.inclusive_scan(items, op, items)
        out[4, i] = coop.warp.exclusive_scan(items, op, x[1], items, 8)
        for j in range(4):
            out[5 + j, i] = items[j]

    return kernel


def warp_sum_kernel(dtype):
    @cuda.jit
    def kernel(x, out):
        i = cuda.grid(1)
        items = cuda.local.array(4, dtype)
        for j in range(4):
            items[j] = x[i * 4 + j]
        out[0, i] = coop.warp.sum(x[i])
        out[1, i] = coop.warp.all_sum(items, 4, i % 16)
        out[2, i] = coop.warp.inclusive_sum(x[i], width=2)
        out[3, i] = coop.warp.exclusive_sum(items, items)
        out[8, i] = coop.thread.inclusive_sum(items, items)
        out[9, i] = coop.thread.exclusive_sum(items, items)
        for j in range(4):
            out[4 + j, i] = items[j]

    return kernel


def thread_kernel(dtype, op):
    @cuda.jit
    def kernel(x, out):
        i = cuda.grid(1)
        items = cuda.local.array(7, dtype)
        for j in range(7):
            items[j] = x[i * 7 + j]
        out[0, i] = coop.thread.reduce(items, op)
        out[1, i] = coop.thread.inclusive_scan(items, items, op)
        out[2, i] = coop.thread.exclusive_scan(items, items, op, x[0])
        for j in range(7):
            out[3 + j, i] = items[j]

    return kernel


for _name, (_np_dtype, _nb_type) in SCALARS.items():
    _arrays = (_nb_type[::1], types.int32[::1], _nb_type[:, ::1])
    case(f"warp_reduce-{_name}", _arrays)(warp_reduce_kernel(_np_dtype, _op_for(_name)))
    case(f"warp_scan-{_name}", (_nb_type[::1], _nb_type[:, ::1]))(
        warp_scan_kernel(_np_dtype, _op_for(_name))
    )
    case(f"thread-{_name}", (_nb_type[::1], _nb_type[:, ::1]))(
        thread_kernel(_np_dtype, _op_for(_name))
    )
    if _name in NUMERIC:
        case(f"warp_sum-{_name}", (_nb_type[::1], _nb_type[:, ::1]))(warp_sum_kernel(_np_dtype))


def block_kernel(dtype, op, reduce_algorithm, scan_algorithm, threads):
    ALG_R, ALG_S, T = reduce_algorithm, scan_algorithm, threads

    @cuda.jit
    def kernel(x, out):
        i = cuda.grid(1)
        items = cuda.local.array(4, dtype)
        for j in range(4):
            items[j] = x[i * 4 + j]
        out[0, i] = coop.block.reduce(x[i], op, threads=T, algorithm=ALG_R)
        out[1, i] = coop.block.all_reduce(items, op, i % 300 + 1, threads=T, algorithm=ALG_R)
        out[2, i] = coop.block.inclusive_scan(x[i], op, threads=T, algorithm=ALG_S)
        out[3, i] = coop.block.exclusive_scan(items, op, x[0], items, threads=T, algorithm=ALG_S)
        for j in range(4):
            out[4 + j, i] = items[j]

    return kernel


_BLOCK_VARIANTS = [
    ("warp_reductions", "raking", None),
    ("raking", "warp_scans", 128),
    ("raking_commutative_only", "raking_memoize", 256),
    ("warp_reductions", "warp_scans", 96),
]
for _name, (_np_dtype, _nb_type) in SCALARS.items():
    for _r, _s, _t in _BLOCK_VARIANTS if _name in ("int32", "float64", "float16") else _BLOCK_VARIANTS[:1]:
        case(f"block-{_name}-{_r}-{_s}-threads{_t}", (_nb_type[::1], _nb_type[:, ::1]))(
            block_kernel(_np_dtype, _op_for(_name), _r, _s, _t)
        )


@case("block-sums-and-callback", (types.int64[::1], types.int64[:, ::1]))
def block_sums_and_callback(x, out):
    i = cuda.grid(1)
    items = cuda.local.array(8, np.int64)
    state = cuda.local.array(1, np.int64)
    state[0] = 0
    for j in range(8):
        items[j] = x[i * 8 + j]
    out[0, i] = coop.block.sum(items, threads=256)
    out[1, i] = coop.block.all_sum(x[i], valid_items=100)
    out[2, i] = coop.block.exclusive_sum(items, items, prefix_op=running_total, prefix_state=state)
    out[3, i] = coop.block.inclusive_sum(items, items, threads=512, algorithm="warp_scans")
    for j in range(8):
        out[4 + j, i] = items[j]


@cuda.jit(device=True)
def running_total(state, block_aggregate):
    prefix = state[0]
    state[0] += block_aggregate
    return prefix


def argmax_kernel(op):
    @cuda.jit
    def kernel(x, out_value, out_index):
        i = cuda.grid(1)
        v, j = coop.warp.all_reduce((x[i], np.int32(i)), op, 16)
        out_value[i] = v
        out_index[i] = j
        v, j = coop.warp.inclusive_scan((x[i], np.int32(i)), op)
        out_value[i] += v
        out_index[i] += j

    return kernel


for _name in ("float32", "int64", "float64"):
    _nb_type = SCALARS[_name][1]
    case(f"argmax-{_name}", (_nb_type[::1], _nb_type[::1], types.int32[::1]))(
        argmax_kernel(coop.ops.argmax)
    )


@case("operator-kinds", (types.int32[::1], types.int32[:, ::1]))
def operator_kinds(x, out):
    i = cuda.grid(1)
    out[0, i] = coop.warp.reduce(x[i], operator.add)
    out[1, i] = coop.warp.all_reduce(x[i], lambda a, b: a if a > b else b)
    out[2, i] = coop.warp.inclusive_scan(x[i], coop.ops.bit_or, width=8)
    out[3, i] = coop.warp.tail_segmented_reduce(x[i], x[i] & 1, operator.mul)


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


for _name, _threads, _n, _values, _descending in (
    ("int32", 128, 4, False, False),
    ("int32", 256, 8, True, False),
    ("int32", 512, 8, False, False),
    ("float32", 96, 7, True, True),
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


# -- misuse: one kernel per mistake, with the message it must produce -------------------

RUN_TIME_WIDTH = "coop.warp.reduce: width must be a compile-time constant"


@misuse("width-not-constant", (types.int32[::1], types.int32[::1]), RUN_TIME_WIDTH)
def width_not_constant(x, out):
    i = cuda.grid(1)
    out[i] = coop.warp.reduce(x[i], operator.add, x[0])


@misuse(
    "width-not-power-of-two",
    (types.int32[::1], types.int32[::1]),
    "coop.warp.sum: width must be a power of two from 1 to 32 (1, 2, 4, 8, 16, 32), got 12",
)
def width_not_power_of_two(x, out):
    i = cuda.grid(1)
    out[i] = coop.warp.sum(x[i], 12)


@misuse(
    "width-above-32",
    (types.int32[::1], types.int32[::1]),
    "coop.warp.inclusive_scan: width must be a power of two from 1 to 32 (1, 2, 4, 8, 16, 32), got 64",
)
def width_above_32(x, out):
    i = cuda.grid(1)
    out[i] = coop.warp.inclusive_scan(x[i], operator.add, width=64)


@misuse(
    "unsupported-dtype",
    (types.NPDatetime("s")[::1], types.NPDatetime("s")[::1]),
    "coop.warp.all_reduce: value has unsupported type datetime64[s]",
)
def unsupported_dtype(x, out):
    i = cuda.grid(1)
    out[i] = coop.warp.all_reduce(x[i], coop.ops.max)


@misuse(
    "thread-sum-of-bool-items",
    (types.boolean[::1], types.boolean[::1]),
    "coop.thread.inclusive_sum: items must hold numbers to sum, got bool (bools are counted one per thread",
)
def thread_sum_of_bool_items(x, out):
    i = cuda.grid(1)
    items = cuda.local.array(2, np.bool_)
    items[0], items[1] = x[i], x[i]
    out[i] = coop.thread.inclusive_sum(items, items)


@case("bool-sums-count", (types.boolean[::1], types.int32[:, ::1]))
def bool_sums_count(x, out):
    i = cuda.grid(1)
    items = cuda.local.array(4, np.bool_)
    for j in range(4):
        items[j] = x[i * 4 + j]
    out[0, i] = coop.warp.sum(x[i])
    out[1, i] = coop.warp.all_sum(items, valid_items=i % 100)
    out[2, i] = coop.block.sum(items, threads=128)
    out[3, i] = coop.block.exclusive_sum(x[i], threads=128)


@misuse(
    "operator-arity",
    (types.int32[::1], types.int32[::1]),
    "coop.warp.reduce: op must take 2 values, but it takes 1",
)
def operator_arity(x, out):
    i = cuda.grid(1)
    out[i] = coop.warp.reduce(x[i], lambda a: a)


@misuse(
    "operator-result-type",
    (types.float32[::1], types.float32[::1]),
    "coop.warp.exclusive_scan: op returns UniTuple(float32 x 2), which cannot be converted to float32",
)
def operator_result_type(x, out):
    i = cuda.grid(1)
    out[i] = coop.warp.exclusive_scan(x[i], lambda a, b: (a, b), x[0])


@misuse(
    "operator-wrong-type",
    (types.complex64[::1], types.complex64[::1]),
    "coop.warp.reduce: op cannot be applied to 2 values of type complex64",
)
def operator_wrong_type(x, out):
    i = cuda.grid(1)
    out[i] = coop.warp.reduce(x[i], coop.ops.bit_and)


@misuse(
    "thread-prefix-array",
    (types.int32[::1], types.int32[::1]),
    "coop.thread.reduce: prefix must be one value, not an array",
)
def thread_prefix_array(x, out):
    items = cuda.local.array(2, np.int32)
    items[0], items[1] = x[0], x[1]
    out[0] = coop.thread.reduce(items, operator.add, items)


@misuse(
    "scan-initial-not-convertible",
    (types.float32[::1], types.float32[::1]),
    "coop.block.exclusive_scan: initial must be convertible to float32, got UniTuple(float32 x 2)",
)
def scan_initial_not_convertible(x, out):
    i = cuda.grid(1)
    out[i] = coop.block.exclusive_scan(x[i], operator.add, (x[0], x[1]))


@misuse(
    "items-not-1d",
    (types.int32[::1], types.int32[::1]),
    "coop.thread.reduce: items must be a 1-D items array (cuda.local.array(N, dtype)), got 2-D",
)
def items_not_1d(x, out):
    i = cuda.grid(1)
    items = cuda.local.array((2, 2), np.int32)
    items[0, 0] = x[i]
    out[i] = coop.thread.reduce(items, operator.add)


@misuse(
    "warp-items-not-1d",
    (types.int32[::1], types.int32[::1]),
    "coop.warp.all_sum: value must be a 1-D items array (cuda.local.array(N, dtype)), got 2-D",
)
def warp_items_not_1d(x, out):
    i = cuda.grid(1)
    items = cuda.local.array((2, 2), np.int32)
    items[0, 0] = x[i]
    out[i] = coop.warp.all_sum(items)


@misuse(
    "output-dtype",
    (types.int32[::1], types.int32[::1]),
    "coop.warp.inclusive_scan: output must hold int32 items like the input, got int64",
)
def output_dtype(x, out):
    i = cuda.grid(1)
    items = cuda.local.array(4, np.int32)
    wide = cuda.local.array(4, np.int64)
    items[0] = x[i]
    out[i] = coop.warp.inclusive_scan(items, operator.add, wide)


@misuse(
    "valid-items-type",
    (types.float32[::1], types.float32[::1]),
    "coop.warp.reduce: valid_items must be an integer, got float32",
)
def valid_items_type(x, out):
    i = cuda.grid(1)
    out[i] = coop.warp.reduce(x[i], operator.add, 32, x[0])


@misuse(
    "threads-not-constant",
    (types.int32[::1], types.int32[::1]),
    "coop.block.sum: threads must be a compile-time constant",
)
def threads_not_constant(x, out):
    i = cuda.grid(1)
    out[i] = coop.block.sum(x[i], threads=cuda.blockDim.x)


@misuse(
    "threads-above-1024",
    (types.int32[::1], types.int32[::1]),
    "coop.block.exclusive_sum: threads must be from 1 to 1024 (a CUDA block's limit), got 2048",
)
def threads_above_1024(x, out):
    i = cuda.grid(1)
    out[i] = coop.block.exclusive_sum(x[i], threads=2048)


@misuse(
    "threads-shape-not-constant",
    (types.int32[::1], types.int32[::1]),
    "coop.block.all_sum: threads must be a compile-time constant",
)
def threads_shape_not_constant(x, out):
    i = cuda.grid(1)
    out[i] = coop.block.all_sum(x[i], threads=(cuda.blockDim.x, 1))


@misuse(
    "threads-from-local-variables",
    (types.int32[::1], types.int32[::1]),
    "coop.block.reduce: threads must be a compile-time constant",
)
def threads_from_local_variables(x, out):
    i = cuda.grid(1)
    n = 64
    if x[0] > 0:
        n = 128  # two different values: Numba types n as a run-time int64
    out[i] = coop.block.reduce(x[i], operator.add, threads=n)


@misuse(
    "algorithm-not-constant",
    (types.int32[::1], types.int32[::1]),
    "coop.block.inclusive_sum: algorithm must be a constant string",
)
def algorithm_not_constant(x, out):
    i = cuda.grid(1)
    algorithm = "raking" if x[0] > 0 else "warp_scans"
    out[i] = coop.block.inclusive_sum(x[i], algorithm=algorithm)


@misuse(
    "items-per-thread-from-device-function-parameter",
    (types.int32[::1], types.int32[::1]),
    "coop.block.load: items_per_thread must be a compile-time constant",
)
def items_per_thread_from_parameter(x, out):
    load_first_item(x, out, len(x))


@cuda.jit(device=True)
def load_first_item(x, out, n):
    items = cuda.local.array(2, np.int32)
    coop.block.load(x, items, items_per_thread=n)
    out[cuda.grid(1)] = items[0]


@misuse(
    "store-to-read-only-array",
    (types.int32[::1], types.int32[::1]),
    "coop.block.store: dst is a read-only array",
)
def store_to_read_only_array(x, out):
    items = cuda.local.array(2, np.int32)
    items[0], items[1] = x[0], x[1]
    coop.block.store(LOOKUP_TABLE, items)


LOOKUP_TABLE = np.arange(512, dtype=np.int32)  # a global array: a read-only constant in kernels


@misuse(
    "output-read-only",
    (types.int32[::1], types.int32[::1]),
    "coop.warp.inclusive_scan: output is a read-only array",
)
def output_read_only(x, out):
    items = cuda.local.array(2, np.int32)
    items[0], items[1] = x[0], x[1]
    out[0] = coop.warp.inclusive_scan(items, operator.add, LOOKUP_TABLE[:2])


@misuse(
    "block-output-dtype",
    (types.float32[::1], types.float32[::1]),
    "coop.block.exclusive_scan: output must hold float32 items like the input, got float64",
)
def block_output_dtype(x, out):
    i = cuda.grid(1)
    items = cuda.local.array(4, np.float32)
    wide = cuda.local.array(4, np.float64)
    items[0] = x[i]
    out[i] = coop.block.exclusive_scan(items, operator.add, 0, wide)


@misuse(
    "unknown-algorithm",
    (types.int32[::1], types.int32[::1]),
    "coop.block.reduce: algorithm must be one of 'warp_reductions', 'raking', 'raking_commutative_only'; got 'warp_scans'",
)
def unknown_algorithm(x, out):
    i = cuda.grid(1)
    out[i] = coop.block.reduce(x[i], operator.add, algorithm="warp_scans")


@misuse(
    "prefix-op-without-state",
    (types.int32[::1], types.int32[::1]),
    "coop.block.exclusive_sum: prefix_state is required with prefix_op",
)
def prefix_op_without_state(x, out):
    i = cuda.grid(1)
    out[i] = coop.block.exclusive_sum(x[i], prefix_op=running_total)


@misuse(
    "called-on-host",
    None,
    "coop.warp.sum was called from host code: call coop.warp.sum inside a @cuda.jit kernel",
)
def called_on_host():
    return coop.warp.sum(1)


# -- temp_storage and arrays too small (coop._core.misuse) --------------------------------

TEMP_BYTES = max(
    coop.block.exclusive_sum.temp_storage_bytes(np.int32, 128),
    coop.block.all_reduce.temp_storage_bytes(np.int32, 128, algorithm="raking"),
)
SMALL_TEMP_BYTES = TEMP_BYTES // 4


@case("block-temp-storage-shared", (types.int32[::1], types.int32[::1]))
def block_temp_storage_shared(x, out):
    temp = cuda.shared.array(TEMP_BYTES, np.uint8, alignment=8)
    i = cuda.grid(1)
    items = cuda.local.array(4, np.int32)
    for k in range(4):
        items[k] = x[i * 4 + k]
    total = coop.block.exclusive_sum(items, items, threads=128, temp_storage=temp)
    top = coop.block.all_reduce(items[3], coop.ops.max, threads=128, algorithm="raking", temp_storage=temp)
    for k in range(4):
        out[i * 4 + k] = items[k] + total - top


@misuse(
    "output-too-short",
    (types.int32[::1], types.int32[::1]),
    "coop_error__coop_block_inclusive_scan__output_too_short",
)
def output_too_short(x, out):
    items = cuda.local.array(4, np.int32)
    shorter = cuda.local.array(3, np.int32)
    for k in range(4):
        items[k] = x[k]
    coop.block.inclusive_scan(items, operator.add, shorter)
    out[0] = shorter[2]


@misuse(
    "temp-storage-too-small",
    (types.int32[::1], types.int32[::1]),
    "coop_error__coop_block_exclusive_sum__temp_storage_too_small",
)
def temp_storage_too_small(x, out):
    temp = cuda.shared.array(SMALL_TEMP_BYTES, np.uint8, alignment=8)
    i = cuda.grid(1)
    out[i] = coop.block.exclusive_sum(x[i], threads=128, temp_storage=temp)


@misuse(
    "temp-storage-not-an-array",
    (types.int32[::1], types.int32[::1]),
    "coop.block.sum: temp_storage must be a 1-D shared array of numbers",
)
def temp_storage_not_an_array(x, out):
    i = cuda.grid(1)
    out[i] = coop.block.sum(x[i], temp_storage=3)


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
STATIC_SHARED_PAST = "bytes of static shared memory a kernel may have; pass a temp_storage= array"


@misuse(
    "warp-exchange-tile-too-large",
    (types.float64[::1], types.float64[::1]),
    "coop.warp.exchange.blocked_to_striped: items_per_thread makes 1024 x 16 float64 items, 135424 bytes of shared "
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
    "coop.warp.merge_sort: items_per_thread makes 32 logical warps of 32 x 8 keys, 65792 bytes of shared memory: "
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


# -- end of exchanges ------------------------------------------------------------------------


# -- loads, stores, transform and shuffles (coop.block.load/store/transform/shuffle, ------
# -- coop.warp.load/store) -------------------------------------------------------------------
# Names start with "load_store-" or "block_shuffle-", not "warp": warp loads use no shuffles.


def load_store_kernel(dtype, algorithm, threads, items):
    T, N, ALG = threads, items, algorithm

    @cuda.jit
    def kernel(x, out, valid):
        values = cuda.local.array(N, dtype)
        base = cuda.blockIdx.x * T * N
        coop.block.load(x[base:], values, threads=T, algorithm=ALG)
        coop.block.store(out[base:], values, threads=T, algorithm=ALG)
        coop.block.load(x[base:], values, threads=T, algorithm=ALG, valid_items=valid, oob_default=x[0])
        coop.block.store(out[base:], values, threads=T, algorithm=ALG, valid_items=valid)
        warp_base = (cuda.grid(1) // 16) * 16 * N
        coop.warp.load(x[warp_base:], values, 16, algorithm=ALG, valid_items=valid)
        coop.warp.store(out[warp_base:], values, width=16, algorithm=ALG)

    return kernel


for _name, (_np_dtype, _nb_type) in SCALARS.items():
    for _alg in ("direct", "striped", "vectorize"):
        if _alg != "vectorize" and _name not in ("bool", "int8", "float16", "float64", "complex128"):
            continue
        for _n in (4, 3) if _alg == "vectorize" and _name in ("int8", "int32", "complex64") else (4,):
            case(f"load_store-{_name}-{_alg}-items{_n}", (_nb_type[::1], _nb_type[::1], types.int32))(
                load_store_kernel(_np_dtype, _alg, 128, _n)
            )


@case("load_store-items16-strided-arrays", (types.int8[:], types.int8[:], types.int64))
def load_store_items16_strided_arrays(x, out, valid):
    values = cuda.local.array(16, np.int8)
    base = cuda.blockIdx.x * 64 * 16
    coop.block.load(x[base:], values, algorithm="vectorize")
    coop.block.store(out[base:], values, threads=64, items_per_thread=8, algorithm="striped", valid_items=valid)


def transpose_kernel(dtype, algorithm, threads, items):
    T, N, ALG = threads, items, algorithm
    BYTES = coop.block.load.temp_storage_bytes(dtype, T, N, algorithm=ALG)

    @cuda.jit
    def kernel(x, out, valid):
        values = cuda.local.array(N, dtype)
        temp = cuda.shared.array(BYTES, np.uint8, alignment=16)
        base = cuda.blockIdx.x * T * N
        coop.block.load(x[base:], values, threads=T, items_per_thread=N, algorithm=ALG)
        coop.block.store(out[base:], values, threads=T, items_per_thread=N, algorithm=ALG)
        coop.block.load(x[base:], values, threads=T, items_per_thread=N, algorithm=ALG, valid_items=valid,
                        oob_default=x[0], temp_storage=temp)
        coop.block.store(out[base:], values, threads=T, items_per_thread=N, algorithm=ALG, valid_items=valid,
                         temp_storage=temp)
        warp_base = (cuda.grid(1) // 16) * 16 * N
        coop.warp.load(x[warp_base:], values, 16, items_per_thread=N, algorithm="transpose", threads=T)
        coop.warp.store(out[warp_base:], values, width=16, items_per_thread=N, algorithm="transpose", threads=T,
                        valid_items=valid)

    return kernel


for _name in ("bool", "int8", "int32", "float64", "complex128"):
    _np_dtype, _nb_type = SCALARS[_name]
    for _alg in ("transpose", "warp_transpose", "warp_transpose_timesliced"):
        _t = 96 if _alg == "warp_transpose" and _name == "int8" else 128
        case(f"load_store-{_name}-{_alg}-threads{_t}", (_nb_type[::1], _nb_type[::1], types.int32))(
            transpose_kernel(_np_dtype, _alg, _t, 8 if _name == "int32" else 4)
        )
# 16 warps taking turns (the benchmark's 512 x 8): NVVM unrolls a plain loop of 16 turns
# only twice; the turns must be straight-line code, as CUB's
case("load_store-int32-warp_transpose_timesliced-threads512", (types.int32[::1], types.int32[::1], types.int32))(
    transpose_kernel(np.int32, "warp_transpose_timesliced", 512, 8)
)


@case("load_store-transform", (types.int16[::1], types.float32[::1], types.int64))
def load_store_transform(x, out, valid):
    base = cuda.blockIdx.x * 128 * 4
    coop.block.transform(x[base:], out[base:], lambda v: v * 3 + 1, threads=128, items_per_thread=4,
                         algorithm="vectorize")
    coop.block.transform(x[base:], out[base:], lambda v: -v, threads=128,
                         items_per_thread=4, algorithm="striped", valid_items=valid)
    coop.block.transform(x[base:], out[base:], lambda v: v, items_per_thread=4, valid_items=valid)
    coop.block.transform(x[base:], out[base:], lambda v: v + 2, threads=128, items_per_thread=4,
                         algorithm="warp_transpose", valid_items=valid)


def block_shuffle_kernel(dtype, threads):
    T = threads

    @cuda.jit
    def kernel(x, out):
        i = cuda.grid(1)
        values = cuda.local.array(3, dtype)
        for j in range(3):
            values[j] = x[3 * i + j]
        out[0, i] = coop.block.shuffle.offset(x[i], -3, threads=T)
        out[1, i] = coop.block.shuffle.rotate(x[i], 5, threads=T)
        out[2, i] = coop.block.shuffle.up(values, values, threads=T)
        out[3, i] = coop.block.shuffle.down(values, values, threads=T)
        for j in range(3):
            out[4 + j, i] = values[j]

    return kernel


for _name in ("bool", "int8", "int32", "float16", "float64", "complex128"):
    _np_dtype, _nb_type = SCALARS[_name]
    for _t in (128, None) if _name == "int32" else (96,):
        case(f"block_shuffle-{_name}-threads{_t}", (_nb_type[::1], _nb_type[:, ::1]))(block_shuffle_kernel(_np_dtype, _t))


@misuse(
    "load-unknown-algorithm",
    (types.int32[::1], types.int32[::1]),
    "coop.block.load: algorithm must be one of 'direct', 'striped', 'warp_striped', 'vectorize', 'transpose', "
    "'warp_transpose', 'warp_transpose_timesliced'; got 'transposed'",
)
def load_unknown_algorithm(x, out):
    values = cuda.local.array(4, np.int32)
    coop.block.load(x, values, threads=64, algorithm="transposed")
    out[0] = values[0]


@misuse(
    "warp-load-unknown-algorithm",
    (types.int32[::1], types.int32[::1]),
    "coop.warp.store: algorithm must be one of 'direct', 'striped', 'vectorize', 'transpose'; got 'vectorized'",
)
def warp_load_unknown_algorithm(x, out):
    values = cuda.local.array(4, np.int32)
    values[0] = x[0]
    coop.warp.store(out, values, algorithm="vectorized")


@misuse(
    "store-striped-without-threads",
    (types.int32[::1], types.int32[::1]),
    "coop.block.store: threads is required by algorithm 'striped': the block's thread count, a compile-time constant",
)
def store_striped_without_threads(x, out):
    values = cuda.local.array(4, np.int32)
    values[0] = x[0]
    coop.block.store(out, values, algorithm="striped")


@misuse(
    "load-warp-striped-without-threads",
    (types.int32[::1], types.int32[::1]),
    "coop.block.load: threads is required by algorithm 'warp_striped': the block's thread count, a compile-time "
    "constant",
)
def load_warp_striped_without_threads(x, out):
    values = cuda.local.array(4, np.int32)
    coop.block.load(x, values, algorithm="warp_striped")
    out[0] = values[0]


@misuse(
    "load-threads-not-constant",
    (types.int32[::1], types.int32[::1]),
    "coop.block.load: threads must be a compile-time constant",
)
def load_threads_not_constant(x, out):
    values = cuda.local.array(4, np.int32)
    coop.block.load(x, values, threads=cuda.blockDim.x, algorithm="striped")
    out[0] = values[0]


@misuse(
    "load-items-dtype",
    (types.float32[::1], types.float32[::1]),
    "coop.block.load: items must hold float32 items like src, got float64",
)
def load_items_dtype(x, out):
    values = cuda.local.array(4, np.float64)
    coop.block.load(x, values)
    out[0] = values[0]


@misuse(
    "warp-store-items-dtype",
    (types.int32[::1], types.int32[::1]),
    "coop.warp.store: items must hold int32 items like dst, got int64",
)
def warp_store_items_dtype(x, out):
    values = cuda.local.array(4, np.int64)
    values[0] = x[0]
    coop.warp.store(out, values, 8)


@misuse(
    "load-transpose-items-per-thread-missing",
    (types.int32[::1], types.int32[::1]),
    "coop.block.load: items_per_thread is required by algorithm 'warp_transpose': the items per thread as a "
    "compile-time constant",
)
def load_transpose_items_per_thread_missing(x, out):
    values = cuda.local.array(4, np.int32)
    coop.block.load(x, values, threads=64, algorithm="warp_transpose")
    out[0] = values[0]


@misuse(
    "warp-store-transpose-threads-missing",
    (types.int32[::1], types.int32[::1]),
    "coop.warp.store: threads is required by algorithm 'transpose': the block's thread count",
)
def warp_store_transpose_threads_missing(x, out):
    values = cuda.local.array(4, np.int32)
    values[0] = x[0]
    coop.warp.store(out, values, items_per_thread=4, algorithm="transpose")


@misuse(
    "warp-load-transpose-partial-logical-warps",
    (types.int32[::1], types.int32[::1]),
    "coop.warp.load: threads must be a multiple of width (16)",
)
def warp_load_transpose_partial_logical_warps(x, out):
    values = cuda.local.array(4, np.int32)
    coop.warp.load(x, values, 16, items_per_thread=4, algorithm="transpose", threads=40)
    out[0] = values[0]


@misuse(
    "load-transpose-too-big",
    (types.float64[::1], types.float64[::1]),
    "coop.block.load: items_per_thread makes a tile of 1024 x 8 float64 items",
)
def load_transpose_too_big(x, out):
    values = cuda.local.array(8, np.float64)
    coop.block.load(x, values, threads=1024, items_per_thread=8, algorithm="transpose")
    out[0] = values[0]


@misuse(
    "load-src-not-1d",
    (types.int32[:, ::1], types.int32[::1]),
    "coop.block.load: src must be a 1-D array, got 2-D",
)
def load_src_not_1d(x, out):
    values = cuda.local.array(4, np.int32)
    coop.block.load(x, values)
    out[0] = values[0]


@misuse(
    "load-oob-default-without-valid-items",
    (types.int32[::1], types.int32[::1]),
    "coop.block.load: oob_default is only used with valid_items",
)
def load_oob_default_without_valid_items(x, out):
    values = cuda.local.array(4, np.int32)
    coop.block.load(x, values, oob_default=0)
    out[0] = values[0]


@misuse(
    "warp-load-oob-default-type",
    (types.int32[::1], types.int32[::1]),
    "coop.warp.load: oob_default must be convertible to the items' type int32, got complex128",
)
def warp_load_oob_default_type(x, out):
    values = cuda.local.array(4, np.int32)
    coop.warp.load(x, values, valid_items=5, oob_default=1j)
    out[0] = values[0]


@misuse(
    "store-valid-items-type",
    (types.float32[::1], types.float32[::1]),
    "coop.block.store: valid_items must be an integer, got float32",
)
def store_valid_items_type(x, out):
    values = cuda.local.array(4, np.float32)
    values[0] = x[0]
    coop.block.store(out, values, valid_items=x[0])


@misuse(
    "load-items-shorter-than-items-per-thread",
    (types.int32[::1], types.int32[::1]),
    "coop_error__coop_block_load__items_too_short",
)
def load_items_shorter_than_items_per_thread(x, out):
    values = cuda.local.array(3, np.int32)
    coop.block.load(x, values, items_per_thread=4)
    out[0] = values[0]


@misuse(
    "transform-items-per-thread-missing",
    (types.int32[::1], types.int32[::1]),
    "coop.block.transform: items_per_thread is required",
)
def transform_items_per_thread_missing(x, out):
    coop.block.transform(x, out, lambda v: v + 1, threads=128)


@misuse(
    "transform-op-result-type",
    (types.int32[::1], types.float32[::1]),
    "coop.block.transform: op returns UniTuple(int32 x 2), which cannot be converted to float32",
)
def transform_op_result_type(x, out):
    coop.block.transform(x, out, lambda v: (v, v), items_per_thread=2)


@misuse(
    "shuffle-up-output-dtype",
    (types.int32[::1], types.int32[::1]),
    "coop.block.shuffle.up: output must hold int32 items like the input, got int64",
)
def shuffle_up_output_dtype(x, out):
    values = cuda.local.array(4, np.int32)
    wide = cuda.local.array(4, np.int64)
    values[0] = x[0]
    out[0] = coop.block.shuffle.up(values, wide)


@misuse(
    "shuffle-offset-items",
    (types.int32[::1], types.int32[::1]),
    "coop.block.shuffle.offset: value must be one value per thread (for items arrays use up or down)",
)
def shuffle_offset_items(x, out):
    values = cuda.local.array(4, np.int32)
    values[0] = x[0]
    coop.block.shuffle.offset(values, 1)


@misuse(
    "shuffle-threads-not-constant",
    (types.int32[::1], types.int32[::1]),
    "coop.block.shuffle.rotate: threads must be a compile-time constant",
)
def shuffle_threads_not_constant(x, out):
    i = cuda.grid(1)
    out[i] = coop.block.shuffle.rotate(x[i], 1, threads=cuda.blockDim.x)


@misuse(
    "shuffle-distance-type",
    (types.float32[::1], types.float32[::1]),
    "coop.block.shuffle.offset: distance must be an integer, got float32",
)
def shuffle_distance_type(x, out):
    i = cuda.grid(1)
    out[i] = coop.block.shuffle.offset(x[i], x[0])


@misuse(
    "shuffle-down-output-too-short",
    (types.int32[::1], types.int32[::1]),
    "coop_error__coop_block_shuffle_down__output_too_short",
)
def shuffle_down_output_too_short(x, out):
    values = cuda.local.array(4, np.int32)
    shorter = cuda.local.array(3, np.int32)
    for k in range(4):
        values[k] = x[k]
    out[0] = coop.block.shuffle.down(values, shorter)
    out[1] = shorter[2]


# -- end of loads, stores, transform and shuffles --------------------------------------------


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


# -- coop.device's kernels ------------------------------------------------------------------
# Each algorithm's kernels for float16, bool and int8 (where it takes them), and the
# scans and reduction of tuple values, typed for the arguments their host side passes
# (NumPy stand-ins: Numba types an array as it types a device array of its dtype). A
# float16 constant in a kernel (a closure's np.float16(0)) is invalid IR to NVVM with
# numba-cuda 0.30: the GPU found one in inclusive_scan without initial, which the
# simulator never compiles.

DEVICE_DTYPES = ("float16", "bool", "int8")


def _types_of(*stand_ins):
    return tuple(typeof(value) for value in stand_ins)


def _array(dtype):
    return np.empty(1, dtype)


def _tile_states(value_dtype):
    """``TileStates(...).arrays`` and its epoch (coop.device.lookback), as stand-ins."""
    from coop.device import lookback

    status = _array(np.uint64 if lookback._packs(value_dtype) else np.uint32)
    if isinstance(value_dtype, tuple):
        values = tuple(_array(member) for member in value_dtype)
        return status, values, values, np.uint32(1)
    if lookback._packs(value_dtype):
        return status, status, status, np.uint32(1)
    return status, _array(value_dtype), _array(value_dtype), np.uint32(1)


@cuda.jit(device=True)
def _nonzero(value):
    return np.float32(value) != 0  # (float16 compared as float32: Numba's float16 compare is a call)


@cuda.jit(device=True)
def _segmented_sum(a, b):
    """(head flag, value) pairs: associative, not commutative."""
    return a[0] | b[0], b[1] if b[0] else a[1] + b[1]


def device_cases(name):
    """The kernels of every coop.device algorithm for items of dtype ``name``."""
    device = {module: importlib.import_module(f"coop.device.{module}")
              for module in ("scan", "reduce", "select", "histogram", "segmented_reduce", "radix_sort")}
    dtype = np.dtype(SCALARS[name][0])
    op = _op_for(name)
    for exclusive, has_initial in ((False, False), (False, True), (True, True)):
        kernel, _ = device["scan"]._scan_kernel(op, dtype, dtype, exclusive, has_initial)
        form = "exclusive" if exclusive else "inclusive" if has_initial else "inclusive-without-initial"
        case(f"device-scan-{form}-{name}", _types_of(_array(dtype), _array(dtype), 1, *_tile_states(dtype),
                                                     dtype.type(0)))(kernel)
    kernel, _, _ = device["reduce"]._kernel(op, dtype, dtype)
    case(f"device-reduce-{name}", _types_of(_array(dtype), 1, _array(dtype), _array(np.uint32), dtype.type(0),
                                            _array(dtype)))(kernel)
    kernel = device["segmented_reduce"]._segment_kernel(op, dtype, dtype)
    case(f"device-segmented_reduce-{name}", _types_of(_array(dtype), _array(dtype), _array(np.int64),
                                                      dtype.type(0)))(kernel)
    for form, predicate, flags in (("select_flagged", None, np.bool_), ("partition", _nonzero, None)):
        kernel, _ = device["select"]._select_kernel(predicate, dtype, flags, np.int32, form == "partition")
        flag_array = _array(flags if flags is not None else dtype)  # (d_in where there are no flags)
        case(f"device-{form}-{name}", _types_of(_array(dtype), flag_array, _array(dtype), _array(np.int64), 1,
                                                *_tile_states(np.int32)))(kernel)
    if dtype.kind in "iuf":  # (histogram_even's samples)
        kernel, _, position_type = device["histogram"]._histogram_kernel(dtype, np.uint32, 10)
        case(f"device-histogram_even-{name}", _types_of(_array(dtype), 1, _array(np.uint32), _array(np.uint32),
                                                        position_type(0), position_type(1)))(kernel)
    sort = device["radix_sort"]
    key_bits = sort._key_bits(dtype)
    digit_bits, passes = sort._passes(0, key_bits)
    kernel, _ = sort._histogram_kernel(dtype, passes, digit_bits, False)
    case(f"device-radix_sort-histogram-{name}", _types_of(_array(dtype), 1, 0, key_bits, _array(np.int32),
                                                          _array(np.int32)))(kernel)
    for form, values in (("keys", None), ("pairs", dtype)):
        kernel, _ = sort._onesweep_kernel(dtype, values, digit_bits, False)
        carried = _array(dtype if values is None else values)
        status, _, _, epoch = _tile_states(np.uint32)
        case(f"device-radix_sort-onesweep-{form}-{name}", _types_of(_array(dtype), _array(dtype), carried, carried, 1,
                                                                    _array(np.int32), 0, 0, status, epoch))(kernel)


def device_tuple_cases(dtypes):
    """The scans and reduction of tuple values of ``dtypes``."""
    scan, reduce = (importlib.import_module(f"coop.device.{module}") for module in ("scan", "reduce"))
    dtypes = tuple(np.dtype(d) for d in dtypes)
    values = tuple(_array(d) for d in dtypes)
    initial = tuple(d.type(0) for d in dtypes)
    label = "-".join(d.name for d in dtypes)
    for exclusive, has_initial in ((False, False), (False, True), (True, True)):
        kernel, _ = scan._tuple_scan_kernel(_segmented_sum, dtypes, dtypes, exclusive, has_initial)
        form = "exclusive" if exclusive else "inclusive" if has_initial else "inclusive-without-initial"
        case(f"device-tuple-scan-{form}-{label}", _types_of(values, values, 1, *_tile_states(dtypes),
                                                            initial))(kernel)
    for name, op in (("segmented_sum", _segmented_sum), ("argmax", coop.ops.argmax)):
        kernel, _, _ = reduce._tuple_kernel(op, dtypes, dtypes)
        case(f"device-tuple-reduce-{name}-{label}", _types_of(values, 1, values, _array(np.uint32), initial,
                                                              values))(kernel)


for _name in DEVICE_DTYPES:
    device_cases(_name)
device_tuple_cases((np.int32, np.float32))


# -- compiling ---------------------------------------------------------------------------

LOCAL_MEMORY = re.compile(r"\.local\b|__local_depot")
CALL = re.compile(r"^\s*call(\.uni)?\b", re.MULTILINE)
# a shared-memory access through a 64-bit address register (coop compiles shared
# pointers as 32-bit, as nvcc does: coop._core.backend)
WIDE_SHARED_ACCESS = re.compile(r"\b(ld|st|atom|red)\.shared\S*\s+[^;]*\[%rd")
LINK_ERROR = re.compile(r"\.extern \.func (coop_error__\w+)")
LABEL = re.compile(r"^(\$?\w+):", re.MULTILINE)
BRANCH = re.compile(r"\bbra(?:\.uni)?\s+(\$?\w+);")


def backward_branches(ptx):
    """Branches to a label defined before them: the loops left in the code."""
    defined = {match.group(1): match.start() for match in LABEL.finditer(ptx)}
    return sum(1 for match in BRANCH.finditer(ptx) if defined.get(match.group(1), len(ptx)) < match.start())


def compile_case(name):
    fn, sig = CASES[name]
    try:
        ptx, assembly_error = compile_for_sm90(fn, sig)
    except Exception as exc:  # reported, and failed, by the test of this case
        return {"error": f"{type(exc).__name__}: {str(exc)[-3000:]}"}
    return {
        "error": None,
        "assembly_error": assembly_error,
        "local_memory": bool(LOCAL_MEMORY.search(ptx)),
        "calls": len(CALL.findall(ptx)),
        "shuffles": ptx.count("shfl.sync"),
        "link_errors": LINK_ERROR.findall(ptx),
        "debug_checks": ptx.count("trap;") + ptx.count("vprintf"),
        "loops": backward_branches(ptx),
        "wide_shared_addresses": len(WIDE_SHARED_ACCESS.findall(ptx)),
    }


# -- debug mode: compiled only with COOP_DEBUG=1 (main(["--debug-probe"]) in a subprocess) --


def debug_probe(x, out, n):
    i = cuda.grid(1)
    items = cuda.local.array(4, np.int32)
    for k in range(4):
        items[k] = x[4 * i + k]
    coop.thread.inclusive_sum(items, out[4 * i : 4 * i + n])  # a length known at run time
    out[i] += coop.block.exclusive_sum(items[0], threads=(16, 8))


def compile_debug_probe():
    from coop import config

    ptx, _ = cuda.compile_ptx(debug_probe, (types.int32[::1], types.int32[::1], types.int64), cc=(9, 0))
    return {"debug": config.debug, "traps": ptx.count("trap;"), "prints": ptx.count("vprintf")}


def compile_misuse(name):
    fn, sig, _ = MISUSES[name]
    try:
        if sig is None:
            fn()
        else:
            ptx, _ = cuda.compile_ptx(fn, sig, cc=(9, 0))
            # arrays too small for a call survive as undefined functions (coop._core.misuse):
            # the kernel would fail to link, naming them
            undefined = LINK_ERROR.findall(ptx)
            if undefined:
                return {"error": f"undefined at link time: {', '.join(undefined)}"}
    except Exception as exc:  # the message is what is checked
        return {"error": f"{type(exc).__name__}: {exc}"}
    from coop._core import misuse

    return {"error": None, "size_checks": misuse.size_checks_available()}


def main():
    if sys.argv[1:] == ["--debug-probe"]:
        print(json.dumps(compile_debug_probe()), flush=True)
        return 0
    for name in CASES:
        print(json.dumps({"kind": "case", "name": name, **compile_case(name)}), flush=True)
    for name in MISUSES:
        print(json.dumps({"kind": "misuse", "name": name, **compile_misuse(name)}), flush=True)


if __name__ == "__main__":
    sys.exit(main())
