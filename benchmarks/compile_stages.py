"""Cold compile time of the benchmark kernels, stage by stage, without a GPU.

    python benchmarks/compile_stages.py [--repeat 5] [--kernels GLOBS] [--ptxas] [--json FILE]
    python benchmarks/compile_stages.py --profile SPEC [--sort cumulative] [--limit 60]

Each measurement is one fresh process (run with ``NUMBA_ENABLE_CUDASIM=0``; a stand-in
device answers sm_90): it imports Numba and coop, compiles one trivial plain-Numba kernel
(Numba's and NVVM's one-time setup, as ``coop_tiles.py compile`` does on the GPU), imports
the kernel's generated module (``coop_tiles.generate``: exactly the benchmark's kernels)
and compiles the kernel to PTX with ``cuda.compile_ptx(kernel, SIGNATURE, cc=(9, 0))``,
the path ``cuda.jit(signature)`` takes up to PTX. ``--ptxas`` then links the PTX to a cubin
with nvJitLink (what the driver's link step does on the GPU; reported apart).

Times are CPU seconds of the process (``time.process_time``): the machine may be shared.
Every stage is *exclusive* (time in nested compiles is counted where it is spent):

- ``generators``: coop's primitive generators (the ``overload`` functions), with the
  operator checks they make;
- ``bytecode``: Numba's untyped passes (bytecode to IR, rewrites, SSA, ...);
- ``typing``: type inference (``nopython_type_inference``), not counting the nested
  compiles of the functions it calls;
- ``typed``: the other typed passes (phi stripping, overload inlining, rewrites);
- ``lowering``: IR legalisation, library creation, lowering to LLVM IR, backend;
- ``ir_text``: rendering the LLVM modules to text for NVVM;
- ``nvvm``: ``nvvm.compile_ir`` (NVVM's optimiser and PTX generation);
- ``other``: the rest of ``compile_ptx`` (linking libraries, finalisation, ...).

Also reported: ``functions`` (how many Numba functions were compiled: the kernel, every
device function / primitive specialisation, each once per distinct signature) and
``generator_calls``. The parent prints one JSON line per kernel (medians over
``--repeat`` processes, with min and max of the total) and a table.
"""

import argparse
import collections
import fnmatch
import json
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile
import time

HERE = pathlib.Path(__file__).resolve().parent
# the coop measured: this checkout's, or in a child measuring --baseline, that checkout's
REPO = pathlib.Path(os.environ.get("COOP_MEASURED_REPO", HERE.parent))
for path in (str(REPO), str(HERE)):
    if path not in sys.path:
        sys.path.insert(0, path)

import coop_tiles  # noqa: E402  (stdlib only at import)

if str(REPO) != sys.path[0]:  # (coop_tiles puts its own checkout first: the measured coop goes first)
    if str(REPO) in sys.path:
        sys.path.remove(str(REPO))
    sys.path.insert(0, str(REPO))

STAGES = ("generators", "bytecode", "typing", "typed", "lowering", "ir_text", "nvvm", "other")
TYPED_PASSES = {"nopython_rewrites", "strip_phis", "inline_overloads", "nopython_supported_feature_validation"}
LOWERING_PASSES = {"ir_legalization", "annotate_types", "create_library", "cuda_native_lowering", "cuda_backend"}
DEFAULT_KERNELS = ["sum:*", "exclusive_sum:*"]


# -- in the measured process --------------------------------------------------------------


class StageClock:
    """Exclusive CPU time per stage: a stack of open frames, each charged its own time
    less that of the frames opened inside it."""

    def __init__(self, now=time.process_time):
        self.now = now
        self.totals = collections.Counter()
        self.by_function = collections.Counter()  # Numba's passes only
        self.stack = []

    def enter(self, stage, function=None):
        self.stack.append([stage, self.now(), 0.0, function])

    def leave(self):
        stage, start, nested, function = self.stack.pop()
        elapsed = self.now() - start
        self.totals[stage] += elapsed - nested
        if function is not None:
            self.by_function[function] += elapsed - nested
        if self.stack:
            self.stack[-1][2] += elapsed

    def wrap(self, stage_of, function):
        clock = self

        def timed(*args, **kwargs):
            clock.enter(stage_of(*args, **kwargs) if callable(stage_of) else stage_of)
            try:
                return function(*args, **kwargs)
            finally:
                clock.leave()

        timed.__wrapped__ = function
        return timed


def pass_stage(pass_name):
    if pass_name == "nopython_type_inference":
        return "typing"
    if pass_name in TYPED_PASSES:
        return "typed"
    if pass_name in LOWERING_PASSES:
        return "lowering"
    return "bytecode"


def instrument(clock, counts):
    """Patch Numba (before coop is imported) so that the clock sees every stage."""
    import functools

    import numba.cuda.extending as extending
    from numba.cuda import codegen
    from numba.cuda.core import compiler_machinery
    from numba.cuda.cudadrv import nvvm

    run_pass = compiler_machinery.PassManager._runPass

    def timed_run_pass(self, index, pss, state):
        if pss.name() == "nopython_type_inference":
            counts["functions"] += 1
            counts["function:" + state.func_id.func_qualname] += 1
        clock.enter(pass_stage(pss.name()), state.func_id.func_qualname)
        try:
            return run_pass(self, index, pss, state)
        finally:
            clock.leave()

    compiler_machinery.PassManager._runPass = timed_run_pass

    nvvm.compile_ir = clock.wrap("nvvm", nvvm.compile_ir)
    library = codegen.CUDACodeLibrary
    library.get_asm_strs = clock.wrap("ir_text", library.get_asm_strs)

    overload = extending.overload

    def timed_overload(function, *args, **kwargs):
        register = overload(function, *args, **kwargs)

        def decorate(generator):
            name = getattr(function, "__qualname__", "?")
            if not getattr(function, "__module__", "").startswith("coop"):
                return register(generator)  # Numba's own

            @functools.wraps(generator)
            def timed_generator(*a, **k):
                counts["generator_calls"] += 1
                counts["generator:" + name] += 1
                clock.enter("generators")
                try:
                    return generator(*a, **k)
                finally:
                    clock.leave()

            return register(timed_generator)

        return decorate

    extending.overload = timed_overload


def install_device_stand_in():
    import numba.cuda.dispatcher as dispatcher

    class Sm90:
        compute_capability = (9, 0)

    dispatcher.get_current_device = lambda: Sm90()


def warm_up(cuda):
    """A trivial plain-Numba kernel to PTX (and to a cubin, with ``ptxas``)."""

    def plain(x):
        i = cuda.grid(1)
        if i < x.size:
            x[i] += 1

    ptx, _ = cuda.compile_ptx(plain, "void(int32[::1])", cc=(9, 0))
    return ptx


def link(ptx):
    from numba.cuda.cudadrv import driver

    linker = driver._Linker(cc=(9, 0))
    linker.add_ptx(ptx.encode())
    return linker.complete()


class CallCounter:
    """Python function calls (``sys.setprofile``): a measure of the compiler's work that
    does not depend on the machine's load (the C++ of NVVM is not in it)."""

    def __init__(self):
        self.calls = 0

    def __call__(self, frame, event, arg):
        if event == "call" or event == "c_call":
            self.calls += 1

    def now(self):
        return self.calls


def measure(spec, modules, ptxas, profile=None, calls=False):
    """One kernel's cold compile in this (fresh) process: a dict of measurements (with
    ``calls``, Python calls in place of seconds)."""
    counter = CallCounter() if calls else None
    clock, counts = StageClock(counter.now if calls else time.process_time), collections.Counter()
    if profile is None:
        instrument(clock, counts)
    from numba import cuda

    import coop  # noqa: F401  (imported before the warm-up, as on the GPU)

    install_device_stand_in()
    warm = warm_up(cuda)
    if ptxas:
        link(warm)
    key = coop_tiles.parse_spec(spec)
    module = coop_tiles.load_module(modules, key)
    function = coop_tiles.python_function(module, key)
    clock.totals.clear()
    clock.by_function.clear()
    counts.clear()
    if profile is not None:
        import cProfile

        profiler = cProfile.Profile()
        profiler.enable()
    if calls:
        sys.setprofile(counter)
    start = clock.now()
    clock.enter("other")
    ptx, _ = cuda.compile_ptx(function, module.SIGNATURE, cc=(9, 0))
    clock.leave()
    total = clock.now() - start
    sys.setprofile(None)
    if profile is not None:
        profiler.disable()
        return profiler, total
    result = dict(spec=spec, total_s=total, stages={s: clock.totals.get(s, 0.0) for s in STAGES})
    result["functions"] = counts.pop("functions", 0)
    result["generator_calls"] = counts.pop("generator_calls", 0)
    result["counts"] = dict(sorted(counts.items()))
    result["pass_s_by_function"] = dict(clock.by_function.most_common())
    result["ptx_bytes"] = len(ptx)
    if ptxas and not calls:
        start = time.process_time()
        link(ptx)
        result["ptxas_s"] = time.process_time() - start
    return result


# -- the parent ------------------------------------------------------------------------------


def child_command(spec, modules, ptxas, calls=False):
    command = [sys.executable, __file__, "--child", spec, "--modules", modules]
    return command + (["--ptxas"] if ptxas else []) + (["--calls"] if calls else [])


def child_environment(repo):
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="0", COOP_MEASURED_REPO=str(repo))
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(repo), env.get("PYTHONPATH")]))
    return env


def run_child(spec, modules, ptxas, repo=REPO, calls=False):
    """One measurement in a fresh process, with the coop of ``repo``."""
    result = subprocess.run(
        child_command(spec, modules, ptxas, calls), env=child_environment(repo), capture_output=True, text=True
    )
    if result.returncode != 0:
        sys.stderr.write(result.stderr[-4000:])
        raise SystemExit(f"compile_stages: {spec} failed")
    return json.loads(result.stdout.strip().splitlines()[-1])


def summarise(spec, runs):
    totals = [r["total_s"] for r in runs]
    summary = dict(
        spec=spec,
        runs=len(runs),
        total_s=statistics.median(totals),
        min_s=min(totals),
        max_s=max(totals),
        stages={s: statistics.median(r["stages"][s] for r in runs) for s in STAGES},
        functions=runs[0]["functions"],
        generator_calls=runs[0]["generator_calls"],
        counts=runs[0]["counts"],
        ptx_bytes=runs[0]["ptx_bytes"],
        pass_s_by_function={
            name: statistics.median(r["pass_s_by_function"].get(name, 0.0) for r in runs)
            for name in runs[0]["pass_s_by_function"]
        },
    )
    if "ptxas_s" in runs[0]:
        summary["ptxas_s"] = statistics.median(r["ptxas_s"] for r in runs)
    return summary


def table(summaries):
    head = ["kernel", "total", "min-max", *STAGES, "ptxas", "funcs", "gens"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for s in summaries:
        row = [
            s["spec"],
            f"{s['total_s']:.3f}",
            f"{s['min_s']:.3f}-{s['max_s']:.3f}",
            *(f"{s['stages'][stage]:.3f}" for stage in STAGES),
            f"{s['ptxas_s']:.3f}" if "ptxas_s" in s else "-",
            str(s["functions"]),
            str(s["generator_calls"]),
        ]
        lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kernels", action="append", metavar="GLOB[,GLOB...]",
                        help="kernel specs (coop_tiles.py), default: the block sums and exclusive sums")
    parser.add_argument("--repeat", type=int, default=5, help="fresh processes per kernel (default 5)")
    parser.add_argument("--ptxas", action="store_true", help="also link the PTX to a cubin (nvJitLink)")
    parser.add_argument("--json", metavar="FILE", help="also write the summaries as JSON lines")
    parser.add_argument("--baseline", metavar="DIR",
                        help="another checkout of coop (e.g. `git worktree add DIR main`): measure it too, "
                        "alternating with this one process by process, and compare")
    parser.add_argument("--profile", metavar="SPEC", help="cProfile one kernel's compile in this process")
    parser.add_argument("--sort", default="cumulative", help="cProfile sort key (with --profile)")
    parser.add_argument("--limit", type=int, default=60, help="cProfile rows (with --profile)")
    parser.add_argument("--calls", action="store_true",
                        help="count Python calls instead of timing (deterministic; one process per kernel)")
    parser.add_argument("--child", metavar="SPEC", help=argparse.SUPPRESS)
    parser.add_argument("--modules", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)

    if args.child:
        print(json.dumps(measure(args.child, args.modules, args.ptxas, calls=args.calls)))
        return 0
    modules = args.modules or tempfile.mkdtemp(prefix="coop_tiles_")
    coop_tiles.generate(modules)
    if args.profile:
        import pstats

        if os.environ.get("NUMBA_ENABLE_CUDASIM", "0") != "0":
            raise SystemExit("compile_stages: run with NUMBA_ENABLE_CUDASIM=0")
        profiler, total = measure(args.profile, modules, ptxas=False, profile=True)
        print(f"{args.profile}: {total:.3f} s CPU under cProfile")
        pstats.Stats(profiler).sort_stats(args.sort).print_stats(args.limit)
        return 0
    patterns = coop_tiles.split_patterns(args.kernels) or DEFAULT_KERNELS
    keys = [k for k in coop_tiles.all_kernels() + coop_tiles.dm_kernels()
            if any(fnmatch.fnmatchcase(coop_tiles.kernel_spec(*k), p) for p in patterns)]
    summaries, baselines = [], []
    for key in keys:
        spec = coop_tiles.kernel_spec(*key)
        runs, base_runs = [], []
        for _ in range(1 if args.calls else args.repeat):  # alternating: the load hits both alike
            if args.baseline:
                base_runs.append(run_child(spec, modules, args.ptxas, repo=args.baseline, calls=args.calls))
            runs.append(run_child(spec, modules, args.ptxas, calls=args.calls))
        summary = summarise(spec, runs)
        summaries.append(summary)
        if args.baseline:
            baseline = summarise(spec, base_runs)
            baselines.append(baseline)
            summary["baseline"] = baseline
            summary["ratio"] = summary["total_s"] / baseline["total_s"]
        print(json.dumps(summary), flush=True)
        if args.json:
            with open(args.json, "a") as out:
                out.write(json.dumps(summary) + "\n")
    if args.baseline:
        print("baseline (" + args.baseline + "):")
        print(table(baselines))
        print("this checkout:")
    print(table(summaries))
    if args.baseline:
        print("\n| kernel | baseline s | this s | ratio | functions |\n|---|---|---|---|---|")
        for s, b in zip(summaries, baselines):
            print(f"| {s['spec']} | {b['total_s']:.3f} | {s['total_s']:.3f} | {s['ratio']:.2f} | "
                  f"{b['functions']} -> {s['functions']} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
