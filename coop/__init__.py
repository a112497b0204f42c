"""coop: CUB's block- and warp-level cooperative primitives for Numba-CUDA.

Call the primitives inside your own ``@cuda.jit`` kernels; each call is specialised at
compile time from its argument types. The same code runs on a GPU and on Numba's CUDA
simulator (``NUMBA_ENABLE_CUDASIM=1``), to which coop adds the warp intrinsics.

- ``coop.thread``: sequential reduce/scan/transform over one thread's items.
- ``coop.warp``: warp and logical sub-warp reductions, scans, broadcast.
- ``coop.block``: block-wide primitives.
- ``coop.ops``: named binary operators (add, min, argmax, ...).
- ``coop.device``: device-wide algorithms called from the host (reduce, scans, select,
  histogram_even, segmented_reduce, radix_sort).
- ``coop.config``: settings (``coop.config.debug``: run-time checks in compiled kernels).
- ``coop.allow_dynamic_shared_memory(kernel, nbytes, *args)``: let a kernel launch with
  more than 48 KiB of dynamic shared memory (a ``temp_storage=`` past 48 KiB).
- ``coop.CoopError``: the base of every error coop raises: a misuse found when a kernel
  compiles (a CoopError itself), a misused collective on the simulator
  (``CollectiveError``, ``WarpSyncError``), a bad coop.device argument
  (``ArgumentTypeError``, ``ArgumentValueError``: also Python's TypeError and ValueError).

Each primitive's docstring (``help(coop.block.sum)``) gives its parameters, which
threads get its result, its barriers and a complete example, which the tests run.
Primitives are called inside kernels (from host code they raise an error); block and
warp primitives are collective: every thread of the block, or every lane of the logical
warp, must make the call, which the simulator checks.
"""

from coop._core.backend import SIMULATOR
from coop._core.config import config
from coop._core.errors import ArgumentTypeError, ArgumentValueError, CollectiveError, CoopError, WarpSyncError
from coop._core.launch import allow_dynamic_shared_memory
from coop._core.namespace import public_namespace
from coop import block, device, ops, thread, warp

__version__ = "0.1.0"

__all__ = ["thread", "warp", "block", "device", "ops", "config", "CoopError", "CollectiveError", "WarpSyncError",
           "ArgumentTypeError", "ArgumentValueError", "SIMULATOR", "allow_dynamic_shared_memory", "__version__"]

public_namespace(__name__)

from coop._core.compilers import numba_cuda_mlir as _numba_cuda_mlir  # noqa: E402

if SIMULATOR:  # numba-cuda-mlir kernels run on coop's simulator
    from coop._core.backend import _warn

    _numba_cuda_mlir.simulate(_warn)
    del _warn
else:  # numba-cuda-mlir kernels may call coop too, once it is loaded
    _numba_cuda_mlir.enable_when_loaded()
del _numba_cuda_mlir
