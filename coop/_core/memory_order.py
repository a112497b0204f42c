"""Release and acquire accesses of global memory: how one block hands values to another
within a kernel (the status flags of a decoupled look-back, coop.device's single-pass
algorithms).

- ``store_release(flags, i, value)``: ``flags[i] = value`` (a uint32 array), as PTX
  ``st.release.gpu``: every memory access the thread made before it is visible to any
  thread that sees ``value`` through ``load_acquire``.
- ``load_acquire(flags, i)``: ``flags[i]`` as PTX ``ld.acquire.gpu``: the thread's later
  accesses see everything the releasing thread wrote before its release, plain loads
  included (an acquire invalidates what the SM's L1 holds, so no stale line is read).

- ``store_relaxed_pair(words, i, status, value)`` / ``load_relaxed_pair(words, i, like)
  -> (status, value)``: a uint32 status and a value of at most 32 bits (of ``like``'s
  type) packed into one 64-bit word of ``words`` (a uint64 array: status in the low
  half), written and read whole with PTX ``st/ld.relaxed.gpu.u64``. The word is written
  and read in one piece, so a reader that sees a status sees the value stored with it: no
  fence, one load (CUB's ScanTileState for 4-byte values). Relaxed ``.gpu`` accesses
  are served by L2, never by a stale L1 line.

numba-cuda has neither (its atomics are relaxed, and it has no volatile loads), hence
inline PTX, as ``coop._core.shuffle.warp_sum`` uses for ``redux.sync``. Under the
simulator, Python's lock on the interpreter makes every access sequentially consistent:
plain indexing.

The ordering argument each user of these makes: a producer writes its values with plain
stores, then its flag with ``store_release``; a consumer spins on ``load_acquire`` of the
flag, and only after seeing it set reads the values with plain loads. Release/acquire on
the same flag at ``.gpu`` scope orders the producer's value stores before the consumer's
value loads (PTX ISA, memory consistency model: release and acquire patterns).
"""

from numba.cuda import types

from coop._core.backend import SIMULATOR

__all__ = ["load_acquire", "store_release", "load_relaxed_pair", "store_relaxed_pair", "packs"]


def packs(value_dtype):
    """Whether ``store_relaxed_pair`` packs values of ``value_dtype`` (a NumPy dtype)."""
    import numpy as np

    dtype = np.dtype(value_dtype)
    return dtype.kind in "iuf" and dtype.itemsize <= 4 and dtype != np.float16

if SIMULATOR:

    def load_acquire(flags, index):
        return flags[index]

    def store_release(flags, index, value):
        flags[index] = value

    def _bits32(value):
        import numpy as np

        raw = np.array([value]).astype(type(value)).view(np.uint8)
        return int.from_bytes(raw.tobytes().ljust(4, b"\0"), "little")

    def store_relaxed_pair(words, index, status, value):
        words[index] = (_bits32(value) << 32) | int(status)

    def load_relaxed_pair(words, index, like):
        import numpy as np

        word = int(words[index])
        kind = type(like)
        size = np.dtype(kind).itemsize
        raw = (word >> 32).to_bytes(4, "little")[:size]
        return np.uint32(word & 0xFFFFFFFF), np.frombuffer(raw, dtype=kind)[0]

else:
    from llvmlite import ir
    from numba.cuda import cgutils
    from numba.cuda.extending import intrinsic

    def _flag_array(array):
        return isinstance(array, types.Array) and array.ndim == 1 and array.dtype == types.uint32

    def _element_address(context, builder, array_type, array, index, index_type):
        index = context.cast(builder, index, index_type, types.intp)
        data = context.make_array(array_type)(context, builder, array)
        pointer = cgutils.get_item_pointer(context, builder, array_type, data, [index], wraparound=False)
        return builder.ptrtoint(pointer, ir.IntType(64))

    @intrinsic
    def load_acquire(typingctx, flags, index):
        """``flags[index]`` with ``ld.acquire.gpu.u32`` (a 1-D uint32 array)."""
        if not _flag_array(flags) or not isinstance(types.unliteral(index), types.Integer):
            return None

        def codegen(context, builder, sig, args):
            address = _element_address(context, builder, sig.args[0], args[0], args[1], sig.args[1])
            fnty = ir.FunctionType(ir.IntType(32), (ir.IntType(64),))
            # (side-effecting, and a memory clobber: neither removed nor moved across
            # the loads it orders)
            return builder.asm(fnty, "ld.acquire.gpu.u32 $0, [$1];", "=r,l,~{memory}", (address,), True)

        return types.uint32(flags, index), codegen

    @intrinsic
    def store_release(typingctx, flags, index, value):
        """``flags[index] = value`` with ``st.release.gpu.u32`` (a 1-D uint32 array)."""
        if not _flag_array(flags) or not isinstance(types.unliteral(index), types.Integer):
            return None
        if not isinstance(types.unliteral(value), types.Integer):
            return None

        def codegen(context, builder, sig, args):
            address = _element_address(context, builder, sig.args[0], args[0], args[1], sig.args[1])
            word = context.cast(builder, args[2], sig.args[2], types.uint32)
            fnty = ir.FunctionType(ir.VoidType(), (ir.IntType(64), ir.IntType(32)))
            builder.asm(fnty, "st.release.gpu.u32 [$0], $1;", "l,r,~{memory}", (address, word), True)
            return context.get_dummy_value()

        return types.void(flags, index, value), codegen

    def _pair_value(ty):
        ty = types.unliteral(ty)
        return isinstance(ty, (types.Integer, types.Float)) and ty.bitwidth <= 32 and ty != types.float16

    def _word_array(array):
        return isinstance(array, types.Array) and array.ndim == 1 and array.dtype == types.uint64

    @intrinsic
    def store_relaxed_pair(typingctx, words, index, status, value):
        """``words[index] = value << 32 | status`` with one ``st.relaxed.gpu.u64``."""
        if not (_word_array(words) and isinstance(types.unliteral(index), types.Integer)
                and isinstance(types.unliteral(status), types.Integer) and _pair_value(value)):
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
        if not (_word_array(words) and isinstance(types.unliteral(index), types.Integer) and _pair_value(like)):
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
