"""coop.block.histogram, flag_heads, subtract_left, run_length_decode and run_length_encode
against CUB's BlockHistogram, BlockDiscontinuity, BlockAdjacentDifference and
BlockRunLengthDecode, side by side on one GPU.

    python benchmarks/tile_analytics.py [--log2n 28] [--log2n-items 26] [--out DIR] [--quick]
                                        [--kernels histogram,flag_heads,...] [--sim-check]
                                        [--compilers numba-cuda,numba-cuda-mlir]

One tile per block, as a user would write it, the tile loaded (and stored) "warp_transpose"
and one ``temp_storage`` array shared by the load, the store and the primitive (CUB: one
TempStorage union, ``__syncthreads()`` between the calls):

- histogram: 256 bins of uint8 samples (2^28 by default), "atomic" and "sort", 128x4,
  256x8, 512x8, into a ``cuda.shared.array(256, np.uint32)`` then atomically added to a
  global histogram; uniform samples, and skewed ones (90% in bin 7, the rest uniform).
- flag_heads (``operator.ne``, int32 flags stored) and subtract_left (default ``-``) of
  int32 items in runs of 1 to 5 (2^26 by default), 128x4 and 256x8.
- run_length_decode: each block's THREADS*R runs (int32 values, int32 lengths 1 or 2; 2^26
  runs by default), decoded window after window (THREADS*R items a window, R = 4 at 128
  threads, 8 at 256) to the block's place in the output (per-block offsets from the host).
  coop stores the runs in the first window's call (``runs_stored=window > 0``), CUB in its
  decoder's constructor.
- run_length_encode (coop only; CUB has no block encode) of the int32 runs, 128x4 and
  256x8, storing the unique items, counts and each block's run count; compared with a copy
  kernel (the same load and store alone), coop's and CUB's.

The CUB side is benchmarks/cub_tile_analytics.cu, built here with nvcc (headers from
$CCCL_INCLUDE). Timing as benchmarks/radix_sort.py's (median of 20 launches after 3
warm-ups, CUDA events between back-to-back launches), each coop kernel in a fresh process.
Every output is checked whole against NumPy (np.bincount, heads, differences, np.repeat,
the runs of each tile). Gitems/s counts samples, items, or decoded items (decode). coop's
kernels are compiled by each compiler of ``--compilers`` (default: those installed; the
module differs only in its ``cuda`` import), timed in the same run. Prints a Markdown table
and writes DIR/tile_analytics.jsonl.

``--sim-check`` runs only coop's kernels, two tiles each, once, untimed, and checks them
(for the CUDA simulator: NUMBA_ENABLE_CUDASIM=1 is set for the kernel processes).
"""

import argparse
import concurrent.futures
import json
import math
import os
import pathlib
import subprocess
import sys
import tempfile

HERE = pathlib.Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))
from radix_sort import (default_compilers, for_compiler, load, median_launch_seconds,  # noqa: E402
                        parse_compilers, warm_up)

BINS = 256
SKEWED_BIN = 7
CONFIGS = [  # (kernel, threads, items, algorithm)
    *[("histogram", t, n, a) for t, n in ((128, 4), (256, 8), (512, 8)) for a in ("atomic", "sort")],
    *[(k, t, n, "") for k in ("flag_heads", "subtract_left", "rl_decode", "rl_encode", "copy")
      for t, n in ((128, 4), (256, 8))],
]

HEADER = '''
import operator
import numpy as np
from numba import cuda
import coop

KIND, THREADS, ITEMS, ALGORITHM = {kind!r}, {threads}, {items}, {algorithm!r}
TILE = THREADS * ITEMS
'''

# A tile of int32 items in, one of int32 results out: flag_heads, subtract_left.
TILE_TO_TILE = '''
TEMP_BYTES = max(
    coop.block.load.temp_storage_bytes(np.int32, THREADS, ITEMS, algorithm="warp_transpose"),
    coop.block.{primitive}.temp_storage_bytes(np.int32, THREADS),
)


def kernel(x, out):
    temp = cuda.shared.array(TEMP_BYTES, np.uint8, alignment=16)
    items = cuda.local.array(ITEMS, np.int32)
    results = cuda.local.array(ITEMS, np.int32)
    base = cuda.blockIdx.x * TILE
    coop.block.load(x[base:], items, threads=THREADS, items_per_thread=ITEMS, algorithm="warp_transpose",
                    temp_storage=temp)
    coop.block.{primitive}(items, results, {arguments}threads=THREADS, temp_storage=temp)
    coop.block.store(out[base:], results, threads=THREADS, items_per_thread=ITEMS, algorithm="warp_transpose",
                     temp_storage=temp)


SIGNATURE = "void(int32[::1], int32[::1])"
'''

SOURCES = {
    "histogram": '''
BINS = {bins}
BIN_STEPS = -(-BINS // THREADS)
TEMP_BYTES = max(
    coop.block.load.temp_storage_bytes(np.uint8, THREADS, ITEMS, algorithm="warp_transpose"),
    coop.block.histogram.temp_storage_bytes(np.uint8, THREADS, ITEMS, BINS, algorithm={algorithm!r}),
)


def kernel(samples, histogram):
    temp = cuda.shared.array(TEMP_BYTES, np.uint8, alignment=16)
    counts = cuda.shared.array(BINS, np.uint32)
    items = cuda.local.array(ITEMS, np.uint8)
    base = cuda.blockIdx.x * TILE
    coop.block.load(samples[base:], items, threads=THREADS, items_per_thread=ITEMS, algorithm="warp_transpose",
                    temp_storage=temp)
    coop.block.histogram(items, counts, BINS, threads=THREADS, items_per_thread=ITEMS, algorithm={algorithm!r}{histogram_temp})
    cuda.syncthreads()
    for k in range(BIN_STEPS):  # (a constant trip count, as nvcc makes of CUB's side's loop)
        b = cuda.threadIdx.x + k * THREADS
        if b < BINS:
            cuda.atomic.add(histogram, b, counts[b])


SIGNATURE = "void(uint8[::1], uint32[::1])"
''',
    "flag_heads": TILE_TO_TILE.format(primitive="flag_heads", arguments="operator.ne, "),
    "subtract_left": TILE_TO_TILE.format(primitive="subtract_left", arguments=""),
    "rl_decode": '''
RUNS = DECODED = ITEMS      # runs per thread, decoded items per thread
WINDOW = THREADS * DECODED
TEMP_BYTES = max(
    coop.block.load.temp_storage_bytes(np.int32, THREADS, RUNS, algorithm="warp_transpose"),
    coop.block.run_length_decode.temp_storage_bytes(np.int32, THREADS, RUNS),
)


def kernel(values_in, lengths_in, block_offsets, out):
    temp = cuda.shared.array(TEMP_BYTES, np.uint8, alignment=16)
    values = cuda.local.array(RUNS, np.int32)
    lengths = cuda.local.array(RUNS, np.int32)
    items = cuda.local.array(DECODED, np.int32)
    base = cuda.blockIdx.x * TILE
    coop.block.load(values_in[base:], values, threads=THREADS, items_per_thread=RUNS, algorithm="warp_transpose",
                    temp_storage=temp)
    coop.block.load(lengths_in[base:], lengths, threads=THREADS, items_per_thread=RUNS, algorithm="warp_transpose",
                    temp_storage=temp)
    offset = block_offsets[cuda.blockIdx.x]
    window = 0
    while True:
        total = coop.block.run_length_decode(values, lengths, items, from_decoded_offset=window, threads=THREADS,
                                             runs_per_thread=RUNS, temp_storage=temp, runs_stored=window > 0)
        coop.block.store(out[offset + window:], items, threads=THREADS, items_per_thread=DECODED,
                         valid_items=total - window)
        window += WINDOW
        if window >= total:
            break


SIGNATURE = "void(int32[::1], int32[::1], int64[::1], int32[::1])"
''',
    "rl_encode": '''
TEMP_BYTES = max(
    coop.block.load.temp_storage_bytes(np.int32, THREADS, ITEMS, algorithm="warp_transpose"),
    coop.block.run_length_encode.temp_storage_bytes(np.int32, THREADS, ITEMS),
)


def kernel(x, unique_out, counts_out, runs_out):
    temp = cuda.shared.array(TEMP_BYTES, np.uint8, alignment=16)
    items = cuda.local.array(ITEMS, np.int32)
    unique = cuda.local.array(ITEMS, np.int32)
    counts = cuda.local.array(ITEMS, np.int32)
    base = cuda.blockIdx.x * TILE
    coop.block.load(x[base:], items, threads=THREADS, items_per_thread=ITEMS, algorithm="warp_transpose",
                    temp_storage=temp)
    runs = coop.block.run_length_encode(items, unique, counts, threads=THREADS, items_per_thread=ITEMS,
                                        temp_storage=temp)
    coop.block.store(unique_out[base:], unique, threads=THREADS, items_per_thread=ITEMS, algorithm="warp_transpose",
                     temp_storage=temp)
    coop.block.store(counts_out[base:], counts, threads=THREADS, items_per_thread=ITEMS, algorithm="warp_transpose",
                     temp_storage=temp)
    if cuda.threadIdx.x == 0:
        runs_out[cuda.blockIdx.x] = runs


SIGNATURE = "void(int32[::1], int32[::1], int32[::1], int32[::1])"
''',
    "copy": '''
TEMP_BYTES = coop.block.load.temp_storage_bytes(np.int32, THREADS, ITEMS, algorithm="warp_transpose")


def kernel(x, out):
    temp = cuda.shared.array(TEMP_BYTES, np.uint8, alignment=16)
    items = cuda.local.array(ITEMS, np.int32)
    base = cuda.blockIdx.x * TILE
    coop.block.load(x[base:], items, threads=THREADS, items_per_thread=ITEMS, algorithm="warp_transpose",
                    temp_storage=temp)
    coop.block.store(out[base:], items, threads=THREADS, items_per_thread=ITEMS, algorithm="warp_transpose",
                     temp_storage=temp)


SIGNATURE = "void(int32[::1], int32[::1])"
''',
}


def name(kernel, threads, items, algorithm="", data=""):
    return " ".join(part for part in (kernel, algorithm, f"{threads}x{items}", data) if part)


def module_for(directory, config):
    kind, threads, items, algorithm = config
    path = pathlib.Path(directory) / f"{kind}_{threads}_{items}{'_' + algorithm if algorithm else ''}.py"
    fields = dict(kind=kind, threads=threads, items=items, algorithm=algorithm, bins=BINS,
                  histogram_temp=", temp_storage=temp" if algorithm == "sort" else "")
    path.write_text(HEADER.format(**fields) + SOURCES[kind].format(**fields))
    return path


# -- the coop side (in a fresh process per kernel) -------------------------------------------------


def runs_of(n, rng):
    """int32 items in runs of 1 to 5 equal values in [-2^20, 2^20)."""
    import numpy as np

    count = n // 2 + 64
    values = rng.integers(-(1 << 20), 1 << 20, count, dtype=np.int32)
    x = np.repeat(values, rng.integers(1, 6, count))[:n]
    assert x.size == n
    return x


def tile_heads(x, tile):
    """Where each run of equal items starts, every tile's first item a head."""
    import numpy as np

    heads = np.ones(x.size, bool)
    heads[1:] = x[1:] != x[:-1]
    heads[::tile] = True
    return heads


def compile_kernel(path):
    """Compile the kernel of ``path`` into the disk cache (as the timing process will ask)."""
    module = load(path)
    module.cuda.jit(module.SIGNATURE, cache=True)(module.kernel).overloads  # noqa: B018 (compiled eagerly)


def time_coop(path, args):
    """Time (or, with --sim-check, run once) the kernel of ``path`` on its data sets and
    check the outputs. Returns a list of rows."""
    import numpy as np

    module = load(path)
    cuda = module.cuda
    warm_up(cuda)
    kernel = cuda.jit(module.SIGNATURE, cache=True)(module.kernel)  # (from the disk cache: compiled by compile)
    kind, threads, tile = module.KIND, module.THREADS, module.TILE
    rng = np.random.default_rng(7)
    sim = args.sim_check

    def timed(launch):
        if sim:
            launch()
            cuda.synchronize()
            return float("nan")
        return median_launch_seconds(launch, cuda)

    def row(count, seconds, ok, data="", **extra):
        try:
            regs, smem = kernel.get_regs_per_thread(), kernel.get_shared_mem_per_block()
        except AttributeError:  # (the simulator)
            regs = smem = None
        return {"kernel": kind, "threads": threads, "items": module.ITEMS, "algorithm": module.ALGORITHM,
                "data": data, "seconds": seconds, "gitems": count / seconds * 1e-9, "regs": regs, "smem": smem,
                "check": "ok" if ok else "MISMATCH", **extra}

    if kind == "histogram":
        n = 2 * tile if sim else 1 << args.log2n
        uniform = rng.integers(0, BINS, n, dtype=np.uint8)
        skewed = uniform.copy()
        skewed[rng.integers(0, 10, n, dtype=np.uint8) != 0] = SKEWED_BIN
        d_histogram = cuda.to_device(np.zeros(BINS, np.uint32))
        rows = []
        for data, samples in (("uniform", uniform), ("skewed", skewed)):
            d_samples = cuda.to_device(samples)
            seconds = timed(lambda: kernel[n // tile, threads](d_samples, d_histogram))
            d_histogram.copy_to_device(np.zeros(BINS, np.uint32))
            kernel[n // tile, threads](d_samples, d_histogram)
            expected = sum(np.bincount(samples[i:i + (1 << 24)], minlength=BINS) for i in range(0, n, 1 << 24))
            ok = bool((d_histogram.copy_to_host() == expected).all())
            rows.append(row(n, seconds, ok, data))
            del d_samples
        return rows

    if kind == "rl_decode":
        runs = 2 * tile if sim else 1 << args.log2n_items
        blocks = runs // tile
        values = rng.integers(-(1 << 31), 1 << 31, runs, dtype=np.int64).astype(np.int32)
        lengths = rng.integers(1, 3, runs, dtype=np.int32)
        totals = lengths.reshape(blocks, tile).sum(1, dtype=np.int64)
        offsets = np.concatenate(([0], np.cumsum(totals)[:-1])).astype(np.int64)
        decoded = int(totals.sum())
        d_values, d_lengths, d_offsets = cuda.to_device(values), cuda.to_device(lengths), cuda.to_device(offsets)
        d_out = cuda.to_device(np.zeros(decoded, np.int32))
        seconds = timed(lambda: kernel[blocks, threads](d_values, d_lengths, d_offsets, d_out))
        ok = bool((d_out.copy_to_host() == np.repeat(values, lengths)).all())
        return [row(decoded, seconds, ok)]

    n = 2 * tile if sim else 1 << args.log2n_items
    blocks = n // tile
    x = runs_of(n, rng)
    d_x, d_out = cuda.to_device(x), cuda.to_device(np.zeros(n, np.int32))
    if kind == "rl_encode":
        d_counts, d_runs = cuda.to_device(np.zeros(n, np.int32)), cuda.to_device(np.zeros(blocks, np.int32))
        seconds = timed(lambda: kernel[blocks, threads](d_x, d_out, d_counts, d_runs))
        unique, counts, block_runs = d_out.copy_to_host(), d_counts.copy_to_host(), d_runs.copy_to_host()
        heads = tile_heads(x, tile)
        starts = np.flatnonzero(heads)
        expected_runs = heads.reshape(blocks, tile).sum(1)
        block = starts // tile
        first_run = np.concatenate(([0], np.cumsum(expected_runs)[:-1]))
        where = block * tile + (np.arange(starts.size) - first_run[block])  # run k of block b: b*tile + k
        past = np.ones(n, bool)
        past[where] = False
        ok = bool((block_runs == expected_runs).all() and (unique[where] == x[starts]).all()
                  and (counts[where] == np.diff(np.append(starts, n))).all() and (counts[past] == 0).all())
        return [row(n, seconds, ok, runs_per_tile=float(expected_runs.mean()))]

    seconds = timed(lambda: kernel[blocks, threads](d_x, d_out))
    got = d_out.copy_to_host()
    if kind == "flag_heads":
        expected = tile_heads(x, tile).astype(np.int32)
    elif kind == "subtract_left":
        expected = x.copy()
        expected[1:] -= x[:-1]
        expected[::tile] = x[::tile]
    else:
        expected = x
    return [row(n, seconds, bool((got == expected).all()))]


# -- the driver --------------------------------------------------------------------------------------


def table(rows, cub_rows):
    """coop's rows (numba-cuda's; numba-cuda-mlir's, where run, in columns of their own)
    beside CUB's."""
    mlir_rows = {row["config"]: row for row in rows if row["compiler"] == "numba-cuda-mlir"}
    rows = [row for row in rows if row["compiler"] == "numba-cuda"]
    with_mlir = bool(mlir_rows)

    def ms(row):
        return f"{row['seconds'] * 1e3:.3f}" if row and not math.isnan(row.get("seconds", math.nan)) else "—"

    def gitems(row):
        return f"{row['gitems']:.1f}" if row and not math.isnan(row.get("seconds", math.nan)) else "—"

    def ratio(c, row):
        return f"**{c['seconds'] / row['seconds']:.3f}**" if c and row and row.get("seconds") else "—"

    mlir_head = " mlir ms | CUB/mlir | mlir Gitems/s |" if with_mlir else ""
    lines = ["| configuration | coop ms | CUB ms | CUB/coop |" + mlir_head + " coop Gitems/s | CUB Gitems/s "
             f"| regs coop/{'mlir/' * with_mlir}CUB | smem coop/{'mlir/' * with_mlir}CUB (B) "
             f"| check coop/{'mlir/' * with_mlir}CUB |", "|---|--:|--:|--:|" + "--:|--:|--:|" * with_mlir
             + "--:|--:|--:|--:|---|"]
    for row in rows:
        if row["kernel"] == "rl_encode":
            continue
        c = cub_rows.get(row["config"])
        sides = [row, mlir_rows.get(row["config"], {})] if with_mlir else [row]
        mlir = f" {ms(sides[1])} | {ratio(c, sides[1])} | {gitems(sides[1])} |" if with_mlir else ""

        def each(key):
            return "/".join(str(side.get(key, "—")) for side in sides) + f"/{c and c[key]}"

        lines.append(f"| {row['config']} | {ms(row)} | {ms(c)} | {ratio(c, row)} |{mlir} {gitems(row)} | {gitems(c)} "
                     f"| {each('regs')} | {each('smem')} | {each('check')} |")
    encodes = [row for row in rows if row["kernel"] == "rl_encode"]  # (numba-cuda's)
    if encodes:
        lines += ["", "run_length_encode (coop only) against a copy of the same tiles (warp_transpose load + store):",
                  "", "| configuration | encode ms | coop copy ms | CUB copy ms | encode Gitems/s "
                  "| encode/copy throughput (coop copy) | runs per tile | regs | smem (B) | check |",
                  "|---|--:|--:|--:|--:|--:|--:|--:|--:|---|"]
        for row in encodes:
            copy_config = name("copy", row["threads"], row["items"])
            copy = next((r for r in rows if r["config"] == copy_config), None)
            ratio = f"**{row['ratio_to_copy']:.3f}**" if row.get("ratio_to_copy") else "—"
            lines.append(f"| {row['config']} | {ms(row)} | {ms(copy)} | {ms(cub_rows.get(copy_config))} "
                         f"| {gitems(row)} | {ratio} | {row.get('runs_per_tile', float('nan')):.1f} "
                         f"| {row.get('regs')} | {row.get('smem')} | {row['check']} |")
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--log2n", type=int, default=28, help="log2 of the histogram's samples")
    parser.add_argument("--log2n-items", type=int, default=26, help="log2 of the items (runs, for the decode)")
    parser.add_argument("--quick", action="store_true", help="2^24 samples, 2^22 items")
    parser.add_argument("--kernels", default="", help="comma-separated kernels to run (default: all)")
    parser.add_argument("--out", default=".")
    parser.add_argument("--sim-check", action="store_true",
                        help="coop only, two tiles a kernel, run once and checked (NUMBA_ENABLE_CUDASIM=1)")
    parser.add_argument("--compilers", type=parse_compilers, default=None,
                        help="comma-separated: numba-cuda, numba-cuda-mlir (default: those installed)")
    parser.add_argument("--child", metavar="PATH", help=argparse.SUPPRESS)
    parser.add_argument("--compile-child", metavar="PATH", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.quick:
        args.log2n, args.log2n_items = min(args.log2n, 24), min(args.log2n_items, 22)
    if args.child:
        print("RESULT " + json.dumps(time_coop(pathlib.Path(args.child), args)))
        return 0
    if args.compile_child:
        compile_kernel(pathlib.Path(args.compile_child))
        return 0

    kinds = set(filter(None, args.kernels.split(",")))
    configs = [c for c in CONFIGS if not kinds or c[0] in kinds]
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    work = pathlib.Path(tempfile.mkdtemp())
    nvcc = None
    if not args.sim_check:
        include = os.environ.get("CCCL_INCLUDE", "/usr/local/cuda/targets/x86_64-linux/include/cccl")
        cub_binary = work / "cub_tile_analytics"
        nvcc = subprocess.Popen(["nvcc", "-O3", "-std=c++17", "-arch=sm_90", f"-I{include}",
                                 str(HERE / "cub_tile_analytics.cu"), "-o", str(cub_binary)])
    env = dict(os.environ, PYTHONPATH=f"{REPO}{os.pathsep}{os.environ.get('PYTHONPATH', '')}")
    if args.sim_check:
        env["NUMBA_ENABLE_CUDASIM"] = "1"
    sizes = ["--log2n", str(args.log2n), "--log2n-items", str(args.log2n_items)] + (
        ["--sim-check"] if args.sim_check else [])

    paths = {for_compiler(module_for(work, config), compiler): compiler for config in configs
             for compiler in args.compilers or default_compilers()}

    def run_child(option, path):
        return subprocess.run([sys.executable, __file__, *sizes, option, str(path)],
                              env=dict(env, NUMBA_CACHE_DIR=str(work / "cache" / path.stem)),
                              capture_output=True, text=True)

    # compiled a few side by side (numba-cuda-mlir takes up to a minute a kernel), then
    # each timed alone, loading its kernel from the disk cache
    if not args.sim_check:
        with concurrent.futures.ThreadPoolExecutor(4) as pool:
            list(pool.map(lambda path: run_child("--compile-child", path), paths))
    rows, failed = [], False
    for path, compiler in paths.items():
        done = run_child("--child", path)
        result = next((json.loads(line[7:]) for line in done.stdout.splitlines() if line.startswith("RESULT ")), None)
        if result is None:
            failed = True
            print(f"{path.name} failed:\n{done.stdout}\n{done.stderr}", file=sys.stderr, flush=True)
            continue
        for row in result:
            rows.append({"impl": "coop", "compiler": compiler, "config": name(
                row["kernel"], row["threads"], row["items"], row["algorithm"], row["data"]), **row})
            failed |= row["check"] != "ok"
            print(json.dumps(rows[-1]), flush=True)
    for row in rows:
        if row["kernel"] == "rl_encode":
            copy = next((r for r in rows if r["config"] == name("copy", row["threads"], row["items"])
                         and r["compiler"] == row["compiler"]), None)
            if copy and not math.isnan(row["seconds"]):
                row["copy_seconds"] = copy["seconds"]
                row["ratio_to_copy"] = copy["seconds"] / row["seconds"]

    cub_rows = {}
    if nvcc is not None:
        if nvcc.wait() != 0:
            print("nvcc failed: no CUB side", file=sys.stderr)
            failed = True
        else:
            cub = subprocess.run([str(cub_binary), str(args.log2n), str(args.log2n_items)], capture_output=True,
                                 text=True)
            if cub.returncode != 0:
                print(f"cub_tile_analytics failed:\n{cub.stderr}", file=sys.stderr)
                failed = True
            for line in cub.stdout.splitlines():
                row = json.loads(line)
                config = name(row["kernel"], row["threads"], row["items"], row["algorithm"], row["data"])
                if kinds and row["kernel"] not in kinds and not (row["kernel"] == "copy" and "rl_encode" in kinds):
                    continue
                cub_rows[config] = {"impl": "cub", "config": config, **row}
                failed |= row["check"] != "ok"
                print(json.dumps(cub_rows[config]), flush=True)
    with open(out / "tile_analytics.jsonl", "w") as f:
        for row in rows + list(cub_rows.values()):
            f.write(json.dumps(row) + "\n")
    print()
    print(table(rows, cub_rows))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
