"""Block-wide tile loads and stores (CUB's BlockLoad / BlockStore), and
``coop.block.transform``, the load-map-store step of a tile pipeline.

Every thread of the block calls the primitive with the array from the block's tile
onwards (``d_in[block_base:]``) and its items array (``cuda.local.array(N, dtype)``).
With ``N = len(items)`` (or ``items_per_thread``) and ``T`` threads, thread of linear
rank ``r`` (x fastest, 1-, 2- or 3-D blocks of any size) holds:

- ``"direct"`` (default, CUB BLOCK_LOAD_DIRECT): tile items ``r*N .. r*N+N-1``
  (blocked), each thread reading its own run;
- ``"striped"`` (BLOCK_LOAD_STRIPED): items ``r, r + T, r + 2T, ...`` (striped),
  coalesced; needs ``threads=T`` as a compile-time constant;
- ``"warp_striped"`` (CUB's LoadDirectWarpStriped): items ``32*w*N + L*i + l`` for lane
  ``l`` of warp ``w`` (``L`` the warp's lanes: 32, or fewer in a last partial warp):
  each warp reads its own ``32*N`` consecutive items, coalesced, and keeps them
  warp-striped (the arrangement ``coop.block.radix_rank``'s "match" ranks stably);
  needs ``threads=T`` as a compile-time constant;
- ``"vectorize"`` (BLOCK_LOAD_VECTORIZE): blocked, read with vector instructions (up to
  16 bytes, e.g. ``ld.global.v4.u32``) when the thread's items fill whole vectors and the
  tile is aligned to the vector size; checked at run time: otherwise, and for guarded
  calls, as ``"direct"``;
- ``"transpose"`` (BLOCK_LOAD_TRANSPOSE): blocked, accessed striped (coalesced) and
  rearranged through shared memory with ``coop.block.exchange.striped_to_blocked``
  (a store: ``blocked_to_striped``, then striped writes);
- ``"warp_transpose"`` (BLOCK_LOAD_WARP_TRANSPOSE): blocked, accessed warp-striped
  (each warp its own ``32*N`` consecutive items, coalesced) and rearranged within each
  warp (``warp_striped_to_blocked``): only warp barriers between the access and the
  exchange. Blocks need not be a multiple of 32 threads (a last partial warp strides by
  its lane count);
- ``"warp_transpose_timesliced"`` (BLOCK_LOAD_WARP_TRANSPOSE_TIMESLICED): the same with
  a buffer for one warp's items, the warps taking turns (less shared memory, more
  block barriers).

A store writes the same arrangement back; the transposing stores rearrange the caller's
``items`` in place first (CUB's BlockStore does too). ``valid_items`` (run time) guards a
partial tile: only the first ``valid_items`` items of the tile are read or written,
nothing past them is accessed. Loads give the other items ``oob_default`` if given;
without it they are unchanged for "direct", "striped" and "vectorize", and unspecified
for the transposes (which move the unread items between threads, as CUB's do).
``valid_items`` must be the same in every thread of the block.

Shared memory and barriers: "direct", "striped", "warp_striped" and "vectorize" use
neither. The
transposes need ``threads=`` and ``items_per_thread=`` (constants: they size the
exchange's buffer, ``threads * items_per_thread`` items plus CUB's bank padding) and
synchronise as ``coop.block.exchange`` does: consecutive calls need no barrier between
them. ``temp_storage=`` shares one scratch array between primitives (size it with
``coop.block.load.temp_storage_bytes(dtype, threads, items_per_thread,
algorithm=...)``; 0 for the algorithms without shared memory). Each function's
docstring details its parameters and has a complete example.

Extension point: ``ALGORITHMS`` maps the names accepted by ``algorithm=`` to
``coop._core.tile.TileAlgorithm`` records: the memory access, the arrangement the
caller holds, and the exchange between them, with its scratch layout and the constants
it requires.
"""

import numpy as np
from numba.cuda import types

from coop._core.algorithm import choose
from coop._core.backend import cuda
from coop._core.scratch import Struct, Union, allocator, block_rank_of, thread_count
from coop._core.specialize import PRIMITIVE_DEFAULT, Signature, device_function, is_none, primitive
from coop._core.tile import (
    TileAlgorithm,
    blocked,
    memory_array,
    specialise_tile,
    striped,
    tile_limit,
    tile_start,
    tile_temp_storage_bytes,
    valid_span,
    warp_striped,
)
from coop._core.values import converter
from coop.block.exchange import exchange_layout, exchanger
from coop.thread import transform as thread_transform

__all__ = ["load", "store", "transform"]


class BlockTranspose:
    """The ``exchange`` hooks (see ``TileAlgorithm``) of CUB's transposing loads and
    stores: memory is accessed in the ``memory`` arrangement (striped or warp-striped,
    coalesced), and a ``coop.block.exchange`` rearranges the items to blocked after a
    load (``to_blocked``) and back before a store (``from_blocked``)."""

    def __init__(self, to_blocked, from_blocked, time_slicing=False):
        self.to_blocked = to_blocked
        self.from_blocked = from_blocked
        self.time_slicing = time_slicing

    def layout(self, value_type, threads, items_per_thread):
        return exchange_layout(value_type, threads, items_per_thread, self.time_slicing)

    def _rearrangement(self, form, sig, item_type, threads, items_per_thread, temp_storage, shape):
        exchange = exchanger(sig, form, item_type, threads, items_per_thread, temp_storage, self.time_slicing, shape)

        def rearrange(items, rank, group, temp_storage):
            exchange(items, items, None, None, temp_storage)

        return device_function(rearrange)

    def after_load(self, sig, item_type, threads, items_per_thread, temp_storage, shape):
        return self._rearrangement(self.to_blocked, sig, item_type, threads, items_per_thread, temp_storage, shape)

    def before_store(self, sig, item_type, threads, items_per_thread, temp_storage, shape):
        return self._rearrangement(self.from_blocked, sig, item_type, threads, items_per_thread, temp_storage,
                                   shape)


_THREADS = {"threads": "the block's thread count, a compile-time constant"}
_TRANSPOSE = dict(
    _THREADS,
    items_per_thread="the items per thread as a compile-time constant (it sizes the shared memory of the exchange)",
)


def _transpose(access, to_blocked, from_blocked, time_slicing=False):
    exchange = BlockTranspose(to_blocked, from_blocked, time_slicing)
    return TileAlgorithm(access, arrangement=blocked, exchange=exchange, requires=_TRANSPOSE)


ALGORITHMS = {
    "direct": TileAlgorithm(blocked),
    "striped": TileAlgorithm(striped, requires=_THREADS),
    "warp_striped": TileAlgorithm(warp_striped, requires=_THREADS),
    "vectorize": TileAlgorithm(blocked, vectorize=True),
    "transpose": _transpose(striped, "striped_to_blocked", "blocked_to_striped"),
    "warp_transpose": _transpose(warp_striped, "warp_striped_to_blocked", "blocked_to_warp_striped"),
    "warp_transpose_timesliced": _transpose(
        warp_striped, "warp_striped_to_blocked", "blocked_to_warp_striped", time_slicing=True
    ),
}


def temp_storage_bytes(sig, value_type, threads, items_per_thread=PRIMITIVE_DEFAULT,
                       algorithm=PRIMITIVE_DEFAULT):
    """Bytes a ``temp_storage=`` array needs for this load or store of ``dtype`` items in
    blocks of ``threads`` (0 for "direct", "striped", "warp_striped" and "vectorize", which use no shared
    memory)."""
    threads = sig.block_threads(threads)
    if items_per_thread is not None:
        items_per_thread = sig.constant_int(items_per_thread, "items_per_thread")
    return tile_temp_storage_bytes(ALGORITHMS, sig, value_type, threads, threads, items_per_thread, algorithm)


def _specialise(sig, array, items, threads, items_per_thread, algorithm, valid_items, oob_default, temp_storage,
                is_load):
    """``move(array, items, rank, group, valid_items, oob_default, temp_storage)`` for the
    block (``rank``, ``group``: the thread's block rank and ``count_threads()``, uint64),
    ``count_threads``, ``block_rank`` (the rank's reader, fresh) and the algorithm."""
    block = sig.block_threads(threads)
    shape = sig.block_shape(threads)
    move, chosen = specialise_tile(
        sig, array, items, items_per_thread, algorithm, valid_items, oob_default, temp_storage, ALGORITHMS, block,
        block, is_load, shape,
    )
    return move, thread_count(block), block_rank_of(shape, fresh=True), chosen


@primitive("coop.block.load", temp_storage_bytes, group="block", uniform=("valid_items", "offset"))
def load(src, items, threads=None, items_per_thread=None, algorithm="direct", valid_items=None, oob_default=None,
         temp_storage=None, offset=None):
    """Load the block's tile from ``src`` into every thread's ``items`` (CUB
    BlockLoad::Load).

    Parameters
    ----------
    src : array
        {tile_array}
    items : items array
        {tile_items}
    threads : int or tuple of int, compile-time constant, optional
        {threads}
        {tile_threads}
    items_per_thread : int, compile-time constant, optional
        {tile_items_per_thread}
    algorithm : str, compile-time constant, default "direct"
        {block_tile_algorithm}
    valid_items : int, run time, optional
        {tile_valid_items}
    oob_default : value, run time, optional
        {oob_default}
    temp_storage : shared array, optional
        {temp_storage}
        {temp_storage_size} Only the transposes use it; 0 for the other algorithms,
        which leave it alone.
    offset : int, run time, optional
        {tile_offset}

    Returns
    -------
    None
        ``items`` holds the thread's items, in the algorithm's arrangement.

    Barriers
    --------
    {block_tile_barriers}

    Notes
    -----
    {collective}

    Example
    -------
    Tiles of 512 items read striped (coalesced), the last one partial (items past ``n``
    read as 0), and stored back incremented::

        import numpy as np
        import coop
        from numba import cuda

        THREADS, ITEMS = 128, 4

        @cuda.jit
        def copy_plus_one(d_in, d_out, n):
            items = cuda.local.array(ITEMS, np.int32)
            base = cuda.blockIdx.x * THREADS * ITEMS
            coop.block.load(d_in[base:], items, threads=THREADS, algorithm="striped",
                            valid_items=n - base, oob_default=0)
            for i in range(ITEMS):
                items[i] += 1
            coop.block.store(d_out[base:], items, threads=THREADS, algorithm="striped",
                             valid_items=n - base)

        x = np.arange(1000, dtype=np.int32)
        out = np.zeros_like(x)
        copy_plus_one[2, THREADS](x, out, len(x))
        assert (out == x + 1).all()
    """
    sig = Signature("coop.block.load")
    move, count_threads, block_rank, _ = _specialise(
        sig, src, items, threads, items_per_thread, algorithm, valid_items, oob_default, temp_storage, True,
    )
    start = tile_start(sig, offset)

    def impl(src, items, valid_items, oob_default, temp_storage, offset):
        move(start(src, offset), items, np.uint64(block_rank()), np.uint64(count_threads()), valid_items,
             oob_default, temp_storage)

    return impl


@primitive("coop.block.store", temp_storage_bytes, group="block", uniform=("valid_items", "offset"))
def store(dst, items, threads=None, items_per_thread=None, algorithm="direct", valid_items=None,
          temp_storage=None, offset=None):
    """Store every thread's ``items`` into the block's tile of ``dst`` (CUB
    BlockStore::Store), in the arrangement ``coop.block.load`` reads with the same
    ``algorithm``. The transposes first rearrange ``items`` in place through shared
    memory (as CUB's BlockStore does): after the call it holds the striped or
    warp-striped arrangement.

    Parameters
    ----------
    dst : array
        {tile_array}
    items : items array
        {tile_items}
    threads : int or tuple of int, compile-time constant, optional
        {threads}
        {tile_threads}
    items_per_thread : int, compile-time constant, optional
        {tile_items_per_thread}
    algorithm : str, compile-time constant, default "direct"
        {block_tile_algorithm}
    valid_items : int, run time, optional
        {tile_valid_items}
    temp_storage : shared array, optional
        {temp_storage}
        {temp_storage_size} Only the transposes use it; 0 for the other algorithms,
        which leave it alone.
    offset : int, run time, optional
        {tile_offset}

    Returns
    -------
    None
        The tile of ``dst`` holds the block's items.

    Barriers
    --------
    {block_tile_barriers}

    Notes
    -----
    {collective}

    Example
    -------
    16-byte vector loads and stores where the tile is aligned::

        import numpy as np
        import coop
        from numba import cuda

        @cuda.jit
        def double(d_in, d_out):
            items = cuda.local.array(4, np.float32)
            base = cuda.blockIdx.x * 128 * 4
            coop.block.load(d_in[base:], items, algorithm="vectorize")
            for i in range(4):
                items[i] *= 2
            coop.block.store(d_out[base:], items, algorithm="vectorize")

        x = np.arange(1024, dtype=np.float32)
        out = np.zeros_like(x)
        double[2, 128](x, out)
        assert (out == 2 * x).all()
    """
    sig = Signature("coop.block.store")
    move, count_threads, block_rank, _ = _specialise(
        sig, dst, items, threads, items_per_thread, algorithm, valid_items, None, temp_storage, False,
    )
    start = tile_start(sig, offset)

    def impl(dst, items, valid_items, temp_storage, offset):
        move(start(dst, offset), items, np.uint64(block_rank()), np.uint64(count_threads()), valid_items, None,
             temp_storage)

    return impl


# -- transform ---------------------------------------------------------------------------


@device_function
def transform_valid(items, output, op, convert, rank, group, positions, limit):
    """``output[i] = op(items[i])`` for the items at tile positions below ``limit``
    (``positions``: the arrangement of the items)."""
    n = np.uint64(len(items))
    first, stride = positions(rank, n, group)
    valid = valid_span(first, stride, n, limit)
    for i in range(n):
        if np.uint32(i * stride) < valid:
            output[i] = convert(op(items[i]))


@primitive("coop.block.transform", group="block", uniform=("valid_items", "offset"))
def transform(src, dst, op, threads=None, items_per_thread=None, algorithm="direct", valid_items=None,
              temp_storage=None, offset=None):
    """Map the block's tile: ``dst[k] = op(src[k])`` for every item ``k`` of the tile,
    converted to ``dst``'s dtype (CUB BlockLoad, a loop over each thread's items and
    BlockStore, in one call).

    It is ``coop.block.load`` into ``items_per_thread`` items per thread,
    ``coop.thread.transform``, then ``coop.block.store``, with the same ``algorithm``,
    ``threads`` and ``temp_storage`` for both.

    Parameters
    ----------
    src : array
        {tile_array}
    dst : array
        {tile_array}
    op : function
        A one-argument function fixed when the kernel compiles (a lambda written in the
        kernel, a ``@cuda.jit(device=True)`` function, ...), taking a ``src`` item and
        returning something convertible to ``dst``'s dtype. With ``valid_items`` it is
        applied to the valid items only.
    threads : int or tuple of int, compile-time constant, optional
        {threads}
        {tile_threads}
    items_per_thread : int, compile-time constant
        Required, >= 1: the items each thread transforms (it sizes the thread's items
        arrays, and the transposes' shared memory).
    algorithm : str, compile-time constant, default "direct"
        {block_tile_algorithm}
    valid_items : int, run time, optional
        {tile_valid_items}
    temp_storage : shared array, optional
        {temp_storage}
        Only the transposes use it, for the load and the store in turn; size: the
        larger of ``coop.block.load.temp_storage_bytes(src.dtype, threads,
        items_per_thread, algorithm=...)`` and ``coop.block.store.temp_storage_bytes``
        of ``dst.dtype``. Without it the transposes' load and store share one buffer of
        their own.
    offset : int, run time, optional
        {tile_offset} The same for ``src`` and ``dst``.

    Returns
    -------
    None
        The tile of ``dst`` holds the results.

    Barriers
    --------
    {block_tile_barriers}

    Here a load then a store; with a transposing algorithm both use one buffer, so each
    starts with a ``cuda.syncthreads()``.

    Notes
    -----
    {collective}

    Example
    -------
    int16 in, float32 out, a partial last tile::

        import numpy as np
        import coop
        from numba import cuda

        @cuda.jit
        def scale(d_in, d_out, n):
            base = cuda.blockIdx.x * 128 * 4
            coop.block.transform(d_in[base:], d_out[base:], lambda x: 0.5 * x,
                                 threads=128, items_per_thread=4, valid_items=n - base)

        x = np.arange(1000, dtype=np.int16)
        out = np.zeros(1000, np.float32)
        scale[2, 128](x, out, len(x))
        assert (out == 0.5 * x).all()
    """
    sig = Signature("coop.block.transform")
    in_type = memory_array(sig, src, "src")
    out_type = memory_array(sig, dst, "dst")
    sig.writable(dst, "dst")
    if is_none(items_per_thread):
        raise sig.error("items_per_thread", "is required: the items each thread transforms, a compile-time constant")
    n = sig.constant_int(items_per_thread, "items_per_thread")
    if n < 1:
        raise sig.error("items_per_thread", f"must be at least 1, got {n}")
    sig.operator(op, in_type, param="op", arity=1, result_type=out_type)
    guarded = sig.run_time_int(valid_items, "valid_items") is not None
    items_type = _local_items_type(in_type)
    output_type = _local_items_type(out_type)
    block = sig.block_threads(threads)
    scratch, scratch_type = _transform_scratch(sig, in_type, out_type, block, n, algorithm, temp_storage)
    load_tile, count_threads, _, chosen = _specialise(
        sig, src, items_type, threads, items_per_thread, algorithm, valid_items, None, scratch_type, True
    )
    block_rank = block_rank_of(sig.block_shape(threads))
    store_tile, _, _, _ = _specialise(
        sig, dst, output_type, threads, items_per_thread, algorithm, valid_items, None, scratch_type, False
    )
    positions = chosen.arrangement
    convert = converter(out_type)
    limit_of = tile_limit(valid_items)
    own_scratch = scratch is not None
    start = tile_start(sig, offset)

    def impl(src, dst, op, valid_items, temp_storage, offset):
        items = cuda.local.array(n, in_type)
        output = cuda.local.array(n, out_type)
        if own_scratch:
            buffer = scratch(temp_storage)
        else:
            buffer = temp_storage
        rank, group = np.uint64(block_rank()), np.uint64(count_threads())
        load_tile(start(src, offset), items, rank, group, valid_items, None, buffer)
        if guarded:
            transform_valid(items, output, op, convert, rank, group, positions, limit_of(valid_items))
        else:
            thread_transform(items, output, op)
        store_tile(start(dst, offset), output, rank, group, valid_items, None, buffer)

    return impl


def _transform_scratch(sig, in_type, out_type, threads, n, algorithm, temp_storage):
    """``(scratch, its type)``: the ``temp_storage`` that a transform's load and store
    share. A transposing algorithm given no ``temp_storage`` gets one buffer for both
    (as CUB's TempStorage union of BlockLoad and BlockStore), not one each: ``scratch``
    allocates it; otherwise ``scratch`` is None (the caller's ``temp_storage`` is used)."""
    name, chosen = choose(sig, algorithm, ALGORITHMS)
    if chosen.scratch is None or not is_none(temp_storage) or threads is None:
        return None, temp_storage
    load_layout, store_layout = (chosen.layout(dtype, threads, n) for dtype in (in_type, out_type))
    layout = Union(f"transform.{name}", Struct("load", load_layout), Struct("store", store_layout))
    return allocator(layout, owner=(sig.primitive, name)), types.Array(types.uint64, 1, "C")


def _local_items_type(dtype):
    """The type of ``cuda.local.array(N, dtype)``."""
    return types.Array(dtype, 1, "C")
