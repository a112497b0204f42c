"""coop.device's sum and prefix sums against CUB's device layer and CuPy, side by side on one GPU.

    python benchmarks/device.py [--log2n 16,20,24,28] [--algorithms reduce_sum,inclusive_sum,exclusive_sum]
                                [--out DIR] [--sim-check]

- reduce_sum: ``coop.device.sum`` / ``cub::DeviceReduce::Sum`` / ``cupy.sum``, int32 and float32.
- inclusive_sum: ``coop.device.inclusive_sum`` / ``cub::DeviceScan::InclusiveSum`` / ``cupy.cumsum``,
  int32 and float32.
- exclusive_sum: ``coop.device.exclusive_sum`` / ``cub::DeviceScan::ExclusiveSum``, int32 (CuPy has none).

Each on n = 2^LOG2N items, into an output of the input's dtype, summed in it (as CUB sums).
The inputs are the CUB side's, bit for bit: its splitmix64 stream (benchmarks/cub_device.cu's
``Rng``: seed 7, three draws an item, one stream through the sizes in their order) is
replayed here with NumPy: int32 items in [0, 8), float32 multiples of 2^-24 in [0, 1). Each
is copied to the device once and shared with CuPy without a copy (CUDA Array Interface).
CuPy is optional (skipped if it does not import).

Timing, alike for every implementation (benchmarks/cub_timing.cuh's, through
radix_sort.median_launch_seconds): median of 20 back-to-back calls after 3 warm-ups, CUDA
events recorded on the default stream between them (Numba's events: coop's and CuPy's
calls go to that legacy default stream too, in the same context). A coop or CuPy call is
timed whole, host work included, as a CUB call is (its temporary storage allocated once,
outside the loop). Also measured: coop's ``first_call_s``, the wall-clock of the first call at each
size up to its result (the first size's compiles coop's kernels for the dtype; the CUDA
context and Numba's setup come before, untimed); and for n <= 2^20, coop's and CuPy's
``host_us_per_call``: wall-clock per call of 200 back-to-back calls and one synchronize
(what a call costs when the GPU's part is smaller than the host's).

Checks, of the last timed call's output: int32 exactly, every prefix, modulo 2^32 (the
wrap-around of int32 arithmetic, as the CUB side's unsigned reference); float32 within a
relative 1e-3 (absolute near zero) of a float64 host sum: the sum, or a scan's last prefix
and 16 spread over it (the CUB side's tolerance).

The CUB side, benchmarks/cub_device.cu, is built with nvcc (headers from $CCCL_INCLUDE)
while coop and CuPy are timed, then run with the same sizes; the rows of the requested
algorithms are kept. Writes DIR/device.jsonl, one line per (impl, algorithm, dtype, n):
impl ("coop", "cub", "cupy"), algorithm, dtype, n, seconds (per call), gitems (n / seconds
/ 1e9), gbytes (the CUB side's nominal bytes: 4n + 4 for reduce_sum, 8n for the scans, /
seconds / 1e9), check ("ok" / "MISMATCH") and, where measured, first_call_s and
host_us_per_call; prints those lines and a Markdown table.

``--sim-check``: coop only, on Numba's CUDA simulator (NUMBA_ENABLE_CUDASIM=1, set here
before Numba is imported), n = 1000 and 4097, one call each, checked; nothing timed or
written.
"""

import argparse
import json
import os
import pathlib
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = pathlib.Path(__file__).resolve().parent
REPO = HERE.parent
sys.path[:0] = [str(REPO), str(HERE)]  # this checkout's coop; radix_sort's helpers
from radix_sort import median_launch_seconds, warm_up  # noqa: E402  (neither imports Numba at import)

ALGORITHMS = {  # algorithm: (coop.device function, dtypes, bytes a call moves, as the CUB side counts them)
    "reduce_sum": ("sum", ("int32", "float32"), lambda n: 4 * n + 4),
    "inclusive_sum": ("inclusive_sum", ("int32", "float32"), lambda n: 8 * n),
    "exclusive_sum": ("exclusive_sum", ("int32",), lambda n: 8 * n),
}
DTYPES = ("int32", "float32")  # (also the order of an item's draws, after which comes its unused uint32 key)
SIM_SIZES = (1000, 4097)  # (not multiples of a tile: partial last tiles)
HOST_MAX_N = 1 << 20
HOST_CALLS = 200
FLOAT_SAMPLES = 16
RTOL = 1e-3

# cub_timing.cuh's Rng (splitmix64, which cub_device.cu draws from): its k-th draw (from 1) mixes the state SEED + k * GOLDEN.
SEED, GOLDEN, MIX1, MIX2 = 7, 0x9E3779B97F4A7C15, 0xBF58476D1CE4E5B9, 0x94D049BB133111EB
DRAWS = 3  # per item: its int32, its float32, its uint32 key
CHUNK = 1 << 22  # items generated at a time (bounds the uint64 temporaries)


def cub_input(dtype, drawn, n):
    """The CUB side's ``n`` items of ``dtype`` for a size after ``drawn`` draws of its
    stream: item i's int32 is draw ``drawn + 3i + 1`` modulo 8, its float32 the top 24 bits
    of draw ``drawn + 3i + 2`` times 2^-24."""
    draw = drawn + 1 + DTYPES.index(dtype)
    x = np.empty(n, dtype)
    for start in range(0, n, CHUNK):
        stop = min(start + CHUNK, n)
        z = np.arange(draw + DRAWS * start, draw + DRAWS * stop, DRAWS, dtype=np.uint64)
        z *= np.uint64(GOLDEN)  # (uint64 arrays wrap, as the C++ unsigned long long does)
        z += np.uint64(SEED)
        z ^= z >> np.uint64(30)
        z *= np.uint64(MIX1)
        z ^= z >> np.uint64(27)
        z *= np.uint64(MIX2)
        z ^= z >> np.uint64(31)
        if dtype == "int32":
            x[start:stop] = z & np.uint64(7)
        else:
            x[start:stop] = (z >> np.uint64(40)).astype(np.float32) * np.float32(2.0**-24)  # (exact)
    return x


def check(algorithm, x, prefixes, got):
    """"ok" or "MISMATCH": ``got`` (an output, on the host) against ``prefixes`` (the
    inclusive prefix sums of ``x`` in int64 or float64)."""
    if algorithm == "reduce_sum":
        expected, got = prefixes[-1:], got[:1]
    elif algorithm == "inclusive_sum":
        expected = prefixes
    else:
        expected = prefixes - x
    if x.dtype.kind == "i":
        # Exact, modulo 2^32: int32 sums wrap on the GPU (none does with items < 8 up to n = 2^28,
        # 7 * 2^28 < 2^31, but one could from n = 2^29), and int64 -> int32 wraps alike here.
        ok = np.array_equal(got, expected.astype(np.int32))
    else:  # float sums differ from the host's by the order of the additions, not by a bug
        at = np.unique(np.linspace(0, expected.size - 1, FLOAT_SAMPLES + 1).astype(np.int64))  # (the last included)
        error = np.abs(got[at] - expected[at])
        ok = bool((error <= RTOL * np.maximum(np.abs(expected[at]), 1.0)).all())  # (a NaN fails)
    return "ok" if ok else "MISMATCH"


def host_us_per_call(call):
    """Wall-clock microseconds per call of HOST_CALLS back-to-back calls and one synchronize."""
    from numba import cuda

    cuda.synchronize()
    start = time.perf_counter()
    for _ in range(HOST_CALLS):
        call()
    cuda.synchronize()
    return (time.perf_counter() - start) / HOST_CALLS * 1e6


def measure(impl, algorithm, x, prefixes, call, d_out, sim):
    """One row: ``call`` (coop's or CuPy's ``algorithm`` of ``x``, into ``d_out``) timed
    and checked."""
    from numba import cuda

    n = x.size
    first_call_s = seconds = host_us = None
    if sim:
        call()
        cuda.synchronize()
    else:
        if impl == "coop":
            start = time.perf_counter()
            call()
            cuda.synchronize()  # (to the result: compiling, launching and running)
            first_call_s = time.perf_counter() - start
        seconds = median_launch_seconds(call)
    ok = check(algorithm, x, prefixes, d_out.copy_to_host())
    if not sim and n <= HOST_MAX_N:
        host_us = host_us_per_call(call)
    nbytes = ALGORITHMS[algorithm][2](n)
    row = {"impl": impl, "algorithm": algorithm, "dtype": x.dtype.name, "n": n, "seconds": seconds,
           "gitems": n / seconds * 1e-9 if seconds else None, "gbytes": nbytes / seconds * 1e-9 if seconds else None,
           "check": ok}
    if first_call_s is not None:
        row["first_call_s"] = first_call_s
    if host_us is not None:
        row["host_us_per_call"] = host_us
    return row


def coop_call(algorithm, d_x, d_out):
    import coop

    function = getattr(coop.device, ALGORITHMS[algorithm][0])
    return lambda: function(d_x, d_out)


def cupy_call(cupy, algorithm, d_x, d_out):
    """CuPy's counterpart of ``algorithm`` on the same buffers, or None. ``dtype=``: summed in
    the input's type, as CUB and coop sum here (CuPy would sum int32 in int64); ``out=``:
    into the given output, no allocation, as the others."""
    if cupy.cuda.get_current_stream().ptr != 0:  # (the timing's events are recorded on the legacy one)
        raise RuntimeError("CuPy's current stream is not the legacy default stream")
    x, out = cupy.asarray(d_x), cupy.asarray(d_out)
    if algorithm == "reduce_sum":
        total = out.reshape(())  # (a full reduction's out= is 0-d: a view of d_out[0])
        return lambda: cupy.sum(x, dtype=x.dtype, out=total)
    if algorithm == "inclusive_sum":
        return lambda: cupy.cumsum(x, dtype=x.dtype, out=out)
    return None


def time_coop_and_cupy(sizes, algorithms, cupy, sim):
    """Rows of coop (and CuPy's, if given) for every size, dtype and algorithm; printed as
    they come."""
    from numba import cuda

    rows, drawn = [], 0
    for n in sizes:
        for dtype in DTYPES:
            wanted = [a for a in algorithms if dtype in ALGORITHMS[a][1]]
            if not wanted:
                continue
            x = cub_input(dtype, drawn, n)
            d_x = cuda.to_device(x)
            prefixes = np.cumsum(x, dtype=np.int64 if dtype == "int32" else np.float64)
            poison = np.full(n, -1 if dtype == "int32" else np.nan, dtype)  # (no sum is negative)
            for algorithm in wanted:
                for impl in ("coop", "cupy") if cupy is not None else ("coop",):
                    # a fresh, poisoned output each time: no result left by another impl can pass
                    d_out = cuda.to_device(poison[:1] if algorithm == "reduce_sum" else poison)
                    call = (coop_call(algorithm, d_x, d_out) if impl == "coop"
                            else cupy_call(cupy, algorithm, d_x, d_out))
                    if call is None:
                        continue
                    rows.append(measure(impl, algorithm, x, prefixes, call, d_out, sim))
                    print(json.dumps(rows[-1]), flush=True)
                    del d_out, call
            del d_x
        drawn += DRAWS * n
    return rows


def build_cub(work):
    """nvcc building the CUB side into ``work``, in the background: (process, binary), or
    None without nvcc."""
    include = os.environ.get("CCCL_INCLUDE", "/usr/local/cuda/targets/x86_64-linux/include/cccl")
    binary = work / "cub_device"
    try:
        return subprocess.Popen(["nvcc", "-O3", "-std=c++17", "-arch=sm_90", f"-I{include}",
                                 str(HERE / "cub_device.cu"), "-o", str(binary)]), binary
    except FileNotFoundError:
        return None


def run_cub(build, log2ns, algorithms):
    """The CUB side's rows of ``algorithms`` (it runs only those: CUB_DEVICE_ALGORITHMS),
    or None if it could not be built or run."""
    if build is None or build[0].wait() != 0:
        print("nvcc failed or missing: no CUB side", file=sys.stderr)
        return None
    done = subprocess.run([str(build[1]), *map(str, log2ns)], capture_output=True, text=True,
                          env=dict(os.environ, CUB_DEVICE_ALGORITHMS=",".join(algorithms)))
    if done.returncode != 0:
        print(f"cub_device failed:\n{done.stderr}", file=sys.stderr)
        return None
    rows = [row for row in map(json.loads, done.stdout.splitlines()) if row["algorithm"] in algorithms]
    for row in rows:
        print(json.dumps(row), flush=True)
    return rows


def table(rows):
    """The Markdown table: one line per (algorithm, dtype, n), the implementations side by side."""
    by_key = {(r["impl"], r["algorithm"], r["dtype"], r["n"]): r for r in rows}
    keys = sorted({(r["algorithm"], r["dtype"], r["n"]) for r in rows},
                  key=lambda k: (list(ALGORITHMS).index(k[0]), DTYPES.index(k[1]), k[2]))

    def number(value, digits=1):
        return "—" if value is None else f"{value:.{digits}f}"

    def gbytes(row):
        if row is None:
            return "—"
        return number(row["gbytes"]) + ("" if row["check"] == "ok" else f" ({row['check']})")

    def ratio(a, b, bold=False):
        if not (a and b and a["gbytes"] and b["gbytes"]):
            return "—"
        return f"**{a['gbytes'] / b['gbytes']:.3f}**" if bold else f"{a['gbytes'] / b['gbytes']:.3f}"

    lines = ["| algorithm | dtype | n | coop GB/s | CUB GB/s | CuPy GB/s | coop/CUB | coop/CuPy "
             "| host µs/call coop / CuPy |", "|---|---|--:|--:|--:|--:|--:|--:|--:|"]
    for algorithm, dtype, n in keys:
        coop, cub, cupy = (by_key.get((impl, algorithm, dtype, n)) for impl in ("coop", "cub", "cupy"))
        host = [number(r and r.get("host_us_per_call")) for r in (coop, cupy)]
        lines.append(f"| {algorithm} | {dtype} | 2^{n.bit_length() - 1} | {gbytes(coop)} | {gbytes(cub)} "
                     f"| {gbytes(cupy)} | {ratio(coop, cub, bold=True)} | {ratio(coop, cupy)} "
                     f"| {'—' if host == ['—', '—'] else ' / '.join(host)} |")
    return "\n".join(lines)


def main(argv=None):
    def log2n_list(text):
        log2ns = [int(part) for part in text.split(",") if part]
        if not log2ns or not all(10 <= v <= 30 for v in log2ns):
            raise argparse.ArgumentTypeError("comma-separated LOG2N in [10, 30] (the CUB side's range)")
        return log2ns

    def algorithm_list(text):
        algorithms = [part for part in text.split(",") if part]
        if not algorithms or not set(algorithms) <= set(ALGORITHMS):
            raise argparse.ArgumentTypeError(f"comma-separated among {', '.join(ALGORITHMS)}")
        return algorithms

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--log2n", type=log2n_list, default=[16, 20, 24, 28], help="sizes, n = 2^LOG2N")
    parser.add_argument("--algorithms", type=algorithm_list, default=list(ALGORITHMS))
    parser.add_argument("--out", default=".", help="where device.jsonl goes")
    parser.add_argument("--sim-check", action="store_true",
                        help=f"coop only, n in {SIM_SIZES}, one call each, checked (NUMBA_ENABLE_CUDASIM=1)")
    args = parser.parse_args(argv)

    sim = args.sim_check
    if sim:
        os.environ["NUMBA_ENABLE_CUDASIM"] = "1"  # (Numba reads it when first imported: just below)
    import coop  # (before numba.cuda: coop's backend module sees to Numba's simulator setting first)

    if coop.SIMULATOR != sim:
        raise SystemExit("--sim-check needs Numba's simulator, which Numba, imported before, did not choose"
                         if sim else "no GPU (coop is on Numba's simulator): run with --sim-check")
    cupy = None
    if not sim:
        try:
            import cupy
        except ImportError:
            print("CuPy not importable: no CuPy side", file=sys.stderr)
    sizes = SIM_SIZES if sim else [1 << v for v in args.log2n]
    # nvcc builds (on one CPU core) while coop compiles and runs; the CUB binary runs afterwards,
    # when nothing else does
    build = None if sim else build_cub(pathlib.Path(tempfile.mkdtemp()))

    warm_up()
    rows = time_coop_and_cupy(sizes, args.algorithms, cupy, sim)
    cub_rows = None if sim else run_cub(build, args.log2n, args.algorithms)
    failed = cub_rows is None and not sim
    rows += cub_rows or []
    failed |= any(row["check"] != "ok" for row in rows)
    if not sim:
        out = pathlib.Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        with open(out / "device.jsonl", "w") as f:
            f.writelines(json.dumps(row) + "\n" for row in rows)
        print()
        print(table(rows))
    print("checks: " + ("MISMATCH or failure (above)" if failed else "ok"))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
