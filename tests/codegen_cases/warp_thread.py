"""Every dtype through the warp and thread primitives, and the block reductions and scans."""

import operator

import numpy as np
from numba import cuda
from numba.cuda import types

import coop

from ._registry import NUMERIC, SCALARS, _op_for, case, running_total


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
        out[9, i] = coop.warp.inclusive_scan(x[i], op, width=8, initial=x[2])
        out[10, i] = coop.warp.inclusive_scan(items, op, items, initial=x[3])
        out[11, i] = items[3]

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


def warp_reduce_batched_kernel(dtype, op, summed):
    @cuda.jit
    def kernel(x, out):
        i = cuda.grid(1)
        items = cuda.local.array(9, dtype)
        for j in range(9):
            items[j] = x[i * 9 + j]
        results = cuda.local.array(2, dtype)
        coop.warp.reduce_batched(items, op, results, batches=9, width=8, arrangement="blocked")
        out[0, i] = results[0]
        out[1, i] = results[1]
        out[2, i] = coop.warp.reduce_batched(items, op, batches=9)
        if summed:
            out[3, i] = coop.warp.sum_batched(items, batches=8)
            coop.warp.sum_batched(items, items, batches=9, width=4)
            for j in range(3):
                out[4 + j, i] = items[j]

    return kernel


@case("warp_reduce_batched_tree-float32", (types.float32[::1], types.float32[::1]))
@cuda.jit
def warp_reduce_batched_tree(x, out):
    """4 batches over 32 lanes: the tree's 3 shuffles, then 3 (test_codegen counts 6: a
    copy of them per lane parity would be 18)."""
    i = cuda.grid(1)
    items = cuda.local.array(4, np.float32)
    for j in range(4):
        items[j] = x[i * 4 + j]
    out[i] = coop.warp.reduce_batched(items, operator.add, batches=4)


def redux_kernel(dtype, op):
    """Full warps of integers of 32 bits or fewer: each of these reductions is one
    redux.sync (test_codegen: the words and no shuffle)."""

    @cuda.jit
    def kernel(x, out):
        i = cuda.grid(1)
        items = cuda.local.array(8, dtype)
        for j in range(8):
            items[j] = x[i * 8 + j]
        out[0, i] = coop.warp.all_reduce(x[i], op)
        out[1, i] = coop.warp.reduce(items, op, 16)
        results = cuda.local.array(1, dtype)
        coop.warp.reduce_batched(items, op, results, batches=8)
        out[2, i] = results[0]
        out[3, i] = coop.block.reduce(x[i], op, threads=128)

    return kernel


#: The redux cases: (name, dtype, operator), the words test_codegen expects
REDUX_CASES = {
    "redux-int8-max": (np.int8, coop.ops.max, ["redux.sync.max.s32"]),
    "redux-uint16-min": (np.uint16, min, ["redux.sync.min.u32"]),
    "redux-uint32-max": (np.uint32, max, ["redux.sync.max.u32"]),
    "redux-int32-bit_and": (np.int32, operator.and_, ["redux.sync.and.b32"]),
    "redux-uint8-bit_xor": (np.uint8, coop.ops.bit_xor, ["redux.sync.xor.b32"]),
}
for _name, (_np_dtype, _op, _) in REDUX_CASES.items():
    _nb = SCALARS[np.dtype(_np_dtype).name][1]
    case(_name, (_nb[::1], _nb[:, ::1]))(redux_kernel(_np_dtype, _op))


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
    case(f"warp_reduce_batched-{_name}", (_nb_type[::1], _nb_type[:, ::1]))(
        warp_reduce_batched_kernel(_np_dtype, _op_for(_name), _name in NUMERIC)
    )


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
        out[2, i] = coop.block.inclusive_scan(x[i], op, threads=T, algorithm=ALG_S, initial=x[1])
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


def raking_reads_kernel(threads):
    @cuda.jit
    def kernel(x, out):
        i = cuda.grid(1)
        prefix, total = coop.block.exclusive_sum(x[i], threads=threads, return_aggregate=True)
        out[i] = prefix + total

    return kernel


# (test_codegen counts the shared loads, 17: a raking thread reads its segment of 8 slots in
# the upsweep and again in the downsweep, as the scan's shuffles between them are
# side-effecting: coop._core.compilers.numba_cuda_intrinsics.WARP_INSTRUCTION says why)
for _name in ("int32", "float32"):
    case(f"block_raking_reads-{_name}-threads256", (SCALARS[_name][1][::1],) * 2)(raking_reads_kernel(256))


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


@case("operators-every-op", (types.int32[::1], types.float32[::1], types.int32[:, ::1], types.float32[:, ::1]))
def operators_every_op(x, y, out, out_float):
    """Each coop.ops operator a primitive takes (those other cases do not), and
    coop.thread.transform."""
    i = cuda.grid(1)
    out[0, i] = coop.warp.reduce(x[i], coop.ops.add)
    out[1, i] = coop.warp.all_reduce(x[i], coop.ops.min)
    out[2, i] = coop.warp.inclusive_scan(x[i], coop.ops.bit_xor, width=16)
    out[3, i] = coop.warp.reduce(x[i] > 0, coop.ops.logical_and)
    value, index = coop.warp.all_reduce((y[i], np.int32(i)), coop.ops.argmin)
    out_float[0, i] = value
    out[4, i] = index
    items = cuda.local.array(4, np.float32)
    squares = cuda.local.array(4, np.int32)
    for k in range(4):
        items[k] = y[i * 4 + k]
    coop.thread.transform(items, squares, lambda v: v * v)
    for k in range(4):
        out[5 + k, i] = squares[k]
