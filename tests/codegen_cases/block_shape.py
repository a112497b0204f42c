"""A block's shape given as ``threads=`` (a tuple): every family computes the thread's
rank from the constant shape, as CUB's BLOCK_DIM_X/Y/Z, so the PTX reads no ``%ntid``
(and, for a 1-D shape, neither ``%tid.y`` nor ``%tid.z``): ``test_codegen`` counts them."""

import operator

import numpy as np
from numba import cuda
from numba.cuda import types

import coop

from ._registry import case

N = 4


def tile_kernel(shape):
    """Loads and stores of every shared-memory algorithm, scans and reductions of every
    algorithm, an exchange and the block shuffles."""
    T = shape
    TILE = int(np.prod(shape)) * N

    @cuda.jit
    def kernel(x, out):
        items = cuda.local.array(N, np.int32)
        ranks = cuda.local.array(N, np.int32)
        base = cuda.blockIdx.x * TILE
        coop.block.load(x[base:], items, threads=T, items_per_thread=N, algorithm="transpose")
        total = coop.block.exclusive_sum(items, items, threads=T)
        total += coop.block.inclusive_sum(items, items, threads=T, algorithm="raking_memoize")
        total += coop.block.inclusive_scan(items, operator.add, items, threads=T, algorithm="warp_scans")
        total += coop.block.sum(items, threads=T, algorithm="raking")
        total += coop.block.all_reduce(items[0], max, threads=T, algorithm="raking_commutative_only")
        total += coop.block.all_sum(items[1] > 0, threads=T, valid_items=x.size - base)
        total += coop.block.shuffle.offset(items[2], 1, threads=T)
        coop.block.shuffle.up(items, ranks, threads=T)
        for i in range(N):
            ranks[i] = (ranks[i] & 15) * N + i
        coop.block.exchange.scatter_to_striped(items, items, ranks, threads=T, items_per_thread=N)
        items[0] += total
        coop.block.store(out[base:], items, threads=T, items_per_thread=N, algorithm="warp_transpose")
        coop.block.transform(x[base:], out[base:], lambda v: v + 1, threads=T, items_per_thread=N,
                             algorithm="direct", valid_items=x.size - base)

    return kernel


def sort_kernel(shape):
    """The sorts and rankings, top-k, and the analytics."""
    T = shape
    TILE = int(np.prod(shape)) * N

    @cuda.jit
    def kernel(x, out):
        keys = cuda.local.array(N, np.int32)
        ranks = cuda.local.array(N, np.int32)
        flags = cuda.local.array(N, np.uint8)
        counts = cuda.shared.array(64, np.int32)
        base = cuda.blockIdx.x * TILE
        coop.block.load(x[base:], keys, threads=T, items_per_thread=N, algorithm="striped")
        coop.block.radix_sort(keys, threads=T, items_per_thread=N)
        coop.block.radix_rank(keys, ranks, 0, 4, threads=T, items_per_thread=N, algorithm="match_early_counts")
        coop.block.merge_sort(keys, operator.lt, ranks, threads=T, items_per_thread=N)
        coop.block.top_k(keys, 8, threads=T, items_per_thread=N)
        coop.block.histogram(ranks, counts, 64, threads=T, items_per_thread=N, algorithm="sort")
        coop.block.flag_heads(keys, flags, operator.ne, threads=T)
        coop.block.subtract_left(keys, ranks, threads=T)
        runs = coop.block.run_length_encode(keys, keys, ranks, threads=T, items_per_thread=N)
        keys[0] += runs + flags[0] + counts[0]
        coop.block.store(out[base:], keys, threads=T, items_per_thread=N, algorithm="striped")

    return kernel


for _shape in ((128,), (32, 4)):
    _label = "x".join(map(str, _shape))
    case(f"block_shape-tile-{_label}", (types.int32[::1],) * 2)(tile_kernel(_shape))
    case(f"block_shape-sorts-{_label}", (types.int32[::1],) * 2)(sort_kernel(_shape))
