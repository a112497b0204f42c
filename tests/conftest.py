"""Chooses where the tests run, before Numba is imported.

- ``COOP_TEST_MODE=gpu``: kernels run on the GPU; codegen checks compile in-process.
- ``COOP_TEST_MODE=sim``: kernels run on Numba's CUDA simulator (a smaller matrix);
  codegen checks compile in a subprocess without the simulator.
- unset: ``gpu`` if a CUDA device answers, else ``sim``.

Under the simulator, where pytest-xdist is installed (the ``test`` extra), the suite runs
in a process a core (at most four; ``-n`` chooses otherwise, ``-n 0`` one process), since
each simulated block runs one Python thread at a time; on a GPU it runs in one process.
The fixtures that compile in subprocesses start as soon as the tests are collected, and
the tests that use them run last (background.py).
"""

import functools
import importlib.util
import os
import pathlib
import shutil
import tempfile

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


@pytest.hookimpl(tryfirst=True)  # (before pytest-xdist's, which reads -n)
def pytest_cmdline_main(config):
    """Under the simulator, with pytest-xdist, ``-n auto`` unless ``-n`` was given (or
    ``--pdb``, ``--trace`` or ``--collect-only``, which want one process)."""
    if (MODE == "sim" and config.pluginmanager.hasplugin("xdist") and not hasattr(config, "workerinput")
            and config.option.numprocesses is None
            and not any(getattr(config.option, name, False) for name in ("usepdb", "trace", "collectonly"))):
        config.option.numprocesses = "auto"


@pytest.hookimpl(optionalhook=True)  # (a pytest-xdist hook)
def pytest_xdist_auto_num_workers(config):
    """How many processes ``-n auto`` runs the tests in: under the simulator one a core,
    at most four (a simulated block keeps one core busy); on a GPU, none besides this one."""
    if MODE != "sim" or config.option.collectonly:
        return 0
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return 0 if cores < 2 else min(cores, 4)


def _distributing(config):
    return getattr(config.option, "dist", "no") != "no" and not hasattr(config, "workerinput")


def pytest_configure(config):
    """The controlling process of a pytest-xdist run makes the folder where the first
    worker leaves the early fixtures' results for the others (background.py)."""
    import background

    if _distributing(config) and background.RESULTS_FOLDER not in os.environ:
        config._coop_early_results = os.environ[background.RESULTS_FOLDER] = tempfile.mkdtemp(prefix="coop-early-")


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


def _skipped(item):
    return item.get_closest_marker("skip") is not None or any(
        marker.args and isinstance(marker.args[0], bool) and marker.args[0] for marker in item.iter_markers("skipif"))


@pytest.hookimpl(trylast=True)  # (after -k and -m deselected theirs)
def pytest_collection_modifyitems(config, items):
    """Start the early fixtures (background.py) of the tests that will run, each told
    which tests those are, and run those tests last, so that the fixtures' subprocesses
    run beside the others."""
    if config.option.collectonly:
        return
    later, started = [], {}
    for item in items:
        early = getattr(getattr(item, "module", None), "EARLY", {})
        wanted = [early[name] for name in getattr(item, "fixturenames", ()) if name in early]
        if not wanted or _skipped(item):
            continue
        if item.get_closest_marker("codegen") is not None and _codegen_missing() is not None:
            continue
        for fixture in wanted:
            fixture.want(item)
            started[id(fixture)] = fixture
        later.append(item)
    for fixture in started.values():
        fixture.start()
    if later:
        moved = set(map(id, later))
        items[:] = [item for item in items if id(item) not in moved] + later


def pytest_unconfigure(config):
    import background

    background.stop()
    folder = getattr(config, "_coop_early_results", None)
    if folder is not None:
        shutil.rmtree(folder, ignore_errors=True)
        del os.environ[background.RESULTS_FOLDER]
