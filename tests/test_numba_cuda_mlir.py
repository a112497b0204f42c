"""coop's primitives in numba-cuda-mlir kernels (issue 24): what the adapter
(``coop._core.compilers.numba_cuda_mlir``) serves compiles to PTX without a GPU, with no
local memory and no calls (the codegen gate, on numba-cuda-mlir's PTX), and, on a GPU,
gives NumPy's results; what it does not serve yet is refused with coop's message.

Each check runs in a fresh interpreter with coop compiled (no simulator: numba-cuda-mlir
has none), ``coop`` imported first and ``numba_cuda_mlir`` after it, as a user's script
does (the adapter registers the primitives when numba-cuda-mlir loads). Skipped where
numba-cuda-mlir is not installed (``pip install "coop[mlir]"``)."""

import concurrent.futures
import importlib.util
import os
import pathlib
import subprocess
import sys
import textwrap

import pytest

from coop._core.device import gpu_available

ROOT = pathlib.Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.skipif(importlib.util.find_spec("numba_cuda_mlir") is None,
                                reason="numba-cuda-mlir is not installed (pip install 'coop[mlir]')")

PROLOGUE = textwrap.dedent(
    """
    import operator
    import warnings
    import numpy as np
    import coop
    from coop._core.device import gpu_available
    from coop._core.compilers.numba_cuda_mlir import compile_ptx
    from numba_cuda_mlir import cuda
    from numba_cuda_mlir.numba_cuda import types
    warnings.simplefilter("ignore")  # (numba-cuda-mlir's pedantic IR warnings)
    """
)


def _run(body):
    env = {k: v for k, v in os.environ.items() if k not in ("COOP_TEST_MODE",)}
    env["NUMBA_ENABLE_CUDASIM"] = "0"
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    return subprocess.run([sys.executable, "-c", PROLOGUE + textwrap.dedent(body)], env=env, capture_output=True,
                          text=True, timeout=1800)


# -- the matrix: one block of 64 threads (two warps), 4 items per thread where a case has
# items; ``x`` the input (64 values, or the 256-item tile), ``out`` the output (as long);
# each case's NumPy reference gives the first ``len(expected)`` values of ``out``.

THREADS, ITEMS = 64, 4

LOAD = "items = cuda.local.array(4, x.dtype)\ncoop.block.load(x, items, threads=64)\n"
STORE = "coop.block.store(out, items, threads=64)\n"

CASES = {
    # warp
    "warp.sum": ("s = coop.warp.sum(x[i])\nif cuda.laneid == 0:\n    out[i // 32] = s",
                 "warps(32).sum(axis=1, dtype=x.dtype)"),
    "warp.reduce max, width 8, 5 valid": (
        "r = coop.warp.reduce(x[i], coop.ops.max, width=8, valid_items=5)\nif cuda.laneid % 8 == 0:\n"
        "    out[i // 8] = r", "warps(8)[:, :5].max(axis=1)"),
    "warp.all_reduce min": ("out[i] = coop.warp.all_reduce(x[i], coop.ops.min)",
                            "np.repeat(warps(32).min(axis=1), 32)"),
    "warp.inclusive_sum": ("out[i] = coop.warp.inclusive_sum(x[i])", "warps(32).cumsum(axis=1, dtype=x.dtype)"),
    "warp.exclusive_sum, width 16": ("out[i] = coop.warp.exclusive_sum(x[i], width=16)",
                                     "exclusive(warps(16).cumsum(axis=1, dtype=x.dtype))"),
    "warp.inclusive_scan max": ("out[i] = coop.warp.inclusive_scan(x[i], coop.ops.max)",
                                "np.maximum.accumulate(warps(32), axis=1)"),
    "warp.exclusive_scan min, initial": (
        "out[i] = coop.warp.exclusive_scan(x[i], coop.ops.min, initial=x[63])",
        "np.minimum(x[63], exclusive(np.minimum.accumulate(warps(32), axis=1), x[63]))"),
    "warp.broadcast": ("out[i] = coop.warp.broadcast(x[i], 3)", "np.repeat(warps(32)[:, 3], 32)"),
    # block, one value per thread
    "block.sum": ("s = coop.block.sum(x[i], threads=64)\nif i == 0:\n    out[0] = s",
                  "[x.sum(dtype=x.dtype)]"),
    "block.reduce max, raking": (
        "r = coop.block.reduce(x[i], coop.ops.max, threads=64, algorithm='raking')\nif i == 0:\n    out[0] = r",
        "[x.max()]"),
    "block.all_sum": ("out[i] = coop.block.all_sum(x[i], threads=64)",
                      "np.repeat(x.sum(dtype=x.dtype), 64)"),
    "block.exclusive_sum": ("out[i] = coop.block.exclusive_sum(x[i], threads=64)",
                            "exclusive(x.cumsum(dtype=x.dtype))"),
    "block.inclusive_scan max, warp_scans": (
        "out[i] = coop.block.inclusive_scan(x[i], coop.ops.max, threads=64, algorithm='warp_scans')",
        "np.maximum.accumulate(x)"),
    "block.exclusive_scan min, initial": (
        "out[i] = coop.block.exclusive_scan(x[i], coop.ops.min, initial=x[63], threads=64)",
        "np.minimum(x[63], exclusive(np.minimum.accumulate(x), x[63]))"),
    "block.sum, temp_storage": (
        "scratch = cuda.shared.array(256, np.uint8)\ns = coop.block.sum(x[i], threads=64, temp_storage=scratch)\n"
        "if i == 0:\n    out[0] = s", "[x.sum(dtype=x.dtype)]"),
    # thread
    "thread.reduce": ("items = cuda.local.array(4, x.dtype)\nfor j in range(4):\n    items[j] = x[4 * i + j]\n"
                      "out[i] = coop.thread.reduce(items, coop.ops.add)", "x.reshape(-1, 4).sum(axis=1, dtype=x.dtype)"),
    "thread.exclusive_sum": (
        "items = cuda.local.array(4, x.dtype)\nsums = cuda.local.array(4, x.dtype)\nfor j in range(4):\n"
        "    items[j] = x[4 * i + j]\ncoop.thread.exclusive_sum(items, sums)\nfor j in range(4):\n"
        "    out[4 * i + j] = sums[j]",
        "exclusive(x.reshape(-1, 4).cumsum(axis=1, dtype=x.dtype)).reshape(-1)"),
    # tiles
    "block.load striped, store direct": (
        "items = cuda.local.array(4, x.dtype)\ncoop.block.load(x, items, threads=64, algorithm='striped')\n" + STORE,
        "x.reshape(4, 64).T.reshape(-1)"),
    "block.load transpose, 200 valid": (
        "items = cuda.local.array(4, x.dtype)\ncoop.block.load(x, items, threads=64, items_per_thread=4, "
        "algorithm='transpose', valid_items=200, oob_default=x[0])\n" + STORE,
        "np.concatenate([x[:200], np.repeat(x[0], 56)])"),
    "block.exchange blocked_to_striped": (
        LOAD + "coop.block.exchange.blocked_to_striped(items, items, threads=64, items_per_thread=4)\n" + STORE,
        "x.reshape(4, 64).T.reshape(-1)"),
    "block.exchange blocked_to_striped, warp_time_slicing": (
        LOAD + "coop.block.exchange.blocked_to_striped(items, items, threads=64, items_per_thread=4, "
        "warp_time_slicing=True)\n" + STORE, "x.reshape(4, 64).T.reshape(-1)"),
    "block.exclusive_sum of items": (LOAD + "coop.block.exclusive_sum(items, output=items, threads=64)\n" + STORE,
                                     "exclusive(x.cumsum(dtype=x.dtype))"),
    "warp.load and store, exclusive_sum of items": (
        "items = cuda.local.array(4, x.dtype)\ncoop.warp.load(x[i // 32 * 128:], items)\n"
        "coop.warp.exclusive_sum(items, output=items)\ncoop.warp.store(out[i // 32 * 128:], items)",
        "exclusive(x.reshape(2, 128).cumsum(axis=1, dtype=x.dtype)).reshape(-1)"),
    "block.radix_sort": (LOAD + "coop.block.radix_sort(items, threads=64, items_per_thread=4)\n" + STORE,
                         "np.sort(x, kind='stable')"),
    "block.merge_sort": (LOAD + "coop.block.merge_sort(items, operator.lt, threads=64, items_per_thread=4)\n" + STORE,
                         "np.sort(x, kind='stable')"),
    "block.subtract_left": (
        LOAD + "difference = cuda.local.array(4, x.dtype)\ncoop.block.subtract_left(items, difference, threads=64)\n"
        "coop.block.store(out, difference, threads=64)", "np.concatenate([x[:1], (x[1:] - x[:-1]).astype(x.dtype)])"),
    "block.flag_heads": (
        LOAD + "flags = cuda.local.array(4, np.bool_)\ncoop.block.flag_heads(items, flags, operator.ne, threads=64)\n"
        "for j in range(4):\n    out[4 * i + j] = 1 if flags[j] else 0",
        "np.concatenate([[1], x[1:] != x[:-1]]).astype(x.dtype)"),
}

INTEGERS = ["int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64"]
DTYPES = INTEGERS + ["float32", "float64"]

#: The other value types, in the cases that take them (bools are not summed, complex
#: numbers not ordered)
OTHER_TYPES = {
    "float16": ["warp.inclusive_sum", "warp.broadcast", "block.exclusive_sum", "block.exchange blocked_to_striped",
                "block.radix_sort", "block.merge_sort"],
    "bool": ["warp.broadcast", "block.load striped, store direct", "block.exchange blocked_to_striped",
             "block.radix_sort"],
    "complex64": ["warp.inclusive_sum", "warp.broadcast", "block.exclusive_sum", "block.exchange blocked_to_striped"],
    "complex128": ["warp.exclusive_sum, width 16", "block.sum"],
}

if gpu_available():
    VARIANTS = [(case, dtype) for case in CASES for dtype in DTYPES]
    VARIANTS += [(case, dtype) for dtype, cases in OTHER_TYPES.items() for case in cases]
else:
    # compiled only (numba-cuda-mlir took 1-17 s a kernel on a 2-core machine): every case
    # once, in dtypes that cover the shuffles (8-bit widened, 64-bit in two words) and the
    # radix twiddles, and one case of each other type
    VARIANTS = [(case, DTYPES[number % len(DTYPES)]) for number, case in enumerate(CASES)]
    VARIANTS += [(cases[-1], dtype) for dtype, cases in OTHER_TYPES.items()]

#: Cases whose numba-cuda-mlir PTX uses local memory where numba-cuda's uses none (noted
#: in the README): numba-cuda-mlir 0.6 keeps a variable in memory where a branching
#: operator (coop.ops.min, max) is called in both arms of a branch (the butterfly of
#: all_reduce and of the warp_scans block scan), and the merge sort's items arrays.
LOCAL_MEMORY = {"warp.all_reduce min", "block.inclusive_scan max, warp_scans", "block.merge_sort"}
#: ... and where numba-cuda-mlir uses an NVVM older than CUDA 13.5's (PTX ISA 9.5, the cu13
#: wheels' of CI): CUDA 13.0's (ISA 9.0, the GPU machine's) leaves 8 bytes of the radix
#: sort's ranking in local memory, where numba-cuda's code with the same NVVM has none.
LOCAL_MEMORY_BEFORE_ISA_9_5 = {"block.radix_sort"}

MATRIX = """
def warps(width):
    return x[:64].reshape(-1, width)

def exclusive(inclusive, first=0):
    shifted = np.roll(inclusive, 1, axis=-1)
    shifted[..., 0] = first
    return shifted

for name, dtype in VARIANTS:
    body, reference = CASES[name]
    scope = {"cuda": cuda, "coop": coop, "np": np, "operator": operator}
    exec("@cuda.jit\\ndef kernel(x, out):\\n    i = cuda.grid(1)\\n" + textwrap.indent(body, "    "), scope)
    kernel = scope["kernel"]
    try:
        ptx = compile_ptx(kernel, (getattr(types, dtype)[::1],) * 2)
    except Exception as error:
        print(f"{name} | {dtype}: error {type(error).__name__}: {' '.join(str(error).split())[:600]}", flush=True)
        continue
    entry = ptx[ptx.index(".entry"):]
    isa = ptx.split(".version", 1)[1].split()[0]
    line = f"{name} | {dtype}: local {ptx.count('.local')} calls {entry.count('call.')} isa {isa}"
    if gpu_available():
        rng = np.random.default_rng(len(name))
        size = 256 if "items" in body else 64
        low = 0 if np.dtype(dtype).kind == "u" else -3
        x = rng.integers(low, 100 if "sort" in name else 4, size)
        if np.dtype(dtype).kind == "c":
            x = x + 1j * x[::-1]
        x = x.astype(dtype)
        with np.errstate(over="ignore"):
            expected = np.asarray(eval(reference), dtype=dtype).reshape(-1)
        out = cuda.to_device(np.zeros(256, dtype))
        kernel[1, 64](cuda.to_device(x), out)
        got = out.copy_to_host()[:len(expected)]
        line += f" matches {np.array_equal(got, expected)}"
        if not np.array_equal(got, expected):
            line += f" got {got[:12].tolist()} expected {expected[:12].tolist()}"
    print(line, flush=True)
"""


def _matrix_part(variants):
    run = _run(f"import textwrap\nCASES = {CASES!r}\nVARIANTS = {variants!r}\n" + MATRIX)
    assert run.returncode == 0, run.stderr[-4000:]
    return [line for line in run.stdout.splitlines() if " | " in line]


@pytest.fixture(scope="module")
def matrix():
    """Each variant's line, compiled (and run) by a few interpreters side by side."""
    parts = max(1, min(8, (os.cpu_count() or 1) // 2))
    with concurrent.futures.ThreadPoolExecutor(parts) as pool:
        lines = [line for part in pool.map(_matrix_part, [VARIANTS[k::parts] for k in range(parts)]) for line in part]
    return dict(line.split(": ", 1) for line in lines)


@pytest.mark.parametrize("case, dtype", VARIANTS)
def test_primitive_compiles_without_local_memory_and_matches_numpy(matrix, case, dtype):
    line = matrix[f"{case} | {dtype}"]
    assert not line.startswith("error"), line
    isa = tuple(map(int, line.split(" isa ")[1].split()[0].split(".")))
    if case in LOCAL_MEMORY or (case in LOCAL_MEMORY_BEFORE_ISA_9_5 and isa < (9, 5)):
        assert " calls 0 " in line, line
    else:
        assert line.startswith("local 0 calls 0 "), line
    if gpu_available():
        assert line.endswith("matches True"), line


REFUSED = [
    ("coop.block.load(x, items, threads=64, items_per_thread=4, algorithm='vectorize')",
     "coop.block.load in a numba-cuda-mlir kernel: the intrinsic address is not supported there yet (README.md"),
    ("coop.block.reduce(x[0], lambda a, b: a + b, threads=64)",
     "coop.block.reduce in a numba-cuda-mlir kernel: a lambda or device function as an argument (use a coop.ops "
     "or operator function) is not supported there yet"),
    ("coop.warp.head_segmented_reduce(x[0], True, coop.ops.add)",
     "coop.warp.head_segmented_reduce in a numba-cuda-mlir kernel: cuda.lanemask_lt, which numba-cuda-mlir 0.6 "
     "cannot lower, is not supported there yet"),
    ("coop.warp.exclusive_sum(items)", "coop.warp.exclusive_sum: output is required with an items array"),
    ("coop.block.sum(x[0], threads=64)  # debug",
     "coop.block.sum in a numba-cuda-mlir kernel: debug mode (coop.config.debug) is not supported there yet"),
]


@pytest.fixture(scope="module")
def refusals():
    body = ""
    for number, (call, _) in enumerate(REFUSED):
        body += textwrap.dedent(f"""
            @cuda.jit
            def kernel(x, out):
                items = cuda.local.array(4, np.float64)
                out[0] = 0
                {call}

            coop.config.debug = {"# debug" in call}
            try:
                compile_ptx(kernel, (types.float64[::1],) * 2)
                print("{number}: compiled")
            except Exception as error:
                print("{number}: refused:", " ".join(str(error).split()))
        """)
    run = _run(body)
    assert run.returncode == 0, run.stderr[-4000:]
    return dict(line.split(": ", 1) for line in run.stdout.splitlines() if ": " in line)


@pytest.mark.parametrize("number", range(len(REFUSED)), ids=[call for call, _ in REFUSED])
def test_what_is_not_served_yet_is_refused_with_coops_message(refusals, number):
    line = refusals[str(number)]
    assert line.startswith("refused:") and REFUSED[number][1] in line, line
