"""coop vs CUB tile benchmarks: one command, on a machine with a GPU and nvcc.

    python benchmarks/run.py [--out BENCHMARKS.md] [--quick]

1. builds benchmarks/cub_tiles.cu with nvcc against the CUB headers ($CCCL_INCLUDE, or
   the toolkit's / the nvidia-cuda-cccl wheel's include/cccl);
2. measures coop's compile time per kernel: cold (a fresh process per kernel, empty
   Numba cache for it) and cached (a fresh process per kernel, loading the cold run's
   entry from NUMBA_CACHE_DIR); each process first creates the CUDA context and compiles
   a trivial plain-Numba kernel, so neither includes imports, context creation or
   Numba's and NVVM's one-time setup;
3. times the coop kernels (benchmarks/coop_tiles.py) and the CUB kernels (the binary),
   CUDA events, median of 20 launches after 3 warm-ups, each checked against the host;
4. writes benchmarks/results.jsonl (raw JSON lines), benchmarks/ratios.svg (coop/CUB
   throughput) and BENCHMARKS.md (device, date, versions, tables, the plot).
"""

import argparse
import datetime
import concurrent.futures
import json
import os
import pathlib
import re
import shutil
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
KERNEL_TITLES = {
    "sum": "Block sum (one output per tile; GB/s counts the input read once)",
    "exclusive_sum": "Block exclusive sum (load, scan, store; GB/s counts read + write)",
}

STARTED = time.perf_counter()


def say(message):
    print(f"[{time.perf_counter() - STARTED:6.1f}s] {message}", file=sys.stderr, flush=True)


def run(command, env=None, fatal=True, timeout=900):
    """Run a command; its stdout's JSON lines. On failure, show its stderr and stop, or
    (``fatal=False``) go on with the lines it printed: the report marks what is missing."""
    result = subprocess.run(command, env=env, capture_output=True, text=True, timeout=timeout)
    if result.returncode != 0:
        sys.stderr.write(result.stdout[-4000:] + result.stderr[-8000:])
        message = f"failed ({result.returncode}): {' '.join(map(str, command))}"
        if fatal:
            raise SystemExit("run.py: " + message)
        say("WARNING: " + message)
    return [json.loads(line) for line in result.stdout.splitlines() if line.startswith("{")]


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


def build_cub(nvcc, cccl, cc, workdir):
    binary = workdir / "cub_tiles"
    arch = "sm_" + cc.replace(".", "")
    command = [nvcc, "-O3", "-std=c++17", f"-arch={arch}", f"-I{cccl}",
               str(HERE / "cub_tiles.cu"), "-o", str(binary)]
    start = time.perf_counter()
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        sys.stderr.write(result.stderr[-8000:])
        raise SystemExit("run.py: nvcc failed: " + " ".join(command))
    return binary, time.perf_counter() - start, " ".join(command)


# -- coop ------------------------------------------------------------------------------------


def coop_command(*args):
    return [sys.executable, str(HERE / "coop_tiles.py"), *map(str, args)]


def compile_times(modules, cache, batch):
    """{(kernel, dtype, threads, items): {"cold": record, "cached": record}}."""
    env = dict(os.environ, NUMBA_CACHE_DIR=str(cache))
    specs = [coop_tiles.kernel_spec(*k) for k in coop_tiles.all_kernels()]
    times = {}
    for phase in ("cold", "cached"):
        say(f"coop compile times, {phase} ({'one process' if batch else 'a process per kernel'})")
        groups = [specs] if batch else [[spec] for spec in specs]
        commands = [coop_command("compile", modules, "--phase", phase, *group) for group in groups]
        # One process per kernel, a few at a time: NVVM is single-threaded, and the
        # machine has cores to spare (set COMPILE_PROCESSES=1 for strictly serial runs).
        workers = int(os.environ.get("COMPILE_PROCESSES", "6"))
        with concurrent.futures.ThreadPoolExecutor(max_workers=workers) as pool:
            outputs = list(pool.map(lambda command: run(command, env, fatal=False), commands))
        for records in outputs:
            for record in records:
                key = (record["kernel"], record["dtype"], record["threads"], record["items"])
                if record.get("error"):
                    say(f"  {coop_tiles.kernel_spec(*key)}: FAILED: {record['error'][-500:]}")
                    times.setdefault(key, {})[f"{phase}_error"] = record
                    continue
                times.setdefault(key, {})[phase] = record
                miss = "" if phase == "cold" or record["cache_hit"] else " (cache miss)"
                say(f"  {coop_tiles.kernel_spec(*key)}: {record['compile_s']:.3f} s{miss}")
    return times


# -- report ----------------------------------------------------------------------------------


def config_label(threads, items):
    return f"{threads}×{items}"


def ratio_svg(rows, path):
    """Grouped bars of coop/CUB throughput: a group per (dtype, config), a bar per kernel,
    a dashed line at 1.0."""
    colors = {"sum": "#4477aa", "exclusive_sum": "#ee7733"}
    groups = [(d, t, i) for d in coop_tiles.DTYPES for (t, i) in coop_tiles.CONFIGS]
    ratios = [r["ratio"] for r in rows.values() if r.get("ratio")]
    top = max([1.2] + [x * 1.1 for x in ratios])
    width, height, left, right, top_pad, bottom = 960, 380, 60, 20, 40, 70
    plot_w, plot_h = width - left - right, height - top_pad - bottom
    group_w = plot_w / len(groups)
    bar_w = group_w * 0.35

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
        x0 = left + g * group_w + (group_w - 2 * bar_w) / 2
        for b, kernel in enumerate(coop_tiles.KERNELS):
            ratio = rows.get((kernel, dtype, threads, items), {}).get("ratio")
            if ratio is None:
                continue
            x = x0 + b * bar_w
            out.append(f'<rect x="{x:.1f}" y="{y(ratio):.1f}" width="{bar_w:.1f}" '
                       f'height="{y(0) - y(ratio):.1f}" fill="{colors[kernel]}">'
                       f'<title>{kernel} {dtype} {threads}x{items}: {ratio:.3f}</title></rect>'
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
    for k, kernel in enumerate(coop_tiles.KERNELS):
        lx = left + 10 + k * 150
        out.append(f'<rect x="{lx}" y="{height - 18}" width="12" height="12" '
                   f'fill="{colors[kernel]}"/><text x="{lx + 18}" y="{height - 8}">'
                   f'block {kernel.replace("_", " ")}</text>')
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


def write_report(out, records, meta, rows):
    info = meta["info"]
    cub_info = meta["cub_info"] or dict(runtime=0, cub_version=0, reps="?", warmup="?")
    warm_ups = sorted(r["warm_up_s"] for r in records
                      if r.get("phase") == "cold" and "warm_up_s" in r)
    copy = next((r for r in records if r.get("impl") == "cudaMemcpy"), None)
    svg_link = os.path.relpath(HERE / "ratios.svg", out.resolve().parent).replace(os.sep, "/")
    lines = [
        "# coop vs CUB: block tile benchmarks",
        "",
    ]
    if meta["quick"]:
        lines += ["**Smoke run (`--quick`, 2^24 elements): not representative.**", ""]
    lines += [
        f"- Device: {info['device']} (compute capability {info['cc']}), driver "
        + (f"{info['driver_release']} " if info.get("driver_release") else "")
        + f"(CUDA {info['driver']}), CUDA runtime (CUB side) {cuda_version(cub_info['runtime'])}",
        f"- Date: {meta['date']}",
        f"- Versions: coop {info['coop']} (git {meta['git']}), numba {info['numba']}, "
        f"numba-cuda {info['numba_cuda']}, numpy {info['numpy']}, Python {info['python']}, "
        f"{meta['nvcc']}, CUB {cub_version(cub_info['cub_version'])}",
        f"- Problem: 2^{meta['log2n']} elements per kernel; median of {cub_info['reps']} launches "
        f"after {cub_info['warmup']} warm-ups, timed with CUDA events recorded between "
        "back-to-back launches; every result checked against the host.",
        f"- CUB build: `{meta['nvcc_command']}` ({meta['nvcc_seconds']:.1f} s for all 24 kernels)",
    ]
    if copy:
        lines.append(f"- Reference: device-to-device `cudaMemcpy` of "
                     f"{copy['bytes'] / 2**30:.2f} GiB: **{copy['gbps']:.0f} GB/s** (read + write)")
    lines += [
        "- Compile time (coop): *cold* = `cuda.jit(signature, cache=True)` plus loading the "
        "module, in a fresh process with no cache entry for the kernel; *cached* = the same "
        "in another fresh process, loading the entry from Numba's on-disk cache. Both after "
        "the imports, the CUDA context and one trivial plain-Numba kernel ("
        + (f"which took {warm_ups[len(warm_ups) // 2]:.2f} s, median; " if warm_ups else "")
        + f"{'one process per phase' if meta['batch'] else 'one process per kernel and phase'}).",
        "",
    ]
    failures = []
    for kernel in coop_tiles.KERNELS:
        lines += [f"## {KERNEL_TITLES[kernel]}", "",
                  "| dtype | threads × items | coop GB/s | CUB GB/s | coop/CUB | regs coop/CUB "
                  "| compile cold (s) | compile cached (s) |",
                  "|---|---|--:|--:|--:|--:|--:|--:|"]
        for dtype in coop_tiles.DTYPES:
            for threads, items in coop_tiles.CONFIGS:
                row = rows[(kernel, dtype, threads, items)]
                coop, cub = row.get("coop"), row.get("cub")
                cached = fmt(row.get("cached"))
                if row.get("cached") is not None and not row.get("cache_hit"):
                    cached += " (cache miss)"
                for impl, record in (("coop", coop), ("CUB", cub)):
                    if record is None:
                        error = row.get("errors", {}).get(impl.lower(), "no result")
                        failures.append(f"{impl} {kernel} {dtype} {threads}x{items}: {error}")
                for phase in ("cold", "cached"):
                    error = row.get("errors", {}).get(f"compile {phase}")
                    if error:
                        failures.append(f"coop {kernel} {dtype} {threads}x{items}, {phase} "
                                        f"compile: {error[-300:]}")
                    elif record.get("check") != "ok":
                        failures.append(
                            f"{impl} {kernel} {dtype} {threads}x{items}: {record['check']}")
                lines.append(
                    f"| {dtype} | {config_label(threads, items)} "
                    f"| {fmt(coop and coop['gbps'], 0)} | {fmt(cub and cub['gbps'], 0)} "
                    f"| **{fmt(row.get('ratio'))}** "
                    f"| {coop['regs'] if coop else '–'}/{cub['regs'] if cub else '–'} "
                    f"| {fmt(row.get('cold'))} | {cached} |")
        lines.append("")

    def worst(key, pick):
        found = [(row[key], k) for k, row in rows.items() if row.get(key) is not None]
        return pick(found) if found else (None, None)

    def name(key):
        return f"{key[0]} {key[1]} {key[2]}×{key[3]}" if key else "–"

    low, low_key = worst("ratio", min)
    cold, cold_key = worst("cold", max)
    cached, cached_key = worst("cached", max)
    misses = [name(k) for k, row in rows.items()
              if row.get("cached") is not None and not row["cache_hit"]]

    def verdict(ok):
        return "met" if ok else "**not met**"

    lines += [
        "## Targets",
        "",
        f"- coop ≥ {TARGET_RATIO:.2f}× CUB throughput at every configuration: lowest "
        f"{fmt(low)} ({name(low_key)}): {verdict(low is not None and low >= TARGET_RATIO)}",
        f"- compile ≤ {TARGET_COLD_S} s per kernel cold: slowest {fmt(cold)} s "
        f"({name(cold_key)}): {verdict(cold is not None and cold <= TARGET_COLD_S)}",
        f"- compile ≤ {TARGET_CACHED_S} s per kernel from the cache: slowest {fmt(cached)} s "
        f"({name(cached_key)}): "
        f"{verdict(cached is not None and cached <= TARGET_CACHED_S and not misses)}"
        + (f"; **cache misses** (compiled again): {', '.join(misses)}" if misses else ""),
        "- every kernel compiled, ran and matched the host: "
        + ("yes" if not failures else "**no**: " + "; ".join(failures)),
        "",
        "## coop / CUB throughput",
        "",
        f"![coop/CUB throughput ratio per configuration]({svg_link})",
        "",
        "Raw measurements: `benchmarks/results.jsonl`. Reproduce: `python benchmarks/run.py`.",
        "",
    ]
    out.write_text("\n".join(lines))
    return failures


def tabulate(records, times):
    """{(kernel, dtype, threads, items): {coop, cub, ratio, cold, cached, cache_hit}}."""
    rows = {key: {} for key in [tuple(k) for k in coop_tiles.all_kernels()]}
    for record in records:
        if record.get("impl") in ("coop", "cub") and "phase" not in record and (
            "gbps" in record or "error" in record
        ):
            key = (record["kernel"], record["dtype"], record["threads"], record["items"])
            if "gbps" in record:
                rows.setdefault(key, {})[record["impl"]] = record
            else:
                rows.setdefault(key, {}).setdefault("errors", {})[record["impl"]] = record["error"]
    for key, row in rows.items():
        if row.get("coop") and row.get("cub"):
            row["ratio"] = row["coop"]["gbps"] / row["cub"]["gbps"]
        phases = times.get(key, {})
        for phase in ("cold", "cached"):
            if f"{phase}_error" in phases:
                error = phases[f"{phase}_error"]["error"]
                row.setdefault("errors", {})[f"compile {phase}"] = error
        if "cold" in phases:
            row["cold"] = phases["cold"]["compile_s"]
        if "cached" in phases:
            row["cached"] = phases["cached"]["compile_s"]
            row["cache_hit"] = phases["cached"]["cache_hit"]
    return rows


def main(argv=None):
    parser = argparse.ArgumentParser(
        description="coop vs CUB block tile benchmarks (needs a GPU and nvcc); "
        "writes BENCHMARKS.md, benchmarks/results.jsonl and benchmarks/ratios.svg")
    parser.add_argument("--out", default=str(REPO / "BENCHMARKS.md"),
                        help="the report to write (default: BENCHMARKS.md at the repo root)")
    parser.add_argument("--quick", action="store_true",
                        help=f"smoke run: 2^{QUICK_LOG2N} elements, compile times in one "
                        "process per phase")
    parser.add_argument("--compile-batch", action="store_true",
                        help="measure compile times in one process per phase instead of one "
                        "process per kernel (faster; later kernels then share warm state)")
    parser.add_argument("--keep", action="store_true", help="keep the temporary work directory")
    args = parser.parse_args(argv)

    log2n = QUICK_LOG2N if args.quick else FULL_LOG2N
    batch = args.compile_batch or args.quick
    out = pathlib.Path(args.out)
    workdir = pathlib.Path(tempfile.mkdtemp(prefix="coop-bench-"))
    modules, cache = workdir / "modules", workdir / "numba-cache"
    cache.mkdir()
    try:
        say("device and versions")
        info = run(coop_command("info"))[0]
        say(f"{info['device']} (cc {info['cc']}); building the CUB binary")
        nvcc = find_nvcc()
        binary, nvcc_seconds, nvcc_command = build_cub(nvcc, find_cccl(nvcc), info["cc"], workdir)
        coop_tiles.generate(modules)
        times = compile_times(modules, cache, batch)
        say("coop throughput")
        env = dict(os.environ, NUMBA_CACHE_DIR=str(cache))
        records = run(coop_command("time", modules, "--log2n", log2n), env, fatal=False)
        say("CUB throughput")
        cub_records = run([str(binary), str(log2n)], fatal=False)
        records += cub_records
        records += [r for phases in times.values() for r in phases.values()]  # errors too
        say("writing the report")
        meta = dict(
            info=info,
            cub_info=next((r for r in cub_records if r.get("impl") == "info"), None),
            date=datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
            nvcc=nvcc_version(nvcc),
            nvcc_command=nvcc_command.replace(str(workdir), "$TMP").replace(str(REPO) + "/", ""),
            nvcc_seconds=nvcc_seconds,
            git=git_revision(),
            log2n=log2n,
            quick=args.quick,
            batch=batch,
        )
        rows = tabulate(records, times)
        with open(HERE / "results.jsonl", "w") as f:
            f.write(json.dumps(dict(meta, impl="run", info=None, cub_info=None)) + "\n")
            for record in [info] + records:
                f.write(json.dumps(record) + "\n")
        ratio_svg(rows, HERE / "ratios.svg")
        out.parent.mkdir(parents=True, exist_ok=True)
        failures = write_report(out, records, meta, rows)
        say(f"wrote {out}, {HERE / 'results.jsonl'}, {HERE / 'ratios.svg'}")
        if failures:
            say(f"{len(failures)} kernel(s) failed or mismatched: see the report's Targets")
            return 1
    finally:
        if args.keep:
            say(f"work directory kept: {workdir}")
        else:
            shutil.rmtree(workdir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
