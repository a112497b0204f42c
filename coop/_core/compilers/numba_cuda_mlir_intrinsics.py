"""coop's intrinsics for numba-cuda-mlir kernels, made from the recipes of
``numba_cuda_intrinsics`` (each intrinsic's ``_coop_recipe``: its factory's name and
arguments), so the code that calls them is written once.

numba-cuda-mlir lowers to MLIR, not to LLVM IR, so each intrinsic is made again here
from its public ``cuda`` API, with ``cuda.experimental.inline_ptx`` where numba-cuda's
intrinsic is PTX (the same PTX text, ``numba_cuda_intrinsics``' ``*_ASM``), and MLIR's
own operations where an array must be allocated (``word_array``). Most are device
functions (``jitable``), compiled once per signature and inlined by MLIR's inliner;
those coop's code passes as arguments are wrapped in a function inlined into the
caller's Numba IR (``passable``). numba-cuda-mlir 0.6's defects shape what is here:

- it shuffles 64-bit values through 32 bits: shuffles are PTX, a 64-bit value moved as
  two words, as numba-cuda's intrinsic does;
- a function returning a shared array does not compile (its result is typed in the
  generic address space): scratch buffers are allocated by an intrinsic that emits the
  allocation where it is called;
- a store ``array.view(dtype)[i] = v`` (``i`` not a constant) is deleted from any
  function into which an ``inline="always"`` overload is inlined: the overload inliner
  then runs Numba's dead-code elimination, whose alias analysis does not know that a
  view aliases its array (and numba-cuda-mlir inlines small device functions into
  their callers' Numba IR, the storers too): scratch slots are written by a call,
  ``operator.setitem(array.view(dtype), i, v)``, which that pass keeps;
- an unsigned 64-bit constant of 2**63 or more fails to lower (``std::bad_cast``): such
  masks are computed in the kernel;
- an overload's implementation is compiled again at every call unless its options say
  it is a device function (``DEVICE``);
- Numba's typing widens unsigned 32-bit arithmetic to 64 bits: what runs per key (the
  exchanges' padded slots, the radix digits) is MLIR's 32-bit ``arith`` operations, as
  numba-cuda's intrinsics are LLVM's.

``from_recipe`` raises ``MlirUnsupported`` for what is not made yet.
"""

import functools
import itertools
import operator
import re

import numpy as np


class MlirUnsupported(Exception):
    """What this adapter cannot yet build for numba-cuda-mlir (raised as the
    primitive's CoopError)."""


def _mlir_ptx(text):
    """numba-cuda's inline-assembly text (operands ``$0``, ``$1``, ...) for
    numba-cuda-mlir's ``inline_ptx`` (operands ``%0``, ``%1``, ...)."""
    return re.sub(r"\$(\d+)", r"%\1", text)


#: The options of every overload's implementation: compiled as a device function.
#: (numba-cuda-mlir 0.6 compiles an implementation without them as a device function
#: through a copy of its dispatcher, which it makes again, and compiles again, at every
#: call: it compares the copy's options, to which compiling added the chip, with its
#: own.)
DEVICE = {"device": True}


def jitable(fn, inline=False):
    """``fn`` compiled as a numba-cuda-mlir device function, once per signature (MLIR's
    inliner inlines it where it is called); ``inline``: inlined into its callers' Numba
    IR instead (numba-cuda-mlir's default for functions of at most 64 statements)."""
    from numba_cuda_mlir import cuda

    if inline:
        return cuda.jit(device=True, inline="always")(fn)
    return cuda.jit(device=True)(fn)


def passable(fn):
    """``fn`` as a function that coop's code may also pass as an argument (a device
    function cannot be one), inlined into its callers' Numba IR. Typed again at every
    call, so only for small functions."""
    from numba_cuda_mlir.extending import register_jitable, typing_registry

    return register_jitable(typing_registry=typing_registry, inline="always", **DEVICE)(fn)


def ptx_function(signature, text, *operands, returns="result", **scope):
    """A function ``signature`` (e.g. ``"step(mask, value, delta, c)"``) returning
    ``returns``, an expression of ``result``: the outputs of numba-cuda-mlir's
    ``inline_ptx`` of ``text`` (numba-cuda's operand syntax) with ``operands``,
    ``(constraint, expression)`` pairs (outputs' expressions are ignored), and of
    ``scope``'s names. Generated, since ``inline_ptx`` takes its text and constraints
    only as literals."""
    from numba_cuda_mlir import cuda

    arguments = "".join(f", {constraint!r}, {expression}" for constraint, expression in operands)
    call = f"cuda.experimental.inline_ptx({_mlir_ptx(text)!r}{arguments})"
    name = signature.partition("(")[0]
    scope.update(cuda=cuda, np=np)
    exec(f"def {signature}:\n    result = {call}\n    return {returns}\n", scope)
    return jitable(scope[name])


def typed_function(typer):
    """A function for numba-cuda-mlir kernels whose code ``typer`` gives for its
    arguments' (numba-cuda-mlir) types, or None where it does not apply; it takes the
    typer's parameters."""
    import inspect

    from numba_cuda_mlir.extending import overload, typing_registry

    names = ", ".join(inspect.signature(typer).parameters)
    made = {}

    def implementation(*args):
        # one device function per signature, called from a stub (a new function each
        # time would be compiled again at every call)
        if args not in made:
            code = typer(*args)
            made[args] = None if code is None else caller(typer, jitable(code))
        return made[args]

    function = _function(f"function({names})", "stub()", stub=_compiled_only)
    typed = _function(f"typed({names})", f"implementation({names})", implementation=implementation)
    overload(function, typing_registry=typing_registry, jit_options=DEVICE)(typed)
    return function


def caller(fn, target):
    """A function of ``fn``'s signature (defaults included) calling ``target`` with its
    arguments; None for a signature with ``*args`` or ``**kwargs``. (An overload's
    implementation, or a function coop's code may pass as an argument, must be a Python
    function of its own signature; the work is in ``target``, a device function.)"""
    import inspect

    parameters = inspect.signature(fn).parameters.values()
    if any(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in parameters):
        return None
    scope = {"target": target}
    declared, passed = [], []
    for number, p in enumerate(parameters):
        text = p.name
        if p.default is not p.empty:
            scope[f"default_{number}"] = p.default
            text += f"=default_{number}"
        if p.kind == p.KEYWORD_ONLY and "*" not in declared:
            declared.append("*")
        declared.append(text)
        passed.append(f"{p.name}={p.name}" if p.kind == p.KEYWORD_ONLY else p.name)
    signature = f"{fn.__name__ if fn.__name__.isidentifier() else 'call'}({', '.join(declared)})"
    call = f"target({', '.join(passed)})"
    if _returns_a_value(getattr(target, "py_func", fn)):
        return _function(signature, call, **scope)
    # a call, not the return of its None: numba-cuda-mlir 0.6 fails to lower a function
    # returning the call of one that returns from several places, inlined into it
    # ("Stack allocated var ... not found in varmap"; a function ending in an ``if``)
    return _function(signature, "None", before=call, **scope)


def _returns_a_value(fn):
    """Whether ``fn`` may return something other than None (read from its bytecode)."""
    import dis

    previous = None
    for instruction in dis.get_instructions(fn):
        if instruction.opname == "RETURN_CONST" and instruction.argval is not None:
            return True
        if instruction.opname == "RETURN_VALUE" and not (previous.opname == "LOAD_CONST" and previous.argval is None):
            return True
        previous = instruction
    return False


def _compiled_only():
    raise NotImplementedError("compiled only")


def _function(signature, returns, before="pass", **scope):
    exec(f"def {signature}:\n    {before}\n    return {returns}\n", scope)
    return scope[signature.partition("(")[0]]


def _scalar(ty):
    """The NumPy scalar type of a numba-cuda-mlir scalar type."""
    from numba_cuda_mlir.numba_cuda.np.numpy_support import as_dtype

    return as_dtype(ty).type


def from_recipe(name, args):
    """numba-cuda-mlir code for the intrinsic ``numba_cuda_intrinsics.<name>(*args)``
    (the checks' as ``coop.config.debug`` is now: numba-cuda's read it as they compile)."""
    from coop._core.config import config

    return _made(name, args, config.debug if name in _CHECKS else None)


@functools.lru_cache(maxsize=None)
def _made(name, args, debug):
    make = _RECIPES.get(name)
    if make is None:
        raise MlirUnsupported(f"the intrinsic {name}")
    made = make(*args)
    from numba_cuda_mlir.descriptor import MLIRDispatcher

    if isinstance(made, MLIRDispatcher):
        # coop's code passes some intrinsics to functions as arguments
        made = passable(caller(made.py_func, made))
    return made


# -- warp -------------------------------------------------------------------------------------

#: The scalar type of each inline-PTX register kind coop uses.
_REGISTER_TYPES = {"r": np.int32, "l": np.int64, "f": np.float32, "d": np.float64}

_SHUFFLE_MODES = ("idx", "up", "down", "bfly")  # coop._core.shuffle's IDX, UP, DOWN, XOR

# one word; two words (a 64-bit value): the value, the lane operand, the clamp operand,
# the mask; with a predicate, the instruction's source predicate as a second output
_WORD_SHUFFLE = {
    False: "shfl.sync.MODE.b32 $0, $1, $2, $3, $4;",
    True: "{ .reg .pred p; shfl.sync.MODE.b32 $0|p, $2, $3, $4, $5; selp.u32 $1, 1, 0, p; }",
}
_PAIR_SHUFFLE = {
    False: "{ .reg .b32 lo; .reg .b32 hi; mov.b64 {lo, hi}, $1; shfl.sync.MODE.b32 lo, lo, $2, $3, $4; "
           "shfl.sync.MODE.b32 hi, hi, $2, $3, $4; mov.b64 $0, {lo, hi}; }",
    True: "{ .reg .pred p; .reg .b32 lo; .reg .b32 hi; mov.b64 {lo, hi}, $2; shfl.sync.MODE.b32 lo|p, lo, $3, $4, $5; "
          "shfl.sync.MODE.b32 hi|p, hi, $3, $4, $5; mov.b64 $0, {lo, hi}; selp.u32 $1, 1, 0, p; }",
}


def _shuffle(mode, c, with_predicate):
    """``shuffle(mask, value, b)`` (``c`` None: ``(mask, value, b, c)``) of any value coop
    shuffles, as numba-cuda's intrinsic moves it: 32-bit words, narrower values widened,
    64-bit values as two words, complex numbers and tuples member by member; with
    ``with_predicate``, ``(value, predicate)``."""
    mode_name = _SHUFFLE_MODES[mode]

    def register(kind):
        """A function moving one word of register kind ``kind`` ("r", "f", "l", "d"):
        ``(moved, predicate)``."""
        text = (_PAIR_SHUFFLE if kind in "ld" else _WORD_SHUFFLE)[with_predicate].replace("MODE", mode_name)
        inputs = ((kind, "value"), ("r", "b"), ("r", "clamp"), ("r", "mask"))
        if with_predicate:
            return ptx_function("move(mask, value, b, clamp)", text, ("=" + kind, 0), ("=r", 0), *inputs,
                                returns="result[0], result[1] != 0")
        return ptx_function("move(mask, value, b, clamp)", text, ("=" + kind, 0), *inputs, returns="result, True")

    registers = {kind: register(kind) for kind in "rfld"}
    # (made with the shuffle, not by the typer: an intrinsic made while numba-cuda-mlir
    # types a function is unknown to that typing, "Cannot determine Numba type")
    registers.update({"to bits": _half_bits(True), "from bits": _half_bits(False)})

    def typer(mask, value, b, clamp):
        return _mover(value, registers, move_any)

    move_any = typed_function(typer)

    # (mask, value, b) with the clamp operand bound, else (mask, value, b, clamp);
    # (moved, predicate) with the predicate, else moved
    parameters = "mask, value, b" + (", clamp" if c is None else "")
    moved = f"move_any(mask, value, b, {'clamp' if c is None else c})" + ("" if with_predicate else "[0]")
    return jitable(_function(f"shuffle({parameters})", moved, move_any=move_any))


def _mover(ty, registers, move_any):
    """The code moving a value of numba-cuda-mlir type ``ty`` with ``registers`` (one
    function per register kind, and a float16's conversions to and from its bits),
    ``(moved, predicate)``; ``move_any`` moves members."""
    from numba_cuda_mlir.numba_cuda import types as M

    ty = M.unliteral(ty)
    if isinstance(ty, M.Boolean):
        word = registers["r"]

        def move(mask, value, b, clamp):
            moved, source = word(mask, np.int32(1 if value else 0), b, clamp)
            return moved != 0, source
    elif ty == M.float16:  # (as its bits: CUDA 13.0's NVVM dropped shared stores of one widened to f32)
        word, half_bits, half_of_bits = registers["r"], registers["to bits"], registers["from bits"]

        def move(mask, value, b, clamp):
            moved, source = word(mask, np.int32(half_bits(value)), b, clamp)
            return half_of_bits(np.uint16(moved)), source
    elif isinstance(ty, (M.Integer, M.Float)) and ty.bitwidth <= 64:
        kind = ("r" if ty.bitwidth <= 32 else "l") if isinstance(ty, M.Integer) else ("f" if ty.bitwidth <= 32 else "d")
        word, scalar, widen = registers[kind], _scalar(ty), _REGISTER_TYPES[kind]

        def move(mask, value, b, clamp):
            moved, source = word(mask, widen(value), b, clamp)
            return scalar(moved), source
    elif isinstance(ty, M.Complex):
        scalar = _scalar(ty)

        def move(mask, value, b, clamp):
            real, source = move_any(mask, value.real, b, clamp)
            imag, _ = move_any(mask, value.imag, b, clamp)
            return scalar(complex(real, imag)), source
    elif isinstance(ty, M.BaseTuple) and len(ty) > 0:
        # member by member (generated: Numba has no loop over a heterogeneous tuple)
        members = ", ".join(f"move_any(mask, value[{i}], b, clamp)" for i in range(len(ty)))
        source = (f"def move(mask, value, b, clamp):\n"
                  f"    moved = ({members},)\n"
                  f"    return ({', '.join(f'moved[{i}][0]' for i in range(len(ty)))},), moved[0][1]\n")
        scope = {"move_any": move_any}
        exec(source, scope)
        move = scope["move"]
    else:
        return None
    return move


@functools.lru_cache(maxsize=None)
def _half_bits(to_bits):
    """``half_bits(value)``, a float16's bits as uint16 (``to_bits``), or
    ``half_of_bits(bits)``, the float16 of those bits: numba-cuda-mlir's own conversion
    between a float16 and its storage (a bitcast, as in ``element``)."""
    from numba_cuda_mlir.extending import intrinsic
    from numba_cuda_mlir.numba_cuda import types as M

    def codegen(lower, target, args, kwargs):
        from numba_cuda_mlir.lowering_utilities import storage_to_value, value_to_storage

        (value,) = lower.load_vars(args)
        lower.store_var(target, (value_to_storage if to_bits else storage_to_value)(M.float16, value))

    @intrinsic
    def bitcast(typingctx, value):
        return (M.uint16 if to_bits else M.float16)(value), codegen

    return bitcast


def _up_sum_step():
    """CUB's fused scan step for sums: numba-cuda's PTX (``_UP_SUM_ASM``)."""
    from numba_cuda_mlir.numba_cuda import types as M

    from coop._core.compilers.numba_cuda_intrinsics import _UP_SUM_ASM

    def typer(mask, value, delta, c):
        value = M.unliteral(value)
        if isinstance(value, M.Float) and value.bitwidth in (32, 64):
            bits, add, kind = value.bitwidth, f"f{value.bitwidth}", "f" if value.bitwidth == 32 else "d"
        elif isinstance(value, M.Integer) and value.bitwidth <= 64:
            bits = max(32, value.bitwidth)
            add, kind = f"u{bits}", "r" if bits == 32 else "l"
        else:
            return None
        widen = _REGISTER_TYPES[kind]
        return ptx_function("step(mask, value, delta, c)", _UP_SUM_ASM[bits].replace("ADD", add), ("=" + kind, 0),
                            (kind, "widen(value)"), ("r", "delta"), ("r", "c"), ("r", "mask"),
                            returns="scalar(result)", widen=widen, scalar=_scalar(value))

    return typed_function(typer)


def _warp_redux(kind):
    """``redux.sync``, as numba-cuda's intrinsic (``warp_redux``)."""
    from numba_cuda_mlir.numba_cuda import types as M

    from coop._core.compilers.numba_cuda_intrinsics import redux_asm

    def typer(mask, value):
        value = M.unliteral(value)
        if not (isinstance(value, M.Integer) and value.bitwidth <= 32):
            return None
        # (np.int32 extends a value in its own signedness: the word redux needs)
        return ptx_function(f"warp_redux_{kind}(mask, value)", redux_asm(kind, value.signed), ("=r", 0),
                            ("r", "np.int32(value)"), ("r", "mask"), returns="scalar(result)", scalar=_scalar(value))

    return typed_function(typer)


def _same_bit_lanes():
    """CUB's MatchAny step, numba-cuda's PTX (``_SAME_BIT_LANES_ASM``)."""
    from coop._core.compilers.numba_cuda_intrinsics import _SAME_BIT_LANES_ASM

    return ptx_function("same_bit_lanes(mask, label, bit)", _SAME_BIT_LANES_ASM, ("=r", 0),
                        ("r", "np.uint32(label)"), ("r", "np.uint32(1) << np.uint32(bit)"), ("r", "np.uint32(mask)"),
                        returns="np.uint32(result)")


def _lanes_below():
    """``%lanemask_lt`` computed from the lane: numba-cuda-mlir's ``inline_ptx`` turns
    every ``%`` into an operand's ``$``, so PTX text names no special register."""
    from numba_cuda_mlir import cuda

    def lanes_below():
        return (np.uint32(1) << np.uint32(cuda.laneid)) - np.uint32(1)

    return jitable(lanes_below)


# -- values ------------------------------------------------------------------------------------


def _converter(value_type):
    from numba.cuda import types as T
    from numba.cuda.np.numpy_support import as_dtype

    if isinstance(value_type, T.BaseTuple):
        # member by member (generated: Numba has no loop over a heterogeneous tuple)
        members = {f"member_{k}": _converter(t) for k, t in enumerate(value_type)}
        return passable(_function("convert(value)", "(" + "".join(f"member_{k}(value[{k}]), " for k in
                                                                   range(len(members))) + ")", **members))
    if not isinstance(value_type, (T.Integer, T.Float, T.Boolean, T.Complex)):
        raise MlirUnsupported(f"converting to {value_type}")
    scalar = as_dtype(value_type).type

    def convert(value):
        return scalar(value)

    return passable(convert)


def _same():
    def same(value):
        return value

    return passable(same)


def _select():
    def select(condition, if_true, if_false):
        return if_true if condition else if_false

    return jitable(select)


def _tile_from():
    # (numba-cuda-mlir's slicing has no clamp to take out: it moves the data pointer by
    # the start times the stride)
    def tile_from(array, offset):
        return array[offset:]

    return jitable(tile_from, inline=True)


def _int64_constant(value):
    def constant():
        return np.int64(value)

    return jitable(constant)


# -- registers ---------------------------------------------------------------------------------


def _block_rank_reader(fresh, shape=None):
    """The thread's linear rank in its block (x fastest), in 32 bits, from the run-time
    shape or the constant ``shape`` ``(x, y, z)``; ``fresh``: an opaque copy, as
    numba-cuda's intrinsic gives."""
    from numba_cuda_mlir import cuda

    if shape is None:

        def rank32():
            return np.uint32(cuda.threadIdx.x + cuda.blockDim.x * (cuda.threadIdx.y
                                                                  + cuda.blockDim.y * cuda.threadIdx.z))
    elif shape[1:] == (1, 1):  # (no read of threadIdx.y, .z where they can only be 0, as numba-cuda's)

        def rank32():
            return np.uint32(cuda.threadIdx.x)
    elif shape[2] == 1:
        y_stride = np.uint32(shape[0])

        def rank32():
            return np.uint32(cuda.threadIdx.x + cuda.threadIdx.y * y_stride)
    else:
        y_stride, z_stride = np.uint32(shape[0]), np.uint32(shape[0] * shape[1])

        def rank32():
            return np.uint32(cuda.threadIdx.x + cuda.threadIdx.y * y_stride + cuda.threadIdx.z * z_stride)

    rank32 = jitable(rank32)
    if fresh:

        def read_rank():
            return np.int64(np.uint32(cuda.experimental.inline_ptx("mov.u32 %0, %1;", "=r", 0, "r", rank32())))
    else:

        def read_rank():
            return np.int64(rank32())

    return jitable(read_rank)


# -- scratch -----------------------------------------------------------------------------------

_scratch_symbols = itertools.count()  # (one name per static shared array in a process)


def _word_array(words, space, name, takes_unused):
    """An intrinsic giving ``words`` 8-byte words of ``space`` ("shared": a static
    allocation where it is lowered; "local"), emitted where it is called (see the module
    docstring); ``takes_unused``: it takes one ignored argument."""
    from numba_cuda_mlir.extending import intrinsic
    from numba_cuda_mlir.numba_cuda import types as M

    buffer_type = M.Array(M.uint64, 1, "C")

    def codegen(lower, target, args, kwargs):
        from numba_cuda_mlir._mlir import ir
        from numba_cuda_mlir._mlir.dialects import memref

        word = ir.IntegerType.get_signless(64)
        if space == "shared":
            shared = ir.Attribute.parse("#gpu.address_space<workgroup>")
            array_type = ir.MemRefType.get([words], word, memory_space=shared)
            symbol = f"{name}_{next(_scratch_symbols)}"
            with ir.InsertionPoint(lower.mlir_gpu_module.bodyRegion.blocks[0]):
                memref.global_(symbol, array_type, sym_visibility="private", alignment=16)
            lower.store_var(target, memref.get_global(array_type, symbol))
        else:
            with lower.alloca_insertion_point():
                array = memref.alloca(ir.MemRefType.get([words], word), [], [])
            lower.store_var(target, array)

    if takes_unused:

        @intrinsic
        def allocate(typingctx, unused):
            return buffer_type(unused), codegen
    else:

        @intrinsic
        def allocate(typingctx):
            return buffer_type(), codegen

    return allocate


def _slot_view(ty):
    """How a slot of numba-cuda-mlir type ``ty`` is read and written through a view of
    the word buffer: ``(view dtype, to slot, from slot)``; bools as bytes."""
    from numba_cuda_mlir.numba_cuda import types as M

    ty = M.unliteral(ty)
    if isinstance(ty, M.Boolean):
        return np.dtype(np.uint8), np.uint8, _nonzero()
    if ty == M.float16:
        return (np.dtype(np.uint16), *_half_slot())
    if isinstance(ty, (M.Integer, M.Float, M.Complex)):
        scalar = _scalar(ty)
        return np.dtype(scalar), scalar, scalar
    raise MlirUnsupported(f"a scratch slot of {ty}")


@functools.lru_cache(maxsize=None)
def _half_slot():
    """``(to slot, from slot)``: a float16 scratch slot held as its bits (uint16), read
    through an opaque copy of them. CUDA 13's NVVM fails ("unsupported operation") on a
    kernel where LLVM merged five or more float16 loads from 16-byte-aligned shared
    memory into one (a block sum's warp partials read by thread 0, at 512 threads and
    more): integer loads merge fine, and the copy keeps each conversion to float16 out
    of the merge (ptxas removes the mov)."""
    half_bits = _half_bits(True)

    def to_slot(value):
        return half_bits(np.float16(value))

    from_slot = ptx_function("from_slot(bits)", "mov.b16 $0, $1;", ("=h", 0), ("h", "bits"),
                             returns="half_of_bits(np.uint16(result))", half_of_bits=_half_bits(False))
    return jitable(to_slot), from_slot


@functools.lru_cache(maxsize=None)
def _nonzero():
    def nonzero(value):
        return value != 0

    return jitable(nonzero)


def numba_cuda_mlir_type(ty):
    """The numba-cuda-mlir type of a numba-cuda scalar type."""
    from numba.cuda import types as T
    from numba_cuda_mlir.numba_cuda import types as M

    if isinstance(ty, (T.Integer, T.Float, T.Complex, T.Boolean)):
        return getattr(M, ty.name)
    raise MlirUnsupported(f"the type {ty} in coop's code")


def _numba_cuda_value_type(ty):
    """The numba-cuda type of a numba-cuda-mlir scalar or tuple of them (the inverse of
    ``numba_cuda_mlir_type``)."""
    from numba.cuda import types as T
    from numba_cuda_mlir.numba_cuda import types as M

    ty = M.unliteral(ty)
    if isinstance(ty, M.BaseTuple):
        return T.Tuple(tuple(map(_numba_cuda_value_type, ty.types)))
    if isinstance(ty, (M.Integer, M.Float, M.Complex, M.Boolean)):
        return getattr(T, ty.name)
    raise MlirUnsupported(f"a scratch slot of {ty}")


def _store():
    def typer(buffer, index, value):
        from numba_cuda_mlir.numba_cuda import types as M

        if isinstance(value, M.BaseTuple):
            return _tuple_slot(_numba_cuda_value_type(value))[0]
        view, to_slot, _ = _slot_view(value)

        def store(buffer, index, value):
            operator.setitem(buffer.view(view), index, to_slot(value))  # (see the module docstring)

        return store

    return typed_function(typer)


def _storer(value_type):
    from numba.cuda import types as T

    if isinstance(value_type, T.BaseTuple):
        return jitable(_tuple_slot(value_type)[0])
    view, to_slot, _ = _slot_view(numba_cuda_mlir_type(value_type))

    def store_as(buffer, index, value):
        operator.setitem(buffer.view(view), index, to_slot(value))  # (see the module docstring)

    return jitable(store_as)


def _loader(value_type):
    from numba.cuda import types as T

    if isinstance(value_type, T.BaseTuple):
        return jitable(_tuple_slot(value_type)[1])
    view, _, from_slot = _slot_view(numba_cuda_mlir_type(value_type))

    def load(buffer, index):
        return from_slot(buffer.view(view)[index])

    return jitable(load)


@functools.lru_cache(maxsize=None)
def _tuple_slot(value_type):
    """``(store, load)``, Python functions writing and reading a slot of the numba-cuda
    tuple type ``value_type`` in a word buffer, scalar by scalar, each through a view of
    its own type at its offset in the C struct (the layout numba-cuda's slots have:
    ``coop._core.values.size_and_alignment``); bools as bytes. (Not complex members: one
    may lie at half its size, off its view's grid, and no served operator takes them.)"""
    from numba.cuda import types as T
    from numba.cuda.np.numpy_support import as_dtype

    from coop._core.values import size_and_alignment

    scope = {"np": np, "operator": operator}
    scope["half_to_slot"], scope["half_from_slot"] = _half_slot()
    writes = []

    def place(scalar, offset):
        """``(view, index)`` of the slot's scalar of type ``scalar`` at byte ``offset``."""
        name = f"view_{len(scope)}"
        scope[name] = np.dtype(scalar)
        return f"buffer.view({name})", f"(base + {offset}) // {np.dtype(scalar).itemsize}"

    def write(slot, value):
        writes.append(f"operator.setitem({slot[0]}, {slot[1]}, {value})")  # (see the module docstring)

    def read(slot):
        return f"{slot[0]}[{slot[1]}]"

    def layout(ty, offset, path):
        """The expression reading a ``ty`` at ``offset``; its writes appended to ``writes``."""
        if isinstance(ty, T.BaseTuple):
            members, end = [], 0
            for k, member in enumerate(ty.types):
                size, alignment = size_and_alignment(member)
                end = -(-end // alignment) * alignment
                members.append(layout(member, offset + end, f"{path}[{k}]"))
                end += size
            return "(" + "".join(f"{member}, " for member in members) + ")"
        if isinstance(ty, T.Boolean):
            slot = place(np.uint8, offset)
            write(slot, f"np.uint8({path})")
            return f"({read(slot)} != 0)"
        if ty == T.float16:  # (as its bits: see _half_slot)
            slot = place(np.uint16, offset)
            write(slot, f"half_to_slot({path})")
            return f"half_from_slot({read(slot)})"
        if not isinstance(ty, (T.Integer, T.Float)):
            raise MlirUnsupported(f"a scratch slot of {value_type}")
        scalar = as_dtype(ty).type
        slot = place(scalar, offset)
        write(slot, f"np.{scalar.__name__}({path})")
        return read(slot)

    size = size_and_alignment(value_type)[0]
    value = layout(value_type, 0, "value")
    store = _function("store(buffer, index, value)", "None", before="\n    ".join(
        [f"base = np.int64(index) * {size}"] + writes), **scope)
    load = _function("load(buffer, index)", value, before=f"base = np.int64(index) * {size}", **scope)
    return store, load


def _pointer_to(base, index, element):
    """MLIR: a generic pointer to element ``index`` (an integer) of type ``element``
    counted from the pointer ``base`` (a memref's ``memref_data_pointer``, say)."""
    from numba_cuda_mlir._mlir.dialects import llvm
    from numba_cuda_mlir._mlir.extras import types as T
    from numba_cuda_mlir.lowering_utilities import GEP_DYNAMIC_INDEX, convert

    return llvm.getelementptr(llvm.PointerType.get(), base, [convert(index, T.i64())], [GEP_DYNAMIC_INDEX],
                              element, None)


def _atomic_adder(per_element):
    """An intrinsic ``(array, index, value)`` adding ``value`` atomically (relaxed) to an
    element and giving what it held: of the array's own type with ``per_element`` (an
    element of a 1-D array, strided or not), else of ``value``'s type (a scratch slot:
    ``index`` counts values of that type from the buffer's start). The address is
    generic: numba-cuda-mlir 0.6's own atomics take an array that is not the kernel's
    allocation (a parameter, also once inlined) for global memory (``atom.global`` on a
    shared address: an illegal address), where LLVM's address-space inference, given
    the generic address, finds the shared or global allocation it comes from."""
    from numba_cuda_mlir.extending import intrinsic
    from numba_cuda_mlir.numba_cuda import types as M

    def codegen(lower, target, args, kwargs):
        from numba_cuda_mlir._mlir import ir
        from numba_cuda_mlir._mlir.dialects import llvm
        from numba_cuda_mlir.lowering_utilities import _memref_index_offset, convert, memref_data_pointer

        array, index, value = lower.load_vars(args)
        if per_element:
            element = ir.MemRefType(array.type).element_type
            offset = _memref_index_offset(array, [index])
        else:
            element = value.type
            offset = index
        pointer = _pointer_to(memref_data_pointer(array), offset, element)
        add = llvm.AtomicBinOp.fadd if isinstance(element, ir.FloatType) else llvm.AtomicBinOp.add
        lower.store_var(target, llvm.atomicrmw(add, pointer, convert(value, element), llvm.AtomicOrdering.monotonic))

    @intrinsic
    def atomic_add(typingctx, array, index, value):
        if not (isinstance(array, M.Array) and isinstance(index, M.Integer)):
            return None
        result = array.dtype if per_element else M.unliteral(value)
        if not isinstance(result, (M.Integer, M.Float)):
            return None
        return result(array, index, result), codegen

    return atomic_add


def _contiguous_element_pointer(array, index):
    """MLIR: a pointer to element ``index`` of a 1-D memref of stride 1 (a C or F layout
    array), and the element's type: the data pointer advanced by ``index`` elements."""
    from numba_cuda_mlir._mlir import ir
    from numba_cuda_mlir.lowering_utilities import memref_data_pointer

    element = ir.MemRefType(array.type).element_type
    return _pointer_to(memref_data_pointer(array), index, element), element


def _addressed(array):
    """Whether ``element`` and ``set_element`` address this numba-cuda-mlir array type's
    elements from its data pointer: 1-D, contiguous, of integers, floats or booleans."""
    from numba_cuda_mlir.numba_cuda import types as M

    return (isinstance(array, M.Array) and array.ndim == 1 and array.layout in "CF"
            and isinstance(array.dtype, (M.Integer, M.Float, M.Boolean)))


def _element_access(is_read):
    """``element(array, index)`` (``is_read``) or ``set_element(array, index, value)``:
    numba-cuda-mlir 0.6 multiplies an index by the stride read from the array's
    descriptor, even where its layout makes it 1, at every access (a 64-bit multiply
    each, and no constant offsets from one base address for consecutive items, as
    numba-cuda's code has): a contiguous array's element is addressed from its data
    pointer instead; other arrays are indexed."""
    from numba_cuda_mlir.extending import intrinsic
    from numba_cuda_mlir.numba_cuda import types as M

    def read_codegen(dtype):
        def codegen(lower, target, args, kwargs):
            from numba_cuda_mlir._mlir.dialects import llvm
            from numba_cuda_mlir.lowering_utilities import storage_to_value

            array, index = lower.load_vars(args)
            pointer, storage = _contiguous_element_pointer(array, index)
            lower.store_var(target, storage_to_value(dtype, llvm.load(storage, pointer)))

        return codegen

    def write_codegen(dtype):
        def codegen(lower, target, args, kwargs):
            from numba_cuda_mlir._mlir.dialects import llvm
            from numba_cuda_mlir.lowering_utilities import value_to_storage

            array, index, value = lower.load_vars(args)
            pointer, _ = _contiguous_element_pointer(array, index)
            llvm.store(value_to_storage(dtype, value), pointer)

        return codegen

    # (a memref holds some types in another storage type: float16 as i16, bool as i8)
    @intrinsic
    def read(typingctx, array, index):
        return array.dtype(array, index), read_codegen(array.dtype)

    @intrinsic
    def write(typingctx, array, index, value):  # (the typer below chose it for this value's type)
        return M.none(array, index, value), write_codegen(array.dtype)

    if is_read:

        def typer(array, index):
            if _addressed(array) and isinstance(index, M.Integer):
                return lambda array, index: read(array, index)
            return lambda array, index: array[index]

    else:

        def typer(array, index, value):
            if _addressed(array) and isinstance(index, M.Integer) and M.unliteral(value) == array.dtype:

                def addressed(array, index, value):
                    write(array, index, value)

                return addressed

            def indexed(array, index, value):
                array[index] = value

            return indexed

    return typed_function(typer)


def _address():
    """``address(array)``: the address of a 1-D array's first element, as uint64."""
    from numba_cuda_mlir.extending import intrinsic
    from numba_cuda_mlir.numba_cuda import types as M

    def codegen(lower, target, args, kwargs):
        from numba_cuda_mlir._mlir.dialects import llvm
        from numba_cuda_mlir._mlir.extras import types as T
        from numba_cuda_mlir.lowering_utilities import memref_data_pointer

        (array,) = lower.load_vars(args)
        lower.store_var(target, llvm.ptrtoint(T.i64(), memref_data_pointer(array)))

    @intrinsic
    def address(typingctx, array):
        if not isinstance(array, M.Array):
            return None
        return M.uint64(array), codegen

    return address


def _vector_mover(item_type, items_per_vector, is_load):
    """``vector_loader`` (``is_load``) or ``vector_storer``: ``(array, vector, items,
    first)`` moving vector ``vector`` of ``array`` (as numba-cuda's intrinsic: one
    access of ``words`` integer words, aligned to its size) to or from
    ``items[first ..]``, lane by lane through the items array's data pointer."""
    from numba_cuda_mlir.extending import intrinsic
    from numba_cuda_mlir.numba_cuda import types as M

    from coop._core.compilers.numba_cuda_intrinsics import vector_shape

    bits, lanes, word_bits, words, alignment = vector_shape(item_type, items_per_vector)
    per_word = lanes // words
    item = numba_cuda_mlir_type(item_type)

    def codegen(lower, target, args, kwargs):
        from numba_cuda_mlir._mlir import ir
        from numba_cuda_mlir._mlir.dialects import arith, llvm
        from numba_cuda_mlir._mlir.extras import types as T
        from numba_cuda_mlir.lowering_utilities import convert, memref_data_pointer

        array, vector, items, first = lower.load_vars(args)
        lane_type, word_type = ir.IntegerType.get_signless(bits), ir.IntegerType.get_signless(word_bits)
        vector_type = ir.VectorType.get([words], word_type)
        vector_pointer = _pointer_to(memref_data_pointer(array), vector, vector_type)
        item_lanes = memref_data_pointer(items)
        first_lane = arith.muli(convert(first, T.i64()), arith.constant(T.i64(), lanes // items_per_vector))
        lane_pointers = [_pointer_to(item_lanes, arith.addi(first_lane, arith.constant(T.i64(), k)), lane_type)
                         for k in range(lanes)]
        if is_load:
            loaded = llvm.load(vector_type, vector_pointer, alignment=alignment)
            for k, lane_pointer in enumerate(lane_pointers):
                value = llvm.extractelement(loaded, arith.constant(T.i32(), k // per_word))
                if per_word > 1:  # lane k % per_word of a little-endian word
                    value = arith.trunci(lane_type, arith.shrui(value, arith.constant(word_type, bits * (k % per_word))))
                llvm.store(value, lane_pointer)
        else:
            value = llvm.mlir_undef(vector_type)
            for w in range(words):
                packed = None
                for k in range(per_word):
                    part = llvm.load(lane_type, lane_pointers[w * per_word + k])
                    if per_word > 1:
                        part = arith.shli(arith.extui(word_type, part), arith.constant(word_type, bits * k))
                    packed = part if packed is None else arith.ori(packed, part)
                value = llvm.insertelement(value, packed, arith.constant(T.i32(), w))
            llvm.store(value, vector_pointer, alignment=alignment)

    @intrinsic
    def move(typingctx, array, vector, items, first):
        if not (isinstance(array, M.Array) and isinstance(items, M.Array) and array.dtype == item
                and items.dtype == item and isinstance(vector, M.Integer) and isinstance(first, M.Integer)):
            return None
        return M.none(array, vector, items, first), codegen

    return move


def _local_array_tuple(count, member_types):
    """An intrinsic ``()`` giving a ``cuda.local.array(count, member)`` per numba-cuda
    type of ``member_types`` (a tuple; one type: that one array)."""
    from numba_cuda_mlir.extending import intrinsic
    from numba_cuda_mlir.numba_cuda import types as M

    single = not isinstance(member_types, tuple)
    members = [numba_cuda_mlir_type(t) for t in ((member_types,) if single else member_types)]
    arrays = [M.Array(member, 1, "C") for member in members]
    result = arrays[0] if single else M.Tuple(arrays)

    def codegen(lower, target, args, kwargs):
        from numba_cuda_mlir._mlir import ir
        from numba_cuda_mlir._mlir.dialects import memref

        made = []
        with lower.alloca_insertion_point():
            for member in members:
                made.append(memref.alloca(ir.MemRefType.get([count], lower.get_storage_type(member)), [], []))
        lower.store_var(target, made[0] if single else tuple(made))

    @intrinsic
    def allocate(typingctx):
        return result(), codegen

    return allocate


def _slot32(log_banks, padded):
    """An intrinsic ``(offset) -> int64``: ``offset`` in 32 bits, plus ``offset >>
    log_banks`` where ``padded``, zero-extended. MLIR's 32-bit operations: written in
    Python, Numba's typing widens unsigned 32-bit arithmetic to 64 bits, and every slot
    offset of a block exchange would cost 64-bit shifts, adds and masks."""
    from numba_cuda_mlir.extending import intrinsic
    from numba_cuda_mlir.numba_cuda import types as M

    def codegen(lower, target, args, kwargs):
        from numba_cuda_mlir._mlir.dialects import arith
        from numba_cuda_mlir._mlir.extras import types as T
        from numba_cuda_mlir.lowering_utilities import convert

        (offset,) = lower.load_vars(args)
        word = convert(offset, T.i32())
        if padded:
            word = arith.addi(word, arith.shrui(word, arith.constant(T.i32(), log_banks)))
        lower.store_var(target, convert(arith.extui(T.i64(), word), lower.get_value_type(M.int64)))

    @intrinsic
    def slot(typingctx, offset):
        if not isinstance(offset, M.Integer):
            return None
        return M.int64(offset), codegen

    return slot


# -- radix keys --------------------------------------------------------------------------------


def _numpy_scalar(value_type):
    """The NumPy scalar type of a numba-cuda scalar type."""
    from numba.cuda.np.numpy_support import as_dtype

    return as_dtype(value_type).type


def _bitcast(from_scalar, to_scalar):
    """A device function reinterpreting a ``from_scalar`` as a ``to_scalar`` of the same
    width (through a one-value local array: LLVM keeps it in a register)."""
    from numba_cuda_mlir import cuda

    def bitcast(value):
        cell = cuda.local.array(1, from_scalar)
        cell[0] = value
        return cell.view(to_scalar)[0]

    return jitable(bitcast)


def _bit_conversion(from_type, to_type, step, bits, shift=0):
    """numba-cuda's ``bit_conversion`` (radix keys' bit twiddles), in Python."""
    to_scalar = _numpy_scalar(to_type)
    word = _numpy_scalar(_unsigned(bits))
    top = bits - 1
    # (the masks are computed in the kernel: numba-cuda-mlir 0.6 cannot make a 64-bit
    # constant of 2**63 or more)
    if step == "zext":

        def convert(value):
            return word(1 if value else 0)
    elif step == "nonzero":

        def convert(value):
            return value != 0
    elif step == "flip_sign":

        def convert(value):
            return to_scalar(word(value) ^ (word(1) << word(top)))
    elif step == "float_to_ordered":
        as_word = _bitcast(_numpy_scalar(from_type), word)

        def convert(value):
            bits_of = as_word(value)
            # every bit flipped for a negative key, the sign's for another (computed, not
            # chosen in a conditional expression: under Python 3.12 numba-cuda-mlir kept
            # the bitcast's cell in local memory for each arm)
            return word(bits_of ^ ((word(1) << word(top)) | (word(0) - (bits_of >> word(top)))))
    elif step == "ordered_to_float":
        as_float = _bitcast(word, to_scalar)

        def convert(value):
            # the sign's bit flipped for a set one, every bit for a clear one (computed: above)
            return as_float(word(value ^ ((word(1) << word(top)) | ((value >> word(top)) - word(1)))))
    elif step == "shift_left":

        def convert(value):
            return to_scalar(to_scalar(value) << to_scalar(shift))
    elif step == "shift_right":
        from_scalar = _numpy_scalar(from_type)

        def convert(value):
            return to_scalar(value >> from_scalar(shift))
    else:
        assert step == "same", step

        def convert(value):
            return value

    return jitable(convert)


def _unsigned(bits):
    from numba.cuda import types as T

    return T.Integer.from_bitwidth(bits, signed=False)


def _digit_extractor(bits, minus_zero_fields):
    """numba-cuda's ``digit_extractor`` in MLIR's operations: ``(ordered, begin_bit,
    num_bits) -> uint32``, each float member's -0.0 read as +0.0, in the key's width
    (written in Python, Numba's typing widens 32-bit digits to 64 bits)."""
    from numba_cuda_mlir.extending import intrinsic
    from numba_cuda_mlir.numba_cuda import types as M

    unsigned = M.Integer.from_bitwidth(bits, signed=False)

    def codegen(lower, target, args, kwargs):
        from numba_cuda_mlir._mlir import ir
        from numba_cuda_mlir._mlir.dialects import arith
        from numba_cuda_mlir._mlir.extras import types as T
        from numba_cuda_mlir.lowering_utilities import convert

        value, begin, count = lower.load_vars(args)
        word = ir.IntegerType.get_signless(bits)
        value = convert(value, word)

        def constant(ty, number):  # (two's complement: an unsigned 64-bit constant of 2**63 or more)
            width = ir.IntegerType(ty).width
            return arith.constant(ty, number - (1 << width) if number >= 1 << (width - 1) else number)

        for offset, width, minus_zero in minus_zero_fields:
            field = constant(word, (1 << width) - 1)
            member = arith.andi(arith.shrui(value, constant(word, offset)), field)
            is_minus_zero = arith.cmpi(arith.CmpIPredicate.eq, member, constant(word, minus_zero))
            flipped = arith.xori(value, constant(word, ((1 << width) - 1) << offset))
            value = arith.select(is_minus_zero, flipped, value)
        # shifted in the key's width (a 64-bit key's digit may lie above bit 32), masked in
        # 32 bits: digits are narrower than 32 bits (1 << 32 overflows)
        shifted = convert(arith.shrui(value, convert(begin, word)), T.i32())
        mask = arith.subi(arith.shli(constant(T.i32(), 1), convert(count, T.i32())), constant(T.i32(), 1))
        lower.store_var(target, convert(arith.andi(shifted, mask), lower.get_value_type(M.uint32)))

    @intrinsic
    def extract(typingctx, ordered, begin_bit, num_bits):
        if M.unliteral(ordered) != unsigned or not all(isinstance(n, M.Integer) for n in (begin_bit, num_bits)):
            return None
        return M.uint32(ordered, begin_bit, num_bits), codegen

    return extract


def _unrolled_loop(count, body):
    """``loop(items, output, buffer, index, warp, lanes, mask)`` calling ``body(k, ...)``
    (rebuilt for numba-cuda-mlir, as every function of a recipe) for ``k`` in
    ``range(count)``, unrolled here: numba-cuda's loop carries ``llvm.loop.unroll.full``,
    which numba-cuda-mlir cannot attach, and NVVM leaves a loop with a barrier in its
    body rolled (``warp_transpose_timesliced`` at 512x8: 2 barriers in the PTX, not 32)."""
    arguments = "items, output, buffer, index, warp, lanes, mask"
    turns = "\n    ".join(f"body(np.uint32({k}), {arguments})" for k in range(count))
    return passable(_function(f"loop({arguments})", "None", before=turns or "pass", body=body, np=np))


# -- checks ------------------------------------------------------------------------------------


def _launch_check(message, threads):
    """``check()``: in debug mode, a block of other than ``threads`` threads (an int), or
    of another shape than ``threads`` (``(x, y, z)``), prints ``message`` (a printf
    format taking the block's thread count, or its three sizes) and traps, as
    numba-cuda's ``launch_check``; otherwise nothing."""
    from coop._core.config import config

    if not config.debug:
        return passable(_nothing)
    from numba_cuda_mlir import cuda

    if isinstance(threads, tuple):
        report_shape = _reporter(message, 3)
        x, y, z = threads

        def check_shape():
            if cuda.blockDim.x != x or cuda.blockDim.y != y or cuda.blockDim.z != z:
                report_shape(np.int64(cuda.blockDim.x), np.int64(cuda.blockDim.y), np.int64(cuda.blockDim.z))
                cuda.experimental.inline_ptx("trap;")

        return passable(check_shape)
    report = _reporter(message, 1)

    def check():
        count = np.int64(cuda.blockDim.x) * np.int64(cuda.blockDim.y) * np.int64(cuda.blockDim.z)
        if count != threads:
            report(count)
            cuda.experimental.inline_ptx("trap;")

    return passable(check)


def _size_check(symbol, message, unit, exact):
    """``check(array, minimum)``: in debug mode, an array of other than (with ``exact``)
    or fewer than ``minimum`` items (or bytes, ``unit``) prints ``message`` (a printf
    format taking the size and the minimum) and traps, as numba-cuda's ``size_check``
    does for sizes known only at run time; otherwise nothing. (numba-cuda's also fails
    the link where the length is a known constant: numba-cuda-mlir types every array
    variable with a dynamic length and has no ``llvm.is.constant``.)"""
    from coop._core.config import config

    if not config.debug:
        return passable(_ignored)
    from numba_cuda_mlir import cuda

    report = _reporter(message, 2)

    def typer(array, minimum):
        itemsize = array.dtype.bitwidth // 8 if unit == "bytes" else 1

        def check(array, minimum):
            size = np.int64(len(array)) * itemsize
            if (size != minimum) if exact else (size < minimum):
                report(size, np.int64(minimum))
                cuda.experimental.inline_ptx("trap;")

        return check

    return passable(caller(_ignored, typed_function(typer)))


def _nothing():
    pass


def _ignored(array, minimum):
    pass


def _reporter(message, count):
    """An intrinsic printing ``message`` (a printf format taking ``count`` 64-bit
    integers) with its arguments, made ``int64`` (MLIR's ``gpu.printf``: numba-cuda-mlir's
    ``print`` separates its arguments with spaces and has no format)."""
    from numba_cuda_mlir.extending import intrinsic
    from numba_cuda_mlir.numba_cuda import types as M

    def codegen(lower, target, args, kwargs):
        from numba_cuda_mlir._mlir.dialects import gpu
        from numba_cuda_mlir._mlir.extras import types as T
        from numba_cuda_mlir.lowering_utilities import convert

        gpu.printf(message + "\n", *(convert(value, T.i64()) for value in lower.load_vars(args)))

    def typing(typingctx, *values):
        if len(values) != count or not all(isinstance(value, M.Integer) for value in values):
            return None
        return M.void(*values), codegen

    scope = {"typing": typing}
    names = ", ".join(f"v{k}" for k in range(count))
    exec(f"def report(typingctx, {names}):\n    return typing(typingctx, {names})\n", scope)
    return intrinsic(scope["report"])


_CHECKS = ("launch_check", "size_check")

_RECIPES = {
    "shuffle": _shuffle,
    "up_sum_step": _up_sum_step,
    "warp_redux": _warp_redux,
    "same_bit_lanes": _same_bit_lanes,
    "lanes_below": _lanes_below,
    "converter": _converter,
    "same": _same,
    "select": _select,
    "int64_constant": _int64_constant,
    "block_rank_reader": _block_rank_reader,
    "word_array": _word_array,
    "store": _store,
    "storer": _storer,
    "loader": _loader,
    "atomic_add": functools.partial(_atomic_adder, False),
    "atomic_add_element": functools.partial(_atomic_adder, True),
    "address": _address,
    "vector_loader": functools.partial(_vector_mover, is_load=True),
    "vector_storer": functools.partial(_vector_mover, is_load=False),
    "element": functools.partial(_element_access, True),
    "set_element": functools.partial(_element_access, False),
    "tile_from": _tile_from,
    "local_array_tuple": _local_array_tuple,
    "slot32": _slot32,
    "bit_conversion": _bit_conversion,
    "digit_extractor": _digit_extractor,
    "unrolled_loop": _unrolled_loop,
    "launch_check": _launch_check,
    "size_check": _size_check,
}
