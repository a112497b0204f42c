"""coop.warp.sum_batched / reduce_batched against CUB's WarpReduceBatched, and against one
coop.warp.sum per batch, side by side on one GPU.

    python benchmarks/warp_reduce_batched.py [--log2n 26] [--cccl-include DIR | --cub-binary FILE]
                                             [--out DIR] [--sim-check]

One warp per tile of ``32 * B`` items (``B`` batches; batch ``b`` is the tile's items
``32b .. 32b+31``, one per lane, read coalesced), 256 threads a block; ``REPS`` rounds of
the batched reduction of the items plus the round's number (so that no round can be left
out or hoisted), each lane adding up its results over the rounds; lane ``l`` writes its
totals of batches ``l``, ``l + 32``... Two regimes: ``REPS = 1`` (the reduction after a
load: memory-bound) and ``REPS = 64`` (the reduction's own throughput). float32 and int32
sums of 4 to 64 batches, and maxima of 8 and 32. *per batch*: the same kernel with
``coop.warp.sum`` (``coop.warp.reduce``) once per batch, lane 0 writing the totals, what a
user writes without a batched primitive.

CUB's side is benchmarks/cub_warp_reduce_batched.cu (WarpReduceBatched is CUB 3.4, newer
than CUDA 13.0's headers: ``--cccl-include`` names pip's, e.g. the nvidia-cuda-cccl wheel's
``nvidia/cu13/include/cccl``), built here with nvcc. The data are the same (splitmix64 as
in cub_timing.cuh, integer values in -4..4, so every result is exact); coop's results are
checked against NumPy, CUB's by the same checksum. Timing: the median of 20 back-to-back
launches after 3 warm-ups (CUDA events), as benchmarks/radix_sort.py's. Prints a Markdown
table and writes DIR/warp_reduce_batched.jsonl.

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

WARPS = 8
CONFIGS = [(t, "sum", b) for t in ("float32", "int32") for b in (4, 8, 16, 32, 64)]
CONFIGS += [(t, "max", b) for t in ("float32", "int32") for b in (8, 32)]
REPS = (1, 64)


def splitmix_values(n, seed=42):
    """cub_timing.cuh's Rng: ``int(rng() % 9) - 4`` for each of ``n`` values."""
    import numpy as np

    state = np.uint64(seed)
    steps = (np.arange(1, n + 1, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15))
    with np.errstate(over="ignore"):
        z = state + steps
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        z = z ^ (z >> np.uint64(31))  # (uint64 arithmetic wraps as C++'s)
    return (z % np.uint64(9)).astype(np.int64) - 4


def kernels(dtype, op_name, batches, reps):
    """``(batched, per_batch)``: coop's kernels for one configuration."""
    import numpy as np

    B, R, DT = batches, reps, np.dtype(dtype).type
    per_lane = -(-B // 32)
    summed = op_name == "sum"
    jit = cuda.jit(launch_bounds=WARPS * 32)  # (CUB's __launch_bounds__)

    @jit
    def batched(x, out):
        tile = np.uint64(cuda.grid(1) // 32)  # (unsigned: indices with no wrap-around test, as CUB's pointers)
        lane = cuda.laneid
        items = cuda.local.array(B, DT)
        round_items = cuda.local.array(B, DT)
        results = cuda.local.array(per_lane, DT)
        totals = cuda.local.array(per_lane, DT)
        for b in range(B):
            items[b] = x[tile * np.uint64(B * 32) + np.uint64(b * 32 + lane)]
        for k in range(per_lane):
            totals[k] = 0
        r = np.int32(0)
        while r < R:  # (CUB's loop: an int round number; Numba's range counts in 64 bits)
            for b in range(B):
                round_items[b] = items[b] + DT(r)
            if summed:
                coop.warp.sum_batched(round_items, results, batches=B)
            else:
                coop.warp.reduce_batched(round_items, coop.ops.max, results, batches=B)
            for k in range(per_lane):
                totals[k] += results[k]
            r = np.int32(r + 1)
        for k in range(per_lane):
            if lane + k * 32 < B:
                out[tile * np.uint64(B) + np.uint64(lane + k * 32)] = totals[k]

    @jit
    def per_batch(x, out):
        tile = np.uint64(cuda.grid(1) // 32)  # (as in batched)
        lane = cuda.laneid
        items = cuda.local.array(B, DT)
        totals = cuda.local.array(B, DT)
        for b in range(B):
            items[b] = x[tile * np.uint64(B * 32) + np.uint64(b * 32 + lane)]
            totals[b] = 0
        r = np.int32(0)
        while r < R:  # (as in batched)
            for b in range(B):
                value = items[b] + DT(r)
                totals[b] += coop.warp.sum(value) if summed else coop.warp.reduce(value, coop.ops.max)
            r = np.int32(r + 1)
        if lane == 0:
            for b in range(B):
                out[tile * np.uint64(B) + np.uint64(b)] = totals[b]

    return batched, per_batch


def reference(x, dtype, op_name, batches, reps):
    """NumPy's results of one configuration: each batch's result over the rounds, summed."""
    import numpy as np

    tiles = x.astype(dtype).reshape(-1, batches, 32)
    totals = np.zeros(tiles.shape[:2], dtype)
    for r in range(reps):
        shifted = (tiles + np.asarray(r).astype(dtype)).astype(dtype)
        totals = (totals + (shifted.sum(axis=2, dtype=dtype) if op_name == "sum" else shifted.max(axis=2))).astype(dtype)
    return totals.reshape(-1)


def time_coop(log2n, out_dir, sim=False):
    import numpy as np

    from radix_sort import median_launch_seconds, warm_up

    rows = []
    if not sim:
        warm_up()
    n = (1 << log2n) if not sim else 32 * 64 * WARPS
    x64 = splitmix_values(n)
    for dtype, op_name, batches in CONFIGS:
        for reps in REPS if not sim else (1, 3):
            x = x64.astype(dtype)
            blocks = n // (32 * batches * WARPS)
            if blocks == 0:
                continue
            expected = reference(x[:blocks * WARPS * 32 * batches], dtype, op_name, batches, reps)
            d_x = cuda.to_device(x)
            for impl, kernel in zip(("coop", "coop per batch"), kernels(dtype, op_name, batches, reps)):
                d_out = cuda.to_device(np.zeros(blocks * WARPS * batches, dtype))

                def launch():
                    kernel[blocks, WARPS * 32](d_x, d_out)

                seconds = None if sim else median_launch_seconds(launch)
                if sim:
                    launch()
                got = d_out.copy_to_host()
                row = {"impl": impl, "type": dtype, "op": op_name, "batches": batches, "reps": reps,
                       "log2n": log2n, "seconds": seconds, "checksum": float(got.astype(np.float64).sum()),
                       "ok": bool(np.array_equal(got, expected))}
                rows.append(row)
                print(json.dumps(row), flush=True)
    return rows


def time_cub(log2n, binary):
    return [row for reps in REPS for row in json_lines([binary, log2n, reps])]


def report(rows):
    key = lambda r: (r["type"], r["op"], r["batches"], r["reps"])  # noqa: E731
    by = {}
    for r in rows:
        by.setdefault(key(r), {})[r["impl"]] = r
    lines = ["| type | op | batches | rounds | coop G batches/s | CUB G batches/s | coop/CUB | per batch/CUB | "
             "checks |", "|---|---|--:|--:|--:|--:|--:|--:|---|"]
    for k in sorted(by):
        impls = by[k]
        coop, cub, single = impls.get("coop"), impls.get("cub"), impls.get("coop per batch")
        if not (coop and cub and single):
            continue
        reductions = (1 << coop["log2n"]) // 32 * k[3]  # batches reduced a launch
        ok = coop["ok"] and single["ok"] and coop["checksum"] == cub["checksum"]
        lines.append(f"| {k[0]} | {k[1]} | {k[2]} | {k[3]} | {reductions / coop['seconds'] / 1e9:.2f} | "
                     f"{reductions / cub['seconds'] / 1e9:.2f} | **{cub['seconds'] / coop['seconds']:.3f}** | "
                     f"{cub['seconds'] / single['seconds']:.3f} | {'ok' if ok else 'MISMATCH'} |")
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--log2n", type=int, default=26)
    parser.add_argument("--cccl-include", default=os.environ.get("CCCL_INCLUDE", ""))
    parser.add_argument("--out", default=None)
    parser.add_argument("--sim-check", action="store_true")
    parser.add_argument("--cub-binary", default=None,
                        help="the CUB side built beforehand (nvcc with pip's CCCL headers), instead of --cccl-include")
    args = parser.parse_args(argv)
    if args.sim_check:
        rows = time_coop(args.log2n, None, sim=True)
        bad = [r for r in rows if not r["ok"]]
        print(f"{len(rows) - len(bad)} of {len(rows)} kernels checked ok")
        return 1 if bad else 0
    out = pathlib.Path(args.out or tempfile.mkdtemp(prefix="warp_reduce_batched_"))
    out.mkdir(parents=True, exist_ok=True)
    binary = args.cub_binary or build_cub("cub_warp_reduce_batched.cu", args.cccl_include, out)
    rows = time_coop(args.log2n, out) + time_cub(args.log2n, binary)
    (out / "warp_reduce_batched.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    print(report(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
