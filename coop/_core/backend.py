"""Which CUDA coop runs against: Numba's CUDA compiler, or its CPU simulator.

``import coop`` on a machine without a GPU switches Numba to its simulator (with a
warning) if ``numba.cuda`` has not been imported yet and ``NUMBA_ENABLE_CUDASIM`` is
not set, so scripts and notebooks that import coop first run on a laptop unchanged.

Every coop module takes ``cuda`` from here rather than from ``numba``. Compiled, it is
``numba.cuda`` itself. Under the simulator (``NUMBA_ENABLE_CUDASIM=1``) it forwards each
attribute to the running kernel's per-thread CUDA module, which the stock simulator
only swaps into the globals of user kernels and device functions, not into code that
coop calls from them.

``device_function`` makes the building blocks that implementations call: inlined
functions when compiled, plain Python under the simulator.

What this needs of the compiler beyond its public API (letting ``compile_ptx`` run
without a GPU, 32-bit shared-memory addresses, coop's simulator put into numba-cuda's)
is in ``coop._core.compilers``; ``import coop`` warns if numba-cuda is not a release coop
supports.
"""

import os
import sys
import warnings


def _simulate_without_a_gpu():
    """On a machine with no GPU, choose Numba's simulator, before numba.cuda is imported
    (Numba fixes its backend then). An explicit NUMBA_ENABLE_CUDASIM is left alone; with
    numba.cuda already imported it is too late, and a warning says so."""
    if "NUMBA_ENABLE_CUDASIM" in os.environ:
        return
    from coop._core.device import gpu_available

    if "numba.cuda" in sys.modules:
        if not gpu_available():
            _warn(
                "coop: numba.cuda was imported before coop on a machine without a CUDA GPU, so "
                "Numba keeps its GPU backend and launching a kernel will fail ('CUDA driver "
                "library cannot be found'). Import coop before numba.cuda (or set "
                "NUMBA_ENABLE_CUDASIM=1) to run kernels on Numba's CPU simulator; set "
                "NUMBA_ENABLE_CUDASIM=0 to silence this if you only compile (cuda.compile_ptx)."
            )
        return
    if not gpu_available():
        os.environ["NUMBA_ENABLE_CUDASIM"] = "1"
        _reread_numba_config()
        _warn(
            "coop: no CUDA GPU found, so kernels run on Numba's CUDA simulator "
            "(set NUMBA_ENABLE_CUDASIM=0 before importing coop to keep Numba's GPU backend)"
        )


def _reread_numba_config():
    """``import numba`` (the package) reads ``NUMBA_ENABLE_CUDASIM`` into its config, which
    numba.cuda then consults when it is first imported: an ``import numba`` before coop
    would keep the GPU backend although coop has just chosen the simulator. Numba's own
    ``reload_config`` (which its compiler calls before each compilation) reads the
    environment again."""
    config = sys.modules.get("numba.core.config")
    if config is not None:
        config.reload_config()


PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # coop/


def _frames_to_importer():
    """The warnings stacklevel of the first frame outside coop and Python's own frozen
    modules: the user's ``import coop``; None if there is none (``python -m coop``, whose
    runpy frames import the package, and whose tour says where it runs). ``warnings.warn``
    does not count the import machinery's frames (``<frozen importlib._bootstrap>``), so
    neither does this; it counts runpy's."""
    package = PACKAGE_DIR
    frame, level = sys._getframe(1), 1
    while frame is not None:
        filename = frame.f_code.co_filename
        if filename.startswith("<frozen importlib"):
            frame = frame.f_back
            continue
        if not filename.startswith((package, "<frozen ")):
            return level
        frame, level = frame.f_back, level + 1
    return None


def _warn(message):
    """A warning attributed to the user's ``import coop`` (none without one)."""
    level = _frames_to_importer()
    if level is not None:
        warnings.warn(message, stacklevel=level)


#: Shared-memory pointers compiled as 32-bit (as nvcc's), or as numba-cuda's 64-bit:
#: ``COOP_SHARED_POINTER_BITS=64`` set before importing coop
#: (``numba_cuda.address_shared_memory_in_32_bits``).
SHARED_POINTER_BITS = 64 if os.environ.get("COOP_SHARED_POINTER_BITS") == "64" else 32


_simulate_without_a_gpu()

from numba import cuda as _numba_cuda  # noqa: E402  (after the backend is chosen)
from numba.cuda.core import config  # noqa: E402

from coop._core.compilers import numba_cuda  # noqa: E402

_version_problem = numba_cuda.version_problem()
if _version_problem:
    _warn(_version_problem)
SIMULATOR = bool(config.ENABLE_CUDASIM)

if SIMULATOR:
    from coop._core.compilers import numba_cuda_simulator

    numba_cuda_simulator.install()

    class _RunningKernelCUDA:
        def __getattr__(self, name):
            module = numba_cuda_simulator.running_kernel_module()
            if module is None:
                return getattr(_numba_cuda, name)
            return getattr(module, name)

    cuda = _RunningKernelCUDA()
else:
    cuda = _numba_cuda
    numba_cuda.compile_without_a_gpu()
    if SHARED_POINTER_BITS == 32:
        numba_cuda.address_shared_memory_in_32_bits()


def device_function(fn):
    """A building block that implementations call: a ``register_jitable`` function when
    compiled (inlined by NVVM), plain Python under the simulator."""
    if SIMULATOR or getattr(fn, "_coop_device_function", False):
        return fn
    fn = numba_cuda.register_jitable(fn)
    fn._coop_device_function = True  # (registered once)
    return fn
