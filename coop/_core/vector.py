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
copied as a slice.
"""

import functools

from coop._core.backend import SIMULATOR

if SIMULATOR:

    def address(array):
        """Address of ``array``'s first element."""
        return array.ctypes.data

    @functools.lru_cache(maxsize=None)
    def vector_loader(item_type, items_per_vector):
        def load(array, vector, items, first):
            start = vector * items_per_vector
            items[first:first + items_per_vector] = array[start:start + items_per_vector]

        return load

    @functools.lru_cache(maxsize=None)
    def vector_storer(item_type, items_per_vector):
        def store(array, vector, items, first):
            start = vector * items_per_vector
            array[start:start + items_per_vector] = items[first:first + items_per_vector]

        return store

else:
    from coop._core.compilers import numba_cuda_intrinsics as compiled

    address, vector_loader, vector_storer = compiled.address, compiled.vector_loader, compiled.vector_storer
