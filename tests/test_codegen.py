"""Codegen checks: kernels compiled for sm_90 by the real NVVM keep items in registers
(no local memory), make no calls, and misuse fails at compile time with a message
naming the primitive and the parameter. No GPU needed; under the simulator the kernels
are compiled in a subprocess without it."""

import json
import os
import pathlib
import re
import subprocess
import sys

import pytest

import codegen_cases

pytestmark = pytest.mark.codegen

SIMULATED = os.environ.get("NUMBA_ENABLE_CUDASIM") == "1"
HERE = pathlib.Path(__file__).resolve().parent


def _compile_env():
    env = {k: v for k, v in os.environ.items() if k not in ("NUMBA_ENABLE_CUDASIM", "COOP_TEST_MODE")}
    env["NUMBA_ENABLE_CUDASIM"] = "0"  # compile only: Numba's GPU backend without a GPU
    env["PYTHONPATH"] = os.pathsep.join([str(HERE.parent), str(HERE), env.get("PYTHONPATH", "")])
    return env


@pytest.fixture(scope="session", autouse=True)
def toolkit():
    """The codegen checks need NVVM (the cu13 or cu12 extra). Without it they are skipped,
    unless COOP_REQUIRE_CODEGEN is set (CI sets it: there a missing toolkit is a failure)."""
    if not SIMULATED:
        return
    probe = subprocess.run(
        [sys.executable, "-c", "from numba.cuda.cudadrv import nvvm; nvvm.NVVM()"],
        env=_compile_env(), capture_output=True, text=True, timeout=300,
    )
    if probe.returncode != 0:
        reason = (probe.stderr.strip().splitlines() or ["?"])[-1]
        if os.environ.get("COOP_REQUIRE_CODEGEN"):
            pytest.fail(f"codegen checks need NVVM, which did not load: {reason}")
        pytest.skip(f"codegen checks need the CUDA toolkit's NVVM (pip install -e '.[cu13,test]'): {reason}")


@pytest.fixture(scope="session")
def compiled():
    """name -> result for every case: compiled here, or by a subprocess under the simulator."""
    if not SIMULATED:
        results = {name: codegen_cases.compile_case(name) for name in codegen_cases.CASES}
        results.update({name: codegen_cases.compile_misuse(name) for name in codegen_cases.MISUSES})
        return results
    env = dict(_compile_env(), COOP_DEBUG="0")
    run = subprocess.run(
        [sys.executable, str(HERE / "codegen_cases.py")],
        env=env,
        capture_output=True,
        text=True,
        timeout=1200,
    )
    results = {}
    for line in run.stdout.splitlines():
        if line.startswith("{"):
            entry = json.loads(line)
            results[entry.pop("name")] = entry
    if run.returncode != 0 and not results:
        pytest.fail(f"codegen subprocess failed:\n{run.stderr[-4000:]}")
    return results


@pytest.mark.parametrize("name", list(codegen_cases.CASES))
def test_registers_only(compiled, name):
    result = compiled.get(name)
    assert result is not None, f"{name} was not compiled"
    assert result["error"] is None, f"{name} failed to compile: {result['error']}"
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
    if "timesliced" in name:  # the warps' turns unrolled, as CUB's
        assert result["loops"] == 0, f"{name}: {result['loops']} loops left in the PTX"


def coop_debug_on():
    return not SIMULATED and os.environ.get("COOP_DEBUG", "0") not in ("", "0")


@pytest.mark.parametrize("debug", [False, True])
def test_debug_checks_only_in_debug_mode(debug):
    """coop.config.debug adds run-time checks (launch size against threads=, lengths known
    only at run time) that print and trap; off, the same kernel has neither."""
    env = dict(_compile_env(), COOP_DEBUG="1" if debug else "0")
    run = subprocess.run(
        [sys.executable, str(HERE / "codegen_cases.py"), "--debug-probe"],
        env=env, capture_output=True, text=True, timeout=600,
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
