"""coop.block.merge_sort and coop.warp.merge_sort against CUB's BlockMergeSort and
WarpMergeSort, side by side on one GPU.

    python benchmarks/merge_sort.py [--log2n 26] [--out DIR]

Per-tile sort of int32 keys (2^26 by default) with ``<``, as a user would write it: block
sorts 128x4, 256x8, 512x8 between "warp_transpose" block loads and stores; warp sorts
32x4, 32x8 (four logical warps of 32 lanes a block) between "transpose" warp loads and
stores. The CUB side (benchmarks/cub_merge_sort.cu, built here with nvcc) is the same
kernels with cub::BlockLoad/BlockMergeSort/BlockStore (one TempStorage union) and
cub::WarpLoad/WarpMergeSort/WarpStore. Timing, checks and cold compile as
benchmarks/radix_sort.py's. Prints a Markdown table and writes DIR/merge_sort.jsonl.
"""

import argparse
import json
import os
import pathlib
import subprocess
import sys
import tempfile

HERE = pathlib.Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))
from radix_sort import compile_cold, load, median_launch_seconds, warm_up  # noqa: E402

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


def sort_tiles(keys_in, keys_out):
    keys = cuda.local.array(ITEMS, np.int32)
    if LEVEL == "block":
        base = cuda.blockIdx.x * BLOCK_KEYS
        coop.block.load(keys_in[base:], keys, threads=THREADS, items_per_thread=ITEMS, algorithm="warp_transpose")
        coop.block.merge_sort(keys, operator.lt, threads=THREADS, items_per_thread=ITEMS)
        coop.block.store(keys_out[base:], keys, threads=THREADS, items_per_thread=ITEMS, algorithm="warp_transpose")
    else:
        base = cuda.blockIdx.x * BLOCK_KEYS + (cuda.threadIdx.x // LANES) * TILE
        coop.warp.load(keys_in[base:], keys, threads=THREADS, items_per_thread=ITEMS, algorithm="transpose")
        coop.warp.merge_sort(keys, operator.lt, threads=THREADS, items_per_thread=ITEMS)
        coop.warp.store(keys_out[base:], keys, threads=THREADS, items_per_thread=ITEMS, algorithm="transpose")


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
    from numba import cuda

    warm_up()
    module = load(path)
    kernel = cuda.jit(module.SIGNATURE)(module.sort_tiles)
    n = 1 << log2n
    blocks = n // module.BLOCK_KEYS
    keys = np.random.default_rng(7).integers(-(1 << 31), 1 << 31, n, dtype=np.int64).astype(np.int32)
    d_keys, d_out = cuda.to_device(keys), cuda.device_array_like(keys)
    seconds = median_launch_seconds(lambda: kernel[blocks, module.THREADS](d_keys, d_out))
    got = d_out.copy_to_host()
    tile = module.TILE
    tiles = n // tile
    ok = all((got[t * tile:(t + 1) * tile] == np.sort(keys[t * tile:(t + 1) * tile], kind="stable")).all()
             for t in (0, tiles // 2, tiles - 1))
    return {"seconds": seconds, "gkeys": n / seconds * 1e-9, "regs": kernel.get_regs_per_thread(),
            "smem": kernel.get_shared_mem_per_block(), "check": "ok" if ok else "MISMATCH"}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--log2n", type=int, default=26)
    parser.add_argument("--out", default=".")
    parser.add_argument("--child", nargs=2, metavar=("WHAT", "PATH"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        what, path = args.child
        result = compile_cold(path) if what == "compile" else time_coop(pathlib.Path(path), args.log2n)
        print("RESULT " + json.dumps(result))
        return 0

    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    work = pathlib.Path(tempfile.mkdtemp())
    include = os.environ.get("CCCL_INCLUDE", "/usr/local/cuda/targets/x86_64-linux/include/cccl")
    cub_binary = work / "cub_merge_sort"
    nvcc = subprocess.Popen(["nvcc", "-O3", "-std=c++17", "-arch=sm_90", f"-I{include}",
                             str(HERE / "cub_merge_sort.cu"), "-o", str(cub_binary)])
    env = dict(os.environ, PYTHONPATH=f"{REPO}{os.pathsep}{os.environ.get('PYTHONPATH', '')}")

    def child(what, path):
        env_child = dict(env, NUMBA_CACHE_DIR=str(work / "cache" / what / path.stem))
        done = subprocess.run([sys.executable, __file__, "--log2n", str(args.log2n), "--child", what, str(path)],
                              env=env_child, capture_output=True, text=True)
        for line in done.stdout.splitlines():
            if line.startswith("RESULT "):
                return json.loads(line[7:])
        raise RuntimeError(f"{what} {path.name} failed:\n{done.stdout}\n{done.stderr}")

    rows = []
    for config in CONFIGS:
        path = module_for(work, config)
        cold = child("compile", path)
        timing = child("time", path)
        rows.append({"impl": "coop", "config": name(*config), "compile_cold_s": cold, **timing})
        print(json.dumps(rows[-1]), flush=True)
    if nvcc.wait() != 0:
        raise SystemExit("nvcc failed")
    cub = subprocess.run([str(cub_binary), str(args.log2n)], capture_output=True, text=True, check=True)
    cub_rows = {}
    for line in cub.stdout.splitlines():
        row = json.loads(line)
        config = name(row["level"], row["lanes"], row["items"])
        cub_rows[config] = {"impl": "cub", "config": config, **row}
        print(json.dumps(cub_rows[config]), flush=True)
    with open(out / "merge_sort.jsonl", "w") as f:
        for row in rows + list(cub_rows.values()):
            f.write(json.dumps(row) + "\n")
    print("\n| configuration | coop Gkeys/s | CUB Gkeys/s | coop/CUB | regs coop/CUB | smem coop/CUB (B) "
          "| coop compile cold (s) | check |")
    print("|---|--:|--:|--:|--:|--:|--:|---|")
    for row in rows:
        c = cub_rows.get(row["config"], {})
        ratio = row["gkeys"] / c["gkeys"] if c else float("nan")
        print(f"| {row['config']} | {row['gkeys']:.1f} | {c.get('gkeys', float('nan')):.1f} | **{ratio:.3f}** "
              f"| {row['regs']}/{c.get('regs')} | {row['smem']}/{c.get('smem')} | {row['compile_cold_s']:.2f} "
              f"| {row['check']}/{c.get('check')} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
