"""Which CUDA coop runs against: Numba's CUDA compiler, or its CPU simulator.

``import coop`` on a machine without a GPU switches Numba to its simulator (with a
warning) if ``numba.cuda`` has not been imported yet and ``NUMBA_ENABLE_CUDASIM`` is
not set, so scripts and notebooks that import coop first run on a laptop unchanged.

Every coop module takes ``cuda`` from here rather than from ``numba``. Compiled, it is
``numba.cuda`` itself. Under the simulator (``NUMBA_ENABLE_CUDASIM=1``) it forwards each
attribute to the running kernel's per-thread CUDA module, which the stock simulator
only swaps into the globals of user kernels and device functions, not into code that
coop calls from them.
"""

import os
import sys
import warnings


def _simulate_without_a_gpu():
    """On a machine with no GPU, choose Numba's simulator, before numba.cuda is imported
    (Numba fixes its backend then). An explicit NUMBA_ENABLE_CUDASIM, or numba.cuda
    already imported, is left alone."""
    if "NUMBA_ENABLE_CUDASIM" in os.environ or "numba.cuda" in sys.modules:
        return
    from coop._core.device import gpu_available

    if not gpu_available():
        os.environ["NUMBA_ENABLE_CUDASIM"] = "1"
        warnings.warn(
            "coop: no CUDA GPU found, so kernels run on Numba's CUDA simulator "
            "(set NUMBA_ENABLE_CUDASIM=0 before importing coop to keep Numba's GPU backend)",
            stacklevel=_frames_to_importer(),
        )


def _frames_to_importer():
    """The warnings stacklevel of the first frame outside coop and the import machinery:
    the user's ``import coop``."""
    import coop

    package = os.path.dirname(os.path.abspath(coop.__file__))
    frame, level = sys._getframe(1), 1
    while frame is not None:
        filename = frame.f_code.co_filename
        if not (filename.startswith(package) or filename.startswith("<frozen importlib")):
            return level
        frame, level = frame.f_back, level + 1
    return 1


_simulate_without_a_gpu()

from numba import cuda as _numba_cuda  # noqa: E402  (after the backend is chosen)
from numba.cuda.core import config  # noqa: E402

SIMULATOR = bool(config.ENABLE_CUDASIM)

if SIMULATOR:
    from coop._core import simulator as _simulator

    _simulator.install()

    class _RunningKernelCUDA:
        def __getattr__(self, name):
            module = _simulator.running_kernel_module()
            if module is None:
                return getattr(_numba_cuda, name)
            return getattr(module, name)

    cuda = _RunningKernelCUDA()
else:
    cuda = _numba_cuda
