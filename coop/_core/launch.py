"""Launching kernels whose tiles need more than 48 KiB of shared memory (CUB users'
cudaFuncSetAttribute with cudaFuncAttributeMaxDynamicSharedMemorySize)."""

from coop._core.backend import SIMULATOR
from coop._core.errors import ArgumentTypeError, ArgumentValueError

__all__ = ["allow_dynamic_shared_memory"]


def allow_dynamic_shared_memory(kernel, nbytes, *args):
    """Let ``kernel`` launch with ``nbytes`` of dynamic shared memory, more than the 48 KiB
    a launch may ask for without it (CUDA's ``cudaFuncSetAttribute(kernel,
    cudaFuncAttributeMaxDynamicSharedMemorySize, nbytes)``, which numba-cuda has no API
    for).

    A tile whose scratch exceeds the 48 KiB of static shared memory a kernel may have
    (a 1024 x 16 radix sort, a big merge sort or exchange) takes a dynamic shared array
    as ``temp_storage=``: ``cuda.shared.array(0, np.uint8)`` in the kernel, its size
    (the primitive's ``temp_storage_bytes``) given at launch,
    ``kernel[blocks, threads, stream, nbytes](...)``. Above 48 KiB the launch fails
    unless the kernel was allowed that much first, once per kernel, argument types and
    device, with this call.

    Parameters
    ----------
    kernel : a ``@cuda.jit`` kernel
        The kernel (numba-cuda's; a numba-cuda-mlir kernel asks for the limit itself
        when launched, and on the simulator nothing is limited: the call does nothing).
    nbytes : int
        The dynamic shared memory the launches will ask for, at most the device's
        opt-in limit less the kernel's static shared memory (227 KiB in all on an H100
        or H200).
    *args
        The kernel's arguments (or arguments of the same types): the kernel is compiled
        for them if it was not, since the limit belongs to each compiled kernel.

    Returns
    -------
    None

    Example
    -------
    A block of 256 threads transposing 48 float64 items each (96 KiB of scratch)::

        import numpy as np
        import coop
        from numba import cuda

        THREADS, ITEMS = 256, 48
        BYTES = coop.block.exchange.blocked_to_striped.temp_storage_bytes(np.float64, THREADS, ITEMS)

        @cuda.jit
        def transpose(x, out):
            scratch = cuda.shared.array(0, np.uint8)  # dynamic: its size given at launch
            items = cuda.local.array(ITEMS, np.float64)
            r = cuda.threadIdx.x
            for i in range(ITEMS):
                items[i] = x[r * ITEMS + i]
            coop.block.exchange.blocked_to_striped(items, items, threads=THREADS, items_per_thread=ITEMS,
                                                   temp_storage=scratch)
            for i in range(ITEMS):
                out[i * THREADS + r] = items[i]

        x = np.arange(THREADS * ITEMS, dtype=np.float64)
        out = np.zeros_like(x)
        coop.allow_dynamic_shared_memory(transpose, BYTES, x, out)
        transpose[1, THREADS, 0, BYTES](x, out)
        assert BYTES > 48 * 1024 and (out == x).all()
    """
    name = "coop.allow_dynamic_shared_memory"
    if isinstance(nbytes, bool) or not isinstance(nbytes, int) or nbytes < 0:
        raise ArgumentValueError(f"{name}: nbytes must be a number of bytes, an int of at least 0, got {nbytes!r}")
    from coop._core.compilers import numba_cuda, numba_cuda_mlir

    if not numba_cuda.is_kernel(kernel, SIMULATOR) and not numba_cuda_mlir.is_kernel(kernel):
        raise ArgumentTypeError(f"{name}: kernel must be a @cuda.jit kernel, got {kernel!r}")
    if SIMULATOR or numba_cuda_mlir.is_kernel(kernel):
        return

    limit, device = numba_cuda.shared_memory_opt_in_limit()
    if nbytes > limit:
        raise ArgumentValueError(f"{name}: nbytes must be at most {limit} on {device} (the shared memory a block "
                                 f"may opt in to), got {nbytes}")
    numba_cuda.allow_dynamic_shared_memory(kernel, nbytes, args)

