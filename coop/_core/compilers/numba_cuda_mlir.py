"""numba-cuda-mlir: coop's primitives in kernels that numba-cuda-mlir compiles (experimental).

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
  function it calls is rebuilt the same way, each intrinsic becomes numba-cuda-mlir code
  from the recipe the intrinsic was made from (its ``_coop_recipe``: factory name,
  arguments; ``numba_cuda_mlir_intrinsics``);
- a rebuilt function called with values (numbers, arrays, tuples of them) is compiled as
  a device function, once per signature, which MLIR's inliner inlines (one that
  allocates shared memory is inlined into its caller's Numba IR: ``_allocates_shared``);
  one called with a function (an operator) or a literal is inlined into its caller's
  Numba IR (numba-cuda-mlir lowers no function-typed parameter; a literal's value may be
  needed).
  numba-cuda-mlir types an inlined function again at every call, so inlining everything
  made kernels take minutes to compile.

As for numba-cuda, shared-memory addresses are compiled in 32 bits
(``address_shared_memory_in_32_bits``), and numba-cuda-mlir's pedantic warnings about
inlined code's variables are silenced (``_quiet_inlined_variable_warnings``).

What it serves: ``coop.thread``, ``coop.warp`` and ``coop.block``, except what raises,
naming the primitive and what is missing (``MlirUnsupported``, raised as the primitive's
``CoopError``): never a wrong result.

Under coop's simulator (``NUMBA_ENABLE_CUDASIM=1``, or no GPU) nothing is registered:
``numba_cuda_mlir.cuda`` is numba-cuda's simulated ``cuda`` module instead (``simulate``),
so numba-cuda-mlir kernels run on the simulator, which numba-cuda-mlir has not, as
numba-cuda's kernels do, with the same checks and messages.
"""

import importlib.abc
import importlib.util
import sys
import threading
import types as pytypes

from coop._core.compilers.numba_cuda_mlir_intrinsics import (DEVICE, MlirUnsupported, caller,
                                                         from_recipe, jitable, numba_cuda_mlir_type)

#: numba-cuda-mlir releases this adapter was written against: (major, minor) pairs.
SUPPORTED = ((0, 6),)

_lock = threading.RLock()
_enabled = False


def loaded():
    """Whether numba-cuda-mlir is loaded in this process (nothing is imported to know)."""
    return "numba_cuda_mlir" in sys.modules


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

        if not problem:  # (the layout's wrapper knows the supported releases' library)
            address_shared_memory_in_32_bits()
        _quiet_inlined_variable_warnings()

        for qualname, primitive in PRIMITIVES.items():
            overload(primitive, typing_registry=typing_registry, prefer_literal=True, inline="always",
                     jit_options=DEVICE)(
                _mlir_generator(qualname, primitive))


def _quiet_inlined_variable_warnings():
    """Silence one of numba-cuda-mlir's pedantic checks, for inlined code's variables
    only (renamed ``<function>_v<number>_<name>`` by its inliner): its SSA pass warns
    "variable '...' is not in scope" for each such variable assigned more than once
    (``coop.ops.max``'s conditional expression, a raking scan's slots, ...), as its
    inliner does not add them to the caller's scope. The code is right; without this,
    the README's numba-cuda-mlir kernel printed 20 such warnings as it compiled."""
    import warnings

    from numba_cuda_mlir.numba_cuda.core.errors import NumbaIRAssumptionWarning

    warnings.filterwarnings("ignore", message=r"variable '[A-Za-z_]\w*_v\d+_\w*(\.\d+)?' is not in scope",
                            category=NumbaIRAssumptionWarning)


class _WithDataLayout:
    """numba-cuda-mlir's LLVM 7 library (its path to NVVM below sm_100), translating with
    ``layout`` where numba-cuda-mlir gives none (the library's default)."""

    def __init__(self, library, layout):
        self._library, self._layout = library, layout

    def __getattr__(self, name):
        return getattr(self._library, name)

    def llvm70_translate_gpu_module_from_op(self, operation, chip, layout, *rest):
        return self._library.llvm70_translate_gpu_module_from_op(operation, chip, layout or self._layout, *rest)


def address_shared_memory_in_32_bits():
    """numba-cuda's ``address_shared_memory_in_32_bits`` for numba-cuda-mlir: its data
    layout with 32-bit shared-memory pointers, on both of its paths to NVVM (LLVM 20's
    below ``NVPTX64_DATALAYOUT``, from sm_100; LLVM 7's, given that layout, below).
    Shared addresses then take one register and 32-bit adds, as in numba-cuda's code (the
    kernel of a block radix sort of 256 x 8 keys: 609 PTX instructions, 114 of them 64-bit,
    to 571 and 55). Every numba-cuda-mlir kernel of the process gets it. ``enable``
    calls it in the releases of ``SUPPORTED`` only: the wrapper knows their library's
    arguments (elsewhere the kernels are right, with 64-bit shared addresses)."""
    from numba_cuda_mlir import mlir_optimization as optimization

    from coop._core.compilers.numba_cuda import with_32_bit_shared_pointers

    short = with_32_bit_shared_pointers(getattr(optimization, "NVPTX64_DATALAYOUT", None))
    library = getattr(optimization, "_get_llvm70_capi", None)
    if not (short and callable(library)):
        return
    optimization.NVPTX64_DATALAYOUT = short
    optimization._get_llvm70_capi = lambda: _WithDataLayout(library(), short.encode())


def enable_when_loaded():
    """``enable`` now if numba-cuda-mlir is loaded, else as soon as it is imported."""
    if loaded():
        enable()
    elif importlib.util.find_spec("numba_cuda_mlir") is not None:
        sys.meta_path.insert(0, _AfterImport())


def simulate(warn):
    """Make ``numba_cuda_mlir.cuda`` numba-cuda's simulated ``cuda`` module when it is
    imported; ``warn`` says why not if a module imported it already (before coop)."""
    imported = sys.modules.get(_CUDA)
    if imported is None:
        sys.meta_path.insert(0, _SimulatedCuda())
    elif imported is not sys.modules["numba.cuda"]:
        warn(f"coop: {_CUDA} was imported before coop, so numba-cuda-mlir kernels compile for a GPU "
             f"instead of running on coop's simulator (NUMBA_ENABLE_CUDASIM=1, or no GPU): import coop "
             f"before numba_cuda_mlir")


_CUDA = "numba_cuda_mlir.cuda"


class _SimulatedCuda(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Imports ``numba_cuda_mlir.cuda`` as the ``numba.cuda`` module, the simulator's: the
    simulator swaps the per-thread CUDA module into a kernel's globals that hold it."""

    def find_spec(self, name, path, target=None):
        return importlib.util.spec_from_loader(name, self) if name == _CUDA else None

    def create_module(self, spec):
        module = sys.modules["numba.cuda"]
        self._spec = module.__spec__
        return module

    def exec_module(self, module):
        module.__spec__ = self._spec  # (the import made it this alias's; its other attributes are kept)


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
    signature = inspect.signature(primitive)

    def generate(*args, **kwargs):
        try:
            with _numba_cuda_typing():
                impl = generator(*map(numba_cuda_type, args), **{k: numba_cuda_type(v) for k, v in kwargs.items()})
            if impl is None:
                return None
            # a primitive given arrays is inlined, as this step was tested (its static
            # scratch allocated per call site); as a device function it would be per
            # specialisation, as numba-cuda's
            return _callee(mlir_function(impl), (*args, *kwargs.values()), arrays=False)
        except MlirUnsupported as missing:
            raise CoopError(f"{qualname} in a numba-cuda-mlir kernel: {missing} is not supported there yet "
                            f"(README.md, 'numba-cuda-mlir kernels', lists what is)") from None

    generate.__signature__ = signature
    return generate


def _numba_cuda_typing():
    """numba-cuda's CUDA target while a generator runs (it resolves operators' types),
    its typing context loaded (in a process where numba-cuda compiled nothing yet)."""
    from numba.core.target_extension import target_override
    from numba.cuda.descriptor import cuda_target

    cuda_target.typing_context.refresh()
    return target_override("cuda")


def _is_dispatcher(value, device):
    """Whether ``value`` is a numba-cuda-mlir ``@cuda.jit`` kernel (a device function, where
    ``device``)."""
    return (type(value).__module__.startswith("numba_cuda_mlir.")
            and bool(getattr(value, "targetoptions", {}).get("device")) == device)


def is_kernel(value):
    """Whether ``value`` is a numba-cuda-mlir ``@cuda.jit`` kernel (it asks for more than
    48 KiB of dynamic shared memory itself when launched with it)."""
    return _is_dispatcher(value, device=False)


def device_function_source(value):
    """The Python function of a numba-cuda-mlir ``@cuda.jit(device=True)`` function, else
    None (coop.device compiles an operator for its own kernels, which numba-cuda compiles)."""
    return value.py_func if _is_dispatcher(value, device=True) else None


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
    if isinstance(ty, M.UnicodeType):
        return T.unicode_type
    if isinstance(ty, (M.NPDatetime, M.NPTimedelta)):  # (refused by the generators, with their messages)
        return getattr(T, type(ty).__name__)(ty.unit)
    if isinstance(ty, M.Array):
        return T.Array(numba_cuda_type(ty.dtype), ty.ndim, ty.layout, readonly=not ty.mutable, aligned=ty.aligned)
    if isinstance(ty, M.UniTuple):
        return T.UniTuple(numba_cuda_type(ty.dtype), ty.count)
    if isinstance(ty, M.Tuple):
        return T.Tuple([numba_cuda_type(t) for t in ty.types])
    if isinstance(ty, M.Dispatcher) and ty.dispatcher in _originals:
        from numba.cuda.descriptor import cuda_target

        return cuda_target.typing_context.resolve_value_type(_originals[ty.dispatcher])
    if isinstance(ty, M.Dispatcher):
        raise MlirUnsupported("a lambda or device function as an argument (use a coop.ops or operator function)")
    if isinstance(ty, M.Function):
        from numba.cuda.descriptor import cuda_target

        context = cuda_target.typing_context
        # a function this adapter rebuilt stands for the one it was rebuilt from
        return context.resolve_value_type(_originals.get(ty.typing_key, ty.typing_key))
    raise MlirUnsupported(f"an argument of type {ty}")


# -- implementations ----------------------------------------------------------------------------


#: numba.cuda functions that numba-cuda-mlir 0.6 types but cannot lower (an internal error
#: at compile time): coop code calling them is refused instead.
_UNLOWERED = frozenset({"lanemask_lt", "threadfence", "threadfence_block", "threadfence_system"})


_functions = {}  # function -> its numba-cuda-mlir copy
_originals = {}  # the reverse
_device_callers = {}  # a copy -> a function calling it compiled as a device function (or None)
_allocating = set()  # the functions (not copies) that allocate static shared memory (_allocates_shared)


def mlir_function(fn):
    """``fn`` (an implementation or device function) rebuilt for numba-cuda-mlir and
    registered there (see ``_register``)."""
    with _lock:
        made = _functions.get(fn)
        if made is not None:
            return made
        missing = _UNLOWERED.intersection(fn.__code__.co_names)
        if missing:
            raise MlirUnsupported(f"cuda.{min(missing)}, which numba-cuda-mlir 0.6 cannot lower,")
        # numba-cuda-mlir 0.6 makes cuda.atomic on an array a function is given a
        # global-memory atomic, wrong for a shared array: coop's code adds through
        # coop._core.scratch's atomic adds, whose intrinsics are made here
        assert "atomic" not in fn.__code__.co_names, f"{fn.__qualname__} uses cuda.atomic"
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
        used = [names[name] for name in fn.__code__.co_names if name in names]
        used += [cell.cell_contents for cell in fn.__closure__ or ()]
        allocates = any(map(_allocates_shared, used))
        if allocates:
            _allocating.add(fn)
        _register(made, inline=allocates)
        _functions[fn] = made
        _originals[made] = fn
        return made


def _register(fn, inline):
    """Make ``fn`` callable in numba-cuda-mlir kernels. Where its arguments are values
    (numbers, arrays, tuples of them), a call compiles it as a device function, once per
    signature (MLIR's inliner inlines it), inlined into its caller's Numba IR where
    ``inline`` (see ``_allocates_shared``); where one is a function (an operator), it
    is inlined into the caller's Numba IR (numba-cuda-mlir lowers no function-typed
    parameter), which numba-cuda-mlir types again at every call: only where needed."""
    import inspect

    from numba_cuda_mlir.extending import overload, typing_registry

    _device_callers[fn] = caller(fn, jitable(fn, inline))

    def choose(*args, **kwargs):
        return _callee(fn, (*args, *kwargs.values()))

    overload(fn, typing_registry=typing_registry, inline="always", strict=False, jit_options=DEVICE)(choose)
    fn.__signature__ = inspect.signature(fn)


def _allocates_shared(value):
    """Whether ``value``, read by a coop function, allocates static shared memory: the
    scratch allocator, or a function calling it (directly or through others). Such a
    function is inlined into its callers' Numba IR: numba-cuda-mlir 0.6 links a device
    function into the kernel without its module's static shared arrays (memref
    globals), an invalid module, when it does not inline it itself (past 64 statements:
    the sorted warp top-k's arranger)."""
    recipe = getattr(value, "_coop_recipe", None)
    if recipe is not None:
        name, arguments = recipe
        return name == "word_array" and arguments[1] == "shared"
    return isinstance(value, pytypes.FunctionType) and value in _allocating


def _callee(fn, argument_types, arrays=True):
    """What a call of ``fn`` (rebuilt and registered) with ``argument_types`` compiles:
    the call of its device function where every argument is a value (arrays too, with
    ``arrays``), else ``fn`` itself, inlined."""
    call = _device_callers.get(fn)
    if call is not None and all(_value_type(ty) and (arrays or not _is_array(ty)) for ty in argument_types):
        return call
    return fn


def _is_array(ty):
    from numba_cuda_mlir.numba_cuda import types as M

    return isinstance(ty, M.Array)


def _value_type(ty):
    """Whether a numba-cuda-mlir type is a value a device function may take (a literal
    is not: a device function's parameters are typed without their values, and coop's
    code may need the value, a primitive's ``threads=`` say)."""
    from numba_cuda_mlir.numba_cuda import types as M

    if isinstance(ty, M.Omitted):
        return True
    if isinstance(ty, M.Literal):
        return False
    if isinstance(ty, M.BaseTuple):
        return all(map(_value_type, ty))
    return isinstance(ty, (M.Number, M.Boolean, M.Array, M.NoneType))


def _rebuilt_if_coop_function(value):
    """A function of coop's compiled code rebuilt (``mlir_function``), other values as
    they are (a primitive too: it is registered with numba-cuda-mlir as it is)."""
    if (isinstance(value, pytypes.FunctionType) and value.__module__.startswith("coop.")
            and not hasattr(value, "_coop_generator")):
        return mlir_function(value)
    return value


def _mlir_value(value):
    """What ``value``, read by compiled coop code, is for numba-cuda-mlir."""
    import numba.cuda
    from numba.cuda.extending import _Intrinsic

    if value is numba.cuda:
        from numba_cuda_mlir import cuda

        return cuda
    recipe = getattr(value, "_coop_recipe", None)
    if recipe is not None:
        name, arguments = recipe
        made = from_recipe(name, tuple(map(_rebuilt_if_coop_function, arguments)))
        _originals[made] = value
        return made
    if isinstance(value, _Intrinsic):
        raise MlirUnsupported(f"the intrinsic {value._name}")
    if isinstance(value, numba.cuda.types.Type):  # (a dtype for cuda.local.array, say)
        return numba_cuda_mlir_type(value)
    return _rebuilt_if_coop_function(value)
