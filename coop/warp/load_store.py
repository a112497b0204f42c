"""Warp-wide tile loads and stores (CUB's WarpLoad / WarpStore), and the direct
memory access that ``coop.block.load`` / ``coop.block.store`` share with them.

A *tile* is the run of consecutive array elements that a group of threads (a logical
warp here, a thread block in ``coop.block``) moves together: the caller passes the
array starting at its group's tile (``d_in[tile_base:]``) and an items array per thread
(``cuda.local.array(N, dtype)``). Each thread has a rank in the group (logical lane or
block rank) and items are arranged as in CUB:

- blocked: item ``i`` of rank ``r`` is tile position ``r * N + i``;
- striped: item ``i`` of rank ``r`` is tile position ``i * G + r`` (``G`` threads in the
  group).

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
``coop.warp.store`` list their parameters and have complete examples. Tile positions
are computed in unsigned
64-bit arithmetic: one base address per thread plus constant offsets per item, with no
negative-index fix-ups (Numba adds those for signed indices).

``TileAlgorithm`` describes one algorithm; the tables ``ALGORITHMS`` (here and in
``coop.block.load_store``) map names to them: adding an entry adds an algorithm (see
``TileAlgorithm`` for the transposing ones).
"""

import functools

import numpy as np
from numba.cuda import types

from coop._core.backend import SIMULATOR
from coop._core.constants import specialised, without_dead_branches
from coop._core.misuse import size_check
from coop._core.scratch import _size_and_alignment as item_layout  # (bytes, alignment) in memory
from coop._core.scratch import scratch_bytes
from coop._core.shuffle import logical_warp
from coop._core.specialize import Signature, device_function, is_none, primitive
from coop._core.values import check_dtype, converter, convertible
from coop._core.vector import address, vector_loader, vector_storer
from coop.warp.exchange import check_logical_warps, warp_exchange_slots, warp_exchanger

__all__ = ["load", "store"]

# Tile positions are uint64 throughout: mixing in a signed integer would make Numba
# compute in float64 (NumPy's rule), and signed array indices cost a wraparound select.
ZERO = np.uint64(0)
ONE = np.uint64(1)


# -- where each item of a thread lives: (rank, items per thread, group size) -> ---------
#    (tile position of item 0, distance between consecutive items)


@device_function
def blocked(rank, n, group):
    """Blocked arrangement: item ``i`` of rank ``r`` is tile position ``r * n + i``."""
    return rank * n, ONE


@device_function
def striped(rank, n, group):
    """Striped arrangement: item ``i`` of rank ``r`` is tile position ``i * group + r``."""
    return rank, group


# -- reading and writing a thread's items (CUB's LoadDirect* / StoreDirect*) -------------
# Common signature: (array, items, n, first, stride, limit, default); item i is tile
# position first + i * stride; only positions below ``limit`` are touched by guarded
# forms; ``default`` (loads) fills the items at other positions.


@device_function
def read_all(src, items, n, first, stride, limit, default):
    for i in range(n):
        items[i] = src[first + i * stride]


@device_function
def valid_span(first, stride, n, limit):
    """How far past ``first`` tile positions are valid (below ``limit``), at most the
    ``n * stride`` that a thread's items span: 32 bits, so that each item's check is one
    compare with a constant."""
    if limit <= first:
        return np.uint32(0)
    return np.uint32(min(limit - first, n * stride))


@device_function
def read_valid(src, items, n, first, stride, limit, default):
    valid = valid_span(first, stride, n, limit)
    for i in range(n):
        if np.uint32(i * stride) < valid:
            items[i] = src[first + i * stride]


@device_function
def read_valid_or_default(src, items, n, first, stride, limit, default):
    valid = valid_span(first, stride, n, limit)
    for i in range(n):
        if np.uint32(i * stride) < valid:
            items[i] = src[first + i * stride]
        else:
            items[i] = default


@device_function
def write_all(dst, items, n, first, stride, limit, default):
    for i in range(n):
        dst[first + i * stride] = items[i]


@device_function
def write_valid(dst, items, n, first, stride, limit, default):
    valid = valid_span(first, stride, n, limit)
    for i in range(n):
        if np.uint32(i * stride) < valid:
            dst[first + i * stride] = items[i]


def _unit_stride_check(array_type, item_size):
    """A device function telling whether the array's elements are adjacent: known for
    contiguous layouts, read from the strides for ``A`` (any) layout."""
    if array_type.layout in "CF" and not SIMULATOR:
        return _always

    stride = np.int64(item_size)

    def unit_stride(array):
        return array.strides[0] == stride

    return device_function(unit_stride)


@device_function
def _always(array):
    return True


@functools.lru_cache(maxsize=None)
def vectorized(item_type, array_type, is_load):
    """The blocked reader (or writer) of CUB's vectorized LoadDirectBlocked: with ``n``
    items per thread, the widest vector of 2 to 16 bytes that ``n`` items fill exactly
    is used if the array's first element is aligned to it (checked at run time), else
    one access per item. Only widths wider than one item's own access are tried; ``n``
    is a constant once inlined, so the choice of width folds away."""
    size, alignment = item_layout(item_type)
    direct = read_all if is_load else write_all
    access = direct
    unit_stride = _unit_stride_check(array_type, size)
    for width in (2, 4, 8, 16):  # narrowest first: each wraps the narrower ones
        if width <= alignment or width < size:
            continue
        access = _vector_access(item_type, width // size, width, is_load, access, direct, unit_stride)
    return access


def _vector_access(item_type, per_vector, width, is_load, narrower, direct, unit_stride):
    move_vector = (vector_loader if is_load else vector_storer)(item_type, per_vector)
    per = np.uint64(per_vector)
    misalignment = np.uint64(width - 1)

    def access(array, items, n, first, stride, limit, default):
        if n % per == ZERO:
            if unit_stride(array) and address(array) & misalignment == ZERO:
                first_vector = first // per
                for j in range(n // per):
                    move_vector(array, first_vector + j, items, j * per)
            else:
                direct(array, items, n, first, stride, limit, default)
        else:
            narrower(array, items, n, first, stride, limit, default)

    return device_function(access)


# -- algorithms ----------------------------------------------------------------------------


@device_function
def _no_exchange(items, rank, group, temp_storage):
    pass


class TileAlgorithm:
    """One value of ``algorithm=`` for loads and stores.

    - ``access``: the positions function (``blocked``, ``striped``, or another with
      the signature ``(rank, n, group) -> (first position, stride)``) of the memory
      access: which tile positions each thread reads or writes.
    - ``vectorize``: blocked access with vector instructions (``access`` must be
      ``blocked``).
    - ``needs_threads``: the block-level algorithm needs ``threads=`` (a constant).
    - ``arrangement``: the positions function of the items as the caller holds them
      (blocked or striped); by default ``access``. ``coop.block.transform`` applies its
      operator only to items whose position (by this function) is valid.
    - ``exchange``: for transposing algorithms, an object with

      ``after_load(sig, item_type, threads, items_per_thread, temp_storage_type)`` and
      ``before_store(...)`` (same arguments): each returns a device function
      ``(items, rank, group, temp_storage) -> None`` that rearranges the items array in
      place, from the ``access`` arrangement to ``arrangement`` after a load, and back
      before a store (CUB's BlockStore also rearranges the caller's items in place); it
      owns any scratch and barriers (``coop._core.scratch.storage``). ``threads`` is
      the block's constant thread count (the warp width for warp algorithms) and
      ``items_per_thread`` the constant items count (``items_per_thread=``; None if the
      caller did not give it: the hook may then require it).

      ``temp_storage_bytes(sig, value_type, threads, items_per_thread)``: the bytes a
      ``temp_storage=`` array needs.

    For example CUB's BLOCK_LOAD_TRANSPOSE is ``TileAlgorithm(striped,
    needs_threads=True, arrangement=blocked, exchange=...)``, the hooks wrapping
    ``coop.block.exchange.exchanger`` ("striped_to_blocked" after a load,
    "blocked_to_striped" before a store); BLOCK_LOAD_WARP_TRANSPOSE the same with the
    warp-striped positions as ``access``.
    """

    def __init__(self, access, vectorize=False, needs_threads=False, arrangement=None, exchange=None):
        self.access = access
        self.vectorize = vectorize
        self.needs_threads = needs_threads
        self.arrangement = access if arrangement is None else arrangement
        self.exchange = exchange

    def temp_storage_bytes(self, sig, value_type, threads, items_per_thread):
        if self.exchange is None:
            return 0
        return self.exchange.temp_storage_bytes(sig, value_type, threads, items_per_thread)

    def rearrangement(self, sig, item_type, threads, items_per_thread, temp_storage, is_load):
        if self.exchange is None:
            sig.temp_storage(temp_storage)  # accepted, unused: no scratch
            return _no_exchange
        build = self.exchange.after_load if is_load else self.exchange.before_store
        return build(sig, item_type, threads, items_per_thread, temp_storage)


class WarpTranspose:
    """The ``exchange`` hooks (see ``TileAlgorithm``) of CUB's WARP_LOAD_TRANSPOSE /
    WARP_STORE_TRANSPOSE: striped access, and a ``coop.warp.exchange`` to blocked after
    a load and back before a store, in logical warps of ``width`` lanes filling a block
    of ``threads`` (the exchange's shared memory holds every logical warp's items)."""

    def __init__(self, width, threads):
        self.width = width
        self.threads = threads

    def _constants(self, sig, items_per_thread):
        if self.threads is None:
            raise sig.error(
                "threads",
                "is required by algorithm 'transpose': the block's thread count, a compile-time "
                "constant (the exchange's shared memory holds every logical warp's items)",
            )
        check_logical_warps(sig, self.threads, self.width)
        if items_per_thread is None:
            raise sig.error(
                "items_per_thread",
                "is required by algorithm 'transpose': the items per lane as a compile-time "
                "constant (it sizes the shared memory of the exchange)",
            )
        return items_per_thread

    def _rearrangement(self, form, sig, item_type, items_per_thread, temp_storage):
        n = self._constants(sig, items_per_thread)
        exchange = warp_exchanger(sig, form, item_type, self.width, self.threads, n, temp_storage)

        def rearrange(items, rank, group, temp_storage):
            exchange(items, items, None, temp_storage)

        return device_function(rearrange)

    def after_load(self, sig, item_type, threads, items_per_thread, temp_storage):
        return self._rearrangement("striped_to_blocked", sig, item_type, items_per_thread, temp_storage)

    def before_store(self, sig, item_type, threads, items_per_thread, temp_storage):
        return self._rearrangement("blocked_to_striped", sig, item_type, items_per_thread, temp_storage)

    def temp_storage_bytes(self, sig, value_type, threads, items_per_thread):
        n = self._constants(sig, items_per_thread)
        return scratch_bytes(value_type, warp_exchange_slots(self.threads, self.width, n))


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
    transpose = TileAlgorithm(striped, arrangement=blocked, exchange=WarpTranspose(width, threads))
    return dict(ALGORITHMS, transpose=transpose)


# -- specialisation, shared with coop.block --------------------------------------------------


def memory_array(sig, ty, param):
    """Check the array a tile is loaded from or stored to; returns its element type."""
    if not isinstance(ty, types.Array):
        raise sig.error(param, f"must be an array (the group's tile onwards, e.g. d_in[base:]), got {ty}")
    if ty.ndim != 1:
        raise sig.error(param, f"must be a 1-D array, got {ty.ndim}-D")
    check_dtype(ty.dtype, sig, param)
    return ty.dtype


def _count_items(sig, items, items_per_thread):
    """The number of items each thread moves if it is a compile-time constant (else
    None: ``len(items)``), and the check that an items array holds that many."""
    if is_none(items_per_thread):
        return None, None
    n = sig.constant_int(items_per_thread, "items_per_thread")
    if n < 1:
        raise sig.error("items_per_thread", f"must be at least 1, got {n}")
    return n, size_check(sig.primitive, "items")


@device_function
def _no_limit(valid_items):
    return ZERO


@device_function
def _signed_limit(valid_items):
    # a negative count makes no item valid, as CUB's signed comparison does
    return np.uint64(max(valid_items, 0))


@device_function
def _unsigned_limit(valid_items):
    return np.uint64(valid_items)


def tile_limit(valid_items):
    """A device function giving ``valid_items`` as the uint64 end of the valid tile
    positions (0 if negative), or 0 if ``valid_items`` (a type) is None."""
    if is_none(valid_items):
        return _no_limit
    ty = types.unliteral(valid_items.value if isinstance(valid_items, types.Omitted) else valid_items)
    if isinstance(ty, types.Integer) and not ty.signed:
        return _unsigned_limit
    return _signed_limit


def _check_default(sig, oob_default, item_type):
    default_type = types.unliteral(oob_default)
    if not convertible(default_type, item_type):
        raise sig.error("oob_default", f"must be convertible to the items' type {item_type}, got {default_type}")


def _access_function(algorithm, item_type, array_type, guarded, with_default, is_load):
    if guarded:
        if is_load:
            return read_valid_or_default if with_default else read_valid
        return write_valid
    if algorithm.vectorize:
        return vectorized(item_type, array_type, is_load)
    return read_all if is_load else write_all


def specialise_tile(sig, array, items, items_per_thread, algorithm, valid_items, oob_default, temp_storage,
                    table, threads, is_load):
    """The device function ``move(array, items, rank, group, valid_items, oob_default,
    temp_storage)`` of a load (``is_load``) or store, after checking the arguments;
    ``rank`` and ``group`` (uint64) are the thread's rank and the group's thread count,
    which the block and warp primitives compute. ``threads``: the group's constant
    thread count, or None. Also returns the algorithm."""
    array_param = "src" if is_load else "dst"
    item_type = memory_array(sig, array, array_param)
    if not is_load:
        sig.writable(array, array_param)
    held = sig.items(items, "items")
    if held != item_type:
        raise sig.error("items", f"must hold {item_type} items like {array_param}, got {held}")
    name = sig.choice(algorithm, "algorithm", tuple(table))
    chosen = table[name]
    if chosen.needs_threads and threads is None:
        raise sig.error(
            "threads",
            f"is required by algorithm {name!r}: the block's thread count, a compile-time constant",
        )
    constant_count, check_count = _count_items(sig, items, items_per_thread)
    guarded = sig.run_time_int(valid_items, "valid_items") is not None
    with_default = not is_none(oob_default)
    if with_default:  # (stores take no oob_default)
        if not guarded:
            raise sig.error("oob_default", "is only used with valid_items (it fills the items past them)")
        _check_default(sig, oob_default, item_type)
    limit_of = tile_limit(valid_items)
    convert_default = converter(item_type)
    access = _access_function(chosen, item_type, array, guarded, with_default, is_load)
    positions = chosen.access
    rearrange = chosen.rearrangement(sig, item_type, threads, constant_count, temp_storage, is_load)
    # The variant is chosen by these constants (Numba prunes the branches not taken
    # before typing), rather than by more device functions: each costs a compile.
    counted = constant_count is not None
    count = np.uint64(constant_count or 0)
    exchanges = rearrange is not _no_exchange
    rearrange_before = exchanges and not is_load  # (a store rearranges, then writes)
    rearrange_after = exchanges and is_load
    # the usual arrangements and accesses written out here, the others called
    blocked_items, striped_items = positions is blocked, positions is striped
    reads_all, writes_all = access is read_all, access is write_all
    if counted:  # (the vector accesses then choose their width before Numba reads them)
        access = specialised(access, n=count)

    def move(array, items, rank, group, valid_items, oob_default, temp_storage):
        if counted:
            check_count(items, constant_count)
            n = count
        else:
            n = np.uint64(len(items))
        if guarded:
            limit = limit_of(valid_items)
        else:
            limit = ZERO
        if with_default:
            default = convert_default(oob_default)
        else:
            default = None
        if rearrange_before:
            rearrange(items, rank, group, temp_storage)
        if blocked_items:
            first = rank * n
            stride = ONE
        elif striped_items:
            first = rank
            stride = group
        else:
            first, stride = positions(rank, n, group)
        if reads_all:
            for i in range(n):
                items[i] = array[first + i * stride]
        elif writes_all:
            for i in range(n):
                array[first + i * stride] = items[i]
        elif counted:
            access(array, items, first, stride, limit, default)
        else:
            access(array, items, n, first, stride, limit, default)
        if rearrange_after:
            rearrange(items, rank, group, temp_storage)

    return device_function(without_dead_branches(move)), chosen


def tile_temp_storage_bytes(table, sig, value_type, threads, items_per_thread, algorithm):
    """Bytes a ``temp_storage=`` array needs for a load or store (0 for the algorithms
    that use no shared memory)."""
    name = sig.choice(algorithm, "algorithm", tuple(table))
    return table[name].temp_storage_bytes(sig, value_type, threads, items_per_thread)


# -- warp primitives -------------------------------------------------------------------------


def _warp_specialise(sig, array, items, width, items_per_thread, algorithm, valid_items, oob_default, threads,
                     temp_storage, is_load):
    lanes = sig.width(width)
    table = warp_algorithms(lanes, sig.block_threads(threads))
    move, _ = specialise_tile(
        sig, array, items, items_per_thread, algorithm, valid_items, oob_default, temp_storage, table, lanes, is_load
    )
    group = np.uint64(lanes)

    def warp_move(array, items, valid_items, oob_default, temp_storage):
        lane, _ = logical_warp(lanes)
        move(array, items, np.uint64(lane), group, valid_items, oob_default, temp_storage)

    return device_function(warp_move)


def temp_storage_bytes(sig, value_type, threads, items_per_thread, width=32, algorithm="transpose"):
    """Bytes a ``temp_storage=`` array needs for warp loads or stores of ``dtype`` items
    in logical warps of ``width`` lanes filling a block of ``threads`` (0 but for
    "transpose")."""
    lanes = sig.width(width)
    table = warp_algorithms(lanes, sig.block_threads(threads))
    n = sig.constant_int(items_per_thread, "items_per_thread")
    return tile_temp_storage_bytes(table, sig, value_type, lanes, n, algorithm)


@primitive("coop.warp.load", temp_storage_bytes, group="warp", uniform=("valid_items",))
def load(src, items, width=32, items_per_thread=None, algorithm="direct", valid_items=None, oob_default=None,
         threads=None, temp_storage=None):
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
    threads : int, compile-time constant, optional
        {warp_tile_threads}
    temp_storage : shared array, optional
        {warp_temp_storage}
        Only ``"transpose"`` uses it; size:
        ``coop.warp.load.temp_storage_bytes(dtype, threads, items_per_thread, width=32,
        algorithm="transpose")``.

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
    warp_move = _warp_specialise(
        Signature("coop.warp.load"), src, items, width, items_per_thread, algorithm, valid_items, oob_default,
        threads, temp_storage, True,
    )

    def impl(src, items, width=32, items_per_thread=None, algorithm="direct", valid_items=None, oob_default=None,
             threads=None, temp_storage=None):
        warp_move(src, items, valid_items, oob_default, temp_storage)

    return impl


@primitive("coop.warp.store", temp_storage_bytes, group="warp", uniform=("valid_items",))
def store(dst, items, width=32, items_per_thread=None, algorithm="direct", valid_items=None, threads=None,
          temp_storage=None):
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
    threads : int, compile-time constant, optional
        {warp_tile_threads}
    temp_storage : shared array, optional
        {warp_temp_storage}
        Only ``"transpose"`` uses it; size:
        ``coop.warp.store.temp_storage_bytes(dtype, threads, items_per_thread, width=32,
        algorithm="transpose")``.

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
    warp_move = _warp_specialise(
        Signature("coop.warp.store"), dst, items, width, items_per_thread, algorithm, valid_items, None, threads,
        temp_storage, False,
    )

    def impl(dst, items, width=32, items_per_thread=None, algorithm="direct", valid_items=None, threads=None,
             temp_storage=None):
        warp_move(dst, items, valid_items, None, temp_storage)

    return impl
