"""The value types coop's primitives accept, and conversion back to a value's type.

Values are bool, int8 ... uint64, float16, float32, float64, complex64, complex128, and
tuples of these (argmax's ``(value, index)``, key-value pairs). Operators may return a
wider type than their arguments (Numba types ``int32 + int32`` as int64); a primitive
converts every result back to the value's own type, as C++ does on assignment, so
shuffles move the value's own width and the result has the input's type.
"""

import functools

import numpy as np
from numba.cuda import types

from coop._core.backend import SIMULATOR, device_function

if not SIMULATOR:
    from coop._core.compilers import numba_cuda_intrinsics as compiled

SCALAR_TYPES = (
    types.boolean,
    types.int8,
    types.int16,
    types.int32,
    types.int64,
    types.uint8,
    types.uint16,
    types.uint32,
    types.uint64,
    types.float16,
    types.float32,
    types.float64,
    types.complex64,
    types.complex128,
)


def check_dtype(ty, signature, param):
    """Raise ``signature``'s error unless ``ty`` is a supported value type."""
    if isinstance(ty, types.BaseTuple):
        if len(ty) == 0:
            raise signature.error(param, "must not be an empty tuple")
        for element in ty:
            check_dtype(types.unliteral(element), signature, param)
        return
    if types.unliteral(ty) not in SCALAR_TYPES:
        raise signature.error(
            param,
            f"has unsupported type {ty}; supported: bool, int8-int64, uint8-uint64, "
            "float16, float32, float64, complex64, complex128 and tuples of these",
        )


def size_and_alignment(value_type):
    """Bytes and alignment of ``value_type`` in memory, as Numba lays it out (LLVM's data
    layout: scalars aligned to their size, bools one byte, complex and tuples as C
    structs). Computed here, not asked of the CUDA target, so that the simulator and
    host code (``temp_storage_bytes``) get the same sizes as compiled code."""
    if isinstance(value_type, types.BaseTuple):
        size, alignment = 0, 1
        for member in value_type.types:
            member_size, member_alignment = size_and_alignment(member)
            size = -(-size // member_alignment) * member_alignment + member_size
            alignment = max(alignment, member_alignment)
        return -(-size // alignment) * alignment, alignment
    if isinstance(value_type, types.Boolean):
        return 1, 1
    if isinstance(value_type, types.Complex):
        return value_type.bitwidth // 8, value_type.bitwidth // 16
    return value_type.bitwidth // 8, value_type.bitwidth // 8


def value_type_of(dtype):
    """The Numba type of a host-side dtype description: a NumPy dtype or scalar type
    (``np.int32``), a Numba type, or a tuple of these (``(np.float32, np.int32)``)."""
    if isinstance(dtype, tuple):
        return types.Tuple(tuple(value_type_of(d) for d in dtype))
    if isinstance(dtype, types.Type):
        return dtype
    from numba.cuda.np.numpy_support import from_dtype

    return from_dtype(np.dtype(dtype))


def is_numeric_scalar(ty):
    """Sums need a number (bools are counted, see ``Signature.sum_input``), not a tuple."""
    return isinstance(ty, (types.Integer, types.Float, types.Complex))


def zero(value_type):
    """A zero of ``value_type`` (a Numba type, tuples included), as a NumPy value."""
    if isinstance(value_type, types.BaseTuple):
        return tuple(zero(member) for member in value_type.types)
    from numba.cuda.np.numpy_support import as_dtype

    return as_dtype(types.unliteral(value_type)).type(0)


def simulated_type_of(value):
    """The Numba type of a value computed on the simulator (not as a literal)."""
    from numba.cuda.typing.typeof import typeof

    if isinstance(value, tuple):
        return types.BaseTuple.from_types([simulated_type_of(v) for v in value])
    if isinstance(value, bool):
        return types.boolean
    if isinstance(value, int):
        return types.int64
    if isinstance(value, float):
        return types.float64
    return typeof(value)


def convertible(from_type, to_type):
    """Whether Numba converts a ``from_type`` value to ``to_type`` (as on assignment).
    Compiled, Numba's typing context says; the simulator, which cannot load it, applies
    its rules: numbers to numbers (not complex to real), tuples element by element."""
    if not SIMULATOR:
        from numba.cuda.descriptor import cuda_target

        return cuda_target.typing_context.can_convert(from_type, to_type) is not None
    from_type, to_type = types.unliteral(from_type), types.unliteral(to_type)
    if isinstance(from_type, types.BaseTuple) or isinstance(to_type, types.BaseTuple):
        return (
            isinstance(from_type, types.BaseTuple)
            and isinstance(to_type, types.BaseTuple)
            and len(from_type) == len(to_type)
            and all(convertible(f, t) for f, t in zip(from_type.types, to_type.types))
        )
    numbers = (types.Boolean, types.Integer, types.Float, types.Complex)
    if not isinstance(from_type, numbers) or not isinstance(to_type, numbers):
        return from_type == to_type
    return not (isinstance(from_type, types.Complex) and not isinstance(to_type, types.Complex))


@functools.lru_cache(maxsize=None)
def converter(value_type):
    """A function converting an operator's result back to ``value_type``."""
    if SIMULATOR:
        return _simulated_converter(value_type)
    return compiled.converter(value_type)


def _simulated_converter(value_type):
    if isinstance(value_type, types.BaseTuple):
        element_converters = tuple(_simulated_converter(t) for t in value_type)

        def convert_tuple(value):
            return tuple(c(v) for c, v in zip(element_converters, value))

        return convert_tuple

    from numba.cuda.np.numpy_support import as_dtype

    dtype = as_dtype(value_type)

    def convert_scalar(value):
        # astype wraps out-of-range integers the way a C cast does
        return np.asarray(value).astype(dtype)[()]

    return convert_scalar


if SIMULATOR:

    def same(value):
        """The value itself (where a conversion is optional)."""
        return value

    def select(condition, if_true, if_false):
        """``if_true if condition else if_false``, without a branch where compiled (so that
        shuffles of the chosen value stay converged)."""
        return if_true if condition else if_false

else:
    same = compiled.same  # an intrinsic, not a device function: no function of its own to compile
    select = compiled.select


@device_function
def chosen(condition, if_true, if_false):
    """``if_true if condition else if_false``, a value returned by a function of its own
    (numba-cuda-mlir 0.6 keeps a variable assigned in both arms of a branch in local
    memory). Not ``select``, whose inline-assembly ``selp`` keeps shuffled values
    converged: here NVVM is left free to branch or select."""
    return if_true if condition else if_false


@device_function
def joined(value):
    """``value``, written ``x = joined(x)`` inside a loop after a branch that assigns ``x``
    a call's result. Under Python 3.12, numba-cuda-mlir 0.6 joins such an ``x`` at the
    loop's head (or, past a ``break``, at its exit) as two memrefs, in local memory; this
    statement gives the branch a join of its own (the same source compiled under Python
    3.11 keeps ``x`` in registers without it)."""
    return value


def widened(a, b):
    """(The simulator's.) ``a`` and ``b`` widened as compiled Numba widens integers
    before arithmetic: to 64 bits, unsigned if both are (int64 for mixed signedness
    below 64 bits), so that, say, the difference of two uint8 values converted to int16
    is the same on both paths."""
    if isinstance(a, np.integer) and isinstance(b, np.integer) and min(a.itemsize, b.itemsize) < 8:
        both_unsigned = a.dtype.kind == "u" and b.dtype.kind == "u"
        wide = np.uint64 if both_unsigned else np.int64
        if max(a.itemsize, b.itemsize) < 8 or a.dtype.kind == b.dtype.kind:
            return wide(a), wide(b)
    return a, b
