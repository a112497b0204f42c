"""Misuse of the warp, thread and block reductions and scans, loads and stores: one kernel
per mistake."""

import operator

import numpy as np
from numba import cuda
from numba.cuda import types

import coop

from ._registry import case, misuse, running_total


# -- misuse: one kernel per mistake, with the message it must produce -------------------

RUN_TIME_WIDTH = "coop.warp.reduce: width must be a compile-time constant"


@misuse("width-not-constant", (types.int32[::1], types.int32[::1]), RUN_TIME_WIDTH)
def width_not_constant(x, out):
    i = cuda.grid(1)
    out[i] = coop.warp.reduce(x[i], operator.add, x[0])


@misuse("batches-not-constant", (types.int32[::1], types.int32[::1]),
        "coop.warp.reduce_batched: batches must be a compile-time constant")
def batches_not_constant(x, out):
    i = cuda.grid(1)
    items = cuda.local.array(4, np.int32)
    out[i] = coop.warp.reduce_batched(items, operator.add, batches=x[0])


@misuse("batched-output-required", (types.int32[::1], types.int32[::1]),
        "coop.warp.sum_batched: output is required for more batches than lanes (40 batches, width 32): an items "
        "array of ceil(batches / width) = 2 items gets the lane's results")
def batched_output_required(x, out):
    i = cuda.grid(1)
    items = cuda.local.array(40, np.int32)
    out[i] = coop.warp.sum_batched(items, batches=40)


@misuse("batched-arrangement", (types.int32[::1], types.int32[::1]),
        "coop.warp.sum_batched: arrangement must be one of 'striped', 'blocked'; got 'warp_striped'")
def batched_arrangement(x, out):
    i = cuda.grid(1)
    items = cuda.local.array(4, np.int32)
    out[i] = coop.warp.sum_batched(items, batches=4, arrangement="warp_striped")


@misuse("batched-output-type", (types.int32[::1], types.int32[::1]),
        "coop.warp.reduce_batched: output must hold int32 items like the input, got float32")
def batched_output_type(x, out):
    i = cuda.grid(1)
    items = cuda.local.array(4, np.int32)
    results = cuda.local.array(1, np.float32)
    coop.warp.reduce_batched(items, coop.ops.max, results, batches=4)
    out[i] = items[0]


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
    "unknown-keyword",
    (types.int32[::1], types.int32[::1]),
    "got an unexpected keyword argument 'initial'",  # (the simulator's adds "coop.block.exclusive_sum: ")
)
def unknown_keyword(x, out):
    i = cuda.grid(1)
    out[i] = coop.block.exclusive_sum(x[i], initial=3, threads=128)


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
    "inclusive-scan-initial-with-prefix-op",
    (types.int32[::1], types.int32[::1]),
    "coop.block.inclusive_scan: prefix_op cannot be combined with initial",
)
def inclusive_scan_initial_with_prefix_op(x, out):
    i = cuda.grid(1)
    state = cuda.local.array(1, np.int32)
    state[0] = 0
    out[i] = coop.block.inclusive_scan(x[i], operator.add, prefix_op=running_total, prefix_state=state, initial=1)


@misuse(
    "called-on-host",
    None,
    "coop.warp.sum was called from host code: call coop.warp.sum inside a @cuda.jit kernel",
)
def called_on_host():
    return coop.warp.sum(1)
