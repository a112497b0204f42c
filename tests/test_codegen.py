"""Codegen checks: kernels compiled for sm_90 by the real NVVM, and assembled, keep items
in registers (no local memory), make no calls, and misuse fails at compile time with a
message naming the primitive and the parameter. No GPU needed; under the simulator the
kernels are compiled in a subprocess without it. Where the toolkit is missing,
conftest.py skips them (codegen_toolchain)."""

import concurrent.futures
import json
import os
import pathlib
import re
import subprocess
import sys

import pytest

import background
import codegen_cases
from codegen_cases.warp_thread import REDUX_CASES
from codegen_toolchain import compile_env

pytestmark = pytest.mark.codegen

SIMULATED = os.environ.get("NUMBA_ENABLE_CUDASIM") == "1"
HERE = pathlib.Path(__file__).resolve().parent


def _compiled_in_subprocesses():
    """name -> result for every case the tests that run ask for (all of them: ``-k``
    narrows them), compiled by processes side by side without the simulator, each
    compiling every ``shares``-th case."""
    env = dict(compile_env(), COOP_DEBUG="0")
    shares = max(1, min(4, os.cpu_count() or 1))
    names = EARLY["compiled"].selected([*codegen_cases.CASES, *codegen_cases.MISUSES], "name")
    only = [] if len(names) == len(codegen_cases.CASES) + len(codegen_cases.MISUSES) else ["--only", "\n".join(names)]

    def share(number):
        return background.run([sys.executable, "-m", "codegen_cases", "--share", f"{number}/{shares}", *only],
                              timeout=1800, cwd=HERE, env=env)

    results, failures = {}, []
    with concurrent.futures.ThreadPoolExecutor(shares) as pool:
        for run in pool.map(share, range(shares)):
            entries = [json.loads(line) for line in run.stdout.splitlines() if line.startswith("{")]
            results.update((entry.pop("name"), entry) for entry in entries)
            if run.returncode != 0 and not entries:
                failures.append(run.stderr[-4000:])
    if failures:
        pytest.fail("codegen subprocess failed:\n" + "\n".join(failures))
    return results


#: (started when the tests are collected under the simulator: background.py; compiled in
#: this process otherwise)
EARLY = {"compiled": background.Early(_compiled_in_subprocesses)} if SIMULATED else {}


@pytest.fixture(scope="session")
def compiled():
    """name -> result for every case: compiled here, or by subprocesses under the simulator."""
    if not SIMULATED:
        results = {name: codegen_cases.compile_case(name) for name in codegen_cases.CASES}
        results.update({name: codegen_cases.compile_misuse(name) for name in codegen_cases.MISUSES})
        return results
    return EARLY["compiled"]()


@pytest.mark.parametrize("name", list(codegen_cases.CASES))
def test_registers_only(compiled, name):
    result = compiled.get(name)
    assert result is not None, f"{name} was not compiled"
    assert result["error"] is None, f"{name} failed to compile: {result['error']}"
    assert result["assembly_error"] is None, f"{name}: ptxas rejects its PTX: {result['assembly_error']}"
    assert not result["local_memory"], f"{name}: PTX uses local memory"
    assert result["calls"] == 0, f"{name}: PTX makes {result['calls']} calls"
    assert not result["link_errors"], f"{name}: size checks failed: {result['link_errors']}"
    assert result["wide_shared_addresses"] == 0, (
        f"{name}: {result['wide_shared_addresses']} shared-memory accesses through 64-bit addresses"
    )
    if not coop_debug_on():
        assert result["debug_checks"] == 0, f"{name}: debug checks (trap, vprintf) with debug mode off"
    if name.startswith("warp"):
        assert result["shuffles"] > 0, f"{name}: no shfl.sync in PTX"
    if name in REDUX_CASES:  # (one redux.sync a reduction, in the values' signedness)
        assert result["shuffles"] == 0 and result["reduxes"] == REDUX_CASES[name][2], (name, result["reduxes"])
    if name.startswith("warp_reduce_batched_tree"):  # (no shuffles duplicated into divergent branches)
        assert result["shuffles"] == 6, f"{name}: {result['shuffles']} shfl.sync in PTX, the tree needs 6"
    if name.startswith("block_raking_reads"):  # (the segment's 8 slots read in the upsweep and again in the
        # downsweep, after side-effecting shuffles: numba_cuda_intrinsics.WARP_INSTRUCTION)
        assert result["shared_loads"] == 17, f"{name}: {result['shared_loads']} shared loads, not 17"
    if name.startswith("device-top_k"):  # (a warp's broadcast int64 position: two shuffles wherever NVVM copies it)
        assert result["odd_shuffle_blocks"] == 0, (
            f"{name}: {result['odd_shuffle_blocks']} basic blocks shuffle one word of a two-word broadcast")
    if name.startswith("block_shape-") and not coop_debug_on():  # (the rank from the constant shape, as
        reads = result["shape_reads"]                               # CUB's BLOCK_DIM_X/Y/Z)
        one_d = name.endswith("-128")
        assert reads["%ntid"] == reads["%tid.z"] == 0 and (reads["%tid.y"] == 0) == one_d, (
            f"{name}: the block's shape read at run time, or threadIdx.y not where it varies: {reads}")
    if name.startswith("load_store-tile_"):  # (offset=: the tile's start without a slice's clamp)
        clamps = result["slice_clamps"]
        assert (clamps == 0) == ("tile_offset" in name), f"{name}: {clamps} max.s64 (a slice's clamp) in the PTX"
    if "timesliced" in name:  # the warps' turns unrolled, as CUB's
        assert result["loops"] == 0, f"{name}: {result['loops']} loops left in the PTX"


def coop_debug_on():
    return not SIMULATED and os.environ.get("COOP_DEBUG", "0") not in ("", "0")


@pytest.mark.parametrize("debug", [False, True])
def test_debug_checks_only_in_debug_mode(debug):
    """coop.config.debug adds run-time checks (launch size against threads=, lengths known
    only at run time) that print and trap; off, the same kernel has neither."""
    env = dict(compile_env(), COOP_DEBUG="1" if debug else "0")
    run = subprocess.run(
        [sys.executable, "-m", "codegen_cases", "--debug-probe"],
        cwd=HERE, env=env, capture_output=True, text=True, timeout=600,
    )
    assert run.returncode == 0, run.stderr[-4000:]
    probe = json.loads(run.stdout.splitlines()[-1])
    assert probe["debug"] is debug
    if debug:
        assert probe["traps"] >= 2 and probe["prints"] >= 2, probe
    else:
        assert probe["traps"] == 0 and probe["prints"] == 0, probe


def _plain(text):
    """Numba's error text without terminal colour codes and line wrapping."""
    return " ".join(re.sub(r"\x1b\[[0-9;]*m", "", text).split())


@pytest.mark.parametrize("name", list(codegen_cases.MISUSES))
def test_misuse_message(compiled, name):
    error = compiled[name]["error"]
    expected = codegen_cases.MISUSES[name][2]
    if error is None and expected.startswith("coop_error__") and not compiled[name]["size_checks"]:
        pytest.skip("this NVVM cannot fold llvm.is.constant: arrays too small go unchecked")
    assert error is not None, f"{name}: compiled without error"
    assert expected in _plain(error), f"{name}: message lacks {expected!r}:\n{_plain(error)[:2000]}"
    # one mistake, one message: not also the refusal of Numba's second typing of the call,
    # with its constants as run-time values ("threads must be a compile-time constant")
    messages = set(re.findall(r"CoopError: ([^\n]*)", error))
    assert len(messages) <= 1, f"{name}: more than one coop error for one mistake: {sorted(messages)}"


# A sitecustomize that hides NVRTC from cuda.pathfinder, through which numba-cuda finds
# it (in the wheels, a conda environment or the system): the machine of a partial system
# CUDA, with NVVM and without NVRTC.
HIDE_NVRTC = """
import cuda.pathfinder

_load = cuda.pathfinder.load_nvidia_dynamic_lib


def load_nvidia_dynamic_lib(libname):
    if libname == "nvrtc":
        raise cuda.pathfinder.DynamicLibNotFoundError(f'Failure finding "libnvrtc.so": hidden by {__file__}')
    return _load(libname)


cuda.pathfinder.load_nvidia_dynamic_lib = load_nvidia_dynamic_lib
"""


@pytest.mark.parametrize("required", [False, True], ids=["skipped", "required"])
def test_missing_nvrtc_is_found_by_the_probe(tmp_path, required):
    """Without NVRTC, where NVVM loads, the codegen tests are skipped naming NVRTC (failed
    with COOP_REQUIRE_CODEGEN), instead of each failing to compile: a pytest run of this
    module in a subprocess that cannot find NVRTC."""
    (tmp_path / "sitecustomize.py").write_text(HIDE_NVRTC)
    env = {k: v for k, v in os.environ.items() if k != "COOP_REQUIRE_CODEGEN"}
    env.update(COOP_TEST_MODE="sim", PYTHONPATH=os.pathsep.join(filter(None, [str(tmp_path), env.get("PYTHONPATH")])))
    if required:
        env["COOP_REQUIRE_CODEGEN"] = "1"
    selection = ["-k", "test_debug_checks_only_in_debug_mode"] if required else []
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:xdist", "-p", "no:cacheprovider", "-rsE", __file__, *selection],
                         cwd=HERE.parent, env=env, capture_output=True, text=True, timeout=600)
    summary = run.stdout.strip().splitlines()[-1]
    reason = 'DynamicLibNotFoundError: Failure finding "libnvrtc.so"'
    assert reason in run.stdout, run.stdout[-4000:]
    if required:
        assert run.returncode == 1 and re.fullmatch(r"\d+ deselected, 2 errors in .*", summary), run.stdout[-4000:]
    else:
        assert run.returncode == 0 and re.fullmatch(r"\d+ skipped in .*", summary), run.stdout[-4000:]


FALLBACK = """
import inspect
import coop
from coop._core import specialize
from coop._core.compilers import numba_cuda
from numba import cuda

def public(x, y, threads=None):
    pass
namespace = {}
exec("def impl(x, y):\\n    return x + 2 * y\\n", namespace)  # (a body without source)
implementation = specialize._implementation("coop.test", inspect.signature(public), namespace["impl"], ("x", "y"))
assert specialize.CALLED_BODIES == {"coop.test: impl"}, specialize.CALLED_BODIES
run = numba_cuda.register_jitable(implementation)

def kernel(out):
    out[0] = run(out[1], out[2])

ptx, _ = cuda.compile_ptx(kernel, "void(int32[:])", cc=(9, 0))
print("ok" if "mad.lo.s32" in ptx or "shl.b32" in ptx or "add.s32" in ptx else ptx)
"""


def test_a_body_without_source_compiles_as_a_call():
    """Where a body's source cannot be read, its implementation calls it: compiled, the
    body is then made a device function (a plain function is no global Numba can call)."""
    env = dict(compile_env(), NUMBA_ENABLE_CUDASIM="0")
    run = subprocess.run([sys.executable, "-c", FALLBACK], cwd=HERE, env=env, capture_output=True, text=True,
                         timeout=300)
    assert run.returncode == 0 and run.stdout.strip() == "ok", run.stderr[-3000:] + run.stdout[-2000:]


RESULT_TYPES = """
import operator
import coop
from numba import cuda, types

def scans(v, init):
    a = coop.block.exclusive_scan(v, operator.add, initial=init, threads=64)
    b = coop.block.inclusive_scan(v, operator.add, initial=init, threads=64, algorithm="warp_scans")
    c = coop.warp.exclusive_scan(v, operator.add, initial=init)
    d = coop.warp.inclusive_scan(v, operator.add, initial=init)
    return a, b, c, d

for value, seed in ((types.float32, types.float64), (types.int16, types.int64), (types.uint8, types.float64)):
    _, result = cuda.compile_ptx(scans, (value, seed), device=True, cc=(9, 0))
    print(value, result)
"""


def test_seeded_scans_return_the_values_type():
    """A scan's results have the value's type, a wider ``initial`` (a Python float for
    float32 values) converted: thread 0's result of a block exclusive scan was the seed
    as given (float64 for float32 values)."""
    env = dict(compile_env(), NUMBA_ENABLE_CUDASIM="0")
    run = subprocess.run([sys.executable, "-c", RESULT_TYPES], cwd=HERE, env=env, capture_output=True, text=True,
                         timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    lines = run.stdout.strip().splitlines()
    assert lines == [f"{value} UniTuple({value} x 4)" for value in ("float32", "int16", "uint8")], run.stdout
