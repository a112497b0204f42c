"""temp_storage shared by primitives, and arrays too small."""

import operator

import numpy as np
from numba import cuda
from numba.cuda import types

import coop

from ._registry import case, misuse


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
