"""numba-cuda's code for the intrinsics coop is built on: everything coop emits below
Numba's own lowering (LLVM IR through llvmlite, inline PTX), as numba-cuda intrinsics.

Each is the compiled side of a name whose meaning, and whose simulator version, is given
where coop uses it (the module in parentheses); a second compiler implements the same
names (each intrinsic records its factory and arguments, ``_coop_recipe``, from which
``numba_cuda_mlir_intrinsics`` makes numba-cuda-mlir's; PTX text both emit is a
constant here, ``*_ASM``):

- warp (``coop._core.shuffle``): ``shuffle`` (shfl.sync of any value type, as 32-bit
  words), ``up_sum_step`` (CUB's shfl-and-add scan step), ``warp_redux`` (redux.sync),
  ``same_bit_lanes`` (a ballot step of CUB's MatchAny), ``lanes_below`` (``%lanemask_lt``);
- static arrays (``coop._core.scratch``, ``coop._core.items``): ``word_array`` (a shared
  or local array of 8-byte words, one per specialisation), ``local_array_tuple``;
- scratch slots (``coop._core.scratch``): ``store``, ``atomic_add``, ``storer``,
  ``loader``: typed values at word-aligned slots of a buffer; ``atomic_add_element``
  (CUDA's atomicAdd on an array's element, shared or global);
- array elements (``coop._core.tile``): ``element``, ``set_element`` (numba-cuda's own
  indexing: numba-cuda-mlir's addresses a contiguous array's element without its stride),
  ``tile_from`` (an array from a tile's first element, without a slice's clamp);
- vectors (``coop._core.vector``): ``address``, ``vector_loader``, ``vector_storer``;
- memory order (``coop._core.memory_order``): ``load_acquire``, ``store_release``,
  ``store_relaxed_pair``, ``load_relaxed_pair``;
- registers (``coop._core.scratch``, ``coop._core.exchange``, ``coop._core.values``,
  ``coop._core.radix``): ``block_rank_reader``, ``int64_constant``, ``slot32``,
  ``converter``, ``same``, ``select``, ``bit_conversion``, ``digit_extractor``;
- control flow (``coop._core.exchange``): ``unrolled_loop``;
- checks (``coop._core.misuse``, ``coop._core.specialize``): ``size_check``,
  ``size_checks_available``, ``launch_check``.
"""

import functools

from llvmlite import ir
from numba.cuda import cgutils, nvvmutils, types
from numba.cuda.extending import intrinsic

from coop._core.compilers.numba_cuda import lower_static_array, register_jitable
from coop._core.config import config

def _word32(builder, v, signed=True):
    """An integer LLVM value as i32 (truncated, or extended)."""
    i32 = ir.IntType(32)
    if v.type.width > 32:
        return builder.trunc(v, i32)
    if v.type.width < 32:
        return (builder.sext if signed else builder.zext)(v, i32)
    return v


def _as_width(builder, value, bits):
    """An unsigned integer LLVM value as ``bits`` wide (truncated or zero-extended)."""
    if value.type.width > bits:
        return builder.trunc(value, ir.IntType(bits))
    if value.type.width < bits:
        return builder.zext(value, ir.IntType(bits))
    return value


# A warp instruction (shfl, redux, vote) is side-effecting PTX, as CUB's ``asm volatile``,
# and ``convergent`` (never made dependent on more control flow than the caller's: every
# lane of its mask must reach it). CUDA 13's NVVM may still copy a warp's code on a lane's
# own condition, each copy with its own shuffles (which sm_70 and later pair up by mask, so
# long as every lane runs the same sequence of them). Marked ``readnone`` (2026-12-07,
# fc978e9), equal shuffles in one copy were merged: in coop.device.top_k's warp-aggregated
# atomic (lane 0 adds, then broadcasts the int64 result) the other lanes' copy shuffled the
# constant 0 for both words, kept one shuffle for the two, and paired it with lane 0's
# first: garbage positions, an out-of-bounds write on an H100. What readnone bought (the
# raking downsweep not reading again what the upsweep read: 1-2% at 512x8) is not worth it.
WARP_INSTRUCTION = ("convergent", "nounwind")


def _warp_asm(builder, fnty, text, constraints, args):
    """A call of inline PTX for a warp instruction (shfl, redux, vote), side-effecting and
    WARP_INSTRUCTION."""
    return builder.call(ir.InlineAsm(fnty, text, constraints, side_effect=True), args, attrs=WARP_INSTRUCTION)


def _integers(*tys):
    return all(isinstance(types.unliteral(t), types.Integer) for t in tys)


def _special_register(builder, name):  # (a PTX special register: tid.x, ntid.x, ...)
    i32 = ir.IntType(32)
    fn = cgutils.get_or_insert_function(builder.module, ir.FunctionType(i32, []), f"llvm.nvvm.read.ptx.sreg.{name}")
    return builder.call(fn, [])


def _map_words(context, builder, ty, values, word):
    """A value of type ``ty`` made word by word from ``values`` (LLVM values of ``ty``):
    ``word(words)`` gives each 32-bit word of the result from the same word of each
    value (members of tuples and complex numbers one by one, narrower values
    zero-extended, 64-bit ones as two words)."""
    if isinstance(ty, (types.BaseTuple, types.Complex)):
        members = list(ty) if isinstance(ty, types.BaseTuple) else [ty.underlying_float] * 2
        out = ir.Constant(values[0].type, ir.Undefined)
        for i, member in enumerate(members):
            made = _map_words(context, builder, member, [builder.extract_value(v, i) for v in values], word)
            out = builder.insert_value(out, made, i)
        return out
    i32, i64 = ir.IntType(32), ir.IntType(64)
    llvm_type = values[0].type
    bits = llvm_type.width if isinstance(llvm_type, ir.IntType) else ty.bitwidth
    as_ints = [v if isinstance(llvm_type, ir.IntType) else builder.bitcast(v, ir.IntType(bits)) for v in values]
    if bits <= 32:
        made = word([builder.zext(v, i32) if bits < 32 else v for v in as_ints])
        made = builder.trunc(made, ir.IntType(bits)) if bits < 32 else made
    else:
        lo = word([builder.trunc(v, i32) for v in as_ints])
        hi = word([builder.trunc(builder.lshr(v, ir.Constant(i64, 32)), i32) for v in as_ints])
        made = builder.or_(builder.shl(builder.zext(hi, i64), ir.Constant(i64, 32)), builder.zext(lo, i64))
    return made if made.type == llvm_type else builder.bitcast(made, llvm_type)


# -- warp -----------------------------------------------------------------------------


def _shufflable(ty):
    if isinstance(ty, types.BaseTuple):
        return all(_shufflable(t) for t in ty)
    return isinstance(ty, (types.Boolean, types.Integer, types.Float, types.Complex)) and (
        not isinstance(ty, (types.Integer, types.Float)) or ty.bitwidth <= 64
    )


def _recipe(made, name, *args):
    """``made`` (an intrinsic of this module), marked as made by ``name(*args)``: other
    compilers' adapters make their own from the same recipe
    (``numba_cuda_mlir_intrinsics``)."""
    made._coop_recipe = (name, args)
    return made


def shuffle(mode, c, with_predicate=False):
    """The shuffle intrinsic ``(mask, value, b)`` with clamp operand ``c``, or, where ``c``
    is None, ``(mask, value, b, c)``; ``with_predicate``: it returns ``(value,
    predicate)``."""

    def typer(typingctx, mask, value, b, c_arg=None):
        if not _integers(mask, b, c_arg or b):
            return None
        value = types.unliteral(value)
        if not _shufflable(value):
            return None
        returns = types.Tuple((value, types.boolean)) if with_predicate else value
        if c is None:
            return returns(mask, value, b, c_arg), codegen
        return returns(mask, value, b), codegen

    if c is None:

        @intrinsic
        def shuffle_value(typingctx, mask, value, b, c):
            return typer(typingctx, mask, value, b, c)

    else:

        @intrinsic
        def shuffle_value(typingctx, mask, value, b):
            return typer(typingctx, mask, value, b)

    _recipe(shuffle_value, "shuffle", mode, c, with_predicate)

    def codegen(context, builder, sig, args):
        i32 = ir.IntType(32)
        mask_arg, value_arg, b_arg = args[:3]
        mask32 = _word32(builder, mask_arg, signed=False)
        b32 = _word32(builder, b_arg)
        fnty = ir.FunctionType(ir.LiteralStructType((i32, ir.IntType(1))), (i32,) * 5)
        shfl = cgutils.get_or_insert_function(builder.module, fnty, "llvm.nvvm.shfl.sync.i32")
        mode_const = ir.Constant(i32, mode)
        c_const = ir.Constant(i32, c) if c is not None else _word32(builder, args[3])
        predicates = []

        def word(w):
            result = builder.call(shfl, (mask32, mode_const, w, b32, c_const))
            predicates.append(builder.extract_value(result, 1))
            return builder.extract_value(result, 0)

        moved = _map_words(context, builder, sig.args[1], (value_arg,), lambda words: word(words[0]))
        if not with_predicate:
            return moved
        # every word's predicate is the same: it depends on the lanes, not the data
        return context.make_tuple(builder, sig.return_type, (moved, predicates[0]))

    return shuffle_value


# CUB's InclusiveScanStep for sums (warp_scan_shfl.cuh). (In LLVM's inline assembly,
# "{", "|" and "}" are literal; "$(", "$|" and "$)" would mark dialect variants.)
_UP_SUM_ASM = {
    32: "{ .reg .b32 r0; .reg .pred p; shfl.sync.up.b32 r0|p, $1, $2, $3, $4; "
        "@p add.ADD r0, r0, $1; mov.b32 $0, r0; }",
    64: "{ .reg .b64 r0; .reg .b32 lo; .reg .b32 hi; .reg .pred p; mov.b64 {lo, hi}, $1; "
        "shfl.sync.up.b32 lo|p, lo, $2, $3, $4; shfl.sync.up.b32 hi|p, hi, $2, $3, $4; "
        "mov.b64 r0, {lo, hi}; @p add.ADD r0, r0, $1; mov.b64 $0, r0; }",
}


def _summable_by_up_step(value):
    return (isinstance(value, types.Integer) and value.bitwidth <= 64) or value in (types.float32, types.float64)


@intrinsic
def up_sum_step(typingctx, mask, value, delta, c):
    value = types.unliteral(value)
    if not (_integers(mask, delta, c) and _summable_by_up_step(value)):
        return None

    def codegen(context, builder, sig, args):
        mask_arg, value_arg, delta_arg, c_arg = args

        if isinstance(value, types.Float):
            bits, add = value.bitwidth, "f%d" % value.bitwidth
            register = "f" if bits == 32 else "d"
            operand = value_arg
        else:
            bits, add = max(32, value.bitwidth), "u%d" % max(32, value.bitwidth)
            register = "r" if bits == 32 else "l"
            operand = value_arg if value.bitwidth >= 32 else _word32(builder, value_arg, value.signed)
        text = _UP_SUM_ASM[bits].replace("ADD", add)
        i32 = ir.IntType(32)
        fnty = ir.FunctionType(operand.type, (operand.type, i32, i32, i32))
        result = _warp_asm(
            builder, fnty, text, "=%s,%s,r,r,r" % (register, register),
            (operand, _word32(builder, delta_arg), _word32(builder, c_arg),
             _word32(builder, mask_arg, signed=False)),
        )
        return builder.trunc(result, value_arg.type) if result.type != value_arg.type else result

    return value(mask, value, delta, c), codegen


_recipe(up_sum_step, "up_sum_step")


def redux_asm(kind, signed):
    """``redux.sync``'s PTX for ``kind`` (add, min, max, and, or, xor) on 32-bit words:
    $0 the result, $1 the value, $2 the mask; min and max in the values' signedness."""
    word = {"add": "s32", "min": "s32" if signed else "u32", "max": "s32" if signed else "u32"}.get(kind, "b32")
    return f"redux.sync.{kind}.{word} $0, $1, $2;"


@functools.lru_cache(maxsize=None)
def warp_redux(kind):
    """``kind`` (add, min, max, and, or, xor) over the lanes of ``mask`` with one
    ``redux.sync`` (sm_80 and later), CUDA's ``__reduce_<kind>_sync``: every lane gets
    it. Integers of 32 bits or fewer, extended to 32 in their signedness."""

    @intrinsic
    def warp_reduced(typingctx, mask, value):
        value = types.unliteral(value)
        if not _integers(mask) or not (isinstance(value, types.Integer) and value.bitwidth <= 32):
            return None
        text = redux_asm(kind, value.signed)

        def codegen(context, builder, sig, args):
            i32 = ir.IntType(32)
            mask_arg, value_arg = args
            mask32 = _word32(builder, mask_arg, signed=False)
            value32 = _word32(builder, value_arg, value.signed)
            # (libNVVM has no redux intrinsic)
            fnty = ir.FunctionType(i32, (i32, i32))
            total = _warp_asm(builder, fnty, text, "=r,r,r", (value32, mask32))
            return builder.trunc(total, value_arg.type) if value_arg.type.width < 32 else total

        return value(mask, value), codegen

    return _recipe(warp_reduced, "warp_redux", kind)


# (lanes, label, the bit as a mask, mask)
_SAME_BIT_LANES_ASM = ("{ .reg .pred p; and.b32 $0, $1, $2; setp.ne.u32 p, $0, 0; vote.sync.ballot.b32 $0, p, $3; "
                       "@!p not.b32 $0, $0; }")


@intrinsic
def same_bit_lanes(typingctx, mask, label, bit):
    """The lanes of ``mask`` whose ``label`` has bit ``bit`` equal to the caller's: CUB's
    MatchAny step, one ``vote.sync.ballot`` and a predicated ``not`` (in PTX, as CUB
    writes it: NVVM would test the bit twice and select)."""
    if not _integers(mask, label, bit):
        return None

    def codegen(context, builder, sig, args):
        i32 = ir.IntType(32)
        mask32 = _word32(builder, args[0], signed=False)
        label32 = _word32(builder, args[1], signed=False)
        bit32 = builder.shl(ir.Constant(i32, 1), _word32(builder, args[2], signed=False))
        fnty = ir.FunctionType(i32, (i32, i32, i32))
        return _warp_asm(builder, fnty, _SAME_BIT_LANES_ASM, "=r,r,r,r", (label32, bit32, mask32))

    return types.uint32(mask, label, bit), codegen


_recipe(same_bit_lanes, "same_bit_lanes")


_LANES_BELOW_ASM = "mov.u32 $0, %lanemask_lt;"


@intrinsic
def lanes_below(typingctx):
    """The lanes of the caller's warp below it: ``cuda.lanemask_lt()`` (the same PTX), as
    an intrinsic with a recipe (numba-cuda-mlir 0.6 types ``lanemask_lt`` but cannot
    lower it)."""

    def codegen(context, builder, sig, args):
        i32 = ir.IntType(32)
        # (pure: the lane's own mask, no other lane's value; readnone, as the register is)
        return builder.call(ir.InlineAsm(ir.FunctionType(i32, ()), _LANES_BELOW_ASM, "=r", side_effect=False), (),
                            attrs=("nounwind", "readnone"))

    return types.uint32(), codegen


_recipe(lanes_below, "lanes_below")


# -- static arrays --------------------------------------------------------------------


def word_array(words, space, name, takes_unused):
    """An intrinsic giving what ``cuda.shared.array`` / ``cuda.local.array(words,
    np.uint64)`` lowers to (``space``: "shared", one static allocation wherever it is
    lowered, i.e. once per specialisation; or "local"); ``takes_unused``: it takes one
    ignored argument."""
    buffer_type = types.Array(types.uint64, 1, "C")

    def codegen(context, builder, sig, args):
        return lower_static_array(context, builder, (words,), types.uint64, space, name)

    if takes_unused:

        @intrinsic
        def allocate(typingctx, unused):
            return buffer_type(unused), codegen

    else:

        @intrinsic
        def allocate(typingctx):
            return buffer_type(), codegen

    return _recipe(allocate, "word_array", words, space, name, takes_unused)


def local_array_tuple(count, member_types):
    """An intrinsic ``allocate()`` giving a tuple of ``cuda.local.array(count, member)``,
    one per Numba type of ``member_types`` (a tuple; one Numba type: that one array)."""
    single = not isinstance(member_types, tuple)
    if single:
        member_types = (member_types,)
    arrays = [types.Array(member, 1, "C") for member in member_types]
    result = arrays[0] if single else types.Tuple(arrays)

    def codegen(context, builder, sig, args):
        arrays = [lower_static_array(context, builder, (count,), member, "local", "_cudapy_lmem")
                  for member in member_types]
        return arrays[0] if single else context.make_tuple(builder, sig.return_type, arrays)

    @intrinsic
    def allocate(typingctx):
        return result(), codegen

    return _recipe(allocate, "local_array_tuple", count, member_types[0] if single else member_types)


# -- scratch slots --------------------------------------------------------------------


def _slot_pointer(context, builder, buffer_type, buffer, index, value_type):
    array = context.make_array(buffer_type)(context, builder, buffer)
    data_type = context.get_data_type(value_type)
    base = builder.bitcast(array.data, data_type.as_pointer())
    return builder.gep(base, [index])


def _buffer_and_index(buffer, index):
    return isinstance(buffer, types.Array) and isinstance(index, types.Integer)


def _store_slot(context, builder, sig, buffer_arg, index_arg, value_arg, value_type):
    pointer = _slot_pointer(context, builder, sig.args[0], buffer_arg, index_arg, value_type)
    model = context.data_model_manager[value_type]
    builder.store(model.as_data(builder, value_arg), pointer)
    return context.get_dummy_value()


@intrinsic
def store(typingctx, buffer, index, value):
    """``slot[index] = value`` in a scratch buffer."""
    if not _buffer_and_index(buffer, index):
        return None
    value_type = types.unliteral(value)

    def codegen(context, builder, sig, args):
        return _store_slot(context, builder, sig, *args, value_type)

    return types.void(buffer, index, value_type), codegen


_recipe(store, "store")


@intrinsic
def atomic_add(typingctx, buffer, index, value):
    """``slot[index] += value`` for an integer slot, atomically (relaxed, as CUDA's
    atomicAdd); the value it held."""
    if not _buffer_and_index(buffer, index):
        return None
    value_type = types.unliteral(value)
    if not isinstance(value_type, types.Integer):
        return None

    def codegen(context, builder, sig, args):
        buffer_arg, index_arg, value_arg = args
        pointer = _slot_pointer(context, builder, sig.args[0], buffer_arg, index_arg, value_type)
        return builder.atomic_rmw("add", pointer, value_arg, "monotonic")

    return value_type(buffer, index, value_type), codegen


_recipe(atomic_add, "atomic_add")


@intrinsic
def atomic_add_element(typingctx, array, index, value):
    """``array[index] += value`` for a 1-D array of integers or floats in shared or global
    memory, atomically (relaxed, as ``cuda.atomic.add``); the value it held."""
    if not (isinstance(array, types.Array) and array.ndim == 1 and isinstance(index, types.Integer)
            and isinstance(array.dtype, (types.Integer, types.Float))):
        return None
    element = array.dtype

    def codegen(context, builder, sig, args):
        array_arg, index_arg, value_arg = args
        made = context.make_array(sig.args[0])(context, builder, array_arg)
        position = context.cast(builder, index_arg, sig.args[1], types.intp)
        pointer = cgutils.get_item_pointer(context, builder, sig.args[0], made, [position], wraparound=False)
        converted = context.cast(builder, value_arg, sig.args[2], element)
        if isinstance(element, types.Float):  # (NVVM's IR has no atomicrmw fadd: numba-cuda's intrinsics)
            declare = nvvmutils.declare_atomic_add_float32 if element.bitwidth == 32 else \
                nvvmutils.declare_atomic_add_float64
            return builder.call(declare(builder.module), (pointer, converted))
        return builder.atomic_rmw("add", pointer, converted, "monotonic")

    return element(array, index, value), codegen


_recipe(atomic_add_element, "atomic_add_element")


@functools.lru_cache(maxsize=None)
def storer(value_type):
    @intrinsic
    def store_as(typingctx, buffer, index, value):
        """``slot[index] = value`` converted to ``value_type`` first."""
        if not _buffer_and_index(buffer, index):
            return None
        if typingctx.can_convert(value, value_type) is None:
            return None

        def codegen(context, builder, sig, args):
            buffer_arg, index_arg, value_arg = args
            converted = context.cast(builder, value_arg, sig.args[2], value_type)
            return _store_slot(context, builder, sig, buffer_arg, index_arg, converted, value_type)

        return types.void(buffer, index, value), codegen

    return _recipe(store_as, "storer", value_type)


@functools.lru_cache(maxsize=None)
def loader(value_type):
    @intrinsic
    def load(typingctx, buffer, index):
        """``slot[index]`` of a scratch buffer, as ``value_type``."""
        if not _buffer_and_index(buffer, index):
            return None

        def codegen(context, builder, sig, args):
            buffer_arg, index_arg = args
            pointer = _slot_pointer(context, builder, sig.args[0], buffer_arg, index_arg, value_type)
            model = context.data_model_manager[value_type]
            return model.from_data(builder, builder.load(pointer))

        return value_type(buffer, index), codegen

    return _recipe(load, "loader", value_type)


# -- array elements ---------------------------------------------------------------------
# numba-cuda's own indexing (a contiguous array's stride is a constant in its code), under
# names with recipes: numba-cuda-mlir's indexing multiplies by the stride it reads.


def element(array, index):
    """``array[index]`` of a 1-D array, ``index`` non-negative."""
    return array[index]


def set_element(array, index, value):
    """``array[index] = value`` of a 1-D array, ``index`` non-negative."""
    array[index] = value


element = _recipe(register_jitable(element), "element")
set_element = _recipe(register_jitable(set_element), "set_element")


@intrinsic
def tile_from(typingctx, array, offset):
    """``array[offset:]`` of a 1-D array, ``offset`` from 0 to its length, without a
    slice's fix-ups (Numba's slicing wraps a negative start around and clamps it to the
    length: a compare, a max and two selects, and the length read, before the first
    access): the data pointer moves by ``offset`` items and the length shrinks by as
    many, as CUB's ``d_in + block_offset``."""
    if not (isinstance(array, types.Array) and array.ndim == 1 and isinstance(offset, types.Integer)):
        return None

    def codegen(context, builder, sig, args):
        from numba.cuda.np.arrayobj import populate_array

        array_type = sig.args[0]
        made = context.make_array(array_type)(context, builder, args[0])
        start = context.cast(builder, args[1], sig.args[1], types.intp)
        (stride,) = cgutils.unpack_tuple(builder, made.strides, 1)
        (length,) = cgutils.unpack_tuple(builder, made.shape, 1)
        if array_type.layout in "CF":
            data = builder.gep(made.data, [start], inbounds=True)
        else:
            byte = ir.IntType(8).as_pointer(made.data.type.addrspace)
            moved = builder.gep(builder.bitcast(made.data, byte), [builder.mul(start, stride)], inbounds=True)
            data = builder.bitcast(moved, made.data.type)
        view = context.make_array(sig.return_type)(context, builder)
        populate_array(view, data=data, shape=[builder.sub(length, start)], strides=[stride],
                       itemsize=made.itemsize, meminfo=made.meminfo, parent=made.parent)
        return view._getvalue()

    return array(array, offset), codegen


_recipe(tile_from, "tile_from")


# -- vectors --------------------------------------------------------------------------


@intrinsic
def address(typingctx, array):
    """Address of ``array``'s first element."""
    if not isinstance(array, types.Array):
        return None

    def codegen(context, builder, sig, args):
        data = context.make_array(sig.args[0])(context, builder, args[0]).data
        return builder.ptrtoint(data, ir.IntType(64))

    return types.uint64(array), codegen


_recipe(address, "address")


def vector_shape(item_type, items_per_vector):
    """(lane bits, lanes, word bits, words, alignment in bytes) of a vector of
    ``items_per_vector`` items of the numba-cuda type ``item_type``: the items as integer
    lanes (an item's bits, or each part of a complex), packed into 32-bit words when
    lanes are narrower (NVPTX would split a vector of 8- or 16-bit lanes into 4-lane
    accesses: 16 bytes of int8 in four instructions)."""
    if isinstance(item_type, types.Complex):
        bits, per_item = item_type.bitwidth // 2, 2
    elif isinstance(item_type, types.Boolean):
        bits, per_item = 8, 1  # bools are bytes in memory
    else:
        bits, per_item = item_type.bitwidth, 1
    lanes = items_per_vector * per_item
    vector_bits = bits * lanes
    word_bits = 32 if bits < 32 and vector_bits >= 32 else bits
    return bits, lanes, word_bits, vector_bits // word_bits, vector_bits // 8


def _vector_layout(item_type, items_per_vector):
    """``vector_shape`` with the lane and word types as LLVM types."""
    bits, lanes, word_bits, words, alignment = vector_shape(item_type, items_per_vector)
    return ir.IntType(bits), lanes, ir.IntType(word_bits), words, alignment


def _vector_pointers(context, builder, sig, args, item_type, items_per_vector):
    """(pointer to vector ``vector`` of the array as words, pointer to item ``first``'s
    lanes in the items array, and the vector's layout)."""
    array_type, vector_type, items_type, first_type = sig.args
    layout = lane, lanes, word, words, alignment = _vector_layout(item_type, items_per_vector)
    i64 = ir.IntType(64)
    data = context.make_array(array_type)(context, builder, args[0]).data
    vectors = builder.bitcast(data, ir.PointerType(ir.VectorType(word, words), data.type.addrspace))
    vector_index = context.cast(builder, args[1], vector_type, types.uint64)
    vector_pointer = builder.gep(vectors, [vector_index], inbounds=True)
    item_data = context.make_array(items_type)(context, builder, args[2]).data
    item_lanes = builder.bitcast(item_data, ir.PointerType(lane, item_data.type.addrspace))
    first = context.cast(builder, args[3], first_type, types.uint64)
    first_lane = builder.mul(first, ir.Constant(i64, lanes // items_per_vector), flags=["nuw"])
    lane_pointers = [
        builder.gep(item_lanes, [builder.add(first_lane, ir.Constant(i64, k), flags=["nuw"])], inbounds=True)
        for k in range(lanes)
    ]
    return vector_pointer, lane_pointers, layout


def _vector_access(item_type, items_per_vector, move):
    """An intrinsic ``(array, vector, items, first)`` whose code ``move(builder,
    vector_pointer, lane_pointers, layout)`` emits."""

    @intrinsic
    def access(typingctx, array, vector, items, first):
        if not (isinstance(array, types.Array) and isinstance(items, types.Array) and array.dtype == item_type
                and items.dtype == item_type and _integers(vector, first)):
            return None

        def codegen(context, builder, sig, args):
            move(builder, *_vector_pointers(context, builder, sig, args, item_type, items_per_vector))
            return context.get_dummy_value()

        return types.void(array, vector, items, first), codegen

    return access


def _index(k):
    return ir.Constant(ir.IntType(32), k)


@functools.lru_cache(maxsize=None)
def vector_loader(item_type, items_per_vector):
    def load(builder, vector_pointer, lane_pointers, layout):
        lane, lanes, word, words, alignment = layout
        loaded = builder.load(vector_pointer, align=alignment)
        per_word = lanes // words
        for k, pointer in enumerate(lane_pointers):
            value = builder.extract_element(loaded, _index(k // per_word))
            if per_word > 1:  # lane k % per_word of a little-endian word
                shift = ir.Constant(word, lane.width * (k % per_word))
                value = builder.trunc(builder.lshr(value, shift), lane)
            builder.store(value, pointer)

    return _recipe(_vector_access(item_type, items_per_vector, load), "vector_loader", item_type, items_per_vector)


@functools.lru_cache(maxsize=None)
def vector_storer(item_type, items_per_vector):
    def store_vector(builder, vector_pointer, lane_pointers, layout):
        lane, lanes, word, words, alignment = layout
        per_word = lanes // words
        value = ir.Constant(vector_pointer.type.pointee, ir.Undefined)
        for w in range(words):
            packed = None
            for k in range(per_word):
                part = builder.load(lane_pointers[w * per_word + k])
                if per_word > 1:
                    part = builder.shl(builder.zext(part, word), ir.Constant(word, lane.width * k))
                packed = part if packed is None else builder.or_(packed, part)
            value = builder.insert_element(value, packed, _index(w))
        builder.store(value, vector_pointer, align=alignment)

    return _recipe(_vector_access(item_type, items_per_vector, store_vector), "vector_storer", item_type,
                   items_per_vector)


# -- memory order ---------------------------------------------------------------------


def _flag_array(array):
    return isinstance(array, types.Array) and array.ndim == 1 and array.dtype == types.uint32


def _pair_array(array):
    return isinstance(array, types.Array) and array.ndim == 1 and array.dtype == types.uint64


def _pair_value(ty):
    ty = types.unliteral(ty)
    return isinstance(ty, (types.Integer, types.Float)) and ty.bitwidth <= 32 and ty != types.float16


def _element_address(context, builder, array_type, array, index, index_type):
    index = context.cast(builder, index, index_type, types.intp)
    data = context.make_array(array_type)(context, builder, array)
    pointer = cgutils.get_item_pointer(context, builder, array_type, data, [index], wraparound=False)
    return builder.ptrtoint(pointer, ir.IntType(64))


# (Each access is side-effecting inline PTX with a memory clobber: neither removed nor
# moved across the loads and stores it orders.)


@intrinsic
def load_acquire(typingctx, flags, index):
    """``flags[index]`` with ``ld.acquire.gpu.u32`` (a 1-D uint32 array)."""
    if not _flag_array(flags) or not _integers(index):
        return None

    def codegen(context, builder, sig, args):
        address = _element_address(context, builder, sig.args[0], args[0], args[1], sig.args[1])
        fnty = ir.FunctionType(ir.IntType(32), (ir.IntType(64),))
        return builder.asm(fnty, "ld.acquire.gpu.u32 $0, [$1];", "=r,l,~{memory}", (address,), True)

    return types.uint32(flags, index), codegen


@intrinsic
def store_release(typingctx, flags, index, value):
    """``flags[index] = value`` with ``st.release.gpu.u32`` (a 1-D uint32 array)."""
    if not _flag_array(flags) or not _integers(index, value):
        return None

    def codegen(context, builder, sig, args):
        address = _element_address(context, builder, sig.args[0], args[0], args[1], sig.args[1])
        word = context.cast(builder, args[2], sig.args[2], types.uint32)
        fnty = ir.FunctionType(ir.VoidType(), (ir.IntType(64), ir.IntType(32)))
        builder.asm(fnty, "st.release.gpu.u32 [$0], $1;", "l,r,~{memory}", (address, word), True)
        return context.get_dummy_value()

    return types.void(flags, index, value), codegen


@intrinsic
def store_relaxed_pair(typingctx, words, index, status, value):
    """``words[index] = value << 32 | status`` with one ``st.relaxed.gpu.u64``."""
    if not (_pair_array(words) and _integers(index, status) and _pair_value(value)):
        return None

    def codegen(context, builder, sig, args):
        i32, i64 = ir.IntType(32), ir.IntType(64)
        address = _element_address(context, builder, sig.args[0], args[0], args[1], sig.args[1])
        status32 = context.cast(builder, args[2], sig.args[2], types.uint32)
        value = context.cast(builder, args[3], sig.args[3], types.unliteral(sig.args[3]))
        bits = value if isinstance(value.type, ir.IntType) else builder.bitcast(value, i32)
        bits = builder.zext(bits, i32) if bits.type.width < 32 else bits
        word = builder.or_(builder.shl(builder.zext(bits, i64), ir.Constant(i64, 32)), builder.zext(status32, i64))
        fnty = ir.FunctionType(ir.VoidType(), (i64, i64))
        builder.asm(fnty, "st.relaxed.gpu.u64 [$0], $1;", "l,l,~{memory}", (address, word), True)
        return context.get_dummy_value()

    return types.void(words, index, status, value), codegen


@intrinsic
def load_relaxed_pair(typingctx, words, index, like):
    """``(words[index] & 0xFFFFFFFF, the value in words[index] >> 32)`` with one
    ``ld.relaxed.gpu.u64``; the value has ``like``'s type."""
    if not (_pair_array(words) and _integers(index) and _pair_value(like)):
        return None
    value_type = types.unliteral(like)
    result = types.UniTuple(types.uint32, 2) if value_type == types.uint32 else types.Tuple((types.uint32,
                                                                                             value_type))

    def codegen(context, builder, sig, args):
        i32, i64 = ir.IntType(32), ir.IntType(64)
        address = _element_address(context, builder, sig.args[0], args[0], args[1], sig.args[1])
        fnty = ir.FunctionType(i64, (i64,))
        word = builder.asm(fnty, "ld.relaxed.gpu.u64 $0, [$1];", "=l,l,~{memory}", (address,), True)
        status = builder.trunc(word, i32)
        high = builder.trunc(builder.lshr(word, ir.Constant(i64, 32)), i32)
        llvm_type = context.get_value_type(value_type)
        if isinstance(llvm_type, ir.IntType):
            value = builder.trunc(high, llvm_type) if llvm_type.width < 32 else high
        else:
            value = builder.bitcast(high, llvm_type)
        return context.make_tuple(builder, sig.return_type, (status, value))

    return result(words, index, like), codegen


# -- registers ------------------------------------------------------------------------


@functools.lru_cache(maxsize=None)
def block_rank_reader(fresh, shape=None):
    """An intrinsic ``()`` giving the thread's linear rank in its block, in 32-bit
    unsigned arithmetic widened to int64 with zext (Numba would compute in signed
    64-bit, and every rank / 32, % 32 and raking-slot division after it would carry sign
    fix-ups and 64-bit multiplies; CUB computes in 32 bits): from the block's run-time
    shape (``shape`` None), or from the constant ``shape`` ``(x, y, z)`` (CUB's
    BLOCK_DIM_X/Y/Z: no ``%ntid`` read, and no ``%tid.y`` / ``%tid.z`` where that size
    is 1); ``fresh``: an opaque copy (volatile asm), which LLVM cannot merge with
    another read's."""

    def codegen(context, builder, sig, args):
        i32 = ir.IntType(32)
        if shape is None:
            z_rows = builder.mul(_special_register(builder, "tid.z"), _special_register(builder, "ntid.y"),
                                 flags=["nuw"])
            row = builder.add(z_rows, _special_register(builder, "tid.y"), flags=["nuw"])
            rank = builder.add(builder.mul(row, _special_register(builder, "ntid.x"), flags=["nuw"]),
                               _special_register(builder, "tid.x"), flags=["nuw"])
        else:
            rank = _special_register(builder, "tid.x")
            for axis, stride, size in (("y", shape[0], shape[1]), ("z", shape[0] * shape[1], shape[2])):
                if size > 1:
                    offset = builder.mul(_special_register(builder, f"tid.{axis}"), ir.Constant(i32, stride),
                                         flags=["nuw"])
                    rank = builder.add(rank, offset, flags=["nuw"])
        if fresh:
            rank = builder.asm(ir.FunctionType(i32, [i32]), "mov.u32 $0, $1;", "=r,r", [rank], True)
        return builder.zext(rank, ir.IntType(64))

    @intrinsic
    def read_rank(typingctx):
        return types.int64(), codegen

    return _recipe(read_rank, "block_rank_reader", fresh, shape)


@functools.lru_cache(maxsize=None)
def int64_constant(value):
    """An intrinsic ``()`` giving the int64 ``value``: no function of its own to compile."""

    @intrinsic
    def constant(typingctx):
        return types.int64(), lambda context, builder, sig, args: context.get_constant(types.int64, value)

    return _recipe(constant, "int64_constant", value)


def slot32(log_banks, padded):
    """An intrinsic ``(offset) -> int64``: ``offset`` in 32 bits (truncated or
    zero-extended), plus ``offset >> log_banks`` where ``padded``, zero-extended."""

    @intrinsic
    def slot(typingctx, offset):
        if not isinstance(offset, types.Integer):
            return None

        def codegen(context, builder, sig, args):
            i32 = ir.IntType(32)
            value = _as_width(builder, args[0], 32)
            if padded:
                value = builder.add(value, builder.lshr(value, ir.Constant(i32, log_banks)))
            return builder.zext(value, ir.IntType(64))

        return types.int64(offset), codegen

    return _recipe(slot, "slot32", log_banks, padded)


@functools.lru_cache(maxsize=None)
def converter(value_type):
    """An intrinsic converting a value to ``value_type`` (as Numba's implicit
    conversions)."""

    @intrinsic
    def convert(typingctx, value):
        if typingctx.can_convert(value, value_type) is None:
            return None

        def codegen(context, builder, sig, args):
            return context.cast(builder, args[0], sig.args[0], value_type)

        return value_type(value), codegen

    return _recipe(convert, "converter", value_type)


@intrinsic
def same(typingctx, value):
    """The value itself: no function of its own to compile."""

    def codegen(context, builder, sig, args):
        return context.cast(builder, args[0], sig.args[0], sig.return_type)

    return types.unliteral(value)(value), codegen


_recipe(same, "same")


_SELECT_ASM = "{ .reg .pred p; setp.ne.b32 p, $3, 0; selp.b32 $0, $1, $2, p; }"


@intrinsic
def select(typingctx, condition, if_true, if_false):
    """``if_true if condition else if_false`` as PTX ``selp``, word by word: never a
    branch, so shuffles whose operands it chooses stay in converged code. (NVVM turns a
    Python conditional, and even LLVM's ``select``, on a lane's bit into branches, then
    copies the shuffles after them into each way: divergent shuffles, serialised, 3-14x
    slower batched reductions seen on an H200.)"""
    value = types.unliteral(if_true)
    if value != types.unliteral(if_false) or not isinstance(condition, (types.Boolean, types.Integer)):
        return None

    def codegen(context, builder, sig, args):
        condition32 = _word32(builder, context.cast(builder, args[0], sig.args[0], types.uint32), signed=False)
        fnty = ir.FunctionType(ir.IntType(32), (ir.IntType(32),) * 3)
        return _map_words(context, builder, value, args[1:],
                          lambda words: builder.asm(fnty, _SELECT_ASM, "=r,r,r,r", (*words, condition32), False))

    return value(condition, if_true, if_false), codegen


_recipe(select, "select")


def _conversion(from_type, to_type, build):
    """An intrinsic ``from_type -> to_type`` whose code ``build(context, builder,
    value)`` gives."""

    @intrinsic
    def convert(typingctx, value):
        if types.unliteral(value) != from_type:
            return None

        def codegen(context, builder, sig, args):
            return build(context, builder, args[0])

        return to_type(value), codegen

    return convert


def bit_conversion(from_type, to_type, step, bits, shift=0):
    """An intrinsic ``from_type -> to_type`` of one of radix keys' bit twiddles (CUB's
    ``TwiddleIn`` / ``TwiddleOut``), on ``bits``-wide words:

    - ``"zext"`` / ``"nonzero"``: a bool to a byte, and back;
    - ``"flip_sign"``: the sign bit flipped (signed integers, both ways);
    - ``"float_to_ordered"`` / ``"ordered_to_float"``: a float's bits with the sign bit
      set where it is positive, every bit inverted where it is negative, and back;
    - ``"same"``: the bits unchanged;
    - ``"shift_left"`` / ``"shift_right"``: shifted by ``shift`` and resized (a member's
      bits into a tuple key's word, and out of it)."""
    word = ir.IntType(bits)
    high = ir.Constant(word, 1 << (bits - 1))

    def build(context, builder, value):
        if step == "zext":
            return builder.zext(value, word)
        if step == "nonzero":
            return builder.icmp_unsigned("!=", value, ir.Constant(word, 0))
        if step == "flip_sign":
            return builder.xor(value, high)
        if step == "float_to_ordered":
            value = builder.bitcast(value, word)
            negative = builder.icmp_signed("<", value, ir.Constant(word, 0))
            return builder.xor(value, builder.select(negative, ir.Constant(word, -1), high))
        if step == "ordered_to_float":
            # the sign bit set: it was positive
            was_positive = builder.icmp_signed("<", value, ir.Constant(word, 0))
            mask = builder.select(was_positive, high, ir.Constant(word, -1))
            return builder.bitcast(builder.xor(value, mask), context.get_value_type(to_type))
        if step == "shift_left":
            return builder.shl(_as_width(builder, value, to_type.bitwidth), ir.Constant(ir.IntType(to_type.bitwidth),
                                                                                         shift))
        if step == "shift_right":
            return _as_width(builder, builder.lshr(value, ir.Constant(ir.IntType(from_type.bitwidth), shift)),
                             to_type.bitwidth)
        assert step == "same", step
        return value

    return _recipe(_conversion(from_type, to_type, build), "bit_conversion", from_type, to_type, step, bits, shift)


@functools.lru_cache(maxsize=None)
def digit_extractor(bits, minus_zero_fields):
    """An intrinsic ``(ordered, begin_bit, num_bits) -> uint32`` reading a digit of
    ``bits``-wide ordered bits; each ``(offset, width, minus_zero)`` of
    ``minus_zero_fields`` is a float member whose -0.0 (ordered bits ``minus_zero``) is
    read as +0.0 (every bit of the field flipped)."""
    unsigned = types.Integer.from_bitwidth(bits, signed=False)

    @intrinsic
    def extract(typingctx, ordered, begin_bit, num_bits):
        if types.unliteral(ordered) != unsigned or not _integers(begin_bit, num_bits):
            return None

        def codegen(context, builder, sig, args):
            value, begin, count = args
            word = ir.IntType(bits)
            for offset, width, minus_zero in minus_zero_fields:
                field = ir.Constant(word, (1 << width) - 1)
                member = builder.and_(builder.lshr(value, ir.Constant(word, offset)), field)
                is_minus_zero = builder.icmp_unsigned("==", member, ir.Constant(word, minus_zero))
                flipped = builder.xor(value, ir.Constant(word, ((1 << width) - 1) << offset))
                value = builder.select(is_minus_zero, flipped, value)
            i32 = ir.IntType(32)
            # shift in the key's width (a 64-bit key's digit may lie above bit 32),
            # then mask in 32 bits: digits are narrower than 32 bits (1 << 32 overflows)
            shifted = _as_width(builder, builder.lshr(value, _as_width(builder, begin, bits)), 32)
            count32 = _as_width(builder, count, 32)
            mask = builder.sub(builder.shl(ir.Constant(i32, 1), count32), ir.Constant(i32, 1))
            return builder.and_(shifted, mask)

        return types.uint32(ordered, begin_bit, num_bits), codegen

    return _recipe(extract, "digit_extractor", bits, minus_zero_fields)


# -- control flow ---------------------------------------------------------------------


class _LoopID(ir.values.MDValue):
    """A loop's ID, ``!N = distinct !{!N, !{!"<hint>"}}``: LLVM reads loop hints from a
    node whose first operand is the node itself, which ``Module.add_metadata`` cannot
    make."""

    def __init__(self, module, hint):
        hint_node = module.add_metadata([ir.MetaDataString(module, hint)])
        super().__init__(module, [], name=str(len(module.metadata)))
        self.operands = (self, hint_node)

    def descr(self, buf):
        buf += (f"distinct !{{ {self.get_reference()}, {self.operands[1].get_reference()} }}", "\n")

    __eq__ = object.__eq__
    __hash__ = object.__hash__


def unrolled_loop(count, body):
    """An intrinsic ``(items, output, buffer, index, warp, lanes, mask)`` calling
    ``body(k, items, output, buffer, index, warp, lanes, mask)`` (a plain Python
    function, compiled once, ``k`` a uint32) for ``k`` in ``range(count)``, in a loop
    that NVVM unrolls in full (``llvm.loop.unroll.full`` on its back edge, as CUB's
    ``#pragma unroll``). (Numba's intrinsics take no ``*args``: the arguments are those
    of coop's exchanges.)"""

    @intrinsic
    def loop(typingctx, items, output, buffer, index, warp, lanes, mask):
        arg_types = (items, output, buffer, index, warp, lanes, mask)
        body_signature = types.void(types.uint32, *arg_types)

        def codegen(context, builder, signature, args):
            i32 = ir.IntType(32)
            before = builder.block
            header = builder.append_basic_block("turns.header")
            loop_body = builder.append_basic_block("turns.body")
            after = builder.append_basic_block("turns.end")
            builder.branch(header)
            builder.position_at_end(header)
            k = builder.phi(i32, name="turn")
            k.add_incoming(ir.Constant(i32, 0), before)
            builder.cbranch(builder.icmp_unsigned("<", k, ir.Constant(i32, count)), loop_body, after)
            builder.position_at_end(loop_body)
            context.compile_internal(builder, body, body_signature, (k, *args))
            k.add_incoming(builder.add(k, ir.Constant(i32, 1), flags=["nuw"]), builder.block)
            back_edge = builder.branch(header)
            back_edge.set_metadata("llvm.loop", _LoopID(builder.module, "llvm.loop.unroll.full"))
            builder.position_at_end(after)
            return context.get_dummy_value()

        return types.void(*arg_types), codegen

    return _recipe(loop, "unrolled_loop", count, body)


# -- checks ---------------------------------------------------------------------------


def _trap_if(context, builder, condition, message, values=()):
    """Emit: if ``condition`` (an i1), print ``message`` (a printf format taking the
    64-bit integers ``values``) and trap. Every thread that fails prints before it traps:
    the first trap ends the kernel, and a thread that had not printed by then never will,
    so only a thread's own printf is sure to come before its trap."""
    with builder.if_then(condition, likely=False):
        voidptr = ir.PointerType(ir.IntType(8))
        text = context.insert_string_const_addrspace(builder, message + "\n")
        if values:
            arguments = cgutils.make_anonymous_struct(builder, list(values))
            pointer = builder.bitcast(cgutils.alloca_once_value(builder, arguments), voidptr)
        else:
            pointer = ir.Constant(voidptr, None)
        builder.call(nvvmutils.declare_vprint(builder.module), (text, pointer))
        builder.asm(ir.FunctionType(ir.VoidType(), []), "trap;", "", [], side_effect=True)


def launch_check(message, threads):
    """An intrinsic ``()``: in debug mode (``coop.config.debug`` when the caller is
    compiled), a block of other than ``threads`` threads (an int), or of another shape
    than ``threads`` (``(x, y, z)``), prints ``message`` (a printf format taking the
    block's thread count, or its three sizes) and traps; otherwise nothing."""

    @intrinsic
    def check(typingctx):
        def codegen(context, builder, sig, args):
            if not config.debug:
                return context.get_dummy_value()
            i64 = ir.IntType(64)
            sizes = [builder.zext(_special_register(builder, f"ntid.{axis}"), i64) for axis in "xyz"]
            if isinstance(threads, tuple):
                differs = [builder.icmp_unsigned("!=", size, ir.Constant(i64, n)) for size, n in zip(sizes, threads)]
                _trap_if(context, builder, functools.reduce(builder.or_, differs), message, sizes)
                return context.get_dummy_value()
            count = builder.mul(builder.mul(sizes[0], sizes[1]), sizes[2])
            wrong = builder.icmp_unsigned("!=", count, ir.Constant(i64, threads))
            _trap_if(context, builder, wrong, message, [count])
            return context.get_dummy_value()

        return types.void(), codegen

    return _recipe(check, "launch_check", message, threads)


def _function(module, name, return_type, arg_types):
    existing = module.globals.get(name)
    if existing is not None:
        return existing
    return ir.Function(module, ir.FunctionType(return_type, arg_types), name)


@functools.lru_cache(maxsize=None)
def size_checks_available():
    """Whether the NVVM in use folds ``llvm.is.constant`` (a 20 ms compile, once)."""
    from numba.cuda.cudadrv import nvvm

    module = ir.Module("coop_probe")
    module.triple = "nvptx64-nvidia-cuda"
    module.data_layout = nvvm.NVVM().data_layout
    bit = ir.IntType(1)
    probe = ir.Function(module, ir.FunctionType(bit, [bit]), "coop_probe")
    builder = ir.IRBuilder(probe.append_basic_block())
    builder.ret(builder.call(_function(module, "llvm.is.constant.i1", bit, [bit]), probe.args))
    nvvm.add_ir_version(module)
    try:
        ptx = nvvm.compile_ir(str(module))
    except Exception:
        return False
    return b"is.constant" not in bytes(ptx)


def size_check(symbol, message, unit, exact):
    """An intrinsic ``check(array, minimum)``: ``array`` must hold ``minimum`` items (or
    bytes, ``unit``); with ``exact``, exactly ``minimum``. Where the size is a known
    constant and wrong, the kernel calls the undefined function ``symbol`` (it fails to
    link); in debug mode, a size known only at run time prints ``message`` (a printf
    format taking the size and the minimum) and traps."""

    @intrinsic
    def check(typingctx, array, minimum):
        if not isinstance(array, types.Array) or not isinstance(minimum, types.Integer):
            return None

        def codegen(context, builder, sig, args):
            debug = config.debug
            if not (size_checks_available() or debug):
                return context.get_dummy_value()
            array_type, minimum_type = sig.args
            data = context.make_array(array_type)(context, builder, args[0])
            size = builder.extract_value(data.shape, 0)
            if unit == "bytes":
                itemsize = context.get_abi_sizeof(context.get_data_type(array_type.dtype))
                size = builder.mul(size, context.get_constant(types.intp, itemsize))
            needed = context.cast(builder, args[1], minimum_type, types.intp)
            bad_size = builder.icmp_signed("!=" if exact else "<", size, needed)
            module = builder.module
            if size_checks_available():
                bit = ir.IntType(1)
                is_constant = _function(module, "llvm.is.constant.i1", bit, [bit])
                known = builder.call(is_constant, [bad_size])
                with builder.if_then(builder.and_(known, bad_size), likely=False):
                    builder.call(_function(module, symbol, ir.VoidType(), []), [])
            if debug:  # sizes known only at run time
                _trap_if(context, builder, bad_size, message, [size, needed])
            return context.get_dummy_value()

        return types.void(array, minimum), codegen

    return _recipe(check, "size_check", symbol, message, unit, exact)
