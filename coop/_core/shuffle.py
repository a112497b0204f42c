"""Warp shuffles of any value type, and the masks of logical warps.

``shuffler(mode, width)`` returns a function ``(mask, value, b) -> value`` that
shuffles a value of any supported type among the lanes of ``mask`` with CUDA's
``__shfl_*_sync(mask, value, b, width)`` semantics (PTX ``shfl.sync`` with clamp and
segment mask derived from ``width``). Compiled, it is an intrinsic that moves the value
as 32-bit words: 8- and 16-bit values and bools widened to one word, 64-bit values
split in two, complex numbers and tuples element by element. Under the simulator it is
the simulator's shuffle, which moves any Python value.

``same_bit_lanes(mask, label, bit)`` is one step of CUB's MatchAny: the lanes of ``mask``
whose ``label`` has bit ``bit`` as the caller's does (a ballot, inverted where the
caller's bit is clear); the lanes holding the same ``B``-bit label are the intersection
of ``B`` of them.

``up_with_source`` is the shfl.sync.up that also returns the instruction's predicate
(whether the source lane is in the logical warp), and ``up_sum_step`` CUB's fused scan
step for sums: the shuffle and an add predicated on it. Both take the clamp operand
``clamp(UP, width)`` as their last argument.
"""

import functools

import numpy as np

from numba.cuda import types
from numba.cuda.cgutils import get_or_insert_function
from numba.cuda.extending import intrinsic
from llvmlite import ir

from coop._core.backend import SIMULATOR, cuda
from coop._core.specialize import device_function

IDX, UP, DOWN, XOR = 0, 1, 2, 3
FULL_MASK = 0xFFFFFFFF


def clamp(mode, width):
    """The ``c`` operand of shfl.sync for CUDA's ``width`` argument."""
    return ((32 - width) << 8) | (0 if mode == UP else 0x1F)


@functools.lru_cache(maxsize=None)
def shuffler(mode, width):
    c = clamp(mode, width)
    if SIMULATOR:
        from coop._core import simulator

        def shuffle(mask, value, b):
            return simulator.shfl(mask, mode, value, b, c)

        return shuffle
    return _compiled_shuffler(mode, c)


def _simulated_up_source(delta, c):
    """Whether shfl.sync.up by ``delta`` reads another lane (the PTX ISA's rule, as in
    ``coop._core.simulator.shfl``)."""
    lane = cuda.laneid
    segmask = (c >> 8) & 31
    return lane - (delta & 31) >= ((lane & segmask) | (c & 31 & ~segmask))


def has_up_sum_step(value_type):
    """Whether ``up_sum_step`` serves ``value_type``: integers and 32/64-bit floats."""
    ty = types.unliteral(value_type)
    return (isinstance(ty, types.Integer) and ty.bitwidth <= 64) or ty in (types.float32, types.float64)


if SIMULATOR:

    def up_with_source(mask, value, delta, c):
        """``(moved, from_source)``: shfl.sync.up by ``delta`` with clamp operand ``c``
        (``clamp(UP, width)``) and its predicate, true where the source lane exists in
        the logical warp (``moved`` is the caller's own value where it does not)."""
        from coop._core import simulator

        return simulator.shfl(mask, UP, value, delta, c), _simulated_up_source(delta, c)

    def up_sum_step(mask, value, delta, c):
        """``value`` plus the value of the lane ``delta`` below, where that lane exists in
        the logical warp (clamp operand ``c``), else ``value``: CUB's InclusiveScanStep
        for sums, one shfl.sync.up and an add predicated on its source predicate
        (integers narrower than 32 bits add in 32 bits: the same modulo their width)."""
        from coop._core import simulator

        moved = simulator.shfl(mask, UP, value, delta, c)
        if not _simulated_up_source(delta, c):
            return value
        with np.errstate(over="ignore"):  # integers wrap, as on the GPU
            return type(value)(moved + value)

def _check_shufflable(ty):
    if isinstance(ty, types.BaseTuple):
        return all(_check_shufflable(t) for t in ty)
    return isinstance(ty, (types.Boolean, types.Integer, types.Float, types.Complex)) and (
        not isinstance(ty, (types.Integer, types.Float)) or ty.bitwidth <= 64
    )


def _word32(builder, v, signed=True):
    """An integer LLVM value as i32 (truncated, or extended)."""
    i32 = ir.IntType(32)
    if v.type.width > 32:
        return builder.trunc(v, i32)
    if v.type.width < 32:
        return (builder.sext if signed else builder.zext)(v, i32)
    return v


def _compiled_shuffler(mode, c, with_predicate=False):
    """The shuffle intrinsic ``(mask, value, b)`` with clamp operand ``c``, or, where ``c``
    is None, ``(mask, value, b, c)``; ``with_predicate``: it returns ``(value,
    predicate)``."""

    def typer(typingctx, mask, value, b, c_arg=None):
        if not all(isinstance(types.unliteral(t), types.Integer) for t in (mask, b, c_arg or b)):
            return None
        value = types.unliteral(value)
        if not _check_shufflable(value):
            return None
        returns = types.Tuple((value, types.boolean)) if with_predicate else value
        if c is None:
            return returns(mask, value, b, c_arg), codegen
        return returns(mask, value, b), codegen

    if c is None:

        @intrinsic
        def shuffle(typingctx, mask, value, b, c):
            return typer(typingctx, mask, value, b, c)

    else:

        @intrinsic
        def shuffle(typingctx, mask, value, b):
            return typer(typingctx, mask, value, b)

    def codegen(context, builder, sig, args):
        i32 = ir.IntType(32)
        mask_arg, value_arg, b_arg = args[:3]
        mask32 = _word32(builder, mask_arg, signed=False)
        b32 = _word32(builder, b_arg)
        fnty = ir.FunctionType(ir.LiteralStructType((i32, ir.IntType(1))), (i32,) * 5)
        shfl = get_or_insert_function(builder.module, fnty, "llvm.nvvm.shfl.sync.i32")
        mode_const = ir.Constant(i32, mode)
        c_const = ir.Constant(i32, c) if c is not None else _word32(builder, args[3])
        predicates = []

        def word(w):
            result = builder.call(shfl, (mask32, mode_const, w, b32, c_const))
            predicates.append(builder.extract_value(result, 1))
            return builder.extract_value(result, 0)

        def move(ty, v):
            if isinstance(ty, types.BaseTuple):
                out = ir.Constant(context.get_value_type(ty), ir.Undefined)
                for i, element_type in enumerate(ty):
                    out = builder.insert_value(
                        out, move(element_type, builder.extract_value(v, i)), i
                    )
                return out
            if isinstance(ty, types.Complex):
                out = ir.Constant(v.type, ir.Undefined)
                for i in range(2):
                    out = builder.insert_value(
                        out, move(ty.underlying_float, builder.extract_value(v, i)), i
                    )
                return out
            bits = v.type.width if isinstance(v.type, ir.IntType) else ty.bitwidth
            as_int = v if isinstance(v.type, ir.IntType) else builder.bitcast(v, ir.IntType(bits))
            if bits <= 32:
                moved = word(builder.zext(as_int, i32) if bits < 32 else as_int)
                moved = builder.trunc(moved, as_int.type) if bits < 32 else moved
            else:
                i64 = ir.IntType(64)
                lo = word(builder.trunc(as_int, i32))
                hi = word(builder.trunc(builder.lshr(as_int, ir.Constant(i64, 32)), i32))
                moved = builder.or_(
                    builder.shl(builder.zext(hi, i64), ir.Constant(i64, 32)),
                    builder.zext(lo, i64),
                )
            return moved if moved.type == v.type else builder.bitcast(moved, v.type)

        moved = move(sig.args[1], value_arg)
        if not with_predicate:
            return moved
        # every word's predicate is the same: it depends on the lanes, not the data
        return context.make_tuple(builder, sig.return_type, (moved, predicates[0]))

    return shuffle


# CUB's InclusiveScanStep for sums (warp_scan_shfl.cuh). (In LLVM's inline assembly,
# "{", "|" and "}" are literal; "$(", "$|" and "$)" would mark dialect variants.)
_UP_SUM_ASM = {
    32: "{ .reg .b32 r0; .reg .pred p; shfl.sync.up.b32 r0|p, $1, $2, $3, $4; "
        "@p add.ADD r0, r0, $1; mov.b32 $0, r0; }",
    64: "{ .reg .b64 r0; .reg .b32 lo; .reg .b32 hi; .reg .pred p; mov.b64 {lo, hi}, $1; "
        "shfl.sync.up.b32 lo|p, lo, $2, $3, $4; shfl.sync.up.b32 hi|p, hi, $2, $3, $4; "
        "mov.b64 r0, {lo, hi}; @p add.ADD r0, r0, $1; mov.b64 $0, r0; }",
}


if not SIMULATOR:
    up_with_source = _compiled_shuffler(UP, None, with_predicate=True)

    @intrinsic
    def up_sum_step(typingctx, mask, value, delta, c):
        value = types.unliteral(value)
        if not (
            all(isinstance(types.unliteral(t), types.Integer) for t in (mask, delta, c))
            and has_up_sum_step(value)
        ):
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
            # side-effecting, as CUB's asm volatile: not moved out of the control flow
            # that decides its lanes
            result = builder.asm(
                fnty, text, "=%s,%s,r,r,r" % (register, register),
                (operand, _word32(builder, delta_arg), _word32(builder, c_arg),
                 _word32(builder, mask_arg, signed=False)), True,
            )
            return builder.trunc(result, value_arg.type) if result.type != value_arg.type else result

        return value(mask, value, delta, c), codegen


@device_function
def logical_warp(width):
    """(logical lane, member mask) of the caller's logical warp of ``width`` lanes.

    The mask names the lanes of that logical warp (CUB's WarpMask), so sub-warps of a
    diverged warp synchronise only among themselves.
    """
    lane = cuda.laneid
    logical_lane = lane & (width - 1)
    if width == 32:
        return logical_lane, FULL_MASK
    return logical_lane, ((1 << width) - 1) << (lane - logical_lane)


def _redux_integer_type(ty):
    return isinstance(ty, types.Integer) and ty.bitwidth <= 32


def has_warp_sum(value_type):
    """Whether ``warp_sum`` serves ``value_type``: integers of 32 bits or fewer, whose sum
    modulo 2**bits is that of their 32-bit extensions."""
    return _redux_integer_type(types.unliteral(value_type))


if SIMULATOR:

    def warp_sum(mask, value):
        """Sum over the lanes of ``mask`` (CUDA ``__reduce_add_sync``), every lane gets it."""
        from coop._core import simulator

        mask &= FULL_MASK
        lanes = bin(mask).count("1")
        first = (mask & -mask).bit_length() - 1
        if lanes & (lanes - 1) == 0 and first % lanes == 0 and mask == ((1 << lanes) - 1) << first:
            # a logical warp: butterfly within it
            total, offset = value, 1
            while offset < lanes:
                with np.errstate(over="ignore"):  # integers wrap, as on the GPU
                    total = total + simulator.shfl(mask, XOR, total, offset, clamp(XOR, lanes))
                offset *= 2
            return total
        total = None
        for lane in range(32):
            if mask >> lane & 1:
                other = simulator.shfl(mask, IDX, value, lane, 0x1F)
                with np.errstate(over="ignore"):
                    total = other if total is None else total + other
        return total

else:

    @intrinsic
    def warp_sum(typingctx, mask, value):
        """Sum over the lanes of ``mask`` with one ``redux.sync.add`` (sm_80 and later),
        CUDA's ``__reduce_add_sync``; every lane gets it."""
        value = types.unliteral(value)
        if not isinstance(types.unliteral(mask), types.Integer) or not _redux_integer_type(value):
            return None

        def codegen(context, builder, sig, args):
            i32 = ir.IntType(32)
            mask_arg, value_arg = args
            mask32 = _word32(builder, mask_arg, signed=False)
            value32 = _word32(builder, value_arg, value.signed)
            # libNVVM has no redux intrinsic: PTX, marked side-effecting so that it is
            # neither removed nor moved across the control flow that decides its lanes
            fnty = ir.FunctionType(i32, (i32, i32))
            total = builder.asm(fnty, "redux.sync.add.s32 $0, $1, $2;", "=r,r,r", (value32, mask32), True)
            return builder.trunc(total, value_arg.type) if value_arg.type.width < 32 else total

        return value(mask, value), codegen


if SIMULATOR:

    def same_bit_lanes(mask, label, bit):
        """The lanes of ``mask`` whose ``label`` has bit ``bit`` equal to the caller's."""
        is_set = (int(label) >> int(bit)) & 1 != 0
        ones = int(cuda.ballot_sync(mask, is_set)) & FULL_MASK
        return np.uint32(ones if is_set else ~ones & FULL_MASK)

else:

    @intrinsic
    def same_bit_lanes(typingctx, mask, label, bit):
        """The lanes of ``mask`` whose ``label`` has bit ``bit`` equal to the caller's:
        CUB's MatchAny step, one ``vote.sync.ballot`` and a predicated ``not`` (in PTX, as
        CUB writes it: NVVM would test the bit twice and select)."""
        if not all(isinstance(types.unliteral(t), types.Integer) for t in (mask, label, bit)):
            return None

        def codegen(context, builder, sig, args):
            i32 = ir.IntType(32)
            mask32 = _word32(builder, args[0], signed=False)
            label32 = _word32(builder, args[1], signed=False)
            bit32 = builder.shl(ir.Constant(i32, 1), _word32(builder, args[2], signed=False))
            fnty = ir.FunctionType(i32, (i32, i32, i32))
            return builder.asm(
                fnty,
                "{ .reg .pred p; and.b32 $0, $1, $2; setp.ne.u32 p, $0, 0; vote.sync.ballot.b32 $0, p, $3; "
                "@!p not.b32 $0, $0; }",
                "=r,r,r,r", (label32, bit32, mask32), True)

        return types.uint32(mask, label, bit), codegen
