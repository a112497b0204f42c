"""coop.warp.top_k against coop's own warp merge sort + take k, and CUB's WarpMergeSort +
take k (CUB has no warp top-k), side by side on one GPU.

    python benchmarks/warp_top_k.py [--log2n 24] [--cccl-include DIR | --cub-binary FILE] [--out DIR] [--sim-check]

Per warp of 32 lanes, ``ITEMS`` uint32 keys a lane (2^24 in all by default; splitmix64,
as cub_timing.cuh's Rng), with their tile positions as values, loaded blocked: the ``k``
largest keys of each warp's tile and their positions, written out (``k`` a run-time
argument); blocks of 128 threads. coop: ``coop.warp.top_k`` (unsorted), and
``coop.warp.merge_sort(operator.gt)`` then the first ``k``; CUB:
``WarpMergeSort::Sort`` with a greater-than then the first ``k``
(benchmarks/cub_warp_top_k.cu, built here with nvcc). coop's results are checked
against NumPy (the selected keys and that each position holds its key); CUB's by the
same checksum (the sum of the selected keys modulo 2^64). Timing: the median of 20
back-to-back launches after 3 warm-ups (CUDA events), as benchmarks/radix_sort.py's.
Prints a Markdown table and writes DIR/warp_top_k.jsonl.

``--sim-check`` runs coop's kernels on a few warp tiles once on the simulator, checked.
"""

import operator
import pathlib
import sys

import coop  # (before numba.cuda: on the simulator it extends it, and kernels find ``cuda`` a global)
from numba import cuda

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from block_top_k import main as top_k_main, time_selections  # noqa: E402  (benchmarks/ on the path first)

THREADS = 128
CONFIGS = [(4, 4), (4, 16), (8, 8), (8, 32), (16, 16), (16, 64)]  # (items, k), as cub_warp_top_k.cu's


def kernels(items):
    """``(top_k, sort)``: coop's kernels for one tile shape."""
    import numpy as np

    T, N = THREADS, items
    WARPS, TILE = THREADS // 32, 32 * items
    jit = cuda.jit(launch_bounds=T)  # (CUB's __launch_bounds__)

    def make(use_top_k):
        @jit
        def select_k(x, k, out_keys, out_values):
            keys = cuda.local.array(N, np.uint32)
            values = cuda.local.array(N, np.uint32)
            lane = cuda.threadIdx.x % 32
            tile = cuda.blockIdx.x * WARPS + cuda.threadIdx.x // 32
            for i in range(N):
                keys[i] = x[tile * TILE + lane * N + i]
                values[i] = lane * N + i
            if use_top_k:
                coop.warp.top_k(keys, k, values, threads=T, items_per_thread=N)
            else:
                coop.warp.merge_sort(keys, operator.gt, values, threads=T, items_per_thread=N)
            for i in range(N):
                position = lane * N + i
                if position < k:
                    out_keys[tile * k + position] = keys[i]
                    out_values[tile * k + position] = values[i]

        return select_k

    return make(True), make(False)


def time_coop(log2n, sim=False):
    return time_selections(log2n, sim, [(THREADS, items, k, 32 * items) for items, k in CONFIGS],
                           lambda threads, items: kernels(items))


def report(rows):
    by = {}
    for r in rows:
        by.setdefault((r["items"], r["k"]), {})[r["impl"]] = r
    lines = ["| warp tile | k | coop top_k Gkeys/s | coop sort + k | CUB sort + k | top_k / coop sort | "
             "top_k / CUB sort | checks |", "|---|--:|--:|--:|--:|--:|--:|---|"]
    for (items, k), impls in sorted(by.items()):
        need = ("coop top_k", "coop sort", "cub sort")
        if not all(name in impls for name in need):
            continue
        keys = 1 << impls["coop top_k"]["log2n"]
        rate = {name: keys / impls[name]["seconds"] / 1e9 for name in need}
        ok = impls["coop top_k"]["ok"] and impls["coop sort"]["ok"] and len({impls[n]["checksum"] for n in need}) == 1
        lines.append(f"| 32x{items} | {k} | {rate['coop top_k']:.1f} | {rate['coop sort']:.1f} | "
                     f"{rate['cub sort']:.1f} | **{rate['coop top_k'] / rate['coop sort']:.2f}** | "
                     f"**{rate['coop top_k'] / rate['cub sort']:.2f}** | {'ok' if ok else 'MISMATCH'} |")
    return "\n".join(lines)


def main(argv=None):
    return top_k_main(argv, "warp_top_k", __doc__, 24, time_coop, report)


if __name__ == "__main__":
    sys.exit(main())
