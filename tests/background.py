"""Fixtures whose work is compiling hundreds of kernels in subprocesses (the codegen
cases, the numba-cuda-mlir matrix) start when the tests are collected, so that their
processes run beside the simulated tests: the simulator keeps one core busy (one Python
thread at a time), and CI has two.

A module lists them in ``EARLY = {fixture name: Early(function)}`` (``early_fixture``
makes such a fixture); the fixture returns ``EARLY[name]()``, which waits for the result
(computing it there if nothing started it). conftest.py notes which tests will use each
(``want``: a function computes only what they ask for, ``selected``, so ``-k`` narrows
its work), starts them, and runs those tests last. The subprocesses are made with
``run`` and ended with the session (``stop``), also when it stops early.

Under pytest-xdist every worker collects the same tests, but only the first (``gw0``)
computes the results: it leaves each in the folder the controlling process names in
``COOP_EARLY_RESULTS``, where the other workers read it (on a GPU, the numba-cuda-mlir
matrix computed by each of 15 workers at once took more than 440 s).

Imported by conftest.py: no Numba, no coop."""

import os
import pathlib
import pickle
import subprocess
import threading
import time
import traceback

import pytest

#: The folder where the first worker leaves the results for the others (set by the
#: controlling process of a pytest-xdist run), and this process's worker name.
RESULTS_FOLDER = "COOP_EARLY_RESULTS"
_SHARED = os.environ.get(RESULTS_FOLDER)
_WORKER = os.environ.get("PYTEST_XDIST_WORKER")
#: Whether this process computes the results: not a pytest-xdist worker, or its first.
COMPUTES = _SHARED is None or _WORKER in (None, "gw0")
_SHARED_WAIT_S = 3600  # (the subprocesses' own limit is 1,800 s)


class Early:
    """``function()``'s result, computed once, in a daemon thread from ``start()`` on (in
    the process that ``COMPUTES``; the others read it from the shared folder)."""

    def __init__(self, function):
        self.function = function
        self.lock = threading.Lock()
        self.done = threading.Event()
        self.thread = None
        self.result = self.error = None
        self.wanted = None  # (the parameters of the tests that will use it: ``want``)

    def want(self, item):
        """Note that the test ``item`` (which will run) uses the result."""
        if self.wanted is None:
            self.wanted = []
        self.wanted.append(getattr(getattr(item, "callspec", None), "params", {}))

    def selected(self, candidates, *names):
        """The ``candidates`` that a test which will run asks for (all of them where no
        test was noted: a fixture computed without the collection hook): each candidate
        is the tuple of the values of the parameters ``names``, or that value for one
        name. So ``-k`` narrows the work to the tests it selects."""
        if self.wanted is None:
            return list(candidates)
        wanted = {tuple(params.get(name) for name in names) for params in self.wanted}
        return [candidate for candidate in candidates
                if (candidate if len(names) > 1 else (candidate,)) in wanted]

    def start(self):
        if not COMPUTES:
            return
        with self.lock:
            if self.thread is None:
                self.thread = threading.Thread(target=self._compute, name=f"early {self.function.__name__}",
                                               daemon=True)
                self.thread.start()

    def _compute(self):
        try:
            self.result = self.function()
        except BaseException as error:  # (raised again where the result is asked for)
            self.error = error
        finally:
            if _SHARED is not None:
                self._share()
            self.done.set()

    def _path(self):
        return pathlib.Path(_SHARED) / f"{self.function.__module__}.{self.function.__qualname__}.pickle"

    def _share(self):
        if self.error is None:
            shared = ("result", self.result)
        else:
            shared = ("error", "".join(traceback.format_exception(self.error)))
        temporary = self._path().with_suffix(".partial")
        temporary.write_bytes(pickle.dumps(shared))
        temporary.replace(self._path())

    def _shared_result(self):
        path, waited = self._path(), time.monotonic()
        while not path.exists():
            if time.monotonic() - waited > _SHARED_WAIT_S:
                pytest.fail(f"no result from worker gw0 for {self.function.__qualname__} in {_SHARED_WAIT_S} s")
            time.sleep(0.5)
        kind, value = pickle.loads(path.read_bytes())
        if kind == "error":
            pytest.fail(f"{self.function.__qualname__} failed in worker gw0:\n{value}")
        return value

    def __call__(self):
        if not COMPUTES:
            return self._shared_result()
        self.start()
        self.done.wait()
        if self.error is not None:
            raise self.error
        return self.result


def early_fixture(registry, scope="module"):
    """A fixture of ``function()``'s result, registered in the module's ``registry``
    (its ``EARLY``) under the function's name, which is the fixture's."""

    def decorate(function):
        early = registry[function.__name__] = Early(function)

        def fixture():
            return early()

        fixture.__doc__ = function.__doc__
        return pytest.fixture(fixture, scope=scope, name=function.__name__)

    return decorate


_RUNNING = set()
_RUNNING_LOCK = threading.Lock()
_STOPPED = threading.Event()


def run(args, timeout, **kwargs):
    """``subprocess.run(args, capture_output=True, text=True, timeout=timeout, **kwargs)``,
    ended by ``stop()``."""
    with subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kwargs) as process:
        with _RUNNING_LOCK:
            if _STOPPED.is_set():
                process.kill()
            _RUNNING.add(process)
        try:
            stdout, stderr = process.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            stdout, stderr = process.communicate()
            raise subprocess.TimeoutExpired(args, timeout, stdout, stderr) from None
        finally:
            with _RUNNING_LOCK:
                _RUNNING.discard(process)
    return subprocess.CompletedProcess(args, process.returncode, stdout, stderr)


def stop():
    """End the subprocesses still running (a session that ends before it needs them)."""
    with _RUNNING_LOCK:
        _STOPPED.set()
        for process in _RUNNING:
            process.kill()
