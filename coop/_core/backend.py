"""Which CUDA coop runs against: Numba's CUDA compiler, or its CPU simulator.

Every coop module takes ``cuda`` from here rather than from ``numba``. Compiled, it is
``numba.cuda`` itself. Under the simulator (``NUMBA_ENABLE_CUDASIM=1``) it forwards each
attribute to the running kernel's per-thread CUDA module, which the stock simulator
only swaps into the globals of user kernels and device functions, not into code that
coop calls from them.
"""

from numba import cuda as _numba_cuda
from numba.cuda.core import config

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
