"""coop.block.radix_sort against CUB's BlockRadixSort, side by side on one GPU.

    python benchmarks/radix_sort.py [--log2n 26] [--out DIR] [--compilers numba-cuda,numba-cuda-mlir]

Per-tile sort of uint32 keys (2^26 by default), as a user would write it: a
"warp_transpose" block load, the sort, a "warp_transpose" store, sharing one
``temp_storage`` array (as CUB's kernels share one TempStorage union); configurations 128x1,
128x4, 128x16, 256x4, 256x8, 512x8, 1024x16 (its scratch past 48 KiB: a dynamic shared
array, after ``coop.allow_dynamic_shared_memory``; CUB's after cudaFuncSetAttribute), plus
256x8 with uint32 values and 256x8 descending.
The CUB side (benchmarks/cub_radix_sort.cu, built here with nvcc) is the same kernel with
cub::BlockLoad/BlockRadixSort/BlockStore and one TempStorage union. Both are timed alike
(median of 20 launches after 3 warm-ups, CUDA events between back-to-back launches) and
checked against NumPy's stable sort. Also measured: coop's cold compile time per kernel
(a fresh process per kernel, after the CUDA context and one trivial kernel, a few side by
side; the timing process loads the kernel it compiled from the disk cache). coop's kernels
are compiled by each compiler of ``--compilers`` (default: those installed; the module
differs only in its ``cuda`` import), timed in the same run. Prints a Markdown table and
writes DIR/radix_sort.jsonl.
"""

import argparse
import concurrent.futures
import json
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile
import time

HERE = pathlib.Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))
from coop_tiles import COMPILERS, default_compilers, parse_compilers  # noqa: E402

#: The kernel modules' imports (numba-cuda's), made each compiler's by ``for_compiler``.
NUMBA_CUDA_IMPORTS = "from numba import cuda\nimport coop\n"
CONFIGS = [  # (threads, items, values, descending)
    (128, 1, False, False),
    (128, 4, False, False),
    (128, 16, False, False),
    (256, 4, False, False),
    (256, 8, False, False),
    (512, 8, False, False),
    (256, 8, True, False),
    (256, 8, False, True),
    (1024, 16, False, False),  # (67,584 bytes of scratch: a dynamic shared array)
]

KERNEL_SOURCE = '''
import numpy as np
from numba import cuda
import coop

THREADS, ITEMS, VALUES, DESCENDING = {threads}, {items}, {values}, {descending}
TILE = THREADS * ITEMS
TEMP_BYTES = max(
    coop.block.load.temp_storage_bytes(np.uint32, THREADS, ITEMS, algorithm="warp_transpose"),
    coop.block.radix_sort.temp_storage_bytes(np.uint32, THREADS, ITEMS, value_dtype=np.uint32 if VALUES else None),
)
# past 48 KiB the scratch is a dynamic shared array (size 0), its size given at launch
DYNAMIC_BYTES = TEMP_BYTES if TEMP_BYTES > 48 * 1024 else 0
STATIC_BYTES = 0 if DYNAMIC_BYTES else TEMP_BYTES


def sort_tiles(keys_in, keys_out, values_in, values_out):
    temp = cuda.shared.array(STATIC_BYTES, np.uint8, alignment=16)
    keys = cuda.local.array(ITEMS, np.uint32)
    values = cuda.local.array(ITEMS, np.uint32)
    base = cuda.blockIdx.x * TILE
    coop.block.load(keys_in[base:], keys, threads=THREADS, items_per_thread=ITEMS, algorithm="warp_transpose",
                    temp_storage=temp)
    if VALUES:
        coop.block.load(values_in[base:], values, threads=THREADS, items_per_thread=ITEMS,
                        algorithm="warp_transpose", temp_storage=temp)
        coop.block.radix_sort(keys, values, threads=THREADS, items_per_thread=ITEMS, descending=DESCENDING,
                              temp_storage=temp)
    else:
        coop.block.radix_sort(keys, threads=THREADS, items_per_thread=ITEMS, descending=DESCENDING,
                              temp_storage=temp)
    coop.block.store(keys_out[base:], keys, threads=THREADS, items_per_thread=ITEMS, algorithm="warp_transpose",
                     temp_storage=temp)
    if VALUES:
        coop.block.store(values_out[base:], values, threads=THREADS, items_per_thread=ITEMS,
                         algorithm="warp_transpose", temp_storage=temp)


SIGNATURE = "void(uint32[::1], uint32[::1], uint32[::1], uint32[::1])"
'''


def name(threads, items, values, descending):
    return f"{threads}x{items}" + ("+values" if values else "") + (" descending" if descending else "")


def module_for(directory, config):
    threads, items, values, descending = config
    path = pathlib.Path(directory) / f"sort_{threads}_{items}_{int(values)}_{int(descending)}.py"
    path.write_text(KERNEL_SOURCE.format(threads=threads, items=items, values=values, descending=descending))
    return path


def load(path):
    import importlib.util

    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def warm_up(cuda=None):
    """The CUDA context and the compiler's (``cuda``'s, default numba-cuda's) one-time
    setup, outside what is timed."""
    import numpy as np

    if cuda is None:
        from numba import cuda

    @cuda.jit("void(int32[::1])")
    def trivial(x):
        x[0] = 1

    trivial[1, 1](np.zeros(1, np.int32))
    cuda.synchronize()


def jit(module, cache=True):
    """The module's kernel, compiled by the module's ``cuda``: at 1024 threads with launch
    bounds (at most 64 registers a thread, as CUB's ``__launch_bounds__``; without, a
    1024-thread launch may not fit: numba-cuda-mlir's took 117)."""
    bounds = {"launch_bounds": module.THREADS} if module.THREADS == 1024 else {}
    return module.cuda.jit(module.SIGNATURE, cache=cache, **bounds)(module.sort_tiles)


def for_compiler(path, compiler):
    """The kernel module ``path`` (importing numba-cuda's ``cuda``) for ``compiler`` (a
    name of coop_tiles' COMPILERS): the same source, importing that compiler's ``cuda``
    after coop."""
    if compiler == "numba-cuda":
        return path
    text = path.read_text()
    assert NUMBA_CUDA_IMPORTS in text, path
    made = path.with_name(f"{COMPILERS[compiler].module_prefix}_{path.name}")
    made.write_text(text.replace(NUMBA_CUDA_IMPORTS, f"import coop\n{COMPILERS[compiler].cuda_import}\n"))
    return made


def compile_cold(path):
    """(In a fresh process:) seconds to compile and load the kernel of ``path``."""
    module = load(pathlib.Path(path))
    warm_up(module.cuda)
    start = time.perf_counter()
    kernel = jit(module)
    kernel.overloads  # noqa: B018 (compiled eagerly by the signature)
    return time.perf_counter() - start


def build_cub(source, include, build):
    """The CUB program ``source`` (in benchmarks/) built with nvcc against the headers in
    ``include`` into ``build``: its path. (Built before coop's kernels are timed, a header
    problem fails fast.)"""
    import shutil

    nvcc = shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc"
    binary = build / pathlib.Path(source).stem
    subprocess.run([nvcc, "-O3", "-std=c++17", "-arch=sm_90", f"-I{include}", f"-I{HERE}", str(HERE / source),
                    "-o", str(binary)], check=True)
    return binary


def json_lines(command):
    """The JSON lines a program (a CUB side) prints."""
    run = subprocess.run([str(part) for part in command], check=True, capture_output=True, text=True)
    return [json.loads(line) for line in run.stdout.splitlines() if line.startswith("{")]


def median_launch_seconds(launch, cuda=None):
    """Seconds per launch: the median of 20 back-to-back launches (CUDA events between
    them, of ``cuda``, default numba-cuda's) after 3 warm-ups."""
    if cuda is None:
        from numba import cuda

    for _ in range(3):
        launch()
    cuda.synchronize()
    events = [cuda.event() for _ in range(21)]
    events[0].record()
    for r in range(20):
        launch()
        events[r + 1].record()
    events[-1].synchronize()
    return statistics.median(events[r].elapsed_time(events[r + 1]) for r in range(20)) * 1e-3


def time_coop(path, log2n):
    import numpy as np

    module = load(path)
    cuda = module.cuda
    warm_up(cuda)
    kernel = jit(module)
    n = 1 << log2n
    tile = module.TILE
    tiles = n // tile
    rng = np.random.default_rng(7)
    keys = rng.integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32)
    positions = (np.arange(n) % tile).astype(np.uint32)
    d_keys, d_values = cuda.to_device(keys), cuda.to_device(positions)
    d_keys_out, d_values_out = cuda.device_array_like(keys), cuda.device_array_like(positions)

    import coop

    arguments = (d_keys, d_keys_out, d_values, d_values_out)
    if module.DYNAMIC_BYTES:
        coop.allow_dynamic_shared_memory(kernel, module.DYNAMIC_BYTES, *arguments)
    seconds = median_launch_seconds(lambda: kernel[tiles, module.THREADS, 0, module.DYNAMIC_BYTES](*arguments), cuda)
    got, got_values = d_keys_out.copy_to_host(), d_values_out.copy_to_host()
    ok = True
    for t in (0, tiles // 2, tiles - 1):
        tile_keys = keys[t * tile:(t + 1) * tile]
        order = np.argsort(~tile_keys if module.DESCENDING else tile_keys, kind="stable")
        ok &= bool((got[t * tile:(t + 1) * tile] == tile_keys[order]).all())
        if module.VALUES:
            ok &= bool((got_values[t * tile:(t + 1) * tile] == order).all())
    regs = kernel.get_regs_per_thread()
    smem = kernel.get_shared_mem_per_block() + module.DYNAMIC_BYTES
    return {"seconds": seconds, "gkeys": tiles * tile / seconds * 1e-9, "regs": regs, "smem": smem,
            "check": "ok" if ok else "MISMATCH"}


def side_by_side(argv, description, script, configs, module_for, name, time_coop, cub_source, cub_config, out_name):
    """The driver of a coop-against-CUB sort benchmark: for each configuration, coop's
    kernel (a module ``module_for(dir, config)`` writes) compiled cold and timed, each in
    a fresh process (``script --child``, which ``time_coop(path, log2n)`` serves), by
    each compiler of ``--compilers``; then the CUB program ``cub_source`` built with nvcc
    and run, its JSON lines matched to coop's rows by ``cub_config(row)`` (a
    configuration's ``name``). Prints a Markdown table and writes ``DIR/out_name``."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--log2n", type=int, default=26)
    parser.add_argument("--out", default=".")
    parser.add_argument("--compilers", type=parse_compilers, default=None,
                        help="comma-separated: numba-cuda, numba-cuda-mlir (default: those installed)")
    parser.add_argument("--child", nargs=2, metavar=("WHAT", "PATH"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    compilers = args.compilers or default_compilers()
    if args.child:
        what, path = args.child
        result = compile_cold(path) if what == "compile" else time_coop(pathlib.Path(path), args.log2n)
        print("RESULT " + json.dumps(result))
        return 0

    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    work = pathlib.Path(tempfile.mkdtemp())
    include = os.environ.get("CCCL_INCLUDE", "/usr/local/cuda/targets/x86_64-linux/include/cccl")
    cub_binary = work / "cub_sort"
    nvcc = subprocess.Popen(["nvcc", "-O3", "-std=c++17", "-arch=sm_90", f"-I{include}", str(HERE / cub_source),
                             "-o", str(cub_binary)])
    env = dict(os.environ, PYTHONPATH=f"{REPO}{os.pathsep}{os.environ.get('PYTHONPATH', '')}")

    def child(what, path):
        env_child = dict(env, NUMBA_CACHE_DIR=str(work / "cache" / path.stem))
        done = subprocess.run([sys.executable, script, "--log2n", str(args.log2n), "--child", what, str(path)],
                              env=env_child, capture_output=True, text=True)
        for line in done.stdout.splitlines():
            if line.startswith("RESULT "):
                return json.loads(line[7:])
        raise RuntimeError(f"{what} {path.name} failed:\n{done.stdout}\n{done.stderr}")

    def compile_cold_s(path):
        try:
            return child("compile", path)
        except RuntimeError as error:
            return error

    # compiled cold a few side by side (numba-cuda-mlir takes up to a minute a kernel),
    # then timed one at a time, each loading its kernel from the disk cache
    paths = {(config, compiler): for_compiler(module_for(work, config), compiler)
             for config in configs for compiler in compilers}
    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        colds = dict(zip(paths, pool.map(compile_cold_s, paths.values())))
    rows = []
    for (config, compiler), path in paths.items():
        row = {"impl": "coop", "compiler": compiler, "config": name(*config)}
        try:
            if isinstance(colds[config, compiler], RuntimeError):
                raise colds[config, compiler]
            row.update(compile_cold_s=colds[config, compiler], **child("time", path))
        except RuntimeError as error:
            if compiler == "numba-cuda":
                raise
            row["error"] = str(error)[-2000:]  # (the other compilers' failures are reported in the table)
        rows.append(row)
        print(json.dumps(row), flush=True)
    if nvcc.wait() != 0:
        raise SystemExit("nvcc failed")
    cub = subprocess.run([str(cub_binary), str(args.log2n)], capture_output=True, text=True, check=True)
    cub_rows = {}
    for line in cub.stdout.splitlines():
        row = json.loads(line)
        config = cub_config(row)
        cub_rows[config] = {"impl": "cub", "config": config, **row}
        print(json.dumps(cub_rows[config]), flush=True)
    with open(out / out_name, "w") as f:
        for row in rows + list(cub_rows.values()):
            f.write(json.dumps(row) + "\n")
    print()
    print(sort_table(rows, cub_rows, compilers))
    return 0


def sort_table(rows, cub_rows, compilers):
    """The Markdown table of coop's rows (one per configuration and compiler) beside CUB's:
    each compiler's Gkeys/s and ratio to CUB; registers, shared memory, cold compile
    time and checks as coop's compilers' then CUB's."""
    short = {"numba-cuda": "coop", "numba-cuda-mlir": "mlir"}
    names = [short[compiler] for compiler in compilers]
    head = ["configuration"] + [f"{n} Gkeys/s" for n in names] + ["CUB Gkeys/s"] + [f"{n}/CUB" for n in names] + [
        f"regs {'/'.join(names)}/CUB", f"smem {'/'.join(names)}/CUB (B)", f"compile cold {'/'.join(names)} (s)",
        "check"]
    lines = ["| " + " | ".join(head) + " |", "|---|" + "--:|" * (len(head) - 2) + "---|"]
    for config in dict.fromkeys(row["config"] for row in rows):
        mine = [next((r for r in rows if r["config"] == config and r["compiler"] == c), {}) for c in compilers]
        c = cub_rows.get(config, {})

        def each(key, form, with_cub=False):
            values = [r.get(key) for r in mine] + ([c.get(key)] if with_cub else [])
            return "/".join("—" if v is None else format(v, form) for v in values)

        speeds = ["—" if "gkeys" not in r else f"{r['gkeys']:.1f}" for r in mine]
        ratios = ["—" if "gkeys" not in r or not c else f"**{r['gkeys'] / c['gkeys']:.3f}**" for r in mine]
        checks = ["error" if "error" in r else r.get("check", "—") for r in mine] + [c.get("check", "—")]
        lines.append("| " + " | ".join([config, *speeds, f"{c.get('gkeys', float('nan')):.1f}", *ratios,
                                         each("regs", "", True), each("smem", "", True), each("compile_cold_s", ".2f"),
                                         "/".join(checks)]) + " |")
    return "\n".join(lines)


def main(argv=None):
    return side_by_side(
        argv, __doc__.split("\n\n")[0], __file__, CONFIGS, module_for, name, time_coop, "cub_radix_sort.cu",
        lambda row: name(row["threads"], row["items"], row["values"], row["descending"]), "radix_sort.jsonl",
    )


if __name__ == "__main__":
    sys.exit(main())
