"""coop's primitives in numba-cuda-mlir kernels (issue 24): what the adapter
(``coop._core.compilers.numba_cuda_mlir``) serves compiles to PTX without a GPU, with no
local memory and no calls (the codegen gate, on numba-cuda-mlir's PTX), and, on a GPU,
gives NumPy's results; the misuse table's kernels raise the messages they raise in
numba-cuda kernels; what is not served yet is refused with coop's message. On coop's
simulator, where ``numba_cuda_mlir.cuda`` is the simulator's, the same kernels match
NumPy and misused collectives raise.

Each check runs in a fresh interpreter, compiled (``NUMBA_ENABLE_CUDASIM=0``) or
simulated, ``coop`` imported first and ``numba_cuda_mlir`` after it, as a user's script
does (the adapter registers the primitives when numba-cuda-mlir loads). Skipped where
numba-cuda-mlir is not installed (``pip install "coop[mlir]"``)."""

import concurrent.futures
import importlib.metadata
import importlib.util
import os
import pathlib
import subprocess
import sys
import textwrap

import pytest

import background
from coop._core.device import gpu_available
from helpers import DEBUG_KERNELS, DEBUG_LAUNCHES, FULL_MATRIX

ROOT = pathlib.Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.skipif(importlib.util.find_spec("numba_cuda_mlir") is None,
                                reason="numba-cuda-mlir is not installed (pip install 'coop[mlir]')")

#: the fixtures that compile in subprocesses, started when the tests are collected (background.py)
EARLY = {}

PROLOGUE = textwrap.dedent(
    """
    import operator
    import warnings
    import numpy as np
    import coop
    from coop._core.device import gpu_available
    from coop._core.compilers.numba_cuda_mlir import compile_ptx
    from numba_cuda_mlir import cuda
    from numba_cuda_mlir.numba_cuda import types
    warnings.simplefilter("ignore")  # (numba-cuda-mlir's pedantic IR warnings)
    """
)


def _run(body, simulate=False):
    env = {k: v for k, v in os.environ.items() if k not in ("COOP_TEST_MODE",)}
    env["NUMBA_ENABLE_CUDASIM"] = "1" if simulate else "0"
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    return background.run([sys.executable, "-c", PROLOGUE + textwrap.dedent(body)], timeout=1800, env=env)


# -- the matrix: one block of 64 threads (two warps), 4 items per thread where a case has
# items; ``x`` the input (64 values, or the 256-item tile), ``out`` the output (as long);
# each case's NumPy reference gives the first ``len(expected)`` values of ``out``.

THREADS, ITEMS = 64, 4

LOAD = "items = cuda.local.array(4, x.dtype)\ncoop.block.load(x, items, threads=64)\n"
STORE = "coop.block.store(out, items, threads=64)\n"

CASES = {
    # warp
    "warp.sum": ("s = coop.warp.sum(x[i])\nif cuda.laneid == 0:\n    out[i // 32] = s",
                 "warps(32).sum(axis=1, dtype=x.dtype)"),
    "warp.reduce max, width 8, 5 valid": (
        "r = coop.warp.reduce(x[i], coop.ops.max, width=8, valid_items=5)\nif cuda.laneid % 8 == 0:\n"
        "    out[i // 8] = r", "warps(8)[:, :5].max(axis=1)"),
    "warp.all_reduce min": ("out[i] = coop.warp.all_reduce(x[i], coop.ops.min)",
                            "np.repeat(warps(32).min(axis=1), 32)"),
    "warp.inclusive_sum": ("out[i] = coop.warp.inclusive_sum(x[i])", "warps(32).cumsum(axis=1, dtype=x.dtype)"),
    "warp.exclusive_sum, width 16": ("out[i] = coop.warp.exclusive_sum(x[i], width=16)",
                                     "exclusive(warps(16).cumsum(axis=1, dtype=x.dtype))"),
    "warp.inclusive_scan max": ("out[i] = coop.warp.inclusive_scan(x[i], coop.ops.max)",
                                "np.maximum.accumulate(warps(32), axis=1)"),
    "warp.exclusive_scan min, initial": (
        "out[i] = coop.warp.exclusive_scan(x[i], coop.ops.min, initial=x[63])",
        "np.minimum(x[63], exclusive(np.minimum.accumulate(warps(32), axis=1), x[63]))"),
    "warp.inclusive_scan max, initial": (
        "out[i] = coop.warp.inclusive_scan(x[i], coop.ops.max, initial=x[5])",
        "np.maximum(x[5], np.maximum.accumulate(warps(32), axis=1))"),
    "warp.broadcast": ("out[i] = coop.warp.broadcast(x[i], 3)", "np.repeat(warps(32)[:, 3], 32)"),
    "warp.head_segmented_reduce": (
        "head = i % 5 == 0\nr = coop.warp.head_segmented_reduce(x[i], head, coop.ops.add)\n"
        "if head or cuda.laneid == 0:\n    out[i] = r", "head_segment_sums(np.arange(64) % 5 == 0)"),
    "warp.tail_segmented_reduce": (
        "tail = i % 5 == 4\nr = coop.warp.tail_segmented_reduce(x[i], tail, coop.ops.add)\n"
        "if cuda.laneid == 0 or (i - 1) % 5 == 4:\n    out[i] = r", "tail_segment_sums(np.arange(64) % 5 == 4)"),
    "warp.all_sum": ("out[i] = coop.warp.all_sum(x[i])", "np.repeat(warps(32).sum(axis=1, dtype=x.dtype), 32)"),
    "warp.reduce argmax of (value, index) pairs": (
        "v, k = coop.warp.reduce((x[i], i), coop.ops.argmax)\nif cuda.laneid == 0:\n    out[i // 32] = k",
        "warps(32).argmax(axis=1) + np.array([0, 32])"),
    # block, one value per thread
    "block.sum": ("s = coop.block.sum(x[i], threads=64)\nif i == 0:\n    out[0] = s",
                  "[x.sum(dtype=x.dtype)]"),
    "block.reduce max, raking": (
        "r = coop.block.reduce(x[i], coop.ops.max, threads=64, algorithm='raking')\nif i == 0:\n    out[0] = r",
        "[x.max()]"),
    "block.all_sum": ("out[i] = coop.block.all_sum(x[i], threads=64)",
                      "np.repeat(x.sum(dtype=x.dtype), 64)"),
    "block.all_reduce max": ("out[i] = coop.block.all_reduce(x[i], coop.ops.max, threads=64)",
                             "np.repeat(x.max(), 64)"),
    "block.exclusive_sum": ("out[i] = coop.block.exclusive_sum(x[i], threads=64)",
                            "exclusive(x.cumsum(dtype=x.dtype))"),
    "block.exclusive_sum, raking_memoize": (  # (numba-cuda-mlir lowers no `is not None` of an array)
        "out[i] = coop.block.exclusive_sum(x[i], threads=64, algorithm='raking_memoize')",
        "exclusive(x.cumsum(dtype=x.dtype))"),
    "block.reduce max, 50 valid": (  # (a partial warp: numba-cuda-mlir kept its result in local memory)
        "r = coop.block.reduce(x[i], coop.ops.max, valid_items=x.size - 14, threads=64)\nif i == 0:\n    out[0] = r",
        "[x[:50].max()]"),
    "block.reduce add, raking_commutative_only": (
        "r = coop.block.reduce(x[i], coop.ops.add, threads=64, algorithm='raking_commutative_only')\nif i == 0:\n"
        "    out[0] = r", "[x.sum(dtype=x.dtype)]"),
    "block.reduce max, raking, block size at run time": (  # (numba-cuda-mlir kept a result in local memory)
        "r = coop.block.reduce(x[i], coop.ops.max, algorithm='raking')\nif i == 0:\n    out[0] = r", "[x[:64].max()]"),
    "block.sum, raking_commutative_only, block size at run time": (
        "r = coop.block.sum(x[i], valid_items=50, algorithm='raking_commutative_only')\nif i == 0:\n    out[0] = r",
        "[x[:50].sum(dtype=x.dtype)]"),
    "block.inclusive_scan max, warp_scans": (
        "out[i] = coop.block.inclusive_scan(x[i], coop.ops.max, threads=64, algorithm='warp_scans')",
        "np.maximum.accumulate(x)"),
    "block.inclusive_scan max, block size at run time": (  # (numba-cuda-mlir kept a variable in local memory)
        "out[i] = coop.block.inclusive_scan(x[i], coop.ops.max)", "np.maximum.accumulate(x)"),
    "block.exclusive_scan min, initial": (
        "out[i] = coop.block.exclusive_scan(x[i], coop.ops.min, initial=x[63], threads=64)",
        "np.minimum(x[63], exclusive(np.minimum.accumulate(x), x[63]))"),
    "block.sum, temp_storage": (
        "scratch = cuda.shared.array(256, np.uint8)\ns = coop.block.sum(x[i], threads=64, temp_storage=scratch)\n"
        "if i == 0:\n    out[0] = s", "[x.sum(dtype=x.dtype)]"),
    # thread
    "thread.reduce": ("items = cuda.local.array(4, x.dtype)\nfor j in range(4):\n    items[j] = x[4 * i + j]\n"
                      "out[i] = coop.thread.reduce(items, coop.ops.add)", "x.reshape(-1, 4).sum(axis=1, dtype=x.dtype)"),
    "thread.exclusive_sum": (
        "items = cuda.local.array(4, x.dtype)\nsums = cuda.local.array(4, x.dtype)\nfor j in range(4):\n"
        "    items[j] = x[4 * i + j]\ncoop.thread.exclusive_sum(items, sums)\nfor j in range(4):\n"
        "    out[4 * i + j] = sums[j]",
        "exclusive(x.reshape(-1, 4).cumsum(axis=1, dtype=x.dtype)).reshape(-1)"),
    "thread.inclusive_scan max": (
        "items = cuda.local.array(4, x.dtype)\nfor j in range(4):\n    items[j] = x[4 * i + j]\n"
        "coop.thread.inclusive_scan(items, items, coop.ops.max)\nfor j in range(4):\n    out[4 * i + j] = items[j]",
        "np.maximum.accumulate(x.reshape(-1, 4), axis=1).reshape(-1)"),
    # tiles
    "block.load striped, store direct": (
        "items = cuda.local.array(4, x.dtype)\ncoop.block.load(x, items, threads=64, algorithm='striped')\n" + STORE,
        "x.reshape(4, 64).T.reshape(-1)"),
    "block.load and store vectorize": (  # (aligned: the vector accesses)
        "items = cuda.local.array(4, x.dtype)\ncoop.block.load(x, items, threads=64, algorithm='vectorize')\n"
        "coop.block.store(out, items, threads=64, algorithm='vectorize')", "x"),
    "block.load transpose, 200 valid": (
        "items = cuda.local.array(4, x.dtype)\ncoop.block.load(x, items, threads=64, items_per_thread=4, "
        "algorithm='transpose', valid_items=200, oob_default=x[0])\n" + STORE,
        "np.concatenate([x[:200], np.repeat(x[0], 56)])"),
    "block.load transpose and store direct, offset=": (  # (the tile's start apart from the array)
        "items = cuda.local.array(4, x.dtype)\ncoop.block.load(x, items, threads=64, items_per_thread=4, "
        "algorithm='transpose', valid_items=192, oob_default=x[0], offset=64)\n"
        "coop.block.store(out, items, threads=64, items_per_thread=4, valid_items=192, offset=64)",
        "np.concatenate([np.zeros(64, x.dtype), x[64:]])"),
    "block.load warp_transpose_timesliced": (
        "items = cuda.local.array(4, x.dtype)\ncoop.block.load(x, items, threads=64, items_per_thread=4, "
        "algorithm='warp_transpose_timesliced')\n" + STORE, "x"),
    "block.store warp_transpose_timesliced": (
        LOAD + "coop.block.store(out, items, threads=64, items_per_thread=4, algorithm='warp_transpose_timesliced')",
        "x"),
    "block.exchange blocked_to_striped": (
        LOAD + "coop.block.exchange.blocked_to_striped(items, items, threads=64, items_per_thread=4)\n" + STORE,
        "x.reshape(4, 64).T.reshape(-1)"),
    "block.exchange blocked_to_striped, warp_time_slicing": (
        LOAD + "coop.block.exchange.blocked_to_striped(items, items, threads=64, items_per_thread=4, "
        "warp_time_slicing=True)\n" + STORE, "x.reshape(4, 64).T.reshape(-1)"),
    "block.exchange striped_to_blocked": (
        "items = cuda.local.array(4, x.dtype)\ncoop.block.load(x, items, threads=64, algorithm='striped')\n"
        "coop.block.exchange.striped_to_blocked(items, items, threads=64, items_per_thread=4)\n" + STORE, "x"),
    "block.exchange scatter_to_striped, reversed": (
        LOAD + "ranks = cuda.local.array(4, np.int32)\nfor j in range(4):\n    ranks[j] = 255 - (4 * i + j)\n"
        "coop.block.exchange.scatter_to_striped(items, items, ranks, threads=64, items_per_thread=4)\n"
        "coop.block.store(out, items, threads=64, algorithm='striped')", "x[::-1]"),
    "warp.exchange blocked_to_striped": (
        "items = cuda.local.array(4, x.dtype)\nfor j in range(4):\n    items[j] = x[4 * i + j]\n"
        "coop.warp.exchange.blocked_to_striped(items, items, threads=64, items_per_thread=4)\nfor j in range(4):\n"
        "    out[i // 32 * 128 + 32 * j + cuda.laneid] = items[j]", "x"),
    "warp.exchange blocked_to_striped, temp_storage": (  # (the warps' parts of a caller's array)
        "items = cuda.local.array(4, x.dtype)\nfor j in range(4):\n    items[j] = x[4 * i + j]\n"
        "temp = cuda.shared.array(8192, np.uint8)\n"
        "coop.warp.exchange.blocked_to_striped(items, items, threads=64, items_per_thread=4, temp_storage=temp)\n"
        "for j in range(4):\n    out[i // 32 * 128 + 32 * j + cuda.laneid] = items[j]", "x"),
    "block.shuffle.up": (
        LOAD + "coop.block.shuffle.up(items, items, threads=64)\nfor j in range(4):\n    if 4 * i + j >= 1:\n"
        "        out[4 * i + j - 1] = items[j]", "x[:255]"),
    "block.inclusive_sum of items": (LOAD + "coop.block.inclusive_sum(items, output=items, threads=64)\n" + STORE,
                                     "x.cumsum(dtype=x.dtype)"),
    "block.inclusive_scan min of items, initial": (
        LOAD + "coop.block.inclusive_scan(items, coop.ops.min, items, threads=64, initial=x[7])\n" + STORE,
        "np.minimum(x[7], np.minimum.accumulate(x))"),
    "block.exclusive_sum of items": (LOAD + "coop.block.exclusive_sum(items, output=items, threads=64)\n" + STORE,
                                     "exclusive(x.cumsum(dtype=x.dtype))"),
    "warp.load and store, exclusive_sum of items": (
        "items = cuda.local.array(4, x.dtype)\ncoop.warp.load(x[i // 32 * 128:], items)\n"
        "coop.warp.exclusive_sum(items, output=items)\ncoop.warp.store(out[i // 32 * 128:], items)",
        "exclusive(x.reshape(2, 128).cumsum(axis=1, dtype=x.dtype)).reshape(-1)"),
    "block.radix_sort": (LOAD + "coop.block.radix_sort(items, threads=64, items_per_thread=4)\n" + STORE,
                         "np.sort(x, kind='stable')"),
    # (threads= the 1-D shape (64,): the rank from constants, no %ntid in the PTX)
    "block.load transpose, exclusive_sum of items, store warp_transpose, shape (64,)": (
        "items = cuda.local.array(4, x.dtype)\ncoop.block.load(x, items, threads=(64,), items_per_thread=4, "
        "algorithm='transpose')\ncoop.block.exclusive_sum(items, output=items, threads=(64,))\n"
        "coop.block.store(out, items, threads=(64,), items_per_thread=4, algorithm='warp_transpose')",
        "exclusive(x.cumsum(dtype=x.dtype))"),
    "block.radix_sort, shape (64,)": (
        "items = cuda.local.array(4, x.dtype)\ncoop.block.load(x, items, threads=(64,))\n"
        "coop.block.radix_sort(items, threads=(64,), items_per_thread=4)\ncoop.block.store(out, items, threads=(64,))",
        "np.sort(x, kind='stable')"),
    "block.radix_sort of (segment, key) tuples, descending": (  # (segments of 37 items, numbered as uint8)
        LOAD + "segments = cuda.local.array(4, np.uint8)\nfor j in range(4):\n"
        "    segments[j] = np.uint8((4 * i + j) // 37)\n"
        "coop.block.radix_sort((segments, items), threads=64, items_per_thread=4, descending=True)\n" + STORE,
        "x[np.lexsort((x, np.arange(256) // 37))][::-1]"),
    "block.radix_rank of (segment, key) tuples": (  # (a 6-bit digit: the segment's 3 low bits, the key's 3 high)
        LOAD + "segments = cuda.local.array(4, np.uint8)\nfor j in range(4):\n"
        "    segments[j] = np.uint8((4 * i + j) // 37)\nranks = cuda.local.array(4, np.int32)\n"
        "coop.block.radix_rank((segments, items), ranks, KEY_BITS - 3, 6, threads=64, items_per_thread=4)\n"
        "for j in range(4):\n    out[4 * i + j] = ranks[j]",
        "ranks_by(((np.arange(256) // 37) << 3 | radix_digits(8 * x.itemsize - 3, 3).astype(np.int64)) & 63)"),
    "block.radix_rank basic, descending": (
        LOAD + "ranks = cuda.local.array(4, np.int32)\ncoop.block.radix_rank(items, ranks, 0, 4, threads=64, "
        "items_per_thread=4, descending=True, algorithm='basic')\nfor j in range(4):\n    out[4 * i + j] = ranks[j]",
        "ranks_by(15 - radix_digits(0, 4).astype(np.int64))"),
    "block.radix_rank match, warp-striped": (  # (stable in the keys' warp-striped order)
        "items = cuda.local.array(4, x.dtype)\ncoop.block.load(x, items, threads=64, algorithm='warp_striped')\n"
        "ranks = cuda.local.array(4, np.int32)\ncoop.block.radix_rank(items, ranks, 0, 4, threads=64, "
        "items_per_thread=4, algorithm='match')\nfor j in range(4):\n    out[i // 32 * 128 + 32 * j + cuda.laneid] = "
        "ranks[j]", "ranks_by(radix_digits(0, 4))"),
    "block.merge_sort pairs, 200 valid": (  # (the values: each key's position in the tile)
        LOAD + "positions = cuda.local.array(4, np.int32)\nfor j in range(4):\n    positions[j] = 4 * i + j\n"
        "coop.block.merge_sort(items, operator.lt, positions, threads=64, items_per_thread=4, valid_items=200, "
        "oob_default=x[0])\nfor j in range(4):\n    if 4 * i + j < 200:\n        out[4 * i + j] = positions[j]",
        "np.argsort(x[:200], kind='stable')"),
    "block.merge_sort": (LOAD + "coop.block.merge_sort(items, operator.lt, threads=64, items_per_thread=4)\n" + STORE,
                         "np.sort(x, kind='stable')"),
    "block.merge_sort of (segment, key) tuples, operator.gt": (  # (segments of 37 items, as the radix sort's)
        LOAD + "segments = cuda.local.array(4, np.uint8)\nfor j in range(4):\n"
        "    segments[j] = np.uint8((4 * i + j) // 37)\n"
        "coop.block.merge_sort((segments, items), operator.gt, threads=64, items_per_thread=4)\n" + STORE,
        "x[np.lexsort((x, np.arange(256) // 37))][::-1]"),
    "warp.merge_sort": (
        "items = cuda.local.array(4, x.dtype)\nfor j in range(4):\n    items[j] = x[4 * i + j]\n"
        "coop.warp.merge_sort(items, operator.lt, threads=64, items_per_thread=4)\nfor j in range(4):\n"
        "    out[4 * i + j] = items[j]", "np.sort(x.reshape(2, 128), axis=1, kind='stable').reshape(-1)"),
    "block.subtract_left": (
        LOAD + "difference = cuda.local.array(4, x.dtype)\ncoop.block.subtract_left(items, difference, threads=64)\n"
        "coop.block.store(out, difference, threads=64)", "np.concatenate([x[:1], (x[1:] - x[:-1]).astype(x.dtype)])"),
    "block.subtract_right": (
        LOAD + "difference = cuda.local.array(4, x.dtype)\ncoop.block.subtract_right(items, difference, threads=64)\n"
        "coop.block.store(out, difference, threads=64)", "np.concatenate([(x[:-1] - x[1:]).astype(x.dtype), x[-1:]])"),
    "block.flag_tails": (
        LOAD + "flags = cuda.local.array(4, np.bool_)\ncoop.block.flag_tails(items, flags, operator.ne, threads=64)\n"
        "for j in range(4):\n    out[4 * i + j] = 1 if flags[j] else 0",
        "np.concatenate([x[:-1] != x[1:], [1]]).astype(x.dtype)"),
    "block.flag_heads": (
        LOAD + "flags = cuda.local.array(4, np.bool_)\ncoop.block.flag_heads(items, flags, operator.ne, threads=64)\n"
        "for j in range(4):\n    out[4 * i + j] = 1 if flags[j] else 0",
        "np.concatenate([[1], x[1:] != x[:-1]]).astype(x.dtype)"),
    "warp.reduce_batched max, blocked": (  # (every batch of a warp: its 32 values; lane l gets batches 2l, 2l+1)
        "items = cuda.local.array(40, x.dtype)\nfor b in range(40):\n    items[b] = x[(i // 32) * 32 + (i + b) % 32]\n"
        "results = cuda.local.array(2, x.dtype)\n"
        "coop.warp.reduce_batched(items, coop.ops.max, results, batches=40, arrangement='blocked')\n"
        "if cuda.laneid < 20:\n    for k in range(2):\n        out[(i // 32) * 40 + 2 * cuda.laneid + k] = results[k]",
        "np.repeat(warps(32).max(axis=1), 40)"),
    "warp.sum_batched": (  # (batch b of lane l: x[warp's lane (l + b) % 32], so each batch sums the warp)
        "items = cuda.local.array(8, x.dtype)\nfor b in range(8):\n    items[b] = x[(i // 32) * 32 + (i + b) % 32]\n"
        "s = coop.warp.sum_batched(items, batches=8)\nif cuda.laneid < 8:\n    out[(i // 32) * 8 + cuda.laneid] = s",
        "np.repeat(warps(32).sum(axis=1, dtype=x.dtype), 8)"),
    "block.reduce argmax of (value, index) pairs": (
        "v, k = coop.block.reduce((x[i], i), coop.ops.argmax, threads=64)\nif i == 0:\n    out[0] = k",
        "[x[:64].argmax()]"),
    "block.reduce argmax of pairs, block size at run time": (  # (numba-cuda-mlir kept them in local memory)
        "v, k = coop.block.reduce((x[i], i), coop.ops.argmax)\nif i == 0:\n    out[0] = k", "[x[:64].argmax()]"),
    "block.histogram sort": (  # (bin indices 0-99 and negatives, which are not counted)
        LOAD + "bins = cuda.local.array(4, np.int32)\nfor j in range(4):\n    bins[j] = np.int32(items[j])\n"
        "counts = cuda.shared.array(128, np.int32)\n"
        "coop.block.histogram(bins, counts, 128, threads=64, items_per_thread=4, algorithm='sort')\n"
        "cuda.syncthreads()\nout[i] = counts[i]\nout[64 + i] = counts[64 + i]",
        "np.bincount(np.clip(x.astype(np.int64), -1, None) + 1, minlength=129)[1:129]"),
    "block.histogram atomic": (
        LOAD + "bins = cuda.local.array(4, np.int32)\nfor j in range(4):\n    bins[j] = np.int32(items[j])\n"
        "counts = cuda.shared.array(128, np.int32)\ncoop.block.histogram(bins, counts, 128, threads=64)\n"
        "cuda.syncthreads()\nout[i] = counts[i]\nout[64 + i] = counts[64 + i]",
        "np.bincount(np.clip(x.astype(np.int64), -1, None) + 1, minlength=129)[1:129]"),
    "block.histogram sort, accumulated": (  # (the tile counted twice: atomic, then sort accumulating)
        LOAD + "bins = cuda.local.array(4, np.int32)\nfor j in range(4):\n    bins[j] = np.int32(items[j])\n"
        "counts = cuda.shared.array(128, np.int32)\ncoop.block.histogram(bins, counts, 128, threads=64)\n"
        "cuda.syncthreads()\ncoop.block.histogram(bins, counts, 128, threads=64, items_per_thread=4, "
        "algorithm='sort', accumulate=True)\ncuda.syncthreads()\nout[i] = counts[i]\nout[64 + i] = counts[64 + i]",
        "2 * np.bincount(np.clip(x.astype(np.int64), -1, None) + 1, minlength=129)[1:129]"),
    "block.radix_rank match_early_counts, warp-striped": (  # (stable in the keys' warp-striped order)
        "items = cuda.local.array(4, x.dtype)\ncoop.block.load(x, items, threads=64, algorithm='warp_striped')\n"
        "ranks = cuda.local.array(4, np.int32)\ncoop.block.radix_rank(items, ranks, 0, 4, threads=64, "
        "items_per_thread=4, algorithm='match_early_counts')\nfor j in range(4):\n"
        "    out[i // 32 * 128 + 32 * j + cuda.laneid] = ranks[j]", "ranks_by(radix_digits(0, 4))"),
    "block.top_k": (  # (the 24 largest, in tile order: ties taken earliest first)
        LOAD + "coop.block.top_k(items, 24, threads=64, items_per_thread=4)\n" + STORE,
        "x[np.sort(largest_first(x)[:24])]"),
    "block.top_k sorted": (
        LOAD + "coop.block.top_k(items, 24, threads=64, items_per_thread=4, sorted=True)\n" + STORE,
        "x[largest_first(x)[:24]]"),
    "block.top_k smallest, 200 valid": (
        LOAD + "coop.block.top_k(items, 9, threads=64, items_per_thread=4, largest=False, valid_items=200)\n"
        + STORE, "x[np.sort(np.argsort(x[:200], kind='stable')[:9])]"),
    "warp.top_k smallest, width 16": (  # (4 logical warps' tiles of 64 items)
        "items = cuda.local.array(4, x.dtype)\nfor j in range(4):\n    items[j] = x[4 * i + j]\n"
        "coop.warp.top_k(items, 7, threads=64, items_per_thread=4, width=16, largest=False)\nfor j in range(4):\n"
        "    out[4 * i + j] = items[j]", "np.concatenate([warp_top_k(tile, 7) for tile in x.reshape(4, 64)])"),
    "warp.top_k sorted, width 16, 50 valid": (  # (its arranger allocates shared memory, not inlined by itself)
        "items = cuda.local.array(4, x.dtype)\nfor j in range(4):\n    items[j] = x[4 * i + j]\n"
        "coop.warp.top_k(items, 5, threads=64, items_per_thread=4, width=16, sorted=True, valid_items=50)\n"
        "for j in range(4):\n    out[4 * i + j] = items[j]",
        "np.concatenate([np.concatenate([tile[:50][largest_first(tile[:50])], tile[50:]])"
        " for tile in x.reshape(4, 64)])"),
    "block.run_length_encode, counts": (
        LOAD + "counts = cuda.local.array(4, np.int32)\n"
        "coop.block.run_length_encode(items, items, counts, threads=64, items_per_thread=4)\n"
        "for j in range(4):\n    out[4 * i + j] = counts[j]",
        "np.concatenate([np.diff(np.append(run_starts(), 256)), np.zeros(256 - len(run_starts()))])"),
    "block.run_length_encode, unique": (
        LOAD + "counts = cuda.local.array(4, np.int32)\n"
        "n = coop.block.run_length_encode(items, items, counts, threads=64, items_per_thread=4)\n" + STORE
        + "if i == 63:\n    out[255] = n  # (after its own store of item 255)",
        "np.concatenate([x[run_starts()], x[len(run_starts()):255], [len(run_starts())]])"),
    "block.run_length_decode": (  # (run k: x[k] repeated |x[k]| % 3 times)
        "values = cuda.local.array(2, x.dtype)\nlengths = cuda.local.array(2, np.int32)\nfor j in range(2):\n"
        "    values[j] = x[2 * i + j]\n    lengths[j] = np.int32(abs(np.int64(x[2 * i + j])) % 3)\n"
        "items = cuda.local.array(4, x.dtype)\n"
        "total = coop.block.run_length_decode(values, lengths, items, threads=64, runs_per_thread=2)\n"
        "for j in range(4):\n    if 4 * i + j < total:\n        out[4 * i + j] = items[j]",
        "np.repeat(x[:128], np.abs(x[:128].astype(np.int64)) % 3)"),
}

INTEGERS = ["int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64"]
DTYPES = INTEGERS + ["float32", "float64"]

#: The other value types, in the cases that take them (bools are not summed, complex
#: numbers not ordered)
OTHER_TYPES = {
    "float16": ["warp.inclusive_sum", "warp.broadcast", "block.exclusive_sum", "block.load and store vectorize",
                "block.exchange blocked_to_striped", "block.radix_sort", "block.merge_sort", "block.sum",
                "warp.reduce max, width 8, 5 valid"],
    "bool": ["warp.broadcast", "block.load striped, store direct", "block.load and store vectorize",
             "block.exchange blocked_to_striped", "block.radix_sort", "block.reduce argmax of (value, index) pairs"],
    "complex64": ["warp.inclusive_sum", "warp.broadcast", "block.exclusive_sum", "block.load and store vectorize",
                  "block.exchange blocked_to_striped"],
    "complex128": ["warp.exclusive_sum, width 16", "block.sum"],
}

if gpu_available() and FULL_MATRIX:
    VARIANTS = [(case, dtype) for case in CASES for dtype in DTYPES]
    VARIANTS += [(case, dtype) for dtype, cases in OTHER_TYPES.items() for case in cases]
else:
    # without a GPU (compiled only: numba-cuda-mlir took 1-17 s a kernel on a 2-core
    # machine), or COOP_TEST_MATRIX=small (the sanitizers' runs): every case once, in
    # dtypes that cover the shuffles (8-bit widened, 64-bit in two words) and the radix
    # twiddles (a sort and a top-k of float keys too), and one case of each other type
    VARIANTS = [(case, DTYPES[number % len(DTYPES)]) for number, case in enumerate(CASES)]
    VARIANTS += [("block.radix_sort", "float64"), ("block.top_k sorted", "float32")]
    VARIANTS += [(cases[-1], dtype) for dtype, cases in OTHER_TYPES.items()]

# No case's numba-cuda-mlir PTX uses local memory, under Python 3.11 or 3.12 (CI runs
# these checks under both: the bytecode differs) and with CUDA 13.0's NVVM (PTX ISA 9.0,
# the GPU machine's) or 13.5's (ISA 9.5, the cu13 wheels'). numba-cuda-mlir 0.6 keeps a
# variable in local memory where a branching operator (coop.ops.min, max) is called in a
# branch, or a value is assigned in both arms of one: the merge sorts' serial merge, the
# butterfly of all_reduce and the warp_scans block scan choose their operands or results
# by value instead (select, chosen). Under Python 3.12 it also does where a branch inside
# a loop assigns a call's result (joined), and kept the float keys' bitcast for each arm
# of a conditional expression (computed masks now): the 2-29 bytes once put down to
# CUDA 13.0's NVVM (a sorted block top-k, float radix sorts, the warp top-k) were these.
# It kept the radix rankings' per-key arrays of counter slots, stored and never read, in
# the "sort" histogram's: the rankings find the slots again. The radix rankings, the
# unsorted block top-k and the run-length coding had some too, until the digits and the
# exchanges' slots were computed in 32 bits.

MATRIX = """
def warps(width):
    return x[:64].reshape(-1, width)

def exclusive(inclusive, first=0):
    shifted = np.roll(inclusive, 1, axis=-1)
    shifted[..., 0] = first
    return shifted

def head_segment_sums(heads):
    sums = np.zeros(64, x.dtype)
    for warp in (0, 32):
        starts = [lane for lane in range(32) if lane == 0 or heads[warp + lane]]
        for start, end in zip(starts, starts[1:] + [32]):
            sums[warp + start] = x[warp + start:warp + end].sum(dtype=x.dtype)
    return sums

def tail_segment_sums(tails):
    sums = np.zeros(64, x.dtype)
    for warp in (0, 32):
        starts = [0] + [lane + 1 for lane in range(31) if tails[warp + lane]]
        for start, end in zip(starts, starts[1:] + [32]):
            sums[warp + start] = x[warp + start:warp + end].sum(dtype=x.dtype)
    return sums

def radix_digits(begin_bit, num_bits):
    # the digits of x as the radix sort orders keys (signed: sign bit flipped; floats:
    # every bit of negatives, the sign bit of the others)
    bits = x.view(f"u{x.itemsize}").astype(np.uint64)
    sign = np.uint64(1) << np.uint64(8 * x.itemsize - 1)
    if x.dtype.kind == "i":
        bits = bits ^ sign
    elif x.dtype.kind == "f":
        bits = np.where(bits & sign, ~bits, bits | sign)
    return (bits >> np.uint64(begin_bit)) & np.uint64((1 << num_bits) - 1)

def run_starts():
    return np.flatnonzero(np.concatenate([[True], x[1:] != x[:-1]]))

def largest_first(keys):
    # the keys' positions, largest key first, equal keys in their order
    return (len(keys) - 1 - np.argsort(keys[::-1], kind="stable"))[::-1]

def warp_top_k(tile, k):
    # the k smallest in tile order (the earliest of equal keys), then the others in order
    chosen = np.sort(np.argsort(tile, kind="stable")[:k])
    return np.concatenate([tile[chosen], np.delete(tile, chosen)])

def ranks_by(digits):
    return np.argsort(np.argsort(digits, kind="stable"), kind="stable")

for name, dtype in VARIANTS:
    body, reference = CASES[name]
    scope = {"cuda": cuda, "coop": coop, "np": np, "operator": operator, "KEY_BITS": 8 * np.dtype(dtype).itemsize}
    exec("@cuda.jit\\ndef kernel(x, out):\\n    i = cuda.grid(1)\\n" + textwrap.indent(body, "    "), scope)
    kernel = scope["kernel"]
    line = f"{name} | {dtype}:"
    if not coop.SIMULATOR:
        try:
            ptx = compile_ptx(kernel, (getattr(types, dtype)[::1],) * 2)
        except Exception as error:
            print(f"{line} error {type(error).__name__}: {' '.join(str(error).split())[:600]}", flush=True)
            continue
        entry = ptx[ptx.index(".entry"):]
        isa = ptx.split(".version", 1)[1].split()[0]
        # (shared memory through 64-bit registers: numba-cuda-mlir's addresses were 64-bit)
        wide = sum(".shared" in op and "[%rd" in op for op in entry.splitlines())
        line += f" local {ptx.count('.local')} calls {entry.count('call.')} shared64 {wide} ntid {entry.count('%ntid')}"
        line += f" isa {isa}"
    if coop.SIMULATOR or gpu_available():
        rng = np.random.default_rng(len(name))
        size = 256 if "items" in body else 64
        low = 0 if np.dtype(dtype).kind == "u" else -3
        x = rng.integers(low, 100 if "sort" in name or "rank" in name else 4, size)
        if np.dtype(dtype).kind == "c":
            x = x + 1j * x[::-1]
        x = x.astype(dtype)
        with np.errstate(over="ignore"):
            expected = np.asarray(eval(reference), dtype=dtype).reshape(-1)
        out = cuda.to_device(np.zeros(256, dtype))
        print(f"launching {name} | {dtype}", file=sys.stderr, flush=True)  # (names a kernel that crashes)
        kernel[1, 64](cuda.to_device(x), out)
        got = out.copy_to_host()[:len(expected)]
        line += f" matches {np.array_equal(got, expected)}"
        if not np.array_equal(got, expected):
            line += f" got {got[:12].tolist()} expected {expected[:12].tolist()}"
    print(line, flush=True)
"""


def _matrix_part(variants, simulate=False):
    run = _run(f"import sys\nimport textwrap\nCASES = {CASES!r}\nVARIANTS = {variants!r}\n" + MATRIX, simulate)
    assert run.returncode == 0, run.stderr[-4000:]
    return [line for line in run.stdout.splitlines() if " | " in line]


def _side_by_side(run_part, items):
    """``{key: result}`` of the ``"key: result"`` lines ``run_part(chunk)`` gives for the
    chunks of ``items``, run by a few interpreters side by side: half the cores (the
    simulated tests run beside them), or ``COOP_MLIR_PROCESSES`` (CI's run of these
    checks alone)."""
    parts = int(os.environ.get("COOP_MLIR_PROCESSES", 0)) or max(1, min(8, (os.cpu_count() or 1) // 2))
    parts = max(1, min(parts, len(items)))
    with concurrent.futures.ThreadPoolExecutor(parts) as pool:
        lines = [line for part in pool.map(run_part, [items[k::parts] for k in range(parts) if items[k::parts]])
                 for line in part]
    return dict(line.split(": ", 1) for line in lines)


def _lines(variants, simulate=False):
    """Each variant's line, compiled (and run)."""
    return _side_by_side(lambda chunk: _matrix_part(chunk, simulate), variants)


@background.early_fixture(EARLY)
def matrix():
    return _lines(EARLY["matrix"].selected(VARIANTS, "case", "dtype"))


@pytest.mark.parametrize("case, dtype", VARIANTS)
def test_primitive_compiles_without_local_memory_and_matches_numpy(matrix, case, dtype):
    """The codegen gate on numba-cuda-mlir's PTX (no local memory, no calls, no
    shared-memory access through a 64-bit register; no read of the block's shape where
    ``threads=`` gives it) and, on a GPU, NumPy's result."""
    line = matrix[f"{case} | {dtype}"]
    assert line.startswith("local 0 calls 0 shared64 0 "), line
    if case.endswith("shape (64,)"):  # (the rank from the constant shape, the block's not read)
        assert " ntid 0 " in line, line
    if gpu_available():
        assert line.endswith("matches True"), line


#: On coop's simulator (NUMBA_ENABLE_CUDASIM=1), where ``numba_cuda_mlir.cuda`` is the
#: simulator's: every case in two dtypes, and the other types' variants
SIMULATED = [(case, DTYPES[(number + shift) % len(DTYPES)]) for number, case in enumerate(CASES) for shift in (3, 8)]
SIMULATED += [(case, dtype) for dtype, cases in OTHER_TYPES.items() for case in cases]


@background.early_fixture(EARLY)
def simulated():
    return _lines(EARLY["simulated"].selected(SIMULATED, "case", "dtype"), simulate=True)


@pytest.mark.parametrize("case, dtype", SIMULATED)
def test_primitive_in_an_mlir_kernel_matches_numpy_on_the_simulator(simulated, case, dtype):
    assert simulated[f"{case} | {dtype}"] == "matches True"


def test_simulator_reports_a_misused_collective_in_an_mlir_kernel():
    run = _run("""
        @cuda.jit
        def skipped(x, out):
            i = cuda.grid(1)
            if i < 32:
                out[0] = coop.block.sum(x[i])

        @cuda.jit
        def twelve_lanes(x, out):
            out[0] = coop.warp.sum(x[0], 12)

        print(cuda is __import__("numba").cuda)
        for kernel in (skipped, twelve_lanes):
            try:
                kernel[1, 64](np.ones(64, np.int32), np.zeros(1, np.int32))
            except Exception as error:
                print(type(error).__name__, " ".join(str(error).split()))
        """, simulate=True)
    assert run.returncode == 0, run.stderr[-4000:]
    same_module, skipped, twelve = run.stdout.splitlines()
    assert same_module == "True"
    assert skipped.startswith("CollectiveError") and "coop.block.sum at <string>:" in skipped and (
        "in skipped was called by threads 0-31 of block (0, 0, 0), but not by all the threads it needs: threads 32-63 "
        "exited without calling it") in skipped, skipped
    assert "coop.warp.sum: width must be a power of two from 1 to 32 (1, 2, 4, 8, 16, 32), got 12" in twelve, twelve


@pytest.mark.parametrize("debug", [False, True])
def test_debug_mode_traps_in_an_mlir_kernel_with_numba_cudas_message(debug):
    """coop.config.debug in numba-cuda-mlir kernels: the launch checked against
    ``threads=`` and lengths known only at run time, the message printed and the kernel
    trapped, as in numba-cuda's (tests/test_simulator_debugger.py); nothing of it with
    debug mode off. On a GPU the kernels run; without one their PTX is read (the
    message is in a printf format there, ``%lld`` for the numbers)."""
    if gpu_available():
        for launch, message in DEBUG_LAUNCHES.values():
            run = _run(DEBUG_KERNELS + f"coop.config.debug = {debug}\n{launch}\ncuda.synchronize()\nprint('NO TRAP')\n")
            said = run.stdout + run.stderr
            if debug:
                assert run.returncode != 0 and "NO TRAP" not in run.stdout and message in said, said[-3000:]
            else:
                assert "NO TRAP" in run.stdout and "coop." not in said, said[-3000:]
        return
    run = _run(DEBUG_KERNELS + f"coop.config.debug = {debug}\n" + textwrap.dedent(r"""
        import re
        arrays = (types.int32[::1],) * 2
        for kernel, argument_types in ((launch_mismatch, arrays), (shape_mismatch, arrays),
                                       (short_output, arrays + (types.int64,))):
            ptx = compile_ptx(kernel, argument_types)
            formats = [bytes(map(int, text.split(","))).rstrip(b"\0").decode()
                       for text in re.findall(r"printfFormat_\d+\[\d+\] = \{([^}]*)\}", ptx)]
            print(kernel.__name__, ptx.count("trap;"), " | ".join(formats).replace("\n", " "))
        """))
    assert run.returncode == 0, run.stderr[-4000:]
    lines = run.stdout.splitlines()
    assert [line.split(" ", 1)[0] for line in lines] == list(DEBUG_LAUNCHES), run.stdout
    for line in lines:
        name, traps, formats = line.split(" ", 2)
        expected = DEBUG_LAUNCHES[name][1].replace("256", "%lld").replace("3 items", "%lld items").replace(
            "least 4", "least %lld").replace("(64, 2, 1)", "(%lld, %lld, %lld)")
        if debug:
            assert int(traps) > 0 and expected in formats, line
        else:
            assert traps == "0" and formats == "", line


def test_mlir_cuda_imported_before_coop_is_not_simulated_and_a_warning_says_so():
    script = ("import warnings\nwarnings.simplefilter('always')\nfrom numba_cuda_mlir import cuda\nimport coop\n"
              "print(coop.SIMULATOR, cuda is __import__('numba').cuda)")
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1",
               PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    run = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-4000:]
    assert run.stdout.split() == ["True", "False"]
    assert ("coop: numba_cuda_mlir.cuda was imported before coop, so numba-cuda-mlir kernels compile for a GPU "
            "instead of running on coop's simulator") in " ".join(run.stderr.split()), run.stderr


def test_an_mlir_kernel_compiles_without_numba_cuda_mlirs_pedantic_warnings():
    """A kernel making the README's numba-cuda-mlir kernel's calls compiles without a
    warning: numba-cuda-mlir's SSA pass warned (20 times for the README's kernel) that
    variables of the code it inlines (an operator's conditional expression, a raking
    scan's slots) are "not in scope"."""
    script = textwrap.dedent("""
        import warnings
        warnings.simplefilter("always")
        import coop
        from coop._core.compilers.numba_cuda_mlir import compile_ptx
        from numba_cuda_mlir import cuda
        from numba_cuda_mlir.numba_cuda import types

        @cuda.jit
        def warp_and_block(x, maxima, prefix, heads):
            i = cuda.grid(1)
            maxima[i] = coop.warp.all_reduce(x[i], coop.ops.max)
            prefix[i] = coop.block.exclusive_sum(x[i], threads=64)
            heads[i] = coop.warp.head_segmented_reduce(x[i], i % 8 == 0, coop.ops.add)

        compile_ptx(warp_and_block, (types.int64[::1],) * 4)
        print("compiled")
        """)
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="0",
               PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    run = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0 and run.stdout.split() == ["compiled"], run.stderr[-4000:]
    assert "Warning" not in run.stderr, run.stderr[-4000:]


@pytest.mark.codegen
def test_histogram_sort_of_eight_items_a_thread_keeps_no_local_memory():
    """The codegen gate at a tile past the matrix's 64x4: numba-cuda-mlir's "sort"
    histogram of 256 threads of 8 uint8 items. Its ranking's per-key loops, left to
    NVVM, were unrolled only 4 times and indexed the keys and ranks in local memory
    (48 bytes); coop unrolls them in the source it gives numba-cuda-mlir."""
    script = textwrap.dedent("""
        import warnings
        import numpy as np
        import coop
        from coop._core.compilers.numba_cuda_mlir import compile_ptx
        from numba_cuda_mlir import cuda
        from numba_cuda_mlir.numba_cuda import types
        warnings.simplefilter("ignore")

        @cuda.jit
        def histogram(x, out):
            items = cuda.local.array(8, np.uint8)
            coop.block.load(x[cuda.blockIdx.x * 2048:], items, threads=256)
            bins = cuda.shared.array(256, np.uint32)
            coop.block.histogram(items, bins, 256, threads=256, items_per_thread=8, algorithm="sort")
            cuda.syncthreads()
            cuda.atomic.add(out, cuda.threadIdx.x, bins[cuda.threadIdx.x])

        ptx = compile_ptx(histogram, (types.uint8[::1], types.uint32[::1]))
        print("local", ptx.count(".local"), "calls", ptx[ptx.index(".entry"):].count("call."))
        """)
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="0",
               PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    run = background.run([sys.executable, "-c", script], timeout=900, env=env)
    assert run.returncode == 0, run.stderr[-4000:]
    assert run.stdout.split()[-4:] == ["local", "0", "calls", "0"], run.stdout


@pytest.mark.parametrize("dtype, size", [("float32", 4), ("float16", 2), ("bool", 1)])
def test_tile_loads_and_stores_address_contiguous_arrays_without_a_stride(dtype, size):
    """numba-cuda-mlir multiplies each index by the stride its array's descriptor holds,
    even a C-contiguous array's (DEFECTS: "a contiguous array's stride read"); coop's
    loads and stores address such an array's items from its data pointer, as numba-cuda's
    code does: no 64-bit multiply, and a thread's consecutive items at constant offsets
    from one address (also of the types a memref holds in another type: float16 as i16,
    bool as i8)."""
    scalar = "np.bool_" if dtype == "bool" else f"np.{dtype}"
    run = _run(f"""
        @cuda.jit
        def kernel(x, out):
            items = cuda.local.array(4, {scalar})
            coop.block.load(x, items, threads=128, algorithm="direct")
            coop.block.store(out, items, threads=128, algorithm="striped", valid_items=300)

        ptx = compile_ptx(kernel, (types.{dtype}[::1], types.{dtype}[::1]))
        entry = ptx[ptx.index(".entry"):]
        entry = entry[:entry.index("\\n}}")]
        print("multiplies", entry.count("mul.lo.s64"), "offsets", entry.count("+{size}]") + entry.count("+{2 * size}]"))
        """)
    assert run.returncode == 0, run.stderr[-4000:]
    assert run.stdout.split()[-4:] == ["multiplies", "0", "offsets", "2"], run.stdout


def test_float16_is_shuffled_as_its_bits():
    """A float16 moves through shfl.sync as its 16 bits in an integer register, as
    numba-cuda's code moves it. Widened to float32 (an ``"f"`` register) and narrowed
    back, CUDA 13.0's NVVM (13.0.88) dropped the raking scan's shared-memory stores of
    the shuffled prefixes: each thread's exclusive sum was its own item on an H100; CUDA
    13.5's kept them."""
    run = _run("""
        @cuda.jit
        def kernel(x, out):
            i = cuda.grid(1)
            out[i] = coop.block.exclusive_sum(x[i], threads=64)

        ptx = compile_ptx(kernel, (types.float16[::1], types.float16[::1]))
        import re
        registers = re.findall(r"shfl\\.sync\\.\\w+\\.b32 %([a-z]+)", ptx)
        print("shuffles", len(registers), "of", *sorted(set(registers)))
        """)
    assert run.returncode == 0, run.stderr[-4000:]
    assert run.stdout.split()[-2:] == ["of", "r"] and "shuffles 0" not in run.stdout, run.stdout


def test_a_float16_warp_reduction_compiles_first_in_a_process():
    """A reduction's shuffles are passed to its loop as functions: the first float16
    shuffle typed in a process used to make its bit conversions while numba-cuda-mlir
    typed the kernel, which then failed ("Cannot determine Numba type" of them, reported
    as coop.warp.reduce's width not being a constant)."""
    run = _run("""
        @cuda.jit
        def kernel(x, out):
            out[cuda.grid(1)] = coop.warp.sum(x[cuda.grid(1)])

        ptx = compile_ptx(kernel, (types.float16[::1], types.float16[::1]))
        print("shuffles", ptx.count("shfl.sync.down"))
        """)
    assert run.returncode == 0, run.stderr[-4000:]
    assert run.stdout.split()[-2] == "shuffles" and int(run.stdout.split()[-1]) >= 5, run.stdout


def test_float16_block_sums_of_many_warps_compile():
    """The warp partials of a float16 block sum (512 threads) and exclusive sum (1024),
    read by one thread, used to fail in NVVM ("unsupported operation": the defect case
    "float16 loads NVVM cannot compile"); coop reads float16 scratch slots as their bits."""
    run = _run("""
        @cuda.jit
        def block_sum(x, out):
            total = coop.block.sum(x[cuda.threadIdx.x], threads=512)
            if cuda.threadIdx.x == 0:
                out[0] = total

        @cuda.jit
        def block_exclusive_sum(x, out):
            out[cuda.threadIdx.x] = coop.block.exclusive_sum(x[cuda.threadIdx.x], threads=1024)

        for kernel in (block_sum, block_exclusive_sum):
            ptx = compile_ptx(kernel, (types.float16[::1], types.float16[::1]))
            print(kernel.__name__, "local", ptx.count(".local"), "adds", ptx.count("add.f32") + ptx.count("add.f16"))
        """)
    assert run.returncode == 0, run.stderr[-4000:]
    lines = run.stdout.splitlines()[-2:]
    for name, line in zip(("block_sum", "block_exclusive_sum"), lines):
        words = line.split()
        assert words[:3] == [name, "local", "0"] and int(words[-1]) >= 10, run.stdout


def test_coop_device_works_beside_mlir_kernels():
    """coop.device (numba-cuda's kernels) in a process whose own kernels numba-cuda-mlir
    compiles: an MLIR kernel, coop.device on its results, the MLIR kernel again (on the
    simulator without a GPU)."""
    run = _run("""
        from numba import cuda as numba_cuda

        @cuda.jit
        def scan(x, out):
            i = cuda.grid(1)
            out[i] = coop.block.exclusive_sum(x[i], threads=64)

        x = np.arange(256, dtype=np.int32) % 7
        expected = np.concatenate([np.cumsum(tile) - tile for tile in x.reshape(4, 64)])
        out = cuda.device_array(256, np.int32)
        scan[4, 64](cuda.to_device(x), out)
        scanned = out.copy_to_host()
        total = numba_cuda.device_array(1, np.int64)
        coop.device.sum(numba_cuda.to_device(scanned), total)
        keys = numba_cuda.to_device(scanned[::-1].copy())
        coop.device.radix_sort(keys)
        scan[4, 64](cuda.to_device(x), out)
        print((scanned == expected).all(), total.copy_to_host()[0] == expected.sum(),
              (keys.copy_to_host() == np.sort(expected)).all(), (out.copy_to_host() == expected).all())
        """, simulate=not gpu_available())
    assert run.returncode == 0, run.stderr[-4000:]
    assert run.stdout.split() == ["True"] * 4, run.stdout


# -- the misuse table (tests/codegen_cases: MISUSES) compiled by numba-cuda-mlir: each kernel
# with numba_cuda_mlir's cuda and types, its numba.cuda device functions made again with it

MISUSE_TABLE = """
import re
import sys
import types as pytypes

sys.path.insert(0, TESTS)
import numba.cuda
from numba.cuda import types as numba_cuda_types
from numba.cuda.dispatcher import CUDADispatcher

import codegen_cases
from coop._core.compilers.numba_cuda_mlir_intrinsics import numba_cuda_mlir_type


def mlir_type(ty):
    if isinstance(ty, numba_cuda_types.Array):
        return types.Array(mlir_type(ty.dtype), ty.ndim, ty.layout, readonly=not ty.mutable)
    if isinstance(ty, numba_cuda_types.NPDatetime):
        return types.NPDatetime(ty.unit)
    return numba_cuda_mlir_type(ty)


def mlir_function(fn):
    names = dict(fn.__globals__)
    for name in fn.__code__.co_names:
        value = names.get(name)
        if value is numba.cuda:
            names[name] = cuda
        elif value is numba_cuda_types:
            names[name] = types
        elif isinstance(value, CUDADispatcher):
            names[name] = cuda.jit(device=True)(mlir_function(value.py_func))
    return pytypes.FunctionType(fn.__code__, names, fn.__name__, fn.__defaults__, fn.__closure__)


for name in NAMES:
    fn, signature, _ = codegen_cases.MISUSES[name]
    try:
        compile_ptx(cuda.jit(mlir_function(fn)), tuple(map(mlir_type, signature)))
        message = "compiled"
    except Exception as error:
        message = " ".join(re.sub(r"\\x1b\\[[0-9;]*m", "", str(error)).split())
    print(f"{name}: {message[:1500]}", flush=True)
"""


def _misuses():
    sys.path.insert(0, str(ROOT / "tests"))
    try:
        import codegen_cases
    finally:
        sys.path.remove(str(ROOT / "tests"))
    return codegen_cases.MISUSES


#: Misuse rows that give a primitive a lambda or device function (an operator, a
#: callback), which numba-cuda-mlir kernels refuse first
REFUSED_FUNCTIONS = {"operator-arity", "operator-result-type", "merge-sort-compare-arity", "prefix-op-without-state",
                     "inclusive-scan-initial-with-prefix-op",
                     "transform-items-per-thread-missing", "transform-op-result-type", "flag-heads-flag-op-arity"}
#: Kernels, but for the too-short arrays that numba-cuda reports at link time (``coop_error__``
#: functions), which numba-cuda-mlir kernels do not check (README.md)
MISUSE_KERNELS = [name for name, (_, signature, message) in _misuses().items()
                  if signature is not None and not message.startswith("coop_error__")]


@background.early_fixture(EARLY)
def mlir_misuses():
    names = EARLY["mlir_misuses"].selected(MISUSE_KERNELS, "name")
    run = _run(f"TESTS = {str(ROOT / 'tests')!r}\nNAMES = {names!r}\n" + MISUSE_TABLE)
    assert run.returncode == 0, run.stderr[-4000:]
    return dict(line.split(": ", 1) for line in run.stdout.splitlines() if ": " in line)


@pytest.mark.parametrize("name", MISUSE_KERNELS)
def test_misuse_in_an_mlir_kernel_raises_the_same_message(mlir_misuses, name):
    got = mlir_misuses[name]
    expected = _misuses()[name][2]
    if name in REFUSED_FUNCTIONS:
        expected = "in a numba-cuda-mlir kernel: a lambda or device function as an argument"
    assert expected in got, got


REFUSED = [
    ("coop.block.reduce(x[0], lambda a, b: a + b, threads=64)",
     "coop.block.reduce in a numba-cuda-mlir kernel: a lambda or device function as an argument (use a coop.ops "
     "or operator function) is not supported there yet"),
    ("coop.warp.exclusive_sum(items)", "coop.warp.exclusive_sum: output is required with an items array"),
]


@background.early_fixture(EARLY)
def refusals():
    body = ""
    for number, (call, _) in enumerate(REFUSED):
        body += textwrap.dedent(f"""
            @cuda.jit
            def kernel(x, out):
                items = cuda.local.array(4, np.float64)
                out[0] = 0
                {call}

            try:
                compile_ptx(kernel, (types.float64[::1],) * 2)
                print("{number}: compiled")
            except Exception as error:
                print("{number}: refused:", " ".join(str(error).split()))
        """)
    run = _run(body)
    assert run.returncode == 0, run.stderr[-4000:]
    return dict(line.split(": ", 1) for line in run.stdout.splitlines() if ": " in line)


@pytest.mark.parametrize("number", range(len(REFUSED)), ids=[call for call, _ in REFUSED])
def test_what_is_not_served_yet_is_refused_with_coops_message(refusals, number):
    line = refusals[str(number)]
    assert line.startswith("refused:") and REFUSED[number][1] in line, line


# -- the docstring examples in numba-cuda-mlir kernels: each primitive's example with its
# one import of ``cuda`` made numba-cuda-mlir's, run on the GPU (on the simulator that
# ``cuda`` is numba-cuda's: nothing more to learn there). Those numba-cuda-mlir cannot
# compile yet give coop's refusal; coop.device's examples show it taking numba-cuda-mlir's
# device arrays.

from test_docs import NAMES as DOCUMENTED, _examples  # noqa: E402

#: Examples refused in numba-cuda-mlir kernels, and the refusal's words.
OPERATOR_ARGUMENT = "a lambda or device function as an argument (use a coop.ops or operator function)"
REFUSED_EXAMPLES = {
    "coop.thread.inclusive_scan": OPERATOR_ARGUMENT,
    "coop.thread.transform": OPERATOR_ARGUMENT,
    "coop.warp.all_reduce": OPERATOR_ARGUMENT,
    "coop.block.all_reduce": OPERATOR_ARGUMENT,
    "coop.block.flag_tails": OPERATOR_ARGUMENT,
    "coop.block.inclusive_sum": OPERATOR_ARGUMENT,
    "coop.block.merge_sort": OPERATOR_ARGUMENT,
    "coop.block.subtract_right": OPERATOR_ARGUMENT,
    "coop.block.transform": OPERATOR_ARGUMENT,
}

EXAMPLES = """
for name, code in EXAMPLES:
    code = code.replace("from numba import cuda", "from numba_cuda_mlir import cuda")
    try:
        exec(compile(code, f"<example {name}>", "exec"), {"__name__": "coop_example"})
        print(f"{name}: ran", flush=True)
    except Exception as error:
        print(f"{name}: {type(error).__name__}: {' '.join(str(error).split())[:600]}", flush=True)
"""


@background.early_fixture(EARLY)
def examples():
    def part(chunk):
        run = _run(f"EXAMPLES = {chunk!r}\n" + EXAMPLES)
        assert run.returncode == 0, run.stderr[-4000:]
        return [line for line in run.stdout.splitlines() if line.startswith("coop.")]

    names = EARLY["examples"].selected(DOCUMENTED, "name")
    return _side_by_side(part, [(name, code) for name in names for code in _examples(name)])


@pytest.mark.parametrize("name", DOCUMENTED if gpu_available() else [pytest.param(None, marks=pytest.mark.skip(
    reason="the examples in numba-cuda-mlir kernels run on a GPU (on the simulator its cuda is numba-cuda's)"))])
def test_docstring_example_runs_in_an_mlir_kernel_or_is_refused(examples, name):
    line = examples[name]
    if name in REFUSED_EXAMPLES:
        assert line.startswith("CoopError:") and REFUSED_EXAMPLES[name] in line, line
    else:
        assert line == "ran", line


# -- numba-cuda-mlir 0.6's defects that coop works around, each as its smallest kernel
# (without coop), for upstream reports; each test checks that the defect is still there,
# so that a release fixing it fails here and says which workaround can go.

DEFECTS = {
    "view store deleted": (
        """
        from numba_cuda_mlir.extending import register_jitable, typing_registry

        @register_jitable(typing_registry=typing_registry, inline="always")
        def nothing():
            pass

        @cuda.jit
        def kernel(words, i):
            nothing()  # any inline="always" overload inlined here...
            words.view(np.uint32)[i] = 256  # ...and this store is gone from the MLIR

        compile_ptx(kernel, (types.uint64[::1], types.int64))
        mlir = kernel.inspect_mlir()
        print("memref.store" not in str(next(iter(mlir.values())) if isinstance(mlir, dict) else mlir))
        """,
        "coop's scratch stores through views may be written as plain item assignments again "
        "(numba_cuda_mlir_intrinsics: operator.setitem)"),
    "atomic made global": (
        """
        @cuda.jit(device=True)
        def bump(counts, i):
            cuda.atomic.add(counts, i, 1)

        @cuda.jit
        def kernel(out):
            counts = cuda.shared.array(8, np.int32)
            bump(counts, cuda.threadIdx.x % 8)  # a shared array given to a function
            cuda.syncthreads()
            out[cuda.threadIdx.x % 8] = counts[cuda.threadIdx.x % 8]

        ptx = compile_ptx(kernel, (types.int32[::1],))
        print("atom.global.add" in ptx and "atom.shared" not in ptx)
        """,
        "coop's atomic adds may be numba-cuda-mlir's own cuda.atomic.add again "
        "(numba_cuda_mlir_intrinsics._atomic_adder, numba_cuda_mlir.mlir_function's assertion)"),
    "function argument": (
        """
        from numba_cuda_mlir.extending import overload, typing_registry

        def apply(f, x):
            pass

        @overload(apply, typing_registry=typing_registry, inline="always")
        def apply_impl(f, x):
            def impl(f, x):
                return f(x)
            return impl

        @cuda.jit(device=True)
        def plus_one(v):
            return v + 1

        @cuda.jit
        def kernel(out):
            out[0] = apply(plus_one, out[0])

        try:
            compile_ptx(kernel, (types.int32[::1],))
            print(False)
        except Exception:
            print(True)
        """,
        "lambdas and device functions may be served as operators (numba_cuda_mlir: "
        "MlirUnsupported 'a lambda or device function as an argument')"),
    "inlined None return": (
        """
        @cuda.jit(device=True)
        def turn(items, w):
            if w < 32:
                items[0] = 1

        @cuda.jit(device=True)
        def step(items, w):
            return turn(items, w)  # returns turn's None

        @cuda.jit
        def kernel(out):
            step(out, cuda.threadIdx.x)

        try:
            compile_ptx(kernel, (types.int32[::1],))
            print(False)
        except AssertionError as error:
            print("not found in varmap" in str(error))
        """,
        "device callers may return what they call (numba_cuda_mlir_intrinsics.caller: "
        "_returns_a_value)"),
    "inline_ptx percent": (
        """
        @cuda.jit
        def kernel(out):
            out[cuda.threadIdx.x] = cuda.experimental.inline_ptx("mov.u32 %0, %lanemask_lt;", "=r", np.uint32(0))

        try:
            compile_ptx(kernel, (types.uint32[::1],))
            print(False)
        except Exception as error:
            print("$lanemask_lt" in str(error))
        """,
        "lanes_below may read %lanemask_lt (numba_cuda_mlir_intrinsics._lanes_below)"),
    "a call's result assigned in a loop's if": (
        """
        @cuda.jit(device=True)
        def larger(a, b):
            return a if a > b else b  # (a call that branches)

        @cuda.jit
        def kernel(x, out, n):
            t = x[cuda.threadIdx.x]
            for w in range(1, 4):
                if w * 32 < n:
                    t = larger(t, x[w])  # t's phi at the loop's head joins two memrefs
            out[cuda.threadIdx.x] = t

        print(".local" in compile_ptx(kernel, (types.int32[::1], types.int32[::1], types.int64)))
        """,
        "the joins after branches in loops may go (coop._core.values.joined)"),
    "shared array of a called device function lost": (
        """
        import contextlib, io

        steps = "".join(f"\\n    v = v * 3 + {k}" for k in range(70))  # (past 64 statements: not inlined)
        scope = {"cuda": cuda, "np": np}
        exec("@cuda.jit(device=True)\\ndef staged(v):\\n    buffer = cuda.shared.array(32, np.int32)" + steps
             + "\\n    buffer[cuda.threadIdx.x % 32] = v\\n    cuda.syncthreads()"
             + "\\n    return buffer[(cuda.threadIdx.x + 1) % 32]", scope)
        staged = scope["staged"]

        @cuda.jit
        def kernel(x):
            x[cuda.threadIdx.x] = staged(x[cuda.threadIdx.x])  # its shared array is not linked in

        try:
            with contextlib.redirect_stdout(io.StringIO()):  # (the module it prints)
                compile_ptx(kernel, (types.int32[::1],))
            print(False)
        except Exception as error:
            print("InternalCompilerError" in type(error).__name__)
        """,
        "coop's functions that allocate shared memory may be left to numba-cuda-mlir's inlining "
        "(numba_cuda_mlir._allocates_shared)"),
    "float16 loads NVVM cannot compile": (
        """
        @cuda.jit
        def kernel(x, out):
            partials = cuda.shared.array(32, np.float16, alignment=16)
            r = cuda.threadIdx.x
            if r % 32 == 31:
                partials[r // 32] = x[r]
            cuda.syncthreads()
            total = partials[0]
            for w in range(1, 5):  # (five float16 loads from 16-byte-aligned shared memory)
                total = np.float16(total + partials[w])
            out[r] = total

        try:
            compile_ptx(kernel, (types.float16[::1],) * 2)
            print(False)
        except Exception as error:
            print("unsupported operation" in str(error))
        """,
        "coop may read float16 scratch slots as float16 again (numba_cuda_mlir_intrinsics: _half_slot)"),
    "a contiguous array's stride read": (
        """
        @cuda.jit
        def kernel(x, out):
            out[cuda.threadIdx.x] = x[cuda.threadIdx.x]  # C-contiguous: the stride is 1

        print("mul.lo.s64" in compile_ptx(kernel, (types.int32[::1], types.int32[::1])))
        """,
        "coop's tile loads and stores may index arrays again (numba_cuda_mlir_intrinsics: "
        "_element_access)"),
}

#: Defects shown under Python 3.12 and later only (Python 3.11's bytecode differs)
FROM_PYTHON_3_12 = {"a call's result assigned in a loop's if"}


@background.early_fixture(EARLY)
def defects():
    body = "".join(f"\nprint({name!r}, end=': ')\n" + textwrap.dedent(code) for name, (code, _) in DEFECTS.items())
    run = _run(body)
    assert run.returncode == 0, run.stderr[-4000:]
    return dict(line.split(": ", 1) for line in run.stdout.splitlines() if ": " in line)


@pytest.mark.skipif(importlib.util.find_spec("numba_cuda_mlir") is None
                    or importlib.metadata.version("numba-cuda-mlir").split(".")[:2] != ["0", "6"],
                    reason="the defects of numba-cuda-mlir 0.6")
@pytest.mark.parametrize("name", [pytest.param(name, marks=pytest.mark.skipif(
    name in FROM_PYTHON_3_12 and sys.version_info < (3, 12), reason="shown under Python 3.12 and later")) for name in DEFECTS])
def test_numba_cuda_mlir_defect_coop_works_around_is_still_there(defects, name):
    assert defects[name] == "True", f"numba-cuda-mlir no longer shows {name!r}: {DEFECTS[name][1]}"
