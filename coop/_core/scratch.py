"""Shared-memory scratch for block primitives: typed slots over one raw buffer.

A block primitive asks for ``slots`` values of its value type (any supported type:
scalars, complex, float16, bools, tuples). Compiled, the buffer is one static
``cuda.shared.array`` of 8-byte words per specialisation (as CUB's TempStorage), and
``store``/``load`` write and read slot ``i`` through a pointer of the value's own data
type, so a tuple is one slot, not one array per element. (``temp_storage=``, a user's
buffer shared between primitives as CUB's TempStorage unions are, is still to come:
``store``/``load`` already take any array.)

Under the simulator, a buffer is a per-block object array (the simulator keys
``cuda.shared.array`` by source line, which would alias specialisations of different
types), and slots hold Python values.
"""

import functools

import numpy as np
from numba.cuda import types
from numba.cuda.extending import intrinsic

from coop._core.backend import SIMULATOR, cuda
from coop._core.specialize import device_function

WORD = 8  # bytes per word of the backing array: aligns every value type coop supports
MAX_BLOCK_THREADS = 1024  # scratch is sized for this when the block size is not given


def slot_bytes(value_type):
    """Bytes one compiled slot of ``value_type`` takes (its ABI size in memory)."""
    from numba.cuda.descriptor import cuda_target

    context = cuda_target.target_context
    return context.get_abi_sizeof(context.get_data_type(value_type))


def allocator(value_type, slots, owner):
    """A function returning this specialisation's scratch buffer. Call it in the
    primitive's implementation and pass the buffer down: Numba does not let a function
    return an array it did not receive. ``owner`` names the primitive and algorithm (it
    only matters under the simulator, below)."""
    if SIMULATOR:
        # Keyed by primitive, algorithm and size, not by specialisation: under the
        # simulator, threads of one call can reach different specialisations (a Python
        # int is typed by its value), and they must share one buffer. Consecutive calls
        # of one primitive and algorithm are safe on one buffer, as on the GPU.
        key = ("coop.scratch", owner, slots)

        def allocate():
            allocations = cuda.shared._allocations  # per launch; blocks run one at a time
            buffer = allocations.get(key)
            if buffer is None:
                buffer = allocations.setdefault(key, np.empty(slots, dtype=object))
            return buffer

        return allocate

    from numba.cuda.cudadrv import nvvm
    from numba.cuda.cudaimpl import _generic_array, _get_unique_smem_id

    words = -(-slot_bytes(value_type) * slots // WORD)

    buffer_type = types.Array(types.uint64, 1, "C")

    @intrinsic
    def allocate(typingctx):
        def codegen(context, builder, sig, args):
            # what cuda.shared.array(words, np.uint64) lowers to: one static allocation
            # wherever this is lowered, i.e. once per specialisation of the primitive
            return _generic_array(
                context,
                builder,
                shape=(words,),
                dtype=types.uint64,
                symbol_name=_get_unique_smem_id("_coop_scratch"),
                addrspace=nvvm.ADDRSPACE_SHARED,
                can_dynsized=False,
                alignment=None,
            )

        return buffer_type(), codegen

    return allocate


if SIMULATOR:

    def store(buffer, index, value):
        buffer[index] = value

    def loader(value_type):
        def load(buffer, index):
            return buffer[index]

        return load

else:

    def _slot_pointer(context, builder, buffer_type, buffer, index, value_type):
        array = context.make_array(buffer_type)(context, builder, buffer)
        data_type = context.get_data_type(value_type)
        base = builder.bitcast(array.data, data_type.as_pointer())
        return builder.gep(base, [index])

    @intrinsic
    def store(typingctx, buffer, index, value):
        """``slot[index] = value`` in a scratch buffer."""
        if not isinstance(buffer, types.Array) or not isinstance(index, types.Integer):
            return None
        value_type = types.unliteral(value)

        def codegen(context, builder, sig, args):
            buffer_arg, index_arg, value_arg = args
            pointer = _slot_pointer(context, builder, sig.args[0], buffer_arg, index_arg, value_type)
            model = context.data_model_manager[value_type]
            builder.store(model.as_data(builder, value_arg), pointer)
            return context.get_dummy_value()

        return types.void(buffer, index, value_type), codegen

    @functools.lru_cache(maxsize=None)
    def loader(value_type):
        @intrinsic
        def load(typingctx, buffer, index):
            """``slot[index]`` of a scratch buffer, as ``value_type``."""
            if not isinstance(buffer, types.Array) or not isinstance(index, types.Integer):
                return None

            def codegen(context, builder, sig, args):
                buffer_arg, index_arg = args
                pointer = _slot_pointer(context, builder, sig.args[0], buffer_arg, index_arg, value_type)
                model = context.data_model_manager[value_type]
                return model.from_data(builder, builder.load(pointer))

            return value_type(buffer, index), codegen

        return load


@device_function
def block_rank():
    """Linear rank of the calling thread in its block (x fastest, as CUB)."""
    return (
        cuda.threadIdx.x
        + cuda.threadIdx.y * cuda.blockDim.x
        + cuda.threadIdx.z * cuda.blockDim.x * cuda.blockDim.y
    )


@device_function
def block_threads():
    return cuda.blockDim.x * cuda.blockDim.y * cuda.blockDim.z


def thread_count(threads):
    """A device function giving the block's thread count: the constant ``threads`` if the
    caller gave one (so loops over warps unroll), else read from the block shape."""
    if threads is None:
        return block_threads

    def constant_threads():
        return threads

    return device_function(constant_threads)


@device_function
def raking_slot(index, segment):
    """Where grid index ``index`` lives in a raking grid of ``segment``-long segments: one
    padding slot after each even segment longer than 2 (CUB's BlockRakingLayout), so the
    32 lanes raking segments side by side hit different banks. A grid for ``threads``
    indices needs ``threads + 32`` slots."""
    if segment > 2 and segment % 2 == 0:
        return index + index // segment
    return index
