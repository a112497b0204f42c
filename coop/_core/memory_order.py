"""Release and acquire accesses of global memory: how one block hands values to another
within a kernel (the status flags of a decoupled look-back, coop.device's single-pass
algorithms).

- ``store_release(flags, i, value)``: ``flags[i] = value`` (a uint32 array), as PTX
  ``st.release.gpu``: every memory access the thread made before it is visible to any
  thread that sees ``value`` through ``load_acquire``.
- ``load_acquire(flags, i)``: ``flags[i]`` as PTX ``ld.acquire.gpu``: the thread's later
  accesses see everything the releasing thread wrote before its release, plain loads
  included (an acquire invalidates what the SM's L1 holds, so no stale line is read).

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

__all__ = ["load_acquire", "store_release"]

if SIMULATOR:

    def load_acquire(flags, index):
        return flags[index]

    def store_release(flags, index, value):
        flags[index] = value

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
