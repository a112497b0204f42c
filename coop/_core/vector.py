"""Vector memory access for tile loads and stores (CUB's vectorized LoadDirectBlocked /
StoreDirectBlocked): several consecutive items moved by one wide memory instruction.

- ``address(array)``: the address of ``array``'s first element, as uint64, to check at
  run time that a vector access is aligned (as CUB checks the tile pointer).
- ``vector_loader(item_type, items_per_vector)`` gives ``load(array, vector, items,
  first)``: copies vector number ``vector`` of ``array`` (items ``vector *
  items_per_vector`` onwards) into ``items[first .. first + items_per_vector - 1]``.
- ``vector_storer(item_type, items_per_vector)`` gives ``store(array, vector, items,
  first)``, the reverse.

Compiled, a vector is one LLVM load or store of ``<lanes x iB>`` (B the bits of an item,
or of one part of a complex item) aligned to its own size, which NVPTX emits as a single
``ld/st.v2/v4`` (or a 32/64-bit scalar access for narrow items); the items are copied
bit for bit, so every item type (bool, float16, complex) goes through the same integer
lanes. The caller guarantees the alignment. Under the simulator, the same items are
copied one by one.
"""

import functools

from numba.cuda import types

from coop._core.backend import SIMULATOR

if SIMULATOR:

    def address(array):
        """Address of ``array``'s first element."""
        return array.ctypes.data

    @functools.lru_cache(maxsize=None)
    def vector_loader(item_type, items_per_vector):
        def load(array, vector, items, first):
            start = vector * items_per_vector
            for k in range(items_per_vector):
                items[first + k] = array[start + k]

        return load

    @functools.lru_cache(maxsize=None)
    def vector_storer(item_type, items_per_vector):
        def store(array, vector, items, first):
            start = vector * items_per_vector
            for k in range(items_per_vector):
                array[start + k] = items[first + k]

        return store

else:
    from llvmlite import ir
    from numba.cuda.extending import intrinsic

    @intrinsic
    def address(typingctx, array):
        """Address of ``array``'s first element."""
        if not isinstance(array, types.Array):
            return None

        def codegen(context, builder, sig, args):
            data = context.make_array(sig.args[0])(context, builder, args[0]).data
            return builder.ptrtoint(data, ir.IntType(64))

        return types.uint64(array), codegen

    def _layout(item_type, items_per_vector):
        """(lane type, lanes, word type, words, alignment) of a vector: the items as
        integer lanes (an item's bits, or each part of a complex), packed into 32-bit words
        when lanes are narrower (NVPTX would split a vector of 8- or 16-bit lanes into
        4-lane accesses: 16 bytes of int8 in four instructions)."""
        if isinstance(item_type, types.Complex):
            bits, per_item = item_type.bitwidth // 2, 2
        elif isinstance(item_type, types.Boolean):
            bits, per_item = 8, 1  # bools are bytes in memory
        else:
            bits, per_item = item_type.bitwidth, 1
        lanes = items_per_vector * per_item
        vector_bits = bits * lanes
        word_bits = 32 if bits < 32 and vector_bits >= 32 else bits
        return ir.IntType(bits), lanes, ir.IntType(word_bits), vector_bits // word_bits, vector_bits // 8

    def _pointers(context, builder, sig, args, item_type, items_per_vector):
        """(pointer to vector ``vector`` of the array as words, pointer to item
        ``first``'s lanes in the items array, and the vector's layout)."""
        array_type, vector_type, items_type, first_type = sig.args
        layout = lane, lanes, word, words, alignment = _layout(item_type, items_per_vector)
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

    def _check(array, vector, items, first, item_type):
        return (
            isinstance(array, types.Array)
            and isinstance(items, types.Array)
            and array.dtype == item_type
            and items.dtype == item_type
            and isinstance(types.unliteral(vector), types.Integer)
            and isinstance(types.unliteral(first), types.Integer)
        )

    def _index(k):
        return ir.Constant(ir.IntType(32), k)

    @functools.lru_cache(maxsize=None)
    def vector_loader(item_type, items_per_vector):
        @intrinsic
        def load(typingctx, array, vector, items, first):
            if not _check(array, vector, items, first, item_type):
                return None

            def codegen(context, builder, sig, args):
                vector_pointer, lane_pointers, (lane, lanes, word, words, alignment) = _pointers(
                    context, builder, sig, args, item_type, items_per_vector
                )
                loaded = builder.load(vector_pointer, align=alignment)
                per_word = lanes // words
                for k, pointer in enumerate(lane_pointers):
                    value = builder.extract_element(loaded, _index(k // per_word))
                    if per_word > 1:  # lane k % per_word of a little-endian word
                        shift = ir.Constant(word, lane.width * (k % per_word))
                        value = builder.trunc(builder.lshr(value, shift), lane)
                    builder.store(value, pointer)
                return context.get_dummy_value()

            return types.void(array, vector, items, first), codegen

        return load

    @functools.lru_cache(maxsize=None)
    def vector_storer(item_type, items_per_vector):
        @intrinsic
        def store(typingctx, array, vector, items, first):
            if not _check(array, vector, items, first, item_type):
                return None

            def codegen(context, builder, sig, args):
                vector_pointer, lane_pointers, (lane, lanes, word, words, alignment) = _pointers(
                    context, builder, sig, args, item_type, items_per_vector
                )
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
                return context.get_dummy_value()

            return types.void(array, vector, items, first), codegen

        return store
