"""coop.block.merge_sort and coop.warp.merge_sort against CUB's BlockMergeSort and
WarpMergeSort, side by side on one GPU.

    python benchmarks/merge_sort.py [--log2n 26] [--out DIR] [--compilers numba-cuda,numba-cuda-mlir]

Per-tile sort of int32 keys (2^26 by default) with ``<``, as a user would write it: block
sorts 128x4, 256x8, 512x8 between "warp_transpose" block loads and stores; warp sorts
32x4, 32x8 (four logical warps of 32 lanes a block) between "transpose" warp loads and
stores; the three calls of a kernel share one ``temp_storage`` array. The CUB side (benchmarks/cub_merge_sort.cu, built here with nvcc) is the same
kernels with cub::BlockLoad/BlockMergeSort/BlockStore (one TempStorage union) and
cub::WarpLoad/WarpMergeSort/WarpStore. Timing, checks, cold compile and compilers as
benchmarks/radix_sort.py's. Prints a Markdown table and writes DIR/merge_sort.jsonl.
"""

import pathlib
import sys

HERE = pathlib.Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))
from radix_sort import load, median_launch_seconds, side_by_side, warm_up  # noqa: E402

CONFIGS = [("block", 128, 4), ("block", 256, 8), ("block", 512, 8), ("warp", 32, 4), ("warp", 32, 8)]
WARP_BLOCK_THREADS = 128

KERNEL_SOURCE = '''
import operator
import numpy as np
from numba import cuda
import coop

LEVEL, LANES, ITEMS = {level!r}, {lanes}, {items}
THREADS = LANES if LEVEL == "block" else {warp_block}
TILE = LANES * ITEMS        # the keys one sort sorts
BLOCK_KEYS = THREADS * ITEMS


if LEVEL == "block":
    TEMP_BYTES = max(coop.block.load.temp_storage_bytes(np.int32, THREADS, ITEMS, algorithm="warp_transpose"),
                     coop.block.merge_sort.temp_storage_bytes(np.int32, THREADS, ITEMS))
else:
    TEMP_BYTES = max(coop.warp.load.temp_storage_bytes(np.int32, THREADS, ITEMS, algorithm="transpose"),
                     coop.warp.merge_sort.temp_storage_bytes(np.int32, THREADS, ITEMS))


def sort_tiles(keys_in, keys_out):
    temp = cuda.shared.array(TEMP_BYTES, np.uint8, alignment=16)
    keys = cuda.local.array(ITEMS, np.int32)
    if LEVEL == "block":
        base = cuda.blockIdx.x * BLOCK_KEYS
        coop.block.load(keys_in[base:], keys, threads=THREADS, items_per_thread=ITEMS, algorithm="warp_transpose",
                        temp_storage=temp)
        coop.block.merge_sort(keys, operator.lt, threads=THREADS, items_per_thread=ITEMS, temp_storage=temp)
        coop.block.store(keys_out[base:], keys, threads=THREADS, items_per_thread=ITEMS, algorithm="warp_transpose",
                         temp_storage=temp)
    else:
        # (each warp uses its own part of the array: the warp primitives need no block barrier)
        base = cuda.blockIdx.x * BLOCK_KEYS + (cuda.threadIdx.x // LANES) * TILE
        coop.warp.load(keys_in[base:], keys, threads=THREADS, items_per_thread=ITEMS, algorithm="transpose",
                       temp_storage=temp)
        coop.warp.merge_sort(keys, operator.lt, threads=THREADS, items_per_thread=ITEMS, temp_storage=temp)
        coop.warp.store(keys_out[base:], keys, threads=THREADS, items_per_thread=ITEMS, algorithm="transpose",
                        temp_storage=temp)


SIGNATURE = "void(int32[::1], int32[::1])"
'''


def name(level, lanes, items):
    return f"{level} {lanes}x{items}"


def module_for(directory, config):
    level, lanes, items = config
    path = pathlib.Path(directory) / f"merge_{level}_{lanes}_{items}.py"
    path.write_text(KERNEL_SOURCE.format(level=level, lanes=lanes, items=items, warp_block=WARP_BLOCK_THREADS))
    return path


def time_coop(path, log2n):
    import numpy as np

    module = load(path)
    cuda = module.cuda
    warm_up(cuda)
    kernel = cuda.jit(module.SIGNATURE, cache=True)(module.sort_tiles)  # (compiled by compile_cold)
    n = 1 << log2n
    blocks = n // module.BLOCK_KEYS
    keys = np.random.default_rng(7).integers(-(1 << 31), 1 << 31, n, dtype=np.int64).astype(np.int32)
    d_keys, d_out = cuda.to_device(keys), cuda.device_array_like(keys)
    seconds = median_launch_seconds(lambda: kernel[blocks, module.THREADS](d_keys, d_out), cuda)
    got = d_out.copy_to_host()
    tile = module.TILE
    tiles = n // tile
    ok = all((got[t * tile:(t + 1) * tile] == np.sort(keys[t * tile:(t + 1) * tile], kind="stable")).all()
             for t in (0, tiles // 2, tiles - 1))
    return {"seconds": seconds, "gkeys": n / seconds * 1e-9, "regs": kernel.get_regs_per_thread(),
            "smem": kernel.get_shared_mem_per_block(), "check": "ok" if ok else "MISMATCH"}


def main(argv=None):
    return side_by_side(
        argv, __doc__.split("\n\n")[0], __file__, CONFIGS, module_for, name, time_coop, "cub_merge_sort.cu",
        lambda row: name(row["level"], row["lanes"], row["items"]), "merge_sort.jsonl",
    )


if __name__ == "__main__":
    sys.exit(main())
