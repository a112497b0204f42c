"""numba-cuda, the compiler coop's kernels are compiled with: what coop needs of it
beyond its public API.

- ``version_problem()``: whether numba-cuda is a release coop supports (``SUPPORTED``),
  and a message naming those for any other (``import coop`` warns with it).
- ``register_overload(function, generator)``: a primitive made callable in kernels,
  specialised by argument types and compile-time constants; ``register_jitable(fn)``:
  a Python function made callable from compiled code (coop's building blocks).
- ``compile_without_a_gpu()``: ``cuda.compile_ptx(..., cc=...)`` working with no GPU
  (the codegen checks, ``coop.device``'s kernels compiled ahead).
- ``address_shared_memory_in_32_bits()``: NVVM's data layout with 32-bit shared-memory
  pointers, as nvcc's (``with_32_bit_shared_pointers(layout)``: such a layout).
- ``lower_static_array(...)``: what ``cuda.shared.array`` / ``cuda.local.array`` lower
  to, for intrinsics that make arrays of their own (scratch buffers, tuples of local
  arrays).
- ``is_kernel(value, simulated)``: whether a value is a ``@cuda.jit`` kernel;
  ``allow_dynamic_shared_memory(kernel, nbytes, args)``: CUDA's cudaFuncSetAttribute
  (MaxDynamicSharedMemorySize) for a kernel's specialisation (numba-cuda has no API for
  it: NVIDIA/numba-cuda#94); ``shared_memory_opt_in_limit()``: the device's bound on it.

The intrinsics coop emits code with are ``numba_cuda_intrinsics``, the simulator's side
``numba_cuda_simulator``, coop.device's launcher ``numba_cuda_launch``.
"""

import threading

from numba.cuda.core import config

__all__ = ["SUPPORTED", "version", "version_problem", "register_overload", "register_jitable",
           "compile_without_a_gpu", "address_shared_memory_in_32_bits", "with_32_bit_shared_pointers",
           "lower_static_array", "is_kernel", "allow_dynamic_shared_memory", "shared_memory_opt_in_limit"]

#: The numba-cuda releases coop is tested with: (major, minor) pairs. The private names
#: this package uses are those of these releases.
SUPPORTED = ((0, 30),)


def version(distribution="numba-cuda"):
    """An installed compiler's version as a tuple of ints (``(0, 30, 4)``), or None if
    unknown."""
    from importlib import metadata

    try:
        text = metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return None
    numbers = []
    for part in text.split("."):
        digits = "".join(ch for ch in part if ch.isdigit()) if part[:1].isdigit() else ""
        if not digits:
            break
        numbers.append(int(digits))
    return tuple(numbers) or None


def version_problem(found=None, distribution="numba-cuda", supported=SUPPORTED,
                    install='pip install "numba-cuda>=0.30.4,<0.31"'):
    """None if ``distribution`` (``found``: its version tuple, by default the installed
    one) is a release coop supports (``supported``), else a message saying which are."""
    found = version(distribution) if found is None else found
    if found is not None and tuple(found[:2]) in supported:
        return None
    releases = ", ".join(f"{major}.{minor}.x" for major, minor in supported)
    shown = ".".join(map(str, found)) if found else "of unknown version"
    return (f"coop: {distribution} {shown} is not a release coop supports ({releases}): kernels may fail to "
            f"compile, or misbehave where coop relies on {distribution}'s internals. Install a supported one: "
            f"{install}")


def register_overload(function, generator):
    """Make ``function`` callable in kernels: at each call site, ``generator`` receives
    the arguments' types (a compile-time constant as a literal type, so each distinct
    combination of types and constants is a specialisation of its own) and returns the
    implementation, or raises ``TypingError``."""
    from numba.cuda.extending import overload

    overload(function, target="cuda", prefer_literal=True)(generator)


def register_jitable(fn):
    """``fn``, a plain Python function, made callable from compiled code (compiled for
    each caller's argument types, and inlined by NVVM)."""
    from numba.cuda.extending import register_jitable as jitable

    return jitable(fn)


def compile_without_a_gpu():
    """Let ``cuda.compile_ptx(..., cc=...)`` work on a machine without a GPU.

    numba-cuda compiles each ``@cuda.jit(device=True)`` function that a kernel calls
    (a coop operator, say) for the compute capability of the current device, which it
    asks the driver for even when ``compile_ptx`` was given ``cc``; with no driver that
    fails with "Error at driver init". Where the driver cannot answer, the device is
    taken to be the target of the compilation under way (``compile_cuda``'s ``cc``), or
    Numba's default PTX target. With a GPU nothing changes."""
    from numba.cuda import compiler, dispatcher
    from numba.cuda.cudadrv.error import CudaSupportError

    targets = threading.local()
    driver_device = dispatcher.get_current_device
    compile_cuda = compiler.compile_cuda

    class Target:
        def __init__(self, compute_capability):
            self.compute_capability = compute_capability

    def compile_for(*args, **kwargs):
        stack = targets.__dict__.setdefault("ccs", [])
        stack.append(kwargs.get("cc"))
        try:
            return compile_cuda(*args, **kwargs)
        finally:
            stack.pop()

    def current_device():
        try:
            return driver_device()
        except CudaSupportError:
            compiling = [cc for cc in getattr(targets, "ccs", ()) if cc]
            return Target(compiling[-1] if compiling else config.CUDA_DEFAULT_PTX_CC)

    compiler.compile_cuda = compile_for
    dispatcher.get_current_device = current_device


def address_shared_memory_in_32_bits():
    """Compile shared-memory pointers (LLVM address space 3) as 32-bit, as nvcc, clang's
    ``-fcuda-short-ptr`` and Triton do: shared memory is a window of at most 228 KiB,
    so a 64-bit address only costs registers (two per live address) and 64-bit
    arithmetic. numba-cuda gives NVVM a data layout with 64-bit pointers everywhere; an
    entry ``p3:32:32:32`` makes NVVM keep shared addresses in 32-bit registers
    (``ld.shared [%r]``), which lets a radix sort of 512 x 8 keys fit two blocks per SM
    instead of one. Generic pointers stay 64-bit, so Numba's own lowering is unchanged;
    it applies to every kernel compiled in the process (as nvcc's default does)."""
    from numba.cuda.cudadrv import nvvm

    short = with_32_bit_shared_pointers(getattr(nvvm, "_datalayout", None))
    if short:
        nvvm._datalayout = short


def with_32_bit_shared_pointers(layout):
    """NVPTX data layout ``layout`` with 32-bit shared-memory pointers, or None where it
    is not the 64-bit layout expected or has them already (numba-cuda-mlir's adapter
    uses it too)."""
    if isinstance(layout, str) and layout.startswith("e-p:64:64:64") and "-p3:" not in layout:
        return layout.replace("e-p:64:64:64", "e-p:64:64:64-p3:32:32:32", 1)
    return None


def lower_static_array(context, builder, shape, dtype, space, name):
    """In an intrinsic's codegen: a C-contiguous array of ``shape`` (a tuple of ints) and
    ``dtype`` (a Numba type) in ``space`` ("shared": one static allocation wherever this is
    lowered, i.e. once per specialisation, its symbol ``name`` made unique; "local": a
    thread's own, ``name`` its symbol), as ``cuda.shared.array`` / ``cuda.local.array``
    lower."""
    from numba.cuda.cudadrv import nvvm
    from numba.cuda.cudaimpl import _generic_array, _get_unique_smem_id

    if space == "shared":
        address_space, symbol = nvvm.ADDRSPACE_SHARED, _get_unique_smem_id(name)
    elif space == "local":
        address_space, symbol = nvvm.ADDRSPACE_LOCAL, name
    else:
        raise ValueError(f"space must be 'shared' or 'local', got {space!r}")
    return _generic_array(context, builder, shape=shape, dtype=dtype, symbol_name=symbol, addrspace=address_space,
                          can_dynsized=False, alignment=None)


def is_kernel(value, simulated):
    """Whether ``value`` is a ``@cuda.jit`` kernel, not a device function (of the
    simulator where ``simulated``)."""
    if simulated:
        return not getattr(value, "_device", True)
    options = getattr(value, "targetoptions", None)
    return isinstance(options, dict) and not options.get("device") and callable(getattr(value, "compile", None))


def allow_dynamic_shared_memory(kernel, nbytes, args):
    """Let ``kernel``'s specialisation for ``args`` (compiled now if it was not) launch with
    up to ``nbytes`` of dynamic shared memory on the current device."""
    from numba.cuda.cudadrv import driver
    from numba.cuda.cudadrv.driver import binding
    from numba.cuda.typing.typeof import typeof

    compiled = kernel.compile(tuple(typeof(a) for a in args))
    function = compiled._codelibrary.get_cufunc()
    attribute = binding.CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
    driver.driver.cuKernelSetAttribute(attribute, nbytes, function.handle, function.device.id)


def shared_memory_opt_in_limit():
    """``(bytes, device name)``: the most shared memory a block of the current device may
    opt in to (static and dynamic together)."""
    from numba import cuda

    device = cuda.get_current_device()
    name = device.name.decode() if isinstance(device.name, bytes) else device.name
    return device.MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, name
