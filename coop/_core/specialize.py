"""One implementation per primitive, specialised from its argument types.

A primitive is written once, as a *generator*: a Python function with the primitive's
public signature that receives the argument *types*, checks them, computes everything
that must be known at compile time (sizes, shuffle clamps, the value type to convert
results back to) and returns its *body*: a function whose parameters are some of the
primitive's, by name (``reduction(value, op, valid_items, temp_storage)``). The decorator
makes the *implementation* from it: the body's code with the public signature (Numba
matches an implementation's parameters to the primitive's), compiled from the body's
source (``coop._core.constants.with_parameters``), so the public signature is written
once and there is no call more to compile. (Where the source cannot be read, the
implementation calls the body, a ``device_function``. A generator may also return the
implementation itself, with every parameter and default.)

- Compiled (``numba.cuda``), the generator is registered as a Numba ``overload`` for the
  CUDA target with ``prefer_literal=True``, so constants reach it as literal types and
  each distinct combination of types and constants gets its own specialisation.
- Under the simulator, calling the primitive types the actual arguments as the compiler
  would (literal types where the call's source passes a compile-time constant, see
  ``coop._core.call_site``), runs the same generator once per combination (cached), so
  the same checks raise the same errors, checks the call as a collective (every thread
  of the block or logical warp makes it, with equal arguments where they must agree:
  ``coop._core.simulator.primitive_call``) and calls the implementation it returned
  with the actual arguments.

Building blocks that implementations share are ``device_function``\\s: register_jitable
functions when compiled (inlined by NVVM), plain Python under the simulator. They take
operators, conversions and shufflers as arguments.

The ``Signature`` class checks arguments on behalf of one primitive and raises
``CoopError`` (a Numba ``TypingError``) naming the primitive and the parameter.
"""

import functools
import inspect
import operator
import textwrap
import threading

import numpy as np
from numba.cuda import types

from coop._core import values
from coop._core.backend import SIMULATOR, device_function
from coop._core.compilers import numba_cuda
from coop._core.constants import SOURCE_LOCK, with_parameters
from coop._core.docs import expand
from coop._core.errors import ArgumentTypeError, CoopError, launch_message, launch_shape_message, padded_shape
from coop._core.values import check_dtype, convertible, simulated_type_of, value_type_of, zero


class SimulatedCallable(types.Opaque):
    """The type the simulator gives a Python callable passed as an argument (an operator).

    Named by the callable's code, so a lambda re-created on every call keeps one type
    (and one cached specialisation); ``function`` is for identity checks such as
    "is this coop.ops.add", never called."""

    def __init__(self, function):
        self.function = function
        code = getattr(function, "__code__", function)
        super().__init__(f"SimulatedCallable({getattr(function, '__qualname__', '?')}@{id(code):x})")


def _simulator_type(value, constant=True, read_only=False):
    """The Numba type a simulated argument would have in a compiled kernel: ints, bools
    and strings as literals where Numba sees a compile-time ``constant`` (see
    ``coop._core.call_site``), else as run-time values; arrays ``read_only`` where
    Numba's would be (a global array, or one that is not writeable). Remembered by what
    decides it (``_type_key``): every thread of a block makes the same calls, and
    building a Numba type (a literal's builds a typing context) costs more than a
    simulated primitive's own work."""
    key = _type_key(value, constant, read_only)
    if key is None:
        return _type_of(value, constant, read_only)
    found = _TYPES.get(key, _TYPES)
    if found is _TYPES:
        found = _TYPES[key] = _type_of(value, constant, read_only)
    return found


_TYPES = {}  # _type_key -> Numba type


def _type_key(value, constant, read_only):
    """What ``_type_of`` reads of an argument, hashable, or None where that is more than
    a few attributes (tuples but of int constants, records, other objects)."""
    kind = type(value)
    if value is None:
        return None, None
    if kind is bool or kind is int or kind is str:
        return kind, value if constant else None, constant
    if kind is float or kind is complex or kind is np.bool_ or issubclass(kind, np.number):
        return (kind,)
    if kind is tuple:
        if constant and value and all(type(v) is int for v in value):
            return kind, value
        return None
    ndim = getattr(value, "ndim", 0)
    if ndim and getattr(value, "dtype", None) is not None:
        flags = getattr(value, "flags", None)
        return value.dtype, ndim, read_only or not (flags is None or flags.writeable)
    if callable(value) and not isinstance(value, type):
        code = getattr(value, "__code__", None)
        if code is None:
            return None
        return code, getattr(value, "__qualname__", "?")
    return None


def _type_of(value, constant, read_only):
    from numba.cuda.np.numpy_support import from_dtype
    from numba.cuda.typing.typeof import typeof

    if value is None:
        return None
    if isinstance(value, (bool, np.bool_)) and not isinstance(value, np.ndarray):
        if isinstance(value, np.bool_) or not constant:
            return types.boolean
        return types.literal(bool(value))
    if isinstance(value, (int, str)):
        if constant:
            return types.literal(value)
        return types.unicode_type if isinstance(value, str) else types.int64
    if isinstance(value, tuple) and constant and value and all(isinstance(v, int) for v in value):
        return types.BaseTuple.from_types([types.literal(v) for v in value])
    if hasattr(value, "dtype") and hasattr(value, "ndim") and getattr(value, "ndim", 0) > 0:
        flags = getattr(value, "flags", None)
        writeable = flags is None or flags.writeable
        return types.Array(from_dtype(np.dtype(value.dtype)), value.ndim, "A", readonly=read_only or not writeable)
    if callable(value) and not isinstance(value, type):
        return SimulatedCallable(value)
    return typeof(value)


def host_call_message(qualname):
    return (
        f"{qualname} was called from host code: call {qualname} inside a @cuda.jit kernel "
        "(or a device function that a kernel calls)"
    )


#: Every primitive made by ``@primitive``, by qualified name (``"coop.block.sum"``): the
#: registry that tests derive their lists from (docs, README, codegen cases).
PRIMITIVES = {}


def primitive(qualname, temp_storage_bytes=None, group=None, uniform=()):
    """Make a kernel-side primitive from its generator (see the module docstring).

    ``temp_storage_bytes(sig, value_type, ...)``, for primitives with shared scratch, becomes
    the host-side ``primitive.temp_storage_bytes(dtype, ...)``: the bytes a
    ``temp_storage=`` array needs, for sizing ``cuda.shared.array`` at module level. Its
    parameters are the primitive's (the constants the scratch depends on), in the order
    users pass them, each defaulting to ``PRIMITIVE_DEFAULT`` where it takes the
    primitive's default; host-only ones (``value_dtype``) have their own. The docstring's
    ``{temp_storage_size}`` becomes the host call with its defaults.

    ``group``: ``"block"`` or ``"warp"`` for collectives, which every thread of the block
    (every lane of the logical warp given by the ``width`` argument) must call, with equal
    values of the parameters named in ``uniform``; a ``threads`` argument must be the
    block's thread count. The simulator checks all of this at each call
    (``coop._core.simulator.primitive_call``); compiled, debug mode
    (``coop.config.debug``) checks ``threads`` at run time.
    """

    def decorate(written):
        signature = inspect.signature(written)
        parameters = tuple(signature.parameters)
        generator = _implementing(qualname, written, signature)

        if SIMULATOR:
            call = _simulated_primitive(qualname, generator, signature, group, uniform)
        else:

            def call(*args, **kwargs):
                raise CoopError(host_call_message(qualname))

            generator_with_checks = _literal_failure_first(
                _with_debug_checks(qualname, generator, signature, parameters))

        functools.update_wrapper(call, written)
        own = {}
        if temp_storage_bytes is not None:
            call.temp_storage_bytes = _host_sizer(qualname, temp_storage_bytes, signature)
            own["temp_storage_size"] = _size_paragraph(call.temp_storage_bytes)
        call.__doc__ = expand(written.__doc__, **own)
        call.__signature__ = signature
        call.__qualname__ = call.__name__ = qualname  # what Numba's errors call it
        if not SIMULATOR:
            numba_cuda.register_overload(call, generator_with_checks)
            call._coop_generator = generator_with_checks  # (for another compiler's adapter)
        PRIMITIVES[qualname] = call
        return call

    return decorate


def _implementing(qualname, generator, signature):
    """``generator``, returning an implementation with the public ``signature`` where it
    returns a body (see the module docstring)."""
    public = tuple(signature.parameters)
    defaults = tuple(p.default for p in signature.parameters.values() if p.default is not inspect.Parameter.empty)

    @functools.wraps(generator)
    def specialise(*args, **kwargs):
        body = generator(*args, **kwargs)
        if body is None:
            return None
        code = getattr(body, "__code__", None)
        if code is not None and not code.co_flags & (inspect.CO_VARARGS | inspect.CO_VARKEYWORDS):
            taken = code.co_varnames[:code.co_argcount]  # (quicker than inspect.signature)
            if taken == public and (body.__defaults__ or ()) == defaults:
                return body
        else:
            taken = tuple(inspect.signature(body).parameters)
        unknown = [name for name in taken if name not in public]
        if unknown:
            raise TypeError(f"{qualname}'s generator returned a body taking {unknown}, which are not "
                            f"parameters of {qualname}{signature}")
        return _implementation(qualname, signature, body, taken)

    return specialise


def _implementation(qualname, signature, body, taken):
    """The implementation of ``body``: the body's own code with the public parameters (no
    call more to compile), or, where its source cannot be read, a function calling it."""
    try:
        copy = with_parameters(inspect.unwrap(body), signature)
    except ValueError as error:
        raise TypeError(f"{qualname}'s body: {error}") from None
    if copy is not None:
        return copy
    CALLED_BODIES.add(f"{qualname}: {getattr(body, '__qualname__', body)}")
    return _with_public_signature(signature, device_function(body), taken)


#: The bodies whose source could not be read, so that their implementations call them
#: (a function more to compile): ``"qualname: body"``. None of coop's own should be here
#: (the docs tests check that their examples add none).
CALLED_BODIES = set()


def _with_public_signature(signature, inner, names, check=None):
    """A function with ``signature`` (its parameters and defaults) returning ``inner``
    called with the parameters ``names``, after ``check()`` where given."""
    namespace = {"check": check, "inner": inner}
    header = []
    for position, parameter in enumerate(signature.parameters.values()):
        if parameter.default is inspect.Parameter.empty:
            header.append(parameter.name)
        else:
            namespace[f"default_{position}"] = parameter.default
            header.append(f"{parameter.name}=default_{position}")
    checked = "    check()\n" if check is not None else ""
    exec(f"def implementation({', '.join(header)}):\n{checked}    return inner({', '.join(names)})\n",  # noqa: S102
         namespace)
    implementation = namespace["implementation"]
    # (named after what it calls, in Numba's errors and the PTX's symbols)
    implementation.__module__ = getattr(inner, "__module__", None)
    implementation.__qualname__ = f"{getattr(inner, '__qualname__', 'inner')}.<implementation>"
    return implementation


def _simulated_primitive(qualname, generator, signature, group, uniform):
    """The simulator's primitive: types the arguments as the compiler would (reading the
    call's source for which are constants), runs the generator once per combination of
    types, checks collectives (``group``), then runs the implementation. Calls made by
    coop's own code (inside another primitive) are not checked again."""
    import sys
    import threading

    from coop._core import simulator
    from coop._core.call_site import call_site

    implementations = {}
    parameters = tuple(signature.parameters)
    bind = _binder(signature, qualname)

    def call(*args, **kwargs):
        if not simulator.in_kernel():
            raise CoopError(host_call_message(qualname))
        arguments = bind(args, kwargs)
        thread = threading.current_thread()
        nested = getattr(thread, "_coop_depth", 0)
        if nested:
            arg_types = tuple(map(_simulator_type, arguments))
        else:
            frame = sys._getframe(1)
            site = call_site(frame, parameters)
            arg_types = tuple(
                _simulator_type(v, name not in site.run_time, name in site.read_only)
                for name, v in zip(parameters, arguments)
            )
        impl = implementations.get(arg_types)
        if impl is None:
            with _SPECIALISING:  # (else every thread of the block would run the generator)
                impl = implementations.get(arg_types)
                if impl is None:
                    impl = implementations[arg_types] = generator(*arg_types)
        if group is not None and not nested:
            named = dict(zip(parameters, arguments))
            simulator.check_launch(qualname, site.where, named.get("threads"))
            width = int(named.get("width", 32)) if group == "warp" else None
            agreed = {name: named[name] for name in uniform if name in named}
            simulator.primitive_call(qualname, site.where, width, agreed, frame)
        thread._coop_depth = nested + 1
        try:
            return impl(*arguments)
        finally:
            thread._coop_depth = nested

    return call


_SPECIALISING = threading.RLock()


def _binder(signature, qualname):
    """``bind(args, kwargs)``: the call's argument for each of ``signature``'s parameters,
    in order, defaults filled in (``inspect.Signature.bind`` for what it does not take
    in its stride: its errors, parameters other than positional-or-keyword). Python's
    error for arguments that do not bind (the compiled path's: Numba reports it) names
    the primitive and its parameters here."""
    names = tuple(signature.parameters)
    position = {name: k for k, name in enumerate(names)}
    defaults = [p.default for p in signature.parameters.values()]
    plain = all(p.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD for p in signature.parameters.values())

    def bind_slowly(args, kwargs):
        try:
            bound = signature.bind(*args, **kwargs)
        except TypeError as error:
            raise ArgumentTypeError(f"{qualname}: {error}; its parameters: {', '.join(names)}") from None
        bound.apply_defaults()
        return list(bound.arguments.values())

    if not plain:
        return bind_slowly

    def bind(args, kwargs):
        if len(args) > len(names):
            return bind_slowly(args, kwargs)
        arguments = list(args) + defaults[len(args):]
        for name, value in kwargs.items():
            k = position.get(name, -1)
            if k < len(args):  # (unknown, or given twice)
                return bind_slowly(args, kwargs)
            arguments[k] = value
        if any(value is inspect.Parameter.empty for value in arguments):  # (one missing)
            return bind_slowly(args, kwargs)
        return arguments

    return bind


class _LiteralFailure(threading.local):
    key = None  # (the unliteral argument types of the last call refused with constants)
    error = None


def _literal_failure_first(generator):
    """``generator``, raising for arguments without constants the error it raised for the
    same arguments with constants, if it refuses both. Numba types a call of a
    ``prefer_literal`` overload twice, with constants as literal types and then as plain
    run-time types, and reports both refusals: a mistake such as a missing
    ``items_per_thread=`` would come with a second, misleading "threads must be a
    compile-time constant". One error raised twice is reported once."""
    failure = _LiteralFailure()

    @functools.wraps(generator)
    def specialise(*args, **kwargs):
        given = (args, tuple(sorted(kwargs.items())))
        key = (tuple(map(types.unliteral, args)), tuple((k, types.unliteral(v)) for k, v in given[1]))
        literal = key != given
        try:
            return generator(*args, **kwargs)
        except CoopError as error:
            if literal:
                failure.key, failure.error = key, error
            elif failure.key == key:
                raise failure.error from None
            raise
        finally:
            if not literal:
                failure.key = failure.error = None

    return specialise


def _with_debug_checks(qualname, generator, signature, parameters):
    """The generator, whose implementations check the launch against ``threads=`` at
    run time when ``coop.config.debug`` is on while it specialises."""
    from coop._core.config import config

    @functools.wraps(generator)
    def specialise(*args, **kwargs):
        config.specialised = True
        impl = generator(*args, **kwargs)
        if impl is None or not config.debug or "threads" not in parameters:
            return impl
        bound = signature.bind(*args, **kwargs)
        threads = bound.arguments.get("threads")
        if is_none(threads):
            return impl
        from coop._core.compilers.numba_cuda_intrinsics import launch_check

        sig = Signature(qualname)
        shape = sig.block_shape(threads)
        if shape is None:
            check = launch_check(launch_message(qualname, sig.constant_shape(threads), "%lld"),
                                 sig.block_threads(threads))
        else:
            given = sig.constant_shape(threads)
            check = launch_check(launch_shape_message(qualname, given, "(%lld, %lld, %lld)"), shape)
        return _prefixed(impl, signature, check)

    return specialise


def _prefixed(impl, signature, check):
    """``impl`` (an implementation) preceded by ``check()``, with the same signature."""
    return _with_public_signature(signature, numba_cuda.register_jitable(impl), tuple(signature.parameters), check)


#: A sizer's default meaning "the primitive's default for this parameter" (see ``primitive``).
PRIMITIVE_DEFAULT = object()


def _host_sizer(qualname, sizer, public):
    """The host-side ``temp_storage_bytes(dtype, ...)`` of ``sizer(sig, value_type, ...)``,
    whose parameters default to ``PRIMITIVE_DEFAULT`` where they take the primitive's
    default: a changed default cannot leave the sizer sizing for the old one."""
    host = [inspect.Parameter("dtype", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
    for name, parameter in list(inspect.signature(sizer).parameters.items())[2:]:
        if parameter.default is PRIMITIVE_DEFAULT:
            if name not in public.parameters or public.parameters[name].default is inspect.Parameter.empty:
                raise TypeError(f"{qualname}'s sizer: {name} has no default in the primitive to take")
            parameter = parameter.replace(default=public.parameters[name].default)
        host.append(parameter)
    host_signature = inspect.Signature(host)

    def temp_storage_bytes(*args, **kwargs):
        sig = Signature(f"{qualname}.temp_storage_bytes")
        bound = host_signature.bind(*args, **kwargs)
        bound.apply_defaults()
        constants = dict(bound.arguments)
        value_type = value_type_of(constants.pop("dtype"))
        check_dtype(value_type, sig, "dtype")
        return sizer(sig, value_type, **constants)

    functools.update_wrapper(temp_storage_bytes, sizer)
    temp_storage_bytes.__signature__ = host_signature
    temp_storage_bytes.__qualname__ = temp_storage_bytes.__name__ = f"{qualname}.temp_storage_bytes"
    return temp_storage_bytes


def _size_paragraph(sizer):
    """"Size: ``coop.x.temp_storage_bytes(dtype, threads, algorithm="raking")``." for a
    docstring's ``{temp_storage_size}``, wrapped as the docstrings are."""

    def written(parameter):
        default = parameter.default
        if default is inspect.Parameter.empty:
            return parameter.name
        if isinstance(default, str):
            return f'{parameter.name}="{default}"'
        if isinstance(default, type) and issubclass(default, np.generic):
            return f"{parameter.name}=np.{default.__name__}"
        return f"{parameter.name}={default!r}"

    parameters = ", ".join(map(written, inspect.signature(sizer).parameters.values()))
    return "\n".join(textwrap.wrap(f"Size: ``{sizer.__qualname__}({parameters})``.", width=84,
                                   break_long_words=False, break_on_hyphens=False))


def is_none(ty):
    """True if an argument was omitted with default None or passed as None."""
    return ty is None or isinstance(ty, types.NoneType) or (
        isinstance(ty, types.Omitted) and ty.value is None
    )


def function_type(function):
    """The type an operator argument has when a kernel passes ``function`` (say
    ``coop.ops.add``): lets a primitive specialise another with a fixed operator."""
    if SIMULATOR:
        return SimulatedCallable(function)
    from numba.cuda.descriptor import cuda_target

    return cuda_target.typing_context.resolve_value_type(function)


def is_function(op, *functions):
    """True if the operator argument ``op`` (a type) is one of the Python ``functions``
    (``operator.add``, a coop.ops operator, ...)."""
    key = op.function if isinstance(op, SimulatedCallable) else getattr(op, "typing_key", None)
    return any(key is f for f in functions)


def is_items_array(ty):
    return isinstance(ty, types.Array)


def _power_of_two(n):
    return n > 0 and n & (n - 1) == 0


class Signature:
    """Checks the arguments of one primitive; errors name it and the parameter."""

    def __init__(self, primitive_name):
        self.primitive = primitive_name

    def error(self, param, message):
        return CoopError(f"{self.primitive}: {param} {message}")

    # -- compile-time constants ----------------------------------------------------------

    def constant_int(self, ty, param):
        """The value of an integer that must be a compile-time constant."""
        if isinstance(ty, types.Omitted):
            ty = ty.value
        if isinstance(ty, (int, np.integer)) and not isinstance(ty, bool):
            return int(ty)
        if isinstance(ty, types.IntegerLiteral):
            return int(ty.literal_value)
        raise self.error(
            param,
            f"must be a compile-time constant integer (a literal or a module-level "
            f"constant), got a run-time value of type {ty}",
        )

    def width(self, ty, param="width"):
        width = self.constant_int(ty, param)
        if not (_power_of_two(width) and width <= 32):
            raise self.error(
                param, f"must be a power of two from 1 to 32 (1, 2, 4, 8, 16, 32), got {width}"
            )
        return width

    def constant_shape(self, ty, param="threads"):
        """A constant int, or a constant tuple of ints (a block shape such as ``(16, 16)``)."""
        if isinstance(ty, types.Omitted):
            ty = ty.value
        if isinstance(ty, tuple):
            return tuple(self.constant_int(t, param) for t in ty)
        if isinstance(ty, types.BaseTuple):
            if not 1 <= len(ty) <= 3 or not all(isinstance(t, (types.IntegerLiteral, int)) for t in ty):
                raise self.error(
                    param,
                    "must be a compile-time constant: an integer or a tuple of 1 to 3 integers "
                    f"(the block shape, e.g. (16, 16)) written as literals or module-level constants; got {ty}",
                )
            return tuple(self.constant_int(t, param) for t in ty)
        return self.constant_int(ty, param)

    def block_threads(self, ty, param="threads"):
        """The optional compile-time block size (None if not given), 1 to 1024: an int,
        or the block's shape as a tuple of ints (``(16, 16)`` is 256 threads)."""
        if is_none(ty):
            return None
        shape = self.constant_shape(ty, param)
        count = int(np.prod(shape)) if isinstance(shape, tuple) else shape
        if isinstance(shape, tuple) and min(shape) < 1:
            raise self.error(param, f"must be a block shape of positive sizes, got {shape}")
        if not 1 <= count <= 1024:
            raise self.error(param, f"must be from 1 to 1024 (a CUDA block's limit), got {count}")
        return count

    def block_shape(self, ty, param="threads"):
        """The block's shape ``(x, y, z)`` where ``threads=`` is a tuple (sizes left out
        are 1), else None (an int gives the thread count, not the shape): what
        ``coop._core.scratch.block_rank_of`` computes a thread's rank from."""
        if is_none(ty):
            return None
        self.block_threads(ty, param)
        shape = self.constant_shape(ty, param)
        return padded_shape(shape) if isinstance(shape, tuple) else None

    def choice(self, ty, param, choices):
        """A constant string naming one of ``choices`` (an algorithm)."""
        if isinstance(ty, types.Omitted):
            ty = ty.value
        if isinstance(ty, types.StringLiteral):
            ty = ty.literal_value
        valid = ", ".join(map(repr, choices))
        if not isinstance(ty, str):
            raise self.error(param, f"must be a constant string, one of {valid}; got {ty}")
        if ty not in choices:
            raise self.error(param, f"must be one of {valid}; got {ty!r}")
        return ty

    def run_time_int(self, ty, param):
        """An optional integer that may vary at run time (``valid_items``); None if absent."""
        if is_none(ty):
            return None
        if isinstance(ty, types.Omitted):
            ty = ty.value
        if isinstance(ty, (types.Integer, types.IntegerLiteral)) or isinstance(ty, int):
            return ty
        raise self.error(param, f"must be an integer, got {ty}")

    def run_time_bool(self, ty, param):
        """A flag that may vary at run time (a bool, or a constant True or False)."""
        if isinstance(ty, types.Omitted):
            ty = ty.value
        if isinstance(ty, (bool, types.Boolean, types.BooleanLiteral)):
            return ty
        raise self.error(param, f"must be True or False, got {ty}")

    def temp_storage(self, ty, param="temp_storage"):
        """The optional ``temp_storage`` array (None if not given)."""
        if is_none(ty):
            return None
        if not isinstance(ty, types.Array) or ty.ndim != 1 or not isinstance(
            ty.dtype, (types.Integer, types.Float)
        ):
            raise self.error(
                param,
                "must be a 1-D shared array of numbers, e.g. "
                "cuda.shared.array(BYTES, np.uint8, alignment=8) with BYTES from "
                f"{self.primitive}.temp_storage_bytes(...); got {ty}",
            )
        if ty.layout not in "CA":
            raise self.error(param, f"must be contiguous, got layout {ty.layout!r}")
        self.writable(ty, param)
        return ty

    # -- values and items ----------------------------------------------------------------

    def items(self, ty, param):
        """Check an items array; returns its element type."""
        if not is_items_array(ty):
            raise self.error(param, f"must be an items array (cuda.local.array), got {ty}")
        if ty.ndim != 1:
            raise self.error(
                param, f"must be a 1-D items array (cuda.local.array(N, dtype)), got {ty.ndim}-D"
            )
        values.check_dtype(ty.dtype, self, param)
        return ty.dtype

    def value_or_items(self, ty, param):
        """(value type, is_items_array) for a value-or-items argument."""
        if is_items_array(ty):
            return self.items(ty, param), True
        value_type = types.unliteral(ty)
        values.check_dtype(value_type, self, param)
        return value_type, False

    def sum_input(self, ty, param="value", count_items=True):
        """A sum's argument: ``(value type summed, is_items, counted)``. Numbers are summed
        as they are; bools are counted, as int32 (NumPy's sum of bools counts them), one
        per thread and, where ``count_items``, in items arrays."""
        dtype, is_items = self.value_or_items(ty, param)
        if isinstance(dtype, types.Boolean) and (count_items or not is_items):
            return types.int32, is_items, True
        if not values.is_numeric_scalar(dtype):
            hint = ""
            if isinstance(dtype, types.Boolean):
                hint = " (bools are counted one per thread; copy bool items into an int32 items array to count them here)"
            raise self.error(param, f"must hold numbers to sum, got {dtype}{hint}")
        return dtype, is_items, False

    def writable(self, ty, param):
        """Reject a read-only array where the primitive writes (Numba makes global arrays
        read-only constants)."""
        if isinstance(ty, types.Array) and not ty.mutable:
            raise self.error(
                param,
                "is a read-only array (a global array is a constant in a kernel, and so is an "
                "array passed with writeable=False); pass a writable array",
            )

    def single_value(self, ty, param, dtype):
        """Check a value (an initial value, a prefix) to be combined with ``dtype``
        values: one value, not an array, convertible to ``dtype``."""
        value_type, is_items = self.value_or_items(ty, param)
        if is_items:
            raise self.error(param, "must be one value, not an array")
        if not convertible(value_type, dtype):
            raise self.error(param, f"must be convertible to {dtype}, got {value_type}")
        return value_type

    def output_items(self, ty, param, dtype):
        self.writable(ty, param)
        item_type = self.items(ty, param)
        if item_type != dtype:
            raise self.error(param, f"must hold {dtype} items like the input, got {item_type}")
        return item_type

    def constant_bool(self, ty, param):
        if isinstance(ty, types.Omitted):
            ty = ty.value
        if isinstance(ty, bool):
            return ty
        if isinstance(ty, types.BooleanLiteral):
            return bool(ty.literal_value)
        raise self.error(param, f"must be a compile-time constant True or False, got {ty}")

    def scan_input(self, value, output, return_aggregate):
        """A scan's value, output and return_aggregate arguments:
        (value type, is_items, with_aggregate)."""
        dtype, is_items = self.value_or_items(value, "value")
        if is_items:
            if is_none(output):
                raise self.error("output", "is required with an items array (it may be the input)")
            self.output_items(output, "output", dtype)
        elif not is_none(output):
            raise self.error("output", "is only for items arrays; a one-value scan returns its result")
        with_aggregate = self.constant_bool(return_aggregate, "return_aggregate")
        if with_aggregate and is_items:
            raise self.error(
                "return_aggregate", "is only for one-value scans; items scans always return the aggregate"
            )
        return dtype, is_items, with_aggregate

    # -- operators -----------------------------------------------------------------------

    def operator_with_index(self, op, value_type, param, result_type, index_name):
        """An operator taking two ``value_type`` values, ``op(a, b)``, or two and an int64
        index, ``op(a, b, index)`` (CUB's flag_op with ``b_index``), whichever its
        parameters say, with a result convertible to ``result_type``. Returns a device
        function ``apply(op, a, b, index)`` calling it either way."""
        count = parameter_count(op)
        if count not in (None, 2, 3):
            raise self.error(param, f"must take 2 arguments (a, b) or 3 (a, b, {index_name}), but it takes {count}")
        if count == 3:
            self.operator(op, value_type, param, result_type=result_type,
                          arg_types=(value_type, value_type, types.int64))
            return _apply_with_index
        self.operator(op, value_type, param, result_type=result_type)
        return apply_binary

    def operator(self, op, value_type, param="op", arity=2, result_type=None, arg_types=None):
        """Check that ``op`` takes ``arity`` values of ``value_type`` (or ``arg_types``)
        and returns something convertible to ``result_type`` (default ``value_type``).

        Compiled, Numba types the call. The simulator checks the same with the same
        messages by calling ``op`` once on zeros of ``value_type`` (operators are pure;
        ``arg_types`` callbacks, which keep state, are checked for their arity only)."""
        result_type = value_type if result_type is None else result_type
        if arg_types is None:
            arg_types = (value_type,) * arity
            what = "one value" if arity == 1 else f"{arity} values"
            described = f"{what} of type {value_type}"
            trial = True
        else:
            arity = len(arg_types)
            what = f"{arity} arguments"
            described = f"arguments ({', '.join(map(str, arg_types))})"
            trial = False
        if SIMULATOR:
            if not isinstance(op, SimulatedCallable):
                raise self.error(param, f"must be a function or operator, got {op}")
            taken = parameter_count(op.function)
            if taken is not None and not _takes(op.function, arity):
                raise self.error(param, f"must take {what}, but it takes {taken}")
            if trial:
                try:
                    result = op.function(*(zero(t) for t in arg_types))
                except Exception as exc:  # what the compiler would reject while typing
                    raise self.error(param, f"cannot be applied to {described}: {exc}") from None
                returned = simulated_type_of(result)
                if not convertible(returned, result_type):
                    raise self.error(param, f"returns {returned}, which cannot be converted to {result_type}")
            return
        from numba.cuda.descriptor import cuda_target

        typing = cuda_target.typing_context
        try:
            sig = typing.resolve_function_type(op, arg_types, {})
        except Exception as exc:  # Numba reports typing failures of the op itself this way
            sig = None
            reason = f": {str(exc).splitlines()[0]}" if str(exc) else ""
        else:
            reason = ""
        if sig is None:
            taken = parameter_count(op)
            if taken is not None and taken != arity:
                raise self.error(param, f"must take {what}, but it takes {taken}")
            raise self.error(
                param, f"cannot be applied to {described}{reason}"
            )
        if not convertible(sig.return_type, result_type):
            raise self.error(
                param,
                f"returns {sig.return_type}, which cannot be converted to {result_type}",
            )


if SIMULATOR:
    # Python's operators on NumPy integers keep their width (int16 - int16 wraps in
    # int16), where compiled Numba computes in 64 bits: widened first, as Numba does,
    # the results agree whatever type they are converted to.
    _WIDENING_OPERATORS = tuple(getattr(operator, name) for name in (
        "add", "sub", "mul", "floordiv", "mod", "lshift", "rshift", "and_", "or_", "xor", "pow"))

    @device_function
    def apply_binary(op, a, b, index):
        """``op(a, b)``: an operator applied by code that may also pass an index (see
        ``Signature.operator_with_index``); Python's arithmetic operators on integers
        computed as compiled Numba computes them."""
        if any(op is widening for widening in _WIDENING_OPERATORS):
            with np.errstate(over="ignore"):  # (integers wrap silently, as on the GPU)
                return op(*values.widened(a, b))
        return op(a, b)
else:

    @device_function
    def apply_binary(op, a, b, index):
        """``op(a, b)``: an operator applied by code that may also pass an index (see
        ``Signature.operator_with_index``)."""
        return op(a, b)


@device_function
def _apply_with_index(op, a, b, index):
    return op(a, b, index)


def _python_function(op):
    """The Python function behind an operator: a simulator's device function wraps one."""
    return getattr(op, "fn", getattr(op, "py_func", op))


def _signature(function):
    """``inspect.signature(function)``, one thread at a time: a builtin's (``operator.add``'s)
    is parsed from its text with ``ast``, which CPython 3.11 does not make safe for threads
    ("AST constructor recursion depth mismatch"), and the simulator's threads ask at once."""
    with SOURCE_LOCK:
        return inspect.signature(function)


def _takes(function, arity):
    """Whether ``function`` can be called with ``arity`` positional arguments."""
    try:
        _signature(_python_function(function)).bind(*range(arity))
    except TypeError:
        return False
    except ValueError:  # no signature to read
        return True
    return True


def parameter_count(op):
    """How many parameters an operator has, if that can be read: a compiled device
    function's (a dispatcher type), or the simulator's Python function's."""
    if SIMULATOR:
        if isinstance(op, SimulatedCallable):
            op = op.function
        py_func = _python_function(op)
    else:
        dispatcher = getattr(op, "dispatcher", None)
        py_func = getattr(dispatcher, "py_func", None)
    if py_func is None:
        return None
    try:
        return len(_signature(py_func).parameters)
    except (TypeError, ValueError):
        return None
