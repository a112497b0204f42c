"""coop.block.top_k against coop's own block radix sort + take k, and CUB's block top-k
and BlockRadixSort, side by side on one GPU.

    python benchmarks/block_top_k.py [--log2n 26] [--cccl-include DIR | --cub-binary FILE] [--out DIR] [--sim-check]

Per tile of ``THREADS x ITEMS`` uint32 keys (2^26 in all by default; splitmix64, as
cub_timing.cuh's Rng), with their tile positions as values, loaded blocked: the ``k``
largest keys and their positions, written out (``k`` a run-time argument). coop:
``coop.block.top_k`` (unsorted), and ``coop.block.radix_sort(descending=True)`` then the
first ``k``; CUB: ``cub::detail::block_topk::max_pairs`` (CUB 3.3, newer than CUDA
13.0's headers: ``--cccl-include`` names pip's, e.g. the nvidia-cuda-cccl wheel's
``nvidia/cu13/include/cccl``) and ``BlockRadixSort::SortDescending`` then the first
``k`` (benchmarks/cub_block_top_k.cu, built here with nvcc). coop's results are checked
against NumPy (the selected keys and that each position holds its key); CUB's by the
same checksum (the sum of the selected keys modulo 2^64). Timing: the median of 20 back-to-back
launches after 3 warm-ups (CUDA events), as benchmarks/radix_sort.py's. Prints a
Markdown table and writes DIR/block_top_k.jsonl.

``--sim-check`` runs coop's kernels on a few tiles once on the simulator, checked.
"""

import argparse
import json
import os
import pathlib
import sys
import tempfile

import coop  # (before numba.cuda: on the simulator it extends it, and kernels find ``cuda`` a global)
from numba import cuda

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from radix_sort import build_cub, json_lines  # noqa: E402  (benchmarks/ on the path first)

CONFIGS = [(256, 8, k) for k in (8, 32, 256)] + [(128, 16, k) for k in (16, 256)]  # (threads, items, k)


def splitmix_keys(n, seed=42):
    """cub_timing.cuh's Rng: ``uint32(rng())`` for each of ``n`` keys."""
    import numpy as np

    steps = np.arange(1, n + 1, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15)
    with np.errstate(over="ignore"):
        z = np.uint64(seed) + steps
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        z = z ^ (z >> np.uint64(31))
    return z.astype(np.uint32)


def kernels(threads, items):
    """``(top_k, sort)``: coop's kernels for one tile shape."""
    import numpy as np

    T, N = threads, items
    TILE = T * N
    jit = cuda.jit(launch_bounds=T)  # (CUB's __launch_bounds__)

    def make(use_top_k):
        @jit
        def select_k(x, k, out_keys, out_values):
            keys = cuda.local.array(N, np.uint32)
            values = cuda.local.array(N, np.uint32)
            base = cuda.blockIdx.x * TILE
            for i in range(N):
                keys[i] = x[base + cuda.threadIdx.x * N + i]
                values[i] = cuda.threadIdx.x * N + i
            if use_top_k:
                coop.block.top_k(keys, k, values, threads=T, items_per_thread=N)
            else:
                coop.block.radix_sort(keys, values, threads=T, items_per_thread=N, descending=True)
            for i in range(N):
                position = cuda.threadIdx.x * N + i
                if position < k:
                    out_keys[cuda.blockIdx.x * k + position] = keys[i]
                    out_values[cuda.blockIdx.x * k + position] = values[i]

        return select_k

    return make(True), make(False)


def time_coop(log2n, sim=False):
    return time_selections(log2n, sim, [(threads, items, k, threads * items) for threads, items, k in CONFIGS],
                           kernels)


def time_selections(log2n, sim, configs, make_kernels):
    """The rows of coop's two kernels (``make_kernels(threads, items)``: top-k, sort +
    take k) for each ``(threads, items, k, tile)`` of ``configs`` (``tile``: the keys a
    selection is made from), timed (on the simulator: run once) and checked."""
    import numpy as np

    from radix_sort import median_launch_seconds, warm_up

    rows = []
    if not sim:
        warm_up()
    made = {}
    for threads, items, k, tile in configs:
        n = (1 << log2n) if not sim else 3 * threads * items
        tiles = n // tile
        x = splitmix_keys(n)
        tile_keys = x.reshape(tiles, tile)
        expected = -np.sort(-tile_keys.astype(np.int64), axis=1)[:, :k]
        d_x = cuda.to_device(x)
        if (threads, items) not in made:
            made[threads, items] = make_kernels(threads, items)
        for impl, kernel in zip(("coop top_k", "coop sort"), made[threads, items]):
            d_keys, d_values = cuda.device_array(tiles * k, np.uint32), cuda.device_array(tiles * k, np.uint32)

            def launch():
                kernel[n // (threads * items), threads](d_x, k, d_keys, d_values)

            seconds = None if sim else median_launch_seconds(launch)
            if sim:
                launch()
            keys, values = d_keys.copy_to_host().reshape(tiles, k), d_values.copy_to_host().reshape(tiles, k)
            ok = bool((-np.sort(-keys.astype(np.int64), axis=1) == expected).all()
                      and (np.take_along_axis(tile_keys, values.astype(np.int64), axis=1) == keys).all())
            row = {"impl": impl, "threads": threads, "items": items, "k": k, "log2n": log2n, "seconds": seconds,
                   "checksum": int(keys.astype(np.uint64).sum(dtype=np.uint64)), "ok": ok}
            rows.append(row)
            print(json.dumps(row), flush=True)
    return rows


def report(rows):
    by = {}
    for r in rows:
        by.setdefault((r["threads"], r["items"], r["k"]), {})[r["impl"]] = r
    lines = ["| tile | k | coop top_k Gkeys/s | coop sort + k | CUB top_k | CUB sort + k | top_k / coop sort | "
             "top_k / CUB top_k | checks |", "|---|--:|--:|--:|--:|--:|--:|--:|---|"]
    for (threads, items, k), impls in sorted(by.items()):
        need = ("coop top_k", "coop sort", "cub top_k", "cub sort")
        if not all(name in impls for name in need):
            continue
        keys = (1 << impls["coop top_k"]["log2n"])
        rate = {name: keys / impls[name]["seconds"] / 1e9 for name in need}
        sums = {impls[name]["checksum"] for name in need}
        ok = impls["coop top_k"]["ok"] and impls["coop sort"]["ok"] and len(sums) == 1
        lines.append(f"| {threads}x{items} | {k} | {rate['coop top_k']:.1f} | {rate['coop sort']:.1f} | "
                     f"{rate['cub top_k']:.1f} | {rate['cub sort']:.1f} | "
                     f"**{rate['coop top_k'] / rate['coop sort']:.2f}** | "
                     f"**{rate['coop top_k'] / rate['cub top_k']:.2f}** | {'ok' if ok else 'MISMATCH'} |")
    return "\n".join(lines)


def main(argv=None, name="block_top_k", doc=__doc__, default_log2n=26, time_coop=time_coop, report=report):
    """The command line of a top-k benchmark ``name`` (this one's, and
    benchmarks/warp_top_k.py's): coop's side timed by ``time_coop(log2n, sim=False)``,
    CUB's by ``cub_<name>.cu``, ``report(rows)`` printed."""
    parser = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    parser.add_argument("--log2n", type=int, default=default_log2n)
    parser.add_argument("--cccl-include", default=os.environ.get("CCCL_INCLUDE", ""))
    parser.add_argument("--out", default=None)
    parser.add_argument("--sim-check", action="store_true")
    parser.add_argument("--cub-binary", default=None,
                        help=f"cub_{name}.cu built already (e.g. where the machine has no newer CCCL headers)")
    args = parser.parse_args(argv)
    if args.sim_check:
        rows = time_coop(args.log2n, sim=True)
        bad = [r for r in rows if not r["ok"]]
        print(f"{len(rows) - len(bad)} of {len(rows)} kernels checked ok")
        return 1 if bad else 0
    out = pathlib.Path(args.out or tempfile.mkdtemp(prefix=f"{name}_"))
    out.mkdir(parents=True, exist_ok=True)
    binary = args.cub_binary or build_cub(f"cub_{name}.cu", args.cccl_include, out)
    rows = time_coop(args.log2n) + json_lines([binary, args.log2n])
    (out / f"{name}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    print(report(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
