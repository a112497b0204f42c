"""Warp shuffles of any value type, and the masks of logical warps.

``shuffler(mode, width)`` returns a function ``(mask, value, b) -> value`` that
shuffles a value of any supported type among the lanes of ``mask`` with CUDA's
``__shfl_*_sync(mask, value, b, width)`` semantics (PTX ``shfl.sync`` with clamp and
segment mask derived from ``width``). Compiled, it is an intrinsic that moves the value
as 32-bit words: 8- and 16-bit values and bools widened to one word, 64-bit values
split in two, complex numbers and tuples element by element. Under the simulator it is
the simulator's shuffle, which moves any Python value.
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


def _check_shufflable(ty):
    if isinstance(ty, types.BaseTuple):
        return all(_check_shufflable(t) for t in ty)
    return isinstance(ty, (types.Boolean, types.Integer, types.Float, types.Complex)) and (
        not isinstance(ty, (types.Integer, types.Float)) or ty.bitwidth <= 64
    )


def _compiled_shuffler(mode, c):
    @intrinsic
    def shuffle(typingctx, mask, value, b):
        if not isinstance(types.unliteral(mask), types.Integer):
            return None
        if not isinstance(types.unliteral(b), types.Integer):
            return None
        value = types.unliteral(value)
        if not _check_shufflable(value):
            return None

        def codegen(context, builder, sig, args):
            i32 = ir.IntType(32)
            mask_arg, value_arg, b_arg = args
            mask32 = builder.trunc(mask_arg, i32) if mask_arg.type.width > 32 else mask_arg
            mask32 = builder.zext(mask32, i32) if mask32.type.width < 32 else mask32
            b32 = b_arg
            if b32.type.width > 32:
                b32 = builder.trunc(b32, i32)
            elif b32.type.width < 32:
                b32 = builder.sext(b32, i32)
            fnty = ir.FunctionType(ir.LiteralStructType((i32, ir.IntType(1))), (i32,) * 5)
            shfl = get_or_insert_function(builder.module, fnty, "llvm.nvvm.shfl.sync.i32")
            mode_const = ir.Constant(i32, mode)
            c_const = ir.Constant(i32, c)

            def word(w):
                return builder.extract_value(
                    builder.call(shfl, (mask32, mode_const, w, b32, c_const)), 0
                )

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

            return move(sig.args[1], value_arg)

        return value(mask, value, b), codegen

    return shuffle


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
            mask32 = builder.trunc(mask_arg, i32) if mask_arg.type.width > 32 else mask_arg
            if value_arg.type.width < 32:
                widen = builder.sext if value.signed else builder.zext
                value32 = widen(value_arg, i32)
            else:
                value32 = value_arg
            # libNVVM has no redux intrinsic: PTX, marked side-effecting so that it is
            # neither removed nor moved across the control flow that decides its lanes
            fnty = ir.FunctionType(i32, (i32, i32))
            total = builder.asm(fnty, "redux.sync.add.s32 $0, $1, $2;", "=r,r,r", (value32, mask32), True)
            return builder.trunc(total, value_arg.type) if value_arg.type.width < 32 else total

        return value(mask, value), codegen
