"""coop vs CUB tile benchmarks: one command, on a machine with a GPU and nvcc.

    python benchmarks/run.py [--out BENCHMARKS.md] [--quick]
                             [--section all|collectives|data-movement] [--only-kernels GLOBS]
                             [--compilers numba-cuda,numba-cuda-mlir]

1. builds benchmarks/cub_tiles.cu with nvcc against the CUB headers ($CCCL_INCLUDE, or
   the toolkit's / the nvidia-cuda-cccl wheel's include/cccl), in the background while
   the coop kernels compile (one nvcc invocation, every kernel of both sections);
2. compiles the data-movement coop kernels into a fresh Numba cache, a few processes side
   by side (their cold compile times, indicative: batched, after one warm-up per process);
3. measures the collectives' coop compile time per kernel: cold (a fresh process per
   kernel, empty Numba cache for it) and cached (a fresh process per kernel, loading the
   cold run's entry from NUMBA_CACHE_DIR); each process first creates the CUDA context
   and compiles a trivial plain-Numba kernel, so neither includes imports, context
   creation or Numba's and NVVM's one-time setup;
4. times the coop kernels (benchmarks/coop_tiles.py, loading them from that cache) and
   the CUB kernels (the binary), CUDA events, median of 20 launches after 3 warm-ups,
   each checked against the host;
5. writes benchmarks/results.jsonl (raw JSON lines), benchmarks/ratios.svg (coop/CUB
   throughput of the collectives) and BENCHMARKS.md (device, date, versions, tables,
   targets, the plot).

Sections: *collectives* (block sum and exclusive sum, int32 / float32) and
*data-movement* (block load / store: copy, transform and coop.block.transform tiles,
int32 / float64, every algorithm). ``--section`` runs one; ``--only-kernels`` takes shell
globs over kernel specs (``sum:int32:128:4``, ``copy:float64:256:8:warp_transpose``; see
coop_tiles.py), for both sides. coop's kernels are compiled by numba-cuda and, where
numba_cuda_mlir is importable, by numba-cuda-mlir too (the same source; steps 2-4 for
each; a column beside numba-cuda's in the tables); ``--compilers`` chooses.
``--report-from A.jsonl [B.jsonl ...]`` writes the report from recorded results (merging
partial runs) without a GPU; ``--dry-run`` prints the plan.
"""

import argparse
import concurrent.futures
import datetime
import json
import os
import pathlib
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = pathlib.Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))

import coop_tiles  # noqa: E402  (stdlib only at import: numba is imported by subprocesses)

FULL_LOG2N = 28
QUICK_LOG2N = 24
TARGET_RATIO = 1.00
TARGET_COLD_S = 0.5
TARGET_CACHED_S = 0.05
TARGET_MEMCPY = 0.90  # data movement: the best algorithm's share of cudaMemcpy's bandwidth
KERNEL_TITLES = {
    "sum": "Block sum (one output per tile; GB/s counts the input read once)",
    "exclusive_sum": "Block exclusive sum (load, scan, store; GB/s counts read + write)",
}
DM_TITLES = {
    "copy": "copy",
    "transform": "transform",
    "block_transform": "coop.block.transform",
}
CUB_DM_KERNELS = ("copy", "transform")  # coop's block_transform is compared with CUB's transform
# Every kernel that cub_tiles.cu compiles (both sections, whatever runs).
CUB_KERNEL_COUNT = len(coop_tiles.all_kernels()) + len(
    [k for k in coop_tiles.dm_kernels() if k[0] in CUB_DM_KERNELS])

STARTED = time.perf_counter()


def say(message):
    print(f"[{time.perf_counter() - STARTED:6.1f}s] {message}", file=sys.stderr, flush=True)


def run(command, env=None, fatal=True, timeout=900):
    """Run a command; its stdout's JSON lines. On failure, show its stderr and stop, or
    (``fatal=False``) go on with the lines it printed: the report marks what is missing."""
    try:
        result = subprocess.run(command, env=env, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired as exc:
        if fatal:
            raise SystemExit(f"run.py: timed out after {timeout} s: {' '.join(map(str, command))}")
        say(f"WARNING: timed out after {timeout} s: {' '.join(map(str, command))}")
        stdout = exc.stdout.decode() if isinstance(exc.stdout, bytes) else (exc.stdout or "")
        return [json.loads(line) for line in stdout.splitlines() if line.startswith("{")]
    if result.returncode != 0:
        sys.stderr.write(result.stdout[-4000:] + result.stderr[-8000:])
        message = f"failed ({result.returncode}): {' '.join(map(str, command))}"
        if fatal:
            raise SystemExit("run.py: " + message)
        say("WARNING: " + message)
    return [json.loads(line) for line in result.stdout.splitlines() if line.startswith("{")]


def key_of(record):
    """The kernel a record is about: (kernel, dtype, threads, items) for the collectives,
    (kernel, dtype, threads, items, algorithm) for data movement."""
    key = (record["kernel"], record["dtype"], record["threads"], record["items"])
    return key + (record["algorithm"],) if "algorithm" in record else key


# A report row holds a kernel's results under a slot per side: "cub", and one per coop
# compiler. numba-cuda's fields keep the names they had before numba-cuda-mlir ("coop",
# "ratio", "cold", ...); numba-cuda-mlir's are prefixed ("mlir", "mlir_ratio", ...).
SLOTS = {"numba-cuda": "coop", "numba-cuda-mlir": "mlir"}
SLOT_LABELS = {"coop": "coop", "mlir": "coop (numba-cuda-mlir)", "cub": "CUB"}


def compiler_of(record):
    return record.get("compiler", "numba-cuda")  # (results from before numba-cuda-mlir)


def slot_of(record):
    return "cub" if record["impl"] == "cub" else SLOTS[compiler_of(record)]


def slot_field(slot, name):
    """A row's field ``name`` (ratio, cold, ...) for a coop slot."""
    return name if slot == "coop" else f"{slot}_{name}"


# -- CUB -------------------------------------------------------------------------------------


def find_nvcc():
    candidates = [shutil.which("nvcc")]
    for root in (os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda"):
        if root:
            candidates.append(os.path.join(root, "bin", "nvcc"))
    for path in candidates:
        if path and os.path.isfile(path):
            return path
    raise SystemExit("run.py: nvcc not found (PATH, $CUDA_HOME/bin, /usr/local/cuda/bin)")


def find_cccl(nvcc):
    """The directory holding cub/, thrust/ and cuda/: $CCCL_INCLUDE, else the toolkit's,
    else the nvidia-cuda-cccl wheel's."""
    candidates = [os.environ.get("CCCL_INCLUDE")]
    toolkit = pathlib.Path(nvcc).resolve().parent.parent
    for include in (toolkit / "include", *toolkit.glob("targets/*/include")):
        candidates += [include / "cccl", include]
    try:
        import importlib.util

        spec = importlib.util.find_spec("nvidia")
        for root in spec.submodule_search_locations if spec else ():
            candidates += sorted(pathlib.Path(root).glob("cu*/include/cccl"))
    except ImportError:
        pass
    for path in candidates:
        if path and (pathlib.Path(path) / "cub" / "block" / "block_reduce.cuh").is_file():
            return str(path)
    raise SystemExit("run.py: CUB headers not found: set CCCL_INCLUDE to the dir holding cub/")


def nvcc_version(nvcc):
    text = subprocess.run([nvcc, "--version"], capture_output=True, text=True).stdout
    match = re.search(r"release [\d.]+, (V[\d.]+)", text)
    return "nvcc " + (match.group(1) if match else "(version unknown)")


def cub_build_command(nvcc, cccl, cc, binary):
    arch = "sm_" + cc.replace(".", "")
    return [nvcc, "-O3", "-std=c++17", f"-arch={arch}", f"-I{cccl}",
            str(HERE / "cub_tiles.cu"), "-o", str(binary)]


def build_cub(nvcc, cccl, cc, workdir):
    binary = workdir / "cub_tiles"
    command = cub_build_command(nvcc, cccl, cc, binary)
    start = time.perf_counter()
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        sys.stderr.write(result.stderr[-8000:])
        raise SystemExit("run.py: nvcc failed: " + " ".join(command))
    return binary, time.perf_counter() - start, " ".join(command)


def cub_selection(section, patterns, keys):
    """cub_tiles' arguments selecting the CUB kernels that the selected coop kernels (keys)
    are compared with: with patterns, their exact specs (coop's block_transform kernels
    are compared with CUB's transform kernels)."""
    arguments = ["--section", section]
    if patterns:
        cub_keys = [("transform",) + k[1:] if k[0] == "block_transform" else k for k in keys]
        specs = dict.fromkeys(coop_tiles.kernel_spec(*k) for k in cub_keys)
        arguments += ["--kernels", ",".join(specs)]
    return arguments


# -- coop ------------------------------------------------------------------------------------


def coop_command(*args):
    return [sys.executable, str(HERE / "coop_tiles.py"), *map(str, args)]


def compile_times(modules, cache, batch, keys, compilers):
    """The collectives' compile records (failures and refusals too), each compiler's."""
    env = dict(os.environ, NUMBA_CACHE_DIR=str(cache))
    specs = [coop_tiles.kernel_spec(*k) for k in keys]
    records = []
    if not specs:
        return records
    for phase in ("cold", "cached"):
        for compiler in compilers:
            say(f"coop compile times, {compiler}, {phase} "
                f"({'one process' if batch else 'a process per kernel'})")
            groups = [specs] if batch else [[spec] for spec in specs]
            commands = [coop_command("compile", modules, "--phase", phase, "--compiler", compiler, *group)
                        for group in groups]
            # One process per kernel, a few at a time: NVVM is single-threaded, and the
            # machine has cores to spare (set COMPILE_PROCESSES=1 for strictly serial runs).
            workers = int(os.environ.get("COMPILE_PROCESSES", "6"))
            with concurrent.futures.ThreadPoolExecutor(max_workers=workers) as pool:
                outputs = list(pool.map(lambda command: run(command, env, fatal=False), commands))
            for output in outputs:
                records += output
                for record in output:
                    spec = coop_tiles.kernel_spec(*key_of(record))
                    if not say_failure(record):
                        miss = "" if phase == "cold" or record["cache_hit"] else " (cache miss)"
                        say(f"  {spec}: {record['compile_s']:.3f} s{miss}")
    return records


def say_failure(record):
    """Tell of a record's error or refusal; whether it had one."""
    name = f"{coop_tiles.kernel_spec(*key_of(record))} ({compiler_of(record)})"
    if record.get("error"):
        say(f"  {name}: FAILED: {record['error'][-500:]}")
    elif record.get("refused"):
        say(f"  {name}: refused: {record['refused'][-300:]}")
    return bool(record.get("error") or record.get("refused"))


def precompile(modules, cache, keys, workers, compilers):
    """Compile the data-movement kernels into the Numba cache, ``workers`` processes side
    by side (a share of one compiler's kernels each, round robin), so that the timing
    process only loads them. Returns their cold compile records (and errors, refusals)."""
    specs = [coop_tiles.kernel_spec(*k) for k in keys]
    if not specs:
        return []
    env = dict(os.environ, NUMBA_CACHE_DIR=str(cache))
    workers = max(1, min(workers, len(specs)))
    commands = [coop_command("compile", modules, "--phase", "cold", "--compiler", compiler, *specs[w::workers])
                for compiler in compilers for w in range(workers)]
    with concurrent.futures.ThreadPoolExecutor(max_workers=workers) as pool:
        outputs = list(pool.map(lambda command: run(command, env, fatal=False), commands))
    records = [record for output in outputs for record in output]
    for record in records:
        say_failure(record)
    for compiler in compilers:
        done = [r for r in records if "compile_s" in r and compiler_of(r) == compiler]
        if done:
            slowest = max(done, key=lambda r: r["compile_s"])
            say(f"  {compiler}: {len(done)} of {len(specs)} compiled; median "
                f"{statistics.median(r['compile_s'] for r in done):.3f} s, slowest "
                f"{slowest['compile_s']:.3f} s ({coop_tiles.kernel_spec(*key_of(slowest))})")
    return records


# -- report ----------------------------------------------------------------------------------


def config_label(threads, items):
    return f"{threads}×{items}"


def ratio_svg(rows, path, slots=("coop",)):
    """Grouped bars of coop/CUB throughput: a group per (dtype, config), a bar per kernel
    and coop compiler (numba-cuda-mlir's lighter), a dashed line at 1.0."""
    colors = {("sum", "coop"): "#4477aa", ("exclusive_sum", "coop"): "#ee7733",
              ("sum", "mlir"): "#99bbdd", ("exclusive_sum", "mlir"): "#f5bb99"}
    series = [(kernel, slot) for slot in slots for kernel in coop_tiles.KERNELS]
    named = {slot: f" ({compiler})" if len(slots) > 1 else "" for compiler, slot in SLOTS.items()}
    groups = [(d, t, i) for d in coop_tiles.DTYPES for (t, i) in coop_tiles.CONFIGS]
    ratios = [r[slot_field(slot, "ratio")] for r in rows.values() for slot in slots
              if r.get(slot_field(slot, "ratio"))]
    top = max([1.2] + [x * 1.1 for x in ratios])
    width, height, left, right, top_pad, bottom = 960, 380, 60, 20, 40, 70
    plot_w, plot_h = width - left - right, height - top_pad - bottom
    group_w = plot_w / len(groups)
    bar_w = group_w * 0.7 / len(series)

    def y(value):
        return top_pad + plot_h * (1 - value / top)

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'font-family="sans-serif" font-size="12">',
           f'<rect width="{width}" height="{height}" fill="white"/>',
           f'<text x="{width / 2}" y="20" text-anchor="middle" font-size="14">'
           f'coop / CUB throughput (higher is better; 1.0 = parity)</text>']
    step = 0.2 if top <= 2 else 0.5
    tick = 0.0
    while tick <= top + 1e-9:
        out.append(f'<line x1="{left}" x2="{width - right}" y1="{y(tick):.1f}" y2="{y(tick):.1f}" '
                   f'stroke="#ddd"/><text x="{left - 6}" y="{y(tick) + 4:.1f}" '
                   f'text-anchor="end">{tick:.1f}</text>')
        tick += step
    for g, (dtype, threads, items) in enumerate(groups):
        x0 = left + g * group_w + (group_w - len(series) * bar_w) / 2
        for b, (kernel, slot) in enumerate(series):
            ratio = rows.get((kernel, dtype, threads, items), {}).get(slot_field(slot, "ratio"))
            if ratio is None:
                continue
            x = x0 + b * bar_w
            out.append(f'<rect x="{x:.1f}" y="{y(ratio):.1f}" width="{bar_w:.1f}" '
                       f'height="{y(0) - y(ratio):.1f}" fill="{colors[kernel, slot]}">'
                       f'<title>{kernel} {dtype} {threads}x{items}{named[slot]}: {ratio:.3f}</title></rect>'
                       f'<text x="{x + bar_w / 2:.1f}" y="{y(ratio) - 3:.1f}" font-size="9" '
                       f'text-anchor="middle">{ratio:.2f}</text>')
        cx = left + (g + 0.5) * group_w
        out.append(f'<text x="{cx:.1f}" y="{y(0) + 16:.1f}" text-anchor="middle">'
                   f'{threads}×{items}</text>')
    for d, dtype in enumerate(coop_tiles.DTYPES):
        n = len(coop_tiles.CONFIGS)
        cx = left + (d * n + n / 2) * group_w
        out.append(f'<text x="{cx:.1f}" y="{y(0) + 36:.1f}" text-anchor="middle" '
                   f'font-weight="bold">{dtype}</text>')
        if d:
            xs = left + d * n * group_w
            out.append(f'<line x1="{xs:.1f}" x2="{xs:.1f}" y1="{top_pad}" y2="{y(0) + 40:.1f}" '
                       f'stroke="#999"/>')
    out.append(f'<line x1="{left}" x2="{width - right}" y1="{y(1):.1f}" y2="{y(1):.1f}" '
               f'stroke="#c00" stroke-width="1.5" stroke-dasharray="6,4"/>')
    out.append(f'<line x1="{left}" x2="{width - right}" y1="{y(0):.1f}" y2="{y(0):.1f}" '
               f'stroke="black"/>')
    for k, (kernel, slot) in enumerate(series):
        lx = left + 10 + k * (150 if len(slots) == 1 else 220)
        out.append(f'<rect x="{lx}" y="{height - 18}" width="12" height="12" '
                   f'fill="{colors[kernel, slot]}"/><text x="{lx + 18}" y="{height - 8}">'
                   f'block {kernel.replace("_", " ")}{named[slot]}</text>')
    out.append("</svg>")
    path.write_text("\n".join(out) + "\n")


def cub_version(number):
    return f"{number // 100000}.{number // 100 % 1000}.{number % 100}" if number else "unknown"


def cuda_version(number):
    return f"{number // 1000}.{number % 1000 // 10}" if number else "unknown"


def git_revision():
    """The coop commit measured: COOP_REVISION if set (a work tree copied without its
    history, as onto a lent GPU machine), else what git says."""
    if os.environ.get("COOP_REVISION"):
        return os.environ["COOP_REVISION"]
    try:
        inside = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"],
                                capture_output=True, text=True)
        if inside.returncode != 0:
            return "unknown (no git checkout; set COOP_REVISION)"
        dirty = subprocess.run(["git", "-C", str(REPO), "status", "--porcelain", "--", "coop"],
                               capture_output=True, text=True).stdout.strip()
        return inside.stdout.strip() + (" + uncommitted changes to coop/" if dirty else "")
    except OSError:
        return "unknown (no git)"


def fmt(value, digits=3):
    return "–" if value is None else f"{value:.{digits}f}"


def verdict(ok):
    return "met" if ok else "**missed**"


def pct(value):
    return "–" if value is None else f"{100 * value:.1f}%"


def header_lines(meta, records, collectives):
    info = meta["info"]
    cub_info = meta["cub_info"] or dict(runtime=0, cub_version=0, reps="?", warmup="?")
    slots = coop_slots(meta)

    def warm_up(compiler):
        """The median seconds of the warm-up kernel of the collectives' cold compiles."""
        seconds = sorted(r["warm_up_s"] for r in records if r.get("phase") == "cold" and "warm_up_s" in r
                         and "algorithm" not in r and compiler_of(r) == compiler)
        return seconds[len(seconds) // 2] if seconds else None
    copy = memcpy_record(records)
    lines = [
        "# coop vs CUB: block tile benchmarks",
        "",
    ]
    if meta["quick"]:
        lines += ["**Smoke run (`--quick`, 2^24 elements): not representative.**", ""]
    partial = []
    if meta.get("section", "all") != "all":
        partial.append(f"section {meta['section']} only")
    if meta.get("patterns"):
        partial.append("kernels matching " + ", ".join(f"`{p}`" for p in meta["patterns"]))
    if partial:
        lines += [f"**Partial run: {'; '.join(partial)}.**", ""]
    lines += [
        f"- Device: {info['device']} (compute capability {info['cc']}), driver "
        + (f"{info['driver_release']} " if info.get("driver_release") else "")
        + f"(CUDA {info['driver']}), CUDA runtime (CUB side) {cuda_version(cub_info['runtime'])}",
        f"- Date: {meta['date']}",
    ]
    if meta.get("merged"):
        lines.append(f"- Merged from {len(meta['merged'])} runs: " + "; ".join(meta["merged"]))
    lines += [
        f"- Versions: coop {info['coop']} (git {meta['git']}), numba {info['numba']}, "
        f"numba-cuda {info['numba_cuda']}, "
        + (f"numba-cuda-mlir {info.get('numba_cuda_mlir')}, " if "mlir" in slots else "")
        + f"numpy {info['numpy']}, Python {info['python']}, "
        f"{meta['nvcc']}, CUB {cub_version(cub_info['cub_version'])}",
        f"- Problem: 2^{meta['log2n']} elements per kernel; median of {cub_info['reps']} launches "
        f"after {cub_info['warmup']} warm-ups, timed with CUDA events recorded between "
        "back-to-back launches; every result checked against the host.",
        f"- CUB build: `{meta['nvcc_command']}` ({meta['nvcc_seconds']:.1f} s for all "
        f"{meta.get('cub_kernels', 24)} kernels)",
    ]
    if copy:
        lines.append(f"- Reference: device-to-device `cudaMemcpy` of "
                     f"{copy['bytes'] / 2**30:.2f} GiB: **{copy['gbps']:.0f} GB/s** (read + write)")
    lines.append("- coop compiled by: " + ", ".join(
        compiler for compiler, slot in SLOTS.items() if slot in slots)
        + ("; the same kernel source, the same data and checks, in the same run (each "
           "compiler's own device arrays and events)" if len(slots) > 1 else ""))
    if not collectives:
        return lines + [""]
    lines += [
        "- Compile time (coop): *cold* = `cuda.jit(signature, cache=True)` plus loading the "
        "module, in a fresh process with no cache entry for the kernel; *cached* = the same "
        "in another fresh process, loading the entry from Numba's on-disk cache. Both after "
        "the imports, the CUDA context and one trivial kernel without coop ("
        + (f"which took {warm_up('numba-cuda'):.2f} s, median; " if warm_up("numba-cuda") else "")
        + f"{'one process per phase' if meta['batch'] else 'one process per kernel and phase'})."
        + (" numba-cuda-mlir: the same with its `cuda.jit` and its on-disk cache (the module "
           "loaded by reading the kernel's attributes; its trivial kernel compiled by it"
           + (f", {warm_up('numba-cuda-mlir'):.2f} s" if warm_up("numba-cuda-mlir") else "") + ")."
           if "mlir" in slots else ""),
        "",
    ]
    return lines


def memcpy_record(records):
    return next((r for r in records if r.get("impl") == "cudaMemcpy"), None)


def gbps_cell(row, slot):
    if row.get(slot):
        return fmt(row[slot]["gbps"], 0)
    return "refused" if slot in row.get("refused", {}) else "–"


def check_row(row, label, slots, failures):
    """Add to ``failures`` what failed or mismatched in a row, CUB's and each coop slot's
    (a kernel coop refuses with a compiler is no failure: the table says "refused")."""
    for slot in ["cub"] + slots:
        name = f"{SLOT_LABELS[slot]} {label}"
        record = row.get(slot)
        if record is None and slot not in row.get("refused", {}):
            failures.append(f"{name}: {row.get('errors', {}).get(slot, 'no result')}")
        elif record is not None and record.get("check") != "ok":
            failures.append(f"{name}: {record['check']}")
    for what, error in row.get("errors", {}).items():
        if " compile " in what:
            slot, _, phase = what.split(" ", 2)
            failures.append(f"{SLOT_LABELS[slot]} {label}, {phase} compile: {error[-300:]}")


def collective_lines(rows, failures, slots):
    """A table per kernel: coop (each compiler of ``slots``) and CUB."""
    lines = []
    for kernel in coop_tiles.KERNELS:
        keys = [k for k in rows if k[0] == kernel]
        if not keys:
            continue
        head = []
        for slot in slots:
            head += [f"{SLOT_LABELS[slot]} GB/s"] + (["CUB GB/s"] if slot == slots[0] else [])
            head.append(f"{'coop' if slot == 'coop' else slot}/CUB")
        head.append("regs " + "/".join(slots + ["CUB"]))
        for slot in slots:
            prefix = "" if slot == "coop" else f"{slot} "
            head += [f"{prefix}compile cold (s)", f"{prefix}compile cached (s)"]
        lines += [f"## {KERNEL_TITLES[kernel]}", "",
                  "| dtype | threads × items | " + " | ".join(head) + " |",
                  "|---|---|" + "--:|" * len(head)]
        for key in keys:
            _, dtype, threads, items = key
            row = rows[key]
            check_row(row, f"{kernel} {dtype} {threads}x{items}", slots, failures)
            cells = [dtype, config_label(threads, items)]
            for slot in slots:
                cells.append(gbps_cell(row, slot))
                if slot == slots[0]:
                    cells.append(gbps_cell(row, "cub"))
                cells.append(f"**{fmt(row.get(slot_field(slot, 'ratio')))}**")
            cells.append("/".join(str(row[slot]["regs"]) if row.get(slot) else "–" for slot in slots + ["cub"]))
            for slot in slots:
                cached = fmt(row.get(slot_field(slot, "cached")))
                if row.get(slot_field(slot, "cached")) is not None and not row.get(slot_field(slot, "cache_hit")):
                    cached += " (cache miss)"
                cells += [fmt(row.get(slot_field(slot, "cold"))), cached]
            lines.append("| " + " | ".join(cells) + " |")
        lines.append("")
    return lines


def collective_targets(rows, slots):
    """The targets, numba-cuda's; numba-cuda-mlir's figures for information."""
    def worst(key, pick):
        found = [(row[key], k) for k, row in rows.items() if row.get(key) is not None]
        return pick(found) if found else (None, None)

    def name(key):
        return f"{key[0]} {key[1]} {key[2]}×{key[3]}" if key else "–"

    lines = []
    for slot in slots:
        low, low_key = worst(slot_field(slot, "ratio"), min)
        cold, cold_key = worst(slot_field(slot, "cold"), max)
        cached, cached_key = worst(slot_field(slot, "cached"), max)
        misses = [name(k) for k, row in rows.items()
                  if row.get(slot_field(slot, "cached")) is not None and not row[slot_field(slot, "cache_hit")]]
        missed = f"; **cache misses** (compiled again): {', '.join(misses)}" if misses else ""
        if slot != "coop":
            refused = [name(k) for k, row in rows.items() if slot in row.get("refused", {})]
            lines.append(
                f"- (information) {SLOT_LABELS[slot]}: lowest {slot}/CUB {fmt(low)} ({name(low_key)}); "
                f"compile cold: slowest {fmt(cold)} s ({name(cold_key)}); from the cache: slowest "
                f"{fmt(cached)} s ({name(cached_key)})" + missed
                + (f"; refused by coop: {', '.join(refused)}" if refused else ""))
            continue
        lines += [
            f"- coop ≥ {TARGET_RATIO:.2f}× CUB throughput at every configuration: lowest "
            f"{fmt(low)} ({name(low_key)}): {verdict(low is not None and low >= TARGET_RATIO)}",
            f"- compile ≤ {TARGET_COLD_S} s per kernel cold: slowest {fmt(cold)} s "
            f"({name(cold_key)}): {verdict(cold is not None and cold <= TARGET_COLD_S)}",
            f"- compile ≤ {TARGET_CACHED_S} s per kernel from the cache: slowest {fmt(cached)} s "
            f"({name(cached_key)}): "
            f"{verdict(cached is not None and cached <= TARGET_CACHED_S and not misses)}" + missed,
        ]
    return lines


def dm_name(key):
    kernel, dtype, threads, items, algorithm = key
    return f"{DM_TITLES[kernel]} {dtype} {threads}×{items} {algorithm}"


def dm_lines(dm_rows, records, failures, slots):
    """The data-movement section: a table per dtype (rows: configuration × algorithm,
    columns: the kernels), then its targets."""
    copy = memcpy_record(records)
    memcpy = f"{copy['gbps']:.0f} GB/s" if copy else "not measured"
    extra_slots = [slot for slot in slots if slot != "coop"]  # columns beside numba-cuda's
    kernels = [k for k in coop_tiles.DM_KERNELS if any(key[0] == k for key in dm_rows)]
    lines = [
        "## Data movement (block load/store)",
        "",
        "`coop.block.load` / `coop.block.store` against `cub::BlockLoad` / `cub::BlockStore`, "
        "the same algorithm for the load and the store, on full tiles: *copy* loads the "
        "block's tile into `ITEMS` items per thread and stores it; *transform* applies "
        "`x * 3 + 1` to each item in between; *coop.block.transform* is that transform as one "
        "coop primitive (compared with CUB's transform kernel). The transposes share one "
        "shared-memory buffer between the load and the store (coop: one `temp_storage=` "
        "array, `coop.block.transform` its own; CUB: a `TempStorage` union and a "
        "`__syncthreads()` between them). GB/s counts "
        "the bytes read + written (2 × n × itemsize per launch); *% memcpy*: coop's "
        f"throughput over the device-to-device `cudaMemcpy`'s ({memcpy}). Bold: the "
        "configuration's best coop throughput."
        + (" *mlir*: the same kernels compiled by numba-cuda-mlir (*refused*: coop refuses the call "
           "there at compile time, as `algorithm=\"vectorize\"` and a device function as "
           "`coop.block.transform`'s operator)." if "mlir" in slots else ""),
        "",
    ]
    for dtype in coop_tiles.DM_DTYPES:
        keys = [k for k in dm_rows if k[1] == dtype]
        configs = list(dict.fromkeys((k[2], k[3]) for k in keys))
        if not configs:
            continue
        head = ["threads × items", "algorithm"]
        align = ["---", "---"]
        widths = {}
        for kernel in kernels:
            if kernel in CUB_DM_KERNELS:
                columns = [f"{DM_TITLES[kernel]} coop GB/s", "CUB GB/s", "coop/CUB", "% memcpy"]
            else:  # compared with CUB's transform, whose GB/s the table shows already
                columns = [f"{DM_TITLES[kernel]} GB/s", "/ CUB transform", "% memcpy"]
            columns += [column for slot in extra_slots for column in (f"{slot} GB/s", f"{slot}/CUB")]
            head += columns
            widths[kernel] = len(columns)
        align += ["--:"] * (len(head) - len(align))
        lines += [f"### {dtype}", "", "| " + " | ".join(head) + " |", "|" + "|".join(align) + "|"]
        for threads, items in configs:
            best = {}
            for kernel in kernels:
                found = [dm_rows[k]["coop"]["gbps"] for k in keys
                         if k[0] == kernel and k[2:4] == (threads, items) and dm_rows[k].get("coop")]
                best[kernel] = max(found) if found else None
            for algorithm in coop_tiles.ALGORITHMS:
                cells = [config_label(threads, items), algorithm]
                present = False
                for kernel in kernels:
                    row = dm_rows.get((kernel, dtype, threads, items, algorithm))
                    with_cub = kernel in CUB_DM_KERNELS
                    if row is None:
                        cells += ["–"] * widths[kernel]
                        continue
                    present = True
                    coop, cub = row.get("coop"), row.get("cub")
                    gbps = fmt(coop and coop["gbps"], 0)
                    if coop and coop["gbps"] == best[kernel]:
                        gbps = f"**{gbps}**"
                    cells += [gbps] + ([fmt(cub and cub["gbps"], 0)] if with_cub else [])
                    cells += [fmt(row.get("ratio")), pct(row.get("memcpy"))]
                    for slot in extra_slots:
                        cells += [gbps_cell(row, slot), fmt(row.get(slot_field(slot, "ratio")))]
                if present:
                    lines.append("| " + " | ".join(cells) + " |")
        lines.append("")

    for key, row in dm_rows.items():
        check_row(row, dm_name(key), slots, failures)

    lines += ["### Data-movement targets", ""]
    for kernel in kernels:
        rated = [(row["ratio"], k) for k, row in dm_rows.items() if k[0] == kernel and "ratio" in row]
        total = sum(1 for k in dm_rows if k[0] == kernel)
        if not rated:
            lines.append(f"- {DM_TITLES[kernel]}: coop ≥ {TARGET_RATIO:.2f}× CUB for every "
                         f"configuration and algorithm: no ratio measured: {verdict(False)}")
            continue
        low, low_key = min(rated)
        below = sum(1 for ratio, _ in rated if ratio < TARGET_RATIO)
        complete = len(rated) == total
        lines.append(
            f"- {DM_TITLES[kernel]}: coop ≥ {TARGET_RATIO:.2f}× CUB for every configuration and "
            f"algorithm: lowest {fmt(low)} ({dm_name(low_key)}), {below} of {len(rated)} below"
            + ("" if complete else f" ({total - len(rated)} without a ratio)")
            + f": {verdict(below == 0 and complete)}")
    for kernel in kernels:
        for dtype in coop_tiles.DM_DTYPES:
            keys = [k for k in dm_rows if k[0] == kernel and k[1] == dtype]
            if not keys:
                continue
            measured = [(dm_rows[k]["coop"]["gbps"], k) for k in keys if dm_rows[k].get("coop")]
            cub_best = max((dm_rows[k]["cub"]["gbps"] for k in keys if dm_rows[k].get("cub")),
                           default=None)
            if not measured or not copy:
                lines.append(f"- {DM_TITLES[kernel]} {dtype}: best algorithm ≥ "
                             f"{100 * TARGET_MEMCPY:.0f}% of memcpy: not measured: {verdict(False)}")
                continue
            gbps, key = max(measured)
            share = gbps / copy["gbps"]
            cub_share = cub_best / copy["gbps"] if cub_best else None
            lines.append(
                f"- {DM_TITLES[kernel]} {dtype}: best algorithm ≥ {100 * TARGET_MEMCPY:.0f}% of "
                f"memcpy: {key[2]}×{key[3]} {key[4]}, {gbps:.0f} GB/s = {pct(share)} "
                f"(CUB's best: {pct(cub_share)}): {verdict(share >= TARGET_MEMCPY)}")
    for slot in extra_slots:
        for kernel in kernels:
            ratio = slot_field(slot, "ratio")
            rated = [(row[ratio], k) for k, row in dm_rows.items() if k[0] == kernel and ratio in row]
            refused = sum(1 for k, row in dm_rows.items() if k[0] == kernel and slot in row.get("refused", {}))
            low = min(rated) if rated else (None, None)
            lines.append(
                f"- (information) {DM_TITLES[kernel]}, {SLOT_LABELS[slot]}: lowest {slot}/CUB {fmt(low[0])}"
                + (f" ({dm_name(low[1])})" if rated else "")
                + f", {sum(1 for ratio, _ in rated if ratio < TARGET_RATIO)} of {len(rated)} below "
                f"{TARGET_RATIO:.2f}; {refused} refused by coop")
    for slot in slots:
        field = slot_field(slot, "cold")
        compiled = [(row[field], k) for k, row in dm_rows.items() if row.get(field) is not None]
        if compiled:
            slowest = max(compiled)
            lines.append(
                f"- (information) {SLOT_LABELS[slot]} compile, cold, {len(compiled)} data-movement kernels "
                f"compiled in a few processes side by side, one warm-up each: median "
                f"{statistics.median(t for t, _ in compiled):.3f} s, slowest {slowest[0]:.3f} s "
                f"({dm_name(slowest[1])})")
    lines.append("")
    return lines


def coop_slots(meta):
    """The coop slots of the compilers the run used, numba-cuda's first."""
    compilers = meta.get("compilers") or ["numba-cuda"]  # (results from before numba-cuda-mlir)
    return [slot for compiler, slot in SLOTS.items() if compiler in compilers]


def write_report(out, records, meta, rows, dm_rows, svg):
    slots = coop_slots(meta)
    lines = header_lines(meta, records, bool(rows))
    failures = []
    lines += collective_lines(rows, failures, slots)
    if dm_rows:
        lines += dm_lines(dm_rows, records, failures, slots)
    lines += ["## Targets", ""]
    if rows:
        lines += collective_targets(rows, slots)
    if dm_rows:
        lines.append("- data movement: see *Data-movement targets* above")
    lines += [
        "- every kernel compiled, ran and matched the host: "
        + ("yes" if not failures else "**no**: " + "; ".join(failures)),
        "",
    ]
    if rows and svg is not None:
        svg_link = os.path.relpath(svg.resolve(), out.resolve().parent).replace(os.sep, "/")
        lines += [
            "## coop / CUB throughput",
            "",
            f"![coop/CUB throughput ratio per configuration]({svg_link})",
            "",
        ]
    lines += [
        "Raw measurements: `benchmarks/results.jsonl`. Reproduce: `python benchmarks/run.py`.",
        "",
    ]
    out.write_text("\n".join(lines))
    return failures


def compile_records(records):
    """{key: {slot_field(slot, phase): record}} from the compile records (those with a
    ``phase``): "cold", "cached", "mlir_cold", ...; "cold_error", "mlir_cold_refused", ...
    for those that did not compile."""
    times = {}
    for record in records:
        if record.get("impl") == "coop" and "phase" in record:
            outcome = "_error" if record.get("error") else "_refused" if record.get("refused") else ""
            times.setdefault(key_of(record), {})[slot_field(slot_of(record), record["phase"] + outcome)] = record
    return times


def measurements(records, keys):
    """{key: {"coop": record, "mlir": record, "cub": record, "errors": {slot: error},
    "refused": {slot: message}}} for the throughput records (not the compile ones) of the
    given keys."""
    rows = {key: {} for key in keys}
    for record in records:
        if record.get("impl") in ("coop", "cub") and "phase" not in record and (
            "gbps" in record or "error" in record or "refused" in record
        ):
            key = key_of(record)
            if key not in rows:
                continue
            if "gbps" in record:
                rows[key][slot_of(record)] = record
            elif "error" in record:
                rows[key].setdefault("errors", {})[slot_of(record)] = record["error"]
            else:
                rows[key].setdefault("refused", {})[slot_of(record)] = record["refused"]
    return rows


def add_compile_times(row, phases, slot, phase_names):
    """A row's compile times (and compile errors, refusals) of one coop slot."""
    for phase in phase_names:
        field = slot_field(slot, phase)
        if f"{field}_error" in phases:
            row.setdefault("errors", {})[f"{slot} compile {phase}"] = phases[f"{field}_error"]["error"]
        if f"{field}_refused" in phases:
            row.setdefault("refused", {}).setdefault(slot, phases[f"{field}_refused"]["refused"])
        if field in phases:
            row[field] = phases[field]["compile_s"]
            if phase == "cached":
                row[slot_field(slot, "cache_hit")] = phases[field]["cache_hit"]


def tabulate(records, keys):
    """The collectives: {(kernel, dtype, threads, items): {coop, mlir, cub, ratio,
    mlir_ratio, cold, cached, cache_hit, mlir_cold, ...}}."""
    rows = measurements(records, keys)
    times = compile_records(records)
    for key, row in rows.items():
        for slot in SLOTS.values():
            if row.get(slot) and row.get("cub"):
                row[slot_field(slot, "ratio")] = row[slot]["gbps"] / row["cub"]["gbps"]
            add_compile_times(row, times.get(key, {}), slot, ("cold", "cached"))
    return rows


def tabulate_dm(records, keys):
    """Data movement: {(kernel, dtype, threads, items, algorithm): {coop, mlir, cub, ratio,
    mlir_ratio, memcpy, mlir_memcpy, cold, mlir_cold}}; coop's block_transform is paired
    with CUB's transform."""
    cub_keys = [("transform",) + k[1:] if k[0] == "block_transform" else k for k in keys]
    found = measurements(records, list(dict.fromkeys(list(keys) + cub_keys)))
    times = compile_records(records)
    copy = memcpy_record(records)
    rows = {}
    for key, cub_key in zip(keys, cub_keys):
        row = {slot: found[key][slot] for slot in SLOTS.values() if found[key].get(slot)}
        if found[cub_key].get("cub"):
            row["cub"] = found[cub_key]["cub"]
        errors = {slot: error for slot, error in found[key].get("errors", {}).items() if slot != "cub"}
        if "cub" in found[cub_key].get("errors", {}):
            errors["cub"] = found[cub_key]["errors"]["cub"]
        if errors:
            row["errors"] = errors
        if found[key].get("refused"):
            row["refused"] = found[key]["refused"]
        for slot in SLOTS.values():
            add_compile_times(row, times.get(key, {}), slot, ("cold",))
            if row.get(slot) and row.get("cub"):
                row[slot_field(slot, "ratio")] = row[slot]["gbps"] / row["cub"]["gbps"]
            if row.get(slot) and copy:
                row[slot_field(slot, "memcpy")] = row[slot]["gbps"] / copy["gbps"]
        rows[key] = row
    return rows


def make_report(records, meta, out, svg, collective_keys, dm_keys):
    """Tables, plot and report from the records; the failures."""
    rows = tabulate(records, collective_keys)
    dm_rows = tabulate_dm(records, dm_keys)
    if rows and svg is not None:
        ratio_svg(rows, svg, coop_slots(meta))
    out.parent.mkdir(parents=True, exist_ok=True)
    return write_report(out, records, meta, rows, dm_rows, svg if rows else None)


def load_runs(paths):
    """Records and meta of one or more results.jsonl files (later files win for the same
    kernel and measurement), for ``--report-from``."""
    metas, merged = [], {}
    info = cub_info = None
    for path in paths:
        for number, line in enumerate(pathlib.Path(path).read_text().splitlines(), 1):
            if not line.strip():
                continue
            record = json.loads(line)
            impl = record.get("impl")
            if impl == "run":
                metas.append(record)
            elif impl == "info" and "cub_version" in record:
                cub_info = record
                merged[("info", "cub")] = record
            elif impl == "info":
                info = record
            elif impl == "cudaMemcpy":
                merged[("cudaMemcpy",)] = record
            elif impl in ("coop", "cub"):
                merged[(slot_of(record), key_of(record), record.get("phase"))] = record
            else:
                raise SystemExit(f"run.py: {path}:{number}: unknown record {line[:200]}")
    if not metas or info is None:
        raise SystemExit("run.py: --report-from: no run line or no coop info line in "
                         + ", ".join(map(str, paths)))
    meta = dict(metas[-1], info=info, cub_info=cub_info)  # the latest run's build and date
    # (results from before the data-movement section have no "section": collectives)
    meta["selections"] = [selection for m in metas for selection in
                          m.get("selections", [(m.get("section", "collectives"), m.get("patterns"))])]
    if len(metas) > 1:
        meta["merged"] = [f"{m['date']} ({m.get('section', 'all')}"
                          + (f", kernels {', '.join(m['patterns'])}" if m.get("patterns") else "")
                          + f", 2^{m['log2n']} elements)" for m in metas]
        meta["section"], meta["patterns"] = "all", None
        meta["quick"] = any(m["quick"] for m in metas)
        meta["compilers"] = [c for c in SLOTS if any(c in (m.get("compilers") or ["numba-cuda"]) for m in metas)]
    return list(merged.values()), meta


def reported_keys(meta):
    """The kernels the recorded runs selected (their ``section`` and ``patterns``), in
    report order: (collectives, data movement)."""
    chosen = set()
    for section, patterns in meta["selections"]:
        chosen.update(coop_tiles.selected(section, patterns))
    return ([k for k in coop_tiles.all_kernels() if k in chosen],
            [k for k in coop_tiles.dm_kernels() if k in chosen])


def plan(args, collective_keys, dm_keys, log2n, batch, compilers):
    """--dry-run: what a run would do."""
    try:
        nvcc = find_nvcc()
        command = " ".join(cub_build_command(nvcc, find_cccl(nvcc), "9.0", "$TMP/cub_tiles"))
    except SystemExit as exc:
        command = f"(not here: {exc})"
    patterns = coop_tiles.split_patterns(args.only_kernels)
    selection = [f"--section {args.section}"] + ([f"--kernels '{','.join(patterns)}'"] if patterns else [])
    cub = " ".join(cub_selection(args.section, patterns, collective_keys + dm_keys))
    workers = args.dm_workers
    each = f" x {len(compilers)} compilers" if len(compilers) > 1 else f" ({compilers[0]})"
    lines = [
        f"2^{log2n} elements; section {args.section}"
        + (f"; kernels matching {', '.join(patterns)}" if patterns else ""),
        f"coop compiled by: {', '.join(compilers)}"
        + ("" if "numba-cuda-mlir" in compilers else " (numba-cuda-mlir: not "
           + ("selected)" if coop_tiles.COMPILERS["numba-cuda-mlir"].available() else "installed)")),
        f"{len(collective_keys)} collective kernels, {len(dm_keys)} data-movement kernels "
        f"(coop, each compiler's; CUB: "
        f"{len({('transform',) + k[1:] if k[0] == 'block_transform' else k for k in dm_keys})} "
        "data-movement)",
        "1. coop_tiles.py info",
        f"2. in the background: {command} (sm_ from the device)",
        f"3. {len(dm_keys)} data-movement kernels{each} compiled into a fresh Numba cache, "
        f"{max(1, min(workers, len(dm_keys))) if dm_keys else 0} processes side by side",
        f"4. collectives' compile times: {len(collective_keys)} kernels{each} x 2 phases, "
        + ("one process per compiler and phase" if batch else "one process per kernel, compiler and phase"),
        f"5. coop_tiles.py time MODULES --log2n {log2n} {' '.join(selection)} --compilers {','.join(compilers)}",
        f"6. cub_tiles {log2n} {cub}",
        f"7. write {args.out}, {args.jsonl}" + (f", {args.svg}" if collective_keys else ""),
    ]
    for line in lines:
        print(line)
    for compiler in compilers:
        for key in collective_keys + dm_keys:
            print(f"  {compiler}  {coop_tiles.kernel_spec(*key)}")


def main(argv=None):
    parser = argparse.ArgumentParser(
        description="coop vs CUB block tile benchmarks (needs a GPU and nvcc); "
        "writes BENCHMARKS.md, benchmarks/results.jsonl and benchmarks/ratios.svg")
    parser.add_argument("--out", default=str(REPO / "BENCHMARKS.md"),
                        help="the report to write (default: BENCHMARKS.md at the repo root)")
    parser.add_argument("--jsonl", default=None,
                        help="the raw results to write (default: benchmarks/results.jsonl; "
                        "with --report-from, none unless given)")
    parser.add_argument("--svg", default=str(HERE / "ratios.svg"),
                        help="the collectives' coop/CUB plot (default: benchmarks/ratios.svg)")
    parser.add_argument("--quick", action="store_true",
                        help=f"smoke run: 2^{QUICK_LOG2N} elements, compile times in one "
                        "process per phase")
    parser.add_argument("--compile-batch", action="store_true",
                        help="measure compile times in one process per phase instead of one "
                        "process per kernel (faster; later kernels then share warm state)")
    parser.add_argument("--section", choices=("all",) + coop_tiles.SECTIONS, default="all",
                        help="run one section: collectives (block sum / exclusive sum) or "
                        "data-movement (block load / store); default: both")
    parser.add_argument("--only-kernels", action="append", metavar="GLOB[,GLOB...]",
                        help="only the kernels whose spec matches a shell glob (repeatable), "
                        "e.g. 'sum:*', 'copy:float64:*', '*:*:*:*:transpose', "
                        "'*:int32:256:8*'; specs: KERNEL:DTYPE:THREADS:ITEMS[:ALGORITHM]")
    parser.add_argument("--dm-workers", type=int,
                        default=int(os.environ.get("DM_COMPILE_PROCESSES", "8")),
                        help="processes compiling the data-movement kernels side by side "
                        "(default 8, or $DM_COMPILE_PROCESSES)")
    parser.add_argument("--compilers", type=coop_tiles.parse_compilers, default=None,
                        metavar="NAME[,NAME...]",
                        help="the compilers of coop's kernels: numba-cuda, numba-cuda-mlir or both, "
                        "comma-separated (default: both where numba_cuda_mlir is importable, else "
                        "numba-cuda)")
    parser.add_argument("--report-from", nargs="+", metavar="JSONL",
                        help="no GPU: write the report (and plot) from recorded results.jsonl "
                        "files, e.g. of partial runs (later files win)")
    parser.add_argument("--dry-run", action="store_true",
                        help="print what would run (kernels, commands) and stop")
    parser.add_argument("--keep", action="store_true", help="keep the temporary work directory")
    args = parser.parse_args(argv)

    out = pathlib.Path(args.out)
    svg = pathlib.Path(args.svg)
    if args.report_from:
        records, meta = load_runs(args.report_from)
        collective_keys, dm_keys = reported_keys(meta)
        if args.jsonl:
            write_jsonl(pathlib.Path(args.jsonl), meta, [meta["info"]] + records)
        failures = make_report(records, meta, out, svg, collective_keys, dm_keys)
        say(f"wrote {out}" + (f", {svg}" if collective_keys else ""))
        if failures:
            say(f"{len(failures)} kernel(s) failed, mismatched or missing: see the report's Targets")
            return 1
        return 0

    jsonl = pathlib.Path(args.jsonl or HERE / "results.jsonl")
    args.jsonl = str(jsonl)
    log2n = QUICK_LOG2N if args.quick else FULL_LOG2N
    batch = args.compile_batch or args.quick
    patterns = coop_tiles.split_patterns(args.only_kernels)
    keys = coop_tiles.selected(args.section, patterns)
    collective_keys = [k for k in keys if coop_tiles.section_of(k) == "collectives"]
    dm_keys = [k for k in keys if coop_tiles.section_of(k) == "data-movement"]
    if not keys:
        raise SystemExit("run.py: no kernel matches --section / --only-kernels (see --dry-run)")
    compilers = args.compilers or coop_tiles.default_compilers()
    if args.dry_run:
        plan(args, collective_keys, dm_keys, log2n, batch, compilers)
        return 0
    selection = ["--section", args.section] + [a for p in patterns for a in ("--kernels", p)]
    selection += ["--compilers", ",".join(compilers)]

    workdir = pathlib.Path(tempfile.mkdtemp(prefix="coop-bench-"))
    modules, cache = workdir / "modules", workdir / "numba-cache"
    cache.mkdir()
    try:
        say("device and versions")
        info = run(coop_command("info"))[0]
        say(f"{info['device']} (cc {info['cc']}); building the CUB binary in the background")
        nvcc = find_nvcc()
        cccl = find_cccl(nvcc)
        coop_tiles.generate(modules)
        with concurrent.futures.ThreadPoolExecutor(max_workers=1) as background:
            build = background.submit(build_cub, nvcc, cccl, info["cc"], workdir)
            dm_compiled = []
            if dm_keys:
                say(f"coop data-movement kernels: compiling {len(dm_keys)} into the cache, "
                    f"{min(args.dm_workers, len(dm_keys))} processes")
                dm_compiled = precompile(modules, cache, dm_keys, args.dm_workers, compilers)
            if not build.done():
                say("waiting for nvcc")
            binary, nvcc_seconds, nvcc_command = build.result()
        say(f"CUB binary built ({nvcc_seconds:.1f} s)")
        compiled = compile_times(modules, cache, batch, collective_keys, compilers)
        say("coop throughput")
        env = dict(os.environ, NUMBA_CACHE_DIR=str(cache))
        records = run(coop_command("time", modules, "--log2n", log2n, *selection), env, fatal=False)
        say("CUB throughput")
        cub_records = run([str(binary), str(log2n), *cub_selection(args.section, patterns, keys)],
                          fatal=False)
        records += cub_records
        records += compiled + dm_compiled  # errors and refusals too
        say("writing the report")
        meta = dict(
            info=info,
            cub_info=next((r for r in cub_records if r.get("impl") == "info"), None),
            date=datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
            nvcc=nvcc_version(nvcc),
            nvcc_command=nvcc_command.replace(str(workdir), "$TMP").replace(str(REPO) + "/", ""),
            nvcc_seconds=nvcc_seconds,
            cub_kernels=CUB_KERNEL_COUNT,
            git=git_revision(),
            log2n=log2n,
            quick=args.quick,
            batch=batch,
            section=args.section,
            patterns=patterns or None,
            compilers=compilers,
            total_s=time.perf_counter() - STARTED,
        )
        write_jsonl(jsonl, meta, [info] + records)
        failures = make_report(records, meta, out, svg, collective_keys, dm_keys)
        say(f"wrote {out}, {jsonl}" + (f", {svg}" if collective_keys else ""))
        if failures:
            say(f"{len(failures)} kernel(s) failed, mismatched or missing: see the report's Targets")
            return 1
    finally:
        if args.keep:
            say(f"work directory kept: {workdir}")
        else:
            shutil.rmtree(workdir, ignore_errors=True)
    return 0


def write_jsonl(path, meta, records):
    """The run's meta line (without the info records, which follow it), then the records."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w") as f:
        f.write(json.dumps(dict(meta, impl="run", info=None, cub_info=None)) + "\n")
        for record in records:
            f.write(json.dumps(record) + "\n")


if __name__ == "__main__":
    sys.exit(main())
