"""Warp-wide tile loads and stores (CUB's WarpLoad / WarpStore).

Tiles, arrangements and the direct memory accesses are ``coop._core.tile``'s (shared
with ``coop.block.load`` / ``coop.block.store``). Here a tile is a logical warp's: the
caller passes the array starting at its logical warp's tile (``d_in[tile_base:]``) and
an items array per lane (``cuda.local.array(N, dtype)``); with ``G`` = ``width``:

- blocked: item ``i`` of logical lane ``r`` is tile position ``r * N + i``;
- striped: item ``i`` of logical lane ``r`` is tile position ``i * G + r``.

Algorithms (``algorithm=``, CUB's WARP_LOAD_* / WARP_STORE_*):

- ``"direct"``: blocked, each thread reads its ``N`` consecutive items
  (LoadDirectBlocked).
- ``"striped"``: striped, consecutive lanes read consecutive items: coalesced
  (LoadDirectStriped).
- ``"vectorize"``: blocked, read with vector instructions (up to 16 bytes each, e.g.
  ``ld.global.v4.u32``) when the thread's ``N`` items fill whole vectors; checked at run
  time, as CUB does: if the tile does not start at a multiple of the vector size (or the
  array is strided), it falls back to ``"direct"``. Guarded calls (``valid_items``)
  always use ``"direct"``, as in CUB.
- ``"transpose"``: blocked items, accessed striped (coalesced) and rearranged through
  shared memory by ``coop.warp.exchange`` (WARP_LOAD_TRANSPOSE); needs
  ``items_per_thread`` and the block's ``threads`` as constants.

``valid_items`` (run time, the same in every lane of a group) guards a partial tile:
only tile positions below it are read or written; on loads, items at other positions
get ``oob_default`` if given, else are left as they were ("transpose": unspecified, the
exchange moves them between lanes, as CUB's does). Out-of-range positions are never
accessed. ``items_per_thread``
(optional constant) moves only the first that many items of the items array; by default
all of them (``len(items)``).

All but "transpose" need no shared memory and no barrier. ``coop.warp.load`` and
``coop.warp.store`` list their parameters and have complete examples.

``ALGORITHMS`` (with ``warp_algorithms``) maps the names to
``coop._core.tile.TileAlgorithm`` records: adding an entry adds an algorithm.
"""

import numpy as np

from coop._core.shuffle import logical_warp
from coop._core.specialize import PRIMITIVE_DEFAULT, Signature, device_function, primitive
from coop._core.tile import TileAlgorithm, blocked, specialise_tile, striped, tile_start, tile_temp_storage_bytes
from coop.warp.exchange import check_logical_warps, warp_exchange_layout, warp_exchanger

__all__ = ["load", "store"]


class WarpTranspose:
    """The ``exchange`` hooks (see ``TileAlgorithm``) of CUB's WARP_LOAD_TRANSPOSE /
    WARP_STORE_TRANSPOSE: striped access, and a ``coop.warp.exchange`` to blocked after
    a load and back before a store, in logical warps of ``width`` lanes filling a block
    of ``threads`` (the exchange's shared memory holds every logical warp's items)."""

    def __init__(self, width, threads):
        self.width = width
        self.threads = threads

    def validate(self, sig, items_per_thread):
        check_logical_warps(sig, self.threads, self.width)

    def layout(self, value_type, threads, items_per_thread):
        return warp_exchange_layout(value_type, self.threads, self.width, items_per_thread)

    def _rearrangement(self, form, sig, item_type, items_per_thread, temp_storage, shape):
        exchange = warp_exchanger(sig, form, item_type, self.width, self.threads, items_per_thread, temp_storage,
                                  shape)

        def rearrange(items, rank, group, temp_storage):
            exchange(items, items, None, temp_storage)

        return device_function(rearrange)

    def after_load(self, sig, item_type, threads, items_per_thread, temp_storage, shape):
        return self._rearrangement("striped_to_blocked", sig, item_type, items_per_thread, temp_storage, shape)

    def before_store(self, sig, item_type, threads, items_per_thread, temp_storage, shape):
        return self._rearrangement("blocked_to_striped", sig, item_type, items_per_thread, temp_storage, shape)


ALGORITHMS = {
    "direct": TileAlgorithm(blocked),
    "striped": TileAlgorithm(striped),
    "vectorize": TileAlgorithm(blocked, vectorize=True),
    # "transpose" (striped access, then a warp exchange) depends on the width and the
    # block's thread count: see warp_algorithms
}


def warp_algorithms(width, threads):
    """The algorithms of warp loads and stores in logical warps of ``width`` lanes, in
    blocks of ``threads`` (a constant, or None)."""
    transpose = TileAlgorithm(
        striped, arrangement=blocked, exchange=WarpTranspose(width, threads),
        requires={
            "threads": "the block's thread count, a compile-time constant (the exchange's shared memory "
                       "holds every logical warp's items)",
            "items_per_thread": "the items per lane as a compile-time constant (it sizes the shared memory of "
                                "the exchange)",
        },
    )
    return dict(ALGORITHMS, transpose=transpose)


# -- warp primitives -------------------------------------------------------------------------


def _warp_specialise(sig, array, items, width, items_per_thread, algorithm, valid_items, oob_default, threads,
                     temp_storage, is_load):
    lanes = sig.width(width)
    block = sig.block_threads(threads)
    move, _ = specialise_tile(
        sig, array, items, items_per_thread, algorithm, valid_items, oob_default, temp_storage,
        warp_algorithms(lanes, block), lanes, block, is_load, sig.block_shape(threads),
    )
    group = np.uint64(lanes)

    def warp_move(array, items, valid_items, oob_default, temp_storage):
        lane, _ = logical_warp(lanes)
        move(array, items, np.uint64(lane), group, valid_items, oob_default, temp_storage)

    return device_function(warp_move)


def temp_storage_bytes(sig, value_type, threads, items_per_thread, width=PRIMITIVE_DEFAULT,
                       algorithm="transpose"):
    """Bytes a ``temp_storage=`` array needs for warp loads or stores of ``dtype`` items
    in logical warps of ``width`` lanes filling a block of ``threads`` (0 but for
    "transpose")."""
    lanes = sig.width(width)
    block = sig.block_threads(threads)
    n = sig.constant_int(items_per_thread, "items_per_thread")
    return tile_temp_storage_bytes(warp_algorithms(lanes, block), sig, value_type, lanes, block, n, algorithm)


@primitive("coop.warp.load", temp_storage_bytes, group="warp", uniform=("valid_items", "offset"))
def load(src, items, width=32, items_per_thread=None, algorithm="direct", valid_items=None, oob_default=None,
         threads=None, temp_storage=None, offset=None):
    """Load a logical warp's tile from ``src`` into each lane's ``items`` (CUB
    WarpLoad::Load).

    Parameters
    ----------
    src : array
        {tile_array}
    items : items array
        {tile_items}
    width : int, compile-time constant, default 32
        {width}
    items_per_thread : int, compile-time constant, optional
        {tile_items_per_thread}
    algorithm : str, compile-time constant, default "direct"
        CUB's WARP_LOAD_*. With ``N`` items per lane, logical lane ``l`` gets:
        ``"direct"``: tile items ``l*N .. l*N+N-1`` (blocked); ``"striped"``: items
        ``l, l+width, ..., l+(N-1)*width`` (striped, coalesced); ``"vectorize"``:
        blocked, read with 2- to 16-byte vector loads when the lane's items fill whole
        vectors and the tile is aligned to the vector size (checked at run time),
        otherwise, and in guarded calls, as ``"direct"``; ``"transpose"``: blocked, read
        striped (coalesced) and rearranged through shared memory
        (``coop.warp.exchange.striped_to_blocked``); needs ``items_per_thread`` and
        ``threads``.
    valid_items : int, run time, optional
        {tile_valid_items}
    oob_default : value, run time, optional
        {oob_default}
    threads : int or tuple of int, compile-time constant, optional
        {warp_tile_threads}
    temp_storage : shared array, optional
        {warp_temp_storage}
        {temp_storage_size} Only ``"transpose"`` uses it.
    offset : int, run time, optional
        {tile_offset}

    Returns
    -------
    None
        ``items`` holds the lane's items.

    Barriers
    --------
    {warp_tile_barriers}

    Notes
    -----
    {collective}

    Example
    -------
    Each warp's 128 items read coalesced and transposed to blocked (lane ``l`` holds
    items ``4*l .. 4*l+3``), then written back from there::

        import numpy as np
        import coop
        from numba import cuda

        THREADS, ITEMS = 64, 4

        @cuda.jit
        def copy_tiles(d_in, d_out):
            i = cuda.grid(1)
            warp_base = (i // 32) * 32 * ITEMS
            items = cuda.local.array(ITEMS, np.int32)
            coop.warp.load(d_in[warp_base:], items, items_per_thread=ITEMS,
                           algorithm="transpose", threads=THREADS)
            for k in range(ITEMS):
                d_out[warp_base + (i % 32) * ITEMS + k] = items[k]

        x = np.arange(256, dtype=np.int32)
        out = np.zeros_like(x)
        copy_tiles[1, THREADS](x, out)
        assert (out == x).all()
    """
    sig = Signature("coop.warp.load")
    warp_move = _warp_specialise(
        sig, src, items, width, items_per_thread, algorithm, valid_items, oob_default, threads, temp_storage, True,
    )
    start = tile_start(sig, offset)

    def impl(src, items, valid_items, oob_default, temp_storage, offset):
        warp_move(start(src, offset), items, valid_items, oob_default, temp_storage)

    return impl


@primitive("coop.warp.store", temp_storage_bytes, group="warp", uniform=("valid_items", "offset"))
def store(dst, items, width=32, items_per_thread=None, algorithm="direct", valid_items=None, threads=None,
          temp_storage=None, offset=None):
    """Store each lane's ``items`` into a logical warp's tile of ``dst`` (CUB
    WarpStore::Store), in the arrangement ``coop.warp.load`` reads with the same
    ``algorithm``.

    Parameters
    ----------
    dst : array
        {tile_array}
    items : items array
        {tile_items}
    width : int, compile-time constant, default 32
        {width}
    items_per_thread : int, compile-time constant, optional
        {tile_items_per_thread}
    algorithm : str, compile-time constant, default "direct"
        CUB's WARP_STORE_*. With ``N`` items per lane, logical lane ``l`` writes:
        ``"direct"``: tile items ``l*N .. l*N+N-1`` (blocked); ``"striped"``: item ``i``
        to position ``i*width + l`` (coalesced); ``"vectorize"``: blocked, with 2- to
        16-byte vector stores when the lane's items fill whole vectors and the tile is
        aligned to the vector size (checked at run time), otherwise, and in guarded
        calls, as ``"direct"``; ``"transpose"``: blocked items, rearranged in place
        through shared memory (``coop.warp.exchange.blocked_to_striped``: ``items`` is
        left striped) and written striped; needs ``items_per_thread`` and ``threads``.
    valid_items : int, run time, optional
        {tile_valid_items}
    threads : int or tuple of int, compile-time constant, optional
        {warp_tile_threads}
    temp_storage : shared array, optional
        {warp_temp_storage}
        {temp_storage_size} Only ``"transpose"`` uses it.
    offset : int, run time, optional
        {tile_offset}

    Returns
    -------
    None
        The tile of ``dst`` holds the items.

    Barriers
    --------
    {warp_tile_barriers}

    Notes
    -----
    {collective}

    Example
    -------
    Logical warps of 16 lanes store 2 items each (a tile of 32); the array ends in the
    second tile::

        import numpy as np
        import coop
        from numba import cuda

        @cuda.jit
        def ramp(d_out, n):
            items = cuda.local.array(2, np.int32)
            lane = cuda.laneid % 16
            items[0], items[1] = 2 * lane, 2 * lane + 1
            warp_base = (cuda.grid(1) // 16) * 32
            coop.warp.store(d_out[warp_base:], items, width=16, valid_items=n - warp_base)

        out = np.zeros(40, np.int32)
        ramp[1, 32](out, len(out))
        assert (out == np.arange(40) % 32).all()
    """
    sig = Signature("coop.warp.store")
    warp_move = _warp_specialise(
        sig, dst, items, width, items_per_thread, algorithm, valid_items, None, threads, temp_storage, False,
    )
    start = tile_start(sig, offset)

    def impl(dst, items, valid_items, temp_storage, offset):
        warp_move(start(dst, offset), items, valid_items, None, temp_storage)

    return impl
