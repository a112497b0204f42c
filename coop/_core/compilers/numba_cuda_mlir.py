"""numba-cuda-mlir: coop's primitives in kernels that numba-cuda-mlir compiles (first step).

numba-cuda-mlir (``from numba_cuda_mlir import cuda``) types and lowers kernels with its
own copy of numba-cuda, whose type objects are distinct from numba-cuda's. coop writes
each primitive once, so this adapter reuses everything above the compiler:

- every primitive of the registry (``coop._core.specialize.PRIMITIVES``) is registered
  with numba-cuda-mlir's typing registry as well (``enable``, called when both compilers
  are loaded: ``import coop`` after ``numba_cuda_mlir``, or ``numba_cuda_mlir`` after
  ``coop``), so a call in an MLIR kernel is specialised by the same generator, with the
  same checks and messages: the argument types are translated to numba-cuda's
  (``numba_cuda_type``), the generator runs in numba-cuda's CUDA typing context;
- the implementation it returns is rebuilt for numba-cuda-mlir (``mlir_function``):
  ``numba.cuda`` becomes ``numba_cuda_mlir.cuda`` in its globals, each coop device
  function it calls is rebuilt the same way and registered (inlined: numba-cuda-mlir
  lowers no function-typed parameter), each intrinsic becomes numba-cuda-mlir code from
  the recipe the intrinsic was made from (its ``_coop_recipe``: factory name, arguments).

What this step serves: primitives whose code needs only shuffles of values of up to 32
bits (within logical warps of any width: from an indexed shuffle, its source lane
computed as the clamp operand of PTX's shuffles would choose it), conversions and the
redux sum: ``coop.warp.reduce``, ``sum``, ``all_reduce`` and ``all_sum``, with
``coop.ops`` operators. Anything else raises, naming the primitive and what is
missing (``MlirUnsupported``, raised as the primitive's ``CoopError``): never a wrong
result. 64-bit shuffles are refused on purpose: numba-cuda-mlir 0.6 shuffles them
through 32 bits. Under ``NUMBA_ENABLE_CUDASIM=1`` nothing is registered (coop's
simulator does not run numba-cuda-mlir kernels yet).
"""

import functools
import importlib.abc
import importlib.util
import sys
import threading
import types as pytypes

import numpy as np

#: numba-cuda-mlir releases this adapter was written against: (major, minor) pairs.
SUPPORTED = ((0, 6),)

_lock = threading.RLock()
_enabled = False


def loaded():
    """Whether numba-cuda-mlir is loaded in this process (nothing is imported to know)."""
    return "numba_cuda_mlir" in sys.modules


class MlirUnsupported(Exception):
    """What this adapter cannot yet build for numba-cuda-mlir (raised as the
    primitive's CoopError)."""


# -- registration ---------------------------------------------------------------------------


def enable():
    """Register every primitive with numba-cuda-mlir (idempotent)."""
    global _enabled
    with _lock:
        if _enabled:
            return
        _enabled = True
        from coop._core.compilers.numba_cuda import version_problem

        problem = version_problem(distribution="numba-cuda-mlir", supported=SUPPORTED,
                                  install='pip install "coop[mlir]"')
        if problem:
            import warnings

            warnings.warn(problem, stacklevel=2)
        from numba_cuda_mlir.extending import overload, typing_registry

        from coop._core.specialize import PRIMITIVES

        for qualname, primitive in PRIMITIVES.items():
            overload(primitive, typing_registry=typing_registry, prefer_literal=True, inline="always")(
                _mlir_generator(qualname, primitive))


def enable_when_loaded():
    """``enable`` now if numba-cuda-mlir is loaded, else as soon as it is imported."""
    if loaded():
        enable()
    elif importlib.util.find_spec("numba_cuda_mlir") is not None:
        sys.meta_path.insert(0, _AfterImport())


class _AfterImport(importlib.abc.MetaPathFinder):
    """Calls ``enable`` once ``numba_cuda_mlir`` has been executed."""

    def find_spec(self, name, path, target=None):
        if name != "numba_cuda_mlir":
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(name)
        if spec is None or spec.loader is None:
            return spec
        execute = spec.loader.exec_module

        def exec_module(module):
            execute(module)
            enable()

        spec.loader.exec_module = exec_module
        return spec


def _mlir_generator(qualname, primitive):
    import inspect

    from coop._core.errors import CoopError

    generator = primitive._coop_generator

    def generate(*args, **kwargs):
        try:
            with _numba_cuda_typing():
                impl = generator(*map(numba_cuda_type, args), **{k: numba_cuda_type(v) for k, v in kwargs.items()})
            return None if impl is None else mlir_function(impl)
        except MlirUnsupported as missing:
            raise CoopError(f"{qualname} in a numba-cuda-mlir kernel: {missing} is not supported there yet "
                            f"(coop.warp.reduce, sum, all_reduce and all_sum of values of up to 32 bits are, "
                            f"with coop.ops operators)") from None

    generate.__signature__ = inspect.signature(primitive)
    return generate


def _numba_cuda_typing():
    """numba-cuda's CUDA target while a generator runs (it resolves operators' types),
    its typing context loaded (in a process where numba-cuda compiled nothing yet)."""
    from numba.core.target_extension import target_override
    from numba.cuda.descriptor import cuda_target

    cuda_target.typing_context.refresh()
    return target_override("cuda")


def compile_ptx(kernel, argument_types, cc=(9, 0)):
    """PTX of a numba-cuda-mlir ``kernel`` for ``cc``, with or without a GPU (numba-cuda-mlir
    0.6 asks the driver for the device even when given ``cc``: the codegen checks seed the
    answer where no driver can give one)."""
    from numba_cuda_mlir import cuda, tools

    from coop._core.device import gpu_available

    if not gpu_available() and getattr(tools, "_cached_cc", None) is None:
        tools._cached_cc = cc
    return cuda.compile_ptx(kernel, argument_types, cc=cc)[0]


# -- types ------------------------------------------------------------------------------------


def numba_cuda_type(ty):
    """The numba-cuda type of a numba-cuda-mlir type (the generators check numba-cuda's)."""
    from numba.cuda import types as T
    from numba_cuda_mlir.numba_cuda import types as M

    if isinstance(ty, M.Omitted):
        return T.Omitted(ty.value)
    if isinstance(ty, M.NoneType):
        return T.none
    if isinstance(ty, (M.IntegerLiteral, M.BooleanLiteral, M.StringLiteral)):
        return T.literal(ty.literal_value)
    if isinstance(ty, (M.Integer, M.Float, M.Complex, M.Boolean)):
        return getattr(T, ty.name)
    if isinstance(ty, M.Array):
        return T.Array(numba_cuda_type(ty.dtype), ty.ndim, ty.layout, readonly=not ty.mutable, aligned=ty.aligned)
    if isinstance(ty, M.UniTuple):
        return T.UniTuple(numba_cuda_type(ty.dtype), ty.count)
    if isinstance(ty, M.Tuple):
        return T.Tuple([numba_cuda_type(t) for t in ty.types])
    if isinstance(ty, M.Function):
        from numba.cuda.descriptor import cuda_target

        context = cuda_target.typing_context
        # a function this adapter rebuilt stands for the one it was rebuilt from
        return context.resolve_value_type(_originals.get(ty.typing_key, ty.typing_key))
    raise MlirUnsupported(f"an argument of type {ty}")


# -- implementations ----------------------------------------------------------------------------


_functions = {}  # function -> its numba-cuda-mlir copy
_originals = {}  # the reverse


def mlir_function(fn):
    """``fn`` (an implementation or device function) rebuilt for numba-cuda-mlir and
    registered there, inlined where it is called."""
    with _lock:
        made = _functions.get(fn)
        if made is not None:
            return made
        from numba_cuda_mlir.extending import register_jitable, typing_registry

        names = fn.__globals__
        rebuilt_globals = dict(names)
        for name in fn.__code__.co_names:
            if name in names:
                rebuilt_globals[name] = _mlir_value(names[name])
        cells = None
        if fn.__closure__:
            cells = tuple(pytypes.CellType(_mlir_value(cell.cell_contents)) for cell in fn.__closure__)
        made = pytypes.FunctionType(fn.__code__, rebuilt_globals, fn.__name__, fn.__defaults__, cells)
        made.__kwdefaults__ = fn.__kwdefaults__
        register_jitable(typing_registry=typing_registry, inline="always")(made)
        _functions[fn] = made
        _originals[made] = fn
        return made


def _mlir_value(value):
    """What ``value``, read by compiled coop code, is for numba-cuda-mlir."""
    import numba.cuda
    from numba.cuda.extending import _Intrinsic

    if value is numba.cuda:
        from numba_cuda_mlir import cuda

        return cuda
    recipe = getattr(value, "_coop_recipe", None)
    if recipe is not None:
        return _from_recipe(*recipe)
    if isinstance(value, _Intrinsic):
        raise MlirUnsupported(f"the intrinsic {value._name}")
    # (a primitive is registered with numba-cuda-mlir as it is)
    if (isinstance(value, pytypes.FunctionType) and value.__module__.startswith("coop.")
            and not hasattr(value, "_coop_generator")):
        return mlir_function(value)
    return value


@functools.lru_cache(maxsize=None)
def _from_recipe(name, args):
    """numba-cuda-mlir code for the intrinsic ``numba_cuda_intrinsics.<name>(*args)``."""
    from numba.cuda import types as T
    from numba.cuda.np.numpy_support import as_dtype
    from numba_cuda_mlir import cuda

    from coop._core.shuffle import DOWN, IDX, UP, XOR

    if name == "converter":
        (value_type,) = args
        if not isinstance(value_type, (T.Integer, T.Float, T.Boolean)):
            raise MlirUnsupported(f"converting to {value_type}")
        scalar = as_dtype(value_type).type

        def convert(value):
            return scalar(value)

        return mlir_function(convert)
    if name == "shuffle":
        mode, clamp, with_predicate = args
        if with_predicate or clamp is None:
            raise MlirUnsupported("a shuffle with a predicate or a run-time clamp")
        width = 32 - ((clamp >> 8) & 31)
        if width == 32:
            return _shuffle_of_32_bits({DOWN: cuda.shfl_down_sync, XOR: cuda.shfl_xor_sync, UP: cuda.shfl_up_sync,
                                        IDX: cuda.shfl_sync}[mode])
        return _shuffle_of_32_bits(mlir_function(_within_logical_warps(mode, width)))
    if name == "warp_sum":
        return _warp_sum()
    raise MlirUnsupported(f"the intrinsic {name}")


def _warp_sum():
    """``warp_sum(mask, value)``: the sum over the lanes of ``mask``, a logical warp (as
    coop's callers pass), in every lane, modulo 2**32 as ``redux.sync.add`` gives it: a
    butterfly of 32-bit shuffles within the logical warp."""
    from numba.cuda.np.numpy_support import as_dtype
    from numba_cuda_mlir import cuda

    def typed(mask, value):
        scalar = as_dtype(numba_cuda_type(value)).type

        def warp_sum(mask, value):
            lanes = cuda.popc(mask)
            total = np.int32(value)
            offset = 1
            while offset < lanes:
                total = np.int32(total + cuda.shfl_xor_sync(mask, total, offset))
                offset *= 2
            return scalar(total)

        return warp_sum

    return _typed_function(typed)


def _within_logical_warps(mode, width):
    """``shuffle(mask, value, b)`` of ``mode`` within logical warps of ``width`` lanes,
    from an indexed shuffle: the source lane computed as the PTX ISA's clamp operand
    would choose it (a source past the logical warp's edge gives the caller's own value),
    so every lane reads a lane of its own logical warp (of ``mask``)."""
    from numba_cuda_mlir import cuda

    from coop._core.shuffle import DOWN, IDX, UP

    edge = width - 1
    if mode == IDX:

        def shuffle(mask, value, b):
            lane = cuda.laneid
            return cuda.shfl_sync(mask, value, (lane - (lane & edge)) + (b & edge))
    elif mode == UP:

        def shuffle(mask, value, b):
            lane = cuda.laneid
            source = lane - b if (lane & edge) >= b else lane
            return cuda.shfl_sync(mask, value, source)
    elif mode == DOWN:

        def shuffle(mask, value, b):
            lane = cuda.laneid
            source = lane + b if (lane & edge) + b <= edge else lane
            return cuda.shfl_sync(mask, value, source)
    else:

        def shuffle(mask, value, b):
            lane = cuda.laneid
            source = lane ^ b if ((lane & edge) ^ b) <= edge else lane
            return cuda.shfl_sync(mask, value, source)

    return shuffle


def _shuffle_of_32_bits(shuffle):
    """``shuffle(mask, value, b)`` for values of at most 32 bits; wider ones refused
    while typing."""

    def shuffle_narrow(mask, value, b):
        return shuffle(mask, value, b)

    def typed(mask, value, b):
        if getattr(value, "bitwidth", 64) > 32:
            from coop._core.errors import CoopError

            raise CoopError(f"coop in a numba-cuda-mlir kernel: a warp shuffle of {value} is not supported there "
                            f"yet (numba-cuda-mlir 0.6 shuffles 64-bit values through 32 bits)")
        return shuffle_narrow

    return _typed_function(typed)


def _typed_function(typer):
    """A function for numba-cuda-mlir kernels whose code ``typer`` gives for its
    arguments' types (an overload of a stub, inlined where it is called)."""
    from numba_cuda_mlir.extending import overload, typing_registry

    def function(*args):
        raise NotImplementedError("compiled only")

    overload(function, typing_registry=typing_registry, inline="always")(typer)
    return function
