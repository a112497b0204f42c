"""Chooses where the tests run, before Numba is imported.

- ``COOP_TEST_MODE=gpu``: kernels run on the GPU; codegen checks compile in-process.
- ``COOP_TEST_MODE=sim``: kernels run on Numba's CUDA simulator (a smaller matrix);
  codegen checks compile in a subprocess without the simulator.
- unset: ``gpu`` if a CUDA device answers, else ``sim``.
"""

import functools
import importlib.util
import os
import pathlib

import pytest


def _gpu_available():
    # Loaded by path: importing the coop package would import numba.cuda too early.
    path = pathlib.Path(__file__).resolve().parents[1] / "coop" / "_core" / "device.py"
    spec = importlib.util.spec_from_file_location("_coop_device_probe", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.gpu_available()


MODE = os.environ.get("COOP_TEST_MODE")
if MODE is None:
    simulated = os.environ.get("NUMBA_ENABLE_CUDASIM", "0") not in ("", "0")
    MODE = "sim" if simulated or not _gpu_available() else "gpu"
    os.environ["COOP_TEST_MODE"] = MODE
if MODE not in ("gpu", "sim"):
    raise RuntimeError(f"COOP_TEST_MODE must be 'gpu' or 'sim', not {MODE!r}")
if MODE == "sim":
    os.environ["NUMBA_ENABLE_CUDASIM"] = "1"
else:
    os.environ.pop("NUMBA_ENABLE_CUDASIM", None)


def pytest_report_header(config):
    if MODE == "gpu":
        from numba import cuda

        device = cuda.get_current_device()
        name = device.name.decode() if isinstance(device.name, bytes) else device.name
        return f"coop tests: GPU ({name}, cc {device.compute_capability})"
    return "coop tests: Numba CUDA simulator (no GPU); codegen checks compile sm_90 PTX"


@functools.cache
def _codegen_missing():
    import codegen_toolchain  # (tests/ is on sys.path, as for the test modules' helpers)

    return codegen_toolchain.missing()


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    """Codegen checks need the toolkit's NVRTC, NVVM and nvJitLink (the cu13 or cu12 extra):
    one probe a session compiles a trivial kernel as they do; where it fails they are
    skipped with its reason, or failed where COOP_REQUIRE_CODEGEN is set (CI: there a
    missing toolkit is a failure)."""
    if item.get_closest_marker("codegen") is None:
        return
    reason = _codegen_missing()
    if reason is None:
        return
    if os.environ.get("COOP_REQUIRE_CODEGEN"):
        pytest.fail(f"codegen checks cannot compile here: {reason}")
    pytest.skip(f"codegen checks cannot compile here (they need the CUDA toolkit's NVRTC, NVVM and nvJitLink: "
                f"pip install -e '.[cu13,test]'): {reason}")
