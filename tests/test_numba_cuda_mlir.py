"""coop's primitives in numba-cuda-mlir kernels (issue 24's first step): what the adapter
(``coop._core.compilers.numba_cuda_mlir``) serves compiles to PTX without a GPU, and, on
a GPU, gives NumPy's results; what it does not serve yet is refused with coop's message.

Each check runs in a fresh interpreter with coop compiled (no simulator: numba-cuda-mlir
has none), ``coop`` imported first and ``numba_cuda_mlir`` after it, as a user's script
does (the adapter registers the primitives when numba-cuda-mlir loads). Skipped where
numba-cuda-mlir is not installed (``pip install "coop[mlir]"``)."""

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
    import numpy as np
    import coop
    from coop._core.device import gpu_available
    from coop._core.compilers.numba_cuda_mlir import compile_ptx
    from numba_cuda_mlir import cuda
    from numba_cuda_mlir.numba_cuda import types
    """
)


def _run(body):
    env = {k: v for k, v in os.environ.items() if k not in ("COOP_TEST_MODE",)}
    env["NUMBA_ENABLE_CUDASIM"] = "0"
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    run = subprocess.run([sys.executable, "-c", PROLOGUE + textwrap.dedent(body)], env=env, capture_output=True,
                         text=True, timeout=600)
    return run


WARP_REDUCTIONS = """
    def warp_reductions_of(width):
        @cuda.jit
        def warp_reductions(x, sums, maxima, partial):
            i = cuda.grid(1)
            total = coop.warp.sum(x[i], width=width)
            maxima[i] = coop.warp.all_reduce(x[i], coop.ops.max, width=width)
            first_five = coop.warp.reduce(x[i], coop.ops.add, width=width, valid_items=5)
            if cuda.laneid % width == 0:
                sums[i // width] = total
                partial[i // width] = first_five

        return warp_reductions

    for width in sorted({width for _, width in VARIANTS}):
        kernel = warp_reductions_of(width)
        for name in [name for name, w in VARIANTS if w == width]:
            dtype = np.dtype(name)
            ptx = compile_ptx(kernel, (getattr(types, name)[::1],) * 4)
            line = f"{name} w{width}: calls {ptx.count('call.')} shuffles {ptx.count('shfl.sync') > 0}"
            if gpu_available():
                low = 0 if dtype.kind == "u" else -50
                x = np.random.default_rng(5).integers(low, 50, 128).astype(dtype)
                groups = x.reshape(-1, width)
                sums, maxima = cuda.device_array(len(groups), dtype), cuda.device_array(128, dtype)
                partial = cuda.device_array(len(groups), dtype)
                kernel[1, 128](cuda.to_device(x), sums, maxima, partial)
                line += (f" sums {np.array_equal(sums.copy_to_host(), groups.sum(axis=1, dtype=dtype))}"
                         f" maxima {np.array_equal(maxima.copy_to_host(), np.repeat(groups.max(axis=1), width))}"
                         f" partial {np.array_equal(partial.copy_to_host(), groups[:, :5].sum(axis=1, dtype=dtype))}")
            print(line)
"""

# numba-cuda-mlir took 3-17 s to compile kernels like these on a 2-core machine:
# without a GPU, two variants that cover both shuffle forms (whole warps, logical warps),
# the integer sum and the floating-point reductions
VARIANTS = [(dtype, width) for width in (32, 8) for dtype in ("int32", "uint32", "int16", "int8", "float32")]
if not gpu_available():
    VARIANTS = [("int8", 8), ("float32", 32)]


@pytest.fixture(scope="module")
def warp_reductions():
    """Each variant's line, all compiled in one interpreter."""
    run = _run(f"VARIANTS = {VARIANTS}\n" + textwrap.dedent(WARP_REDUCTIONS))
    assert run.returncode == 0, run.stderr[-4000:]
    return dict(line.split(": ", 1) for line in run.stdout.splitlines() if ": " in line)


@pytest.mark.parametrize("dtype, width", VARIANTS)
def test_warp_reductions_compile_and_match_numpy(warp_reductions, dtype, width):
    line = warp_reductions[f"{dtype} w{width}"]
    assert line.startswith("calls 0 shuffles True"), line
    if "sums" in line:  # (on a GPU)
        assert line.endswith("sums True maxima True partial True"), line


REFUSED = [
    ("coop.warp.exclusive_sum(x[i])", "coop.warp.exclusive_sum in a numba-cuda-mlir kernel:"),
    ("coop.block.sum(x[i], threads=64)", "coop.block.sum in a numba-cuda-mlir kernel: the intrinsic read_rank is "
                                         "not supported there yet (coop.warp.reduce, sum, all_reduce and all_sum"),
    ("coop.warp.sum(x[i])", "a warp shuffle of float64 is not supported there yet"),
]


@pytest.fixture(scope="module")
def refusals():
    body = ""
    for number, (call, _) in enumerate(REFUSED):
        body += textwrap.dedent(f"""
            @cuda.jit
            def kernel(x, out):
                i = cuda.grid(1)
                out[i] = {call}

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
