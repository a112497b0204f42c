"""Tiles: the memory side of loads and stores, shared by ``coop.warp.load`` /
``coop.warp.store`` (CUB's WarpLoad / WarpStore), ``coop.block.load`` /
``coop.block.store`` (BlockLoad / BlockStore) and ``coop.block.transform``.

A *tile* is the run of consecutive array elements that a group of threads (a logical
warp, or a thread block) moves together: the caller passes the array starting at its
group's tile (``d_in[tile_base:]``, or ``d_in`` and ``offset=tile_base``:
``tile_start``) and an items array per thread (``cuda.local.array(N, dtype)``). Each
thread has a rank in the group (logical lane or block rank) and items are arranged as in
CUB (the *arrangements*, positions functions ``(rank, n, group) -> (tile position of
item 0, distance between items)``):

- ``blocked``: item ``i`` of rank ``r`` is tile position ``r * N + i``;
- ``striped``: item ``i`` of rank ``r`` is tile position ``i * G + r`` (``G`` threads
  in the group);
- ``warp_striped``: each warp of a block its own ``32 * N`` consecutive positions,
  striped across its lanes (``coop.block.exchange`` has the partial-warp rule).

Direct accesses (CUB's LoadDirect* / StoreDirect*) read or write a thread's items at
the positions of an arrangement, guarded or not: ``valid_items`` (run time, the same in
every thread of a group) guards a partial tile: only tile positions below it are read or
written (a thread's *valid span*, ``valid_span``), and loads give items at other
positions ``oob_default`` if given. ``vectorized`` reads or writes blocked items with
vector instructions where the tile is aligned. Tile positions are computed in unsigned
64-bit arithmetic: one base address per thread plus constant offsets per item, with no
negative-index fix-ups (Numba adds those for signed indices). Items are read and written
through ``element`` and ``set_element``: numba-cuda's indexing, and in numba-cuda-mlir
kernels a contiguous array's items addressed from its data pointer (its indexing
multiplies each index by a stride read at run time).

An algorithm (one value of ``algorithm=``) is a ``TileAlgorithm`` record: the
arrangement of the memory access, the one the caller holds, and for the transposing
ones the exchange between them with its scratch layout and requirements. Each family's
table (``ALGORITHMS`` in ``coop.warp.load_store`` and ``coop.block.load_store``) maps
names to records; ``specialise_tile`` builds a load or store from one, and
``tile_temp_storage_bytes`` sizes its scratch from the same record.
"""

import functools

import numpy as np
from numba.cuda import types

from coop._core.algorithm import Algorithm, choose
from coop._core.backend import SIMULATOR, device_function
from coop._core.constants import specialised, without_dead_branches
from coop._core.errors import CoopError
from coop._core.misuse import size_check
from coop._core.specialize import is_none
from coop._core.values import check_dtype, converter, convertible
from coop._core.values import size_and_alignment as item_layout  # (bytes, alignment) in memory
from coop._core.vector import address, vector_loader, vector_storer

if SIMULATOR:

    def element(array, index):
        return array[index]

    def set_element(array, index, value):
        array[index] = value

else:
    from coop._core.compilers.numba_cuda_intrinsics import element, set_element, tile_from

# Tile positions are uint64 throughout: mixing in a signed integer would make Numba
# compute in float64 (NumPy's rule), and signed array indices cost a wraparound select.
ZERO = np.uint64(0)
ONE = np.uint64(1)
WARP_THREADS = np.uint64(32)


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


@device_function
def warp_striped(rank, n, group):
    """Warp-striped arrangement (coop.block.exchange): item ``i`` of lane ``l`` of warp
    ``w`` is tile position ``32*w*n + L*i + l``, ``L`` the warp's lanes (32, or fewer in
    a last partial warp)."""
    lane = rank % WARP_THREADS
    warp_first = rank - lane
    if group % WARP_THREADS == 0:  # every warp full: a constant stride, as CUB's
        return warp_first * n + lane, WARP_THREADS
    return warp_first * n + lane, min(group - warp_first, WARP_THREADS)


# -- reading and writing a thread's items (CUB's LoadDirect* / StoreDirect*) -------------
# Common signature: (array, items, n, first, stride, limit, default); item i is tile
# position first + i * stride; only positions below ``limit`` are touched by guarded
# forms; ``default`` (loads) fills the items at other positions.


@device_function
def read_all(src, items, n, first, stride, limit, default):
    for i in range(n):
        items[i] = element(src, first + i * stride)


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
    """Items at valid positions read; the others set to ``default``, or left as they
    are where ``default`` is None (a branch Numba prunes for a None argument)."""
    valid = valid_span(first, stride, n, limit)
    for i in range(n):
        if np.uint32(i * stride) < valid:
            items[i] = element(src, first + i * stride)
        elif default is not None:
            items[i] = default


@device_function
def write_all(dst, items, n, first, stride, limit, default):
    for i in range(n):
        set_element(dst, first + i * stride, items[i])


@device_function
def write_valid(dst, items, n, first, stride, limit, default):
    valid = valid_span(first, stride, n, limit)
    for i in range(n):
        if np.uint32(i * stride) < valid:
            set_element(dst, first + i * stride, items[i])


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


class TileAlgorithm(Algorithm):
    """One value of ``algorithm=`` for loads and stores (an ``Algorithm`` record).

    - ``access``: the positions function (``blocked``, ``striped``, ``warp_striped``, or
      another with the signature ``(rank, n, group) -> (first position, stride)``) of
      the memory access: which tile positions each thread reads or writes (the record's
      ``function``).
    - ``vectorize``: blocked access with vector instructions (``access`` must be
      ``blocked``).
    - ``arrangement``: the positions function of the items as the caller holds them
      (blocked or striped); by default ``access``. ``coop.block.transform`` applies its
      operator only to items whose position (by this function) is valid.
    - ``requires``: ``{"threads" or "items_per_thread": why}``, the constants the
      algorithm needs (``threads``: the block's thread count).
    - ``exchange``: for transposing algorithms, an object with

      ``after_load(sig, item_type, threads, items_per_thread, temp_storage_type, shape)``
      and ``before_store(...)`` (same arguments): each returns a device function
      ``(items, rank, group, temp_storage) -> None`` that rearranges the items array in
      place, from the ``access`` arrangement to ``arrangement`` after a load, and back
      before a store (CUB's BlockStore also rearranges the caller's items in place); it
      owns any barriers, and allocates ``layout(...)`` (``coop._core.scratch.storage``).
      ``threads`` is the group's constant thread count (the warp width for warp
      algorithms), ``items_per_thread`` the constant items count and ``shape`` the
      block's constant shape (``Signature.block_shape``) or None.

      ``layout(value_type, threads, items_per_thread)``: its scratch layout (the
      record's ``scratch``), which also sizes a ``temp_storage=`` array.

      ``validate(sig, items_per_thread)`` (optional): checks of the constants beyond
      ``requires``.

    For example CUB's BLOCK_LOAD_TRANSPOSE is ``TileAlgorithm(striped,
    arrangement=blocked, requires=..., exchange=...)``, the hooks wrapping
    ``coop.block.exchange.exchanger`` ("striped_to_blocked" after a load,
    "blocked_to_striped" before a store); BLOCK_LOAD_WARP_TRANSPOSE the same with
    ``warp_striped`` as ``access``.
    """

    def __init__(self, access, vectorize=False, arrangement=None, exchange=None, requires=None):
        super().__init__(access, scratch=None if exchange is None else exchange.layout, requires=requires)
        self.access = access
        self.vectorize = vectorize
        self.arrangement = access if arrangement is None else arrangement
        self.exchange = exchange

    def check_constants(self, sig, name, items_per_thread):
        """The requirement on ``items_per_thread`` and the exchange's own checks (the
        one on ``threads`` comes first, see ``specialise_tile``)."""
        self.check_requirements(sig, name, items_per_thread=items_per_thread)
        validate = getattr(self.exchange, "validate", None)
        if validate is not None:
            validate(sig, items_per_thread)

    def rearrangement(self, sig, item_type, threads, items_per_thread, temp_storage, is_load, shape):
        if self.exchange is None:
            sig.temp_storage(temp_storage)  # accepted, unused: no scratch
            return _no_exchange
        build = self.exchange.after_load if is_load else self.exchange.before_store
        return build(sig, item_type, threads, items_per_thread, temp_storage, shape)


# -- specialisation --------------------------------------------------------------------------


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


def _access_function(algorithm, item_type, array_type, guarded, is_load):
    if guarded:
        if is_load:
            return read_valid
        return write_valid
    if algorithm.vectorize:
        return vectorized(item_type, array_type, is_load)
    return read_all if is_load else write_all


def tile_start(sig, offset):
    """``start(array, offset)``: the array from the tile's first element, ``array[offset:]``
    for an ``offset=`` argument (a run-time integer, from 0 to the array's length), the
    array itself without one. Compiled, without a slice's wraparound and clamp
    (``tile_from``); the simulator checks the offset."""
    if is_none(offset):
        return _whole_array
    sig.run_time_int(offset, "offset")
    if not SIMULATOR:
        return tile_from
    primitive = sig.primitive

    def start(array, offset):
        if not 0 <= offset <= len(array):
            raise CoopError(f"{primitive}: offset must be from 0 to the array's length ({len(array)}), got {offset}")
        return array[offset:]

    return start


@device_function
def _whole_array(array, offset):
    return array


def specialise_tile(sig, array, items, items_per_thread, algorithm, valid_items, oob_default, temp_storage,
                    table, threads, block_threads, is_load, shape=None):
    """The device function ``move(array, items, rank, group, valid_items, oob_default,
    temp_storage)`` of a load (``is_load``) or store, after checking the arguments;
    ``rank`` and ``group`` (uint64) are the thread's rank and the group's thread count,
    which the block and warp primitives compute. ``threads``: the group's constant
    thread count, or None; ``block_threads``: the block's (``threads=``), or None;
    ``shape``: the block's constant shape (``Signature.block_shape``), or None. Also
    returns the algorithm."""
    array_param = "src" if is_load else "dst"
    item_type = memory_array(sig, array, array_param)
    if not is_load:
        sig.writable(array, array_param)
    held = sig.items(items, "items")
    if held != item_type:
        raise sig.error("items", f"must hold {item_type} items like {array_param}, got {held}")
    name, chosen = choose(sig, algorithm, table)
    chosen.check_requirements(sig, name, threads=block_threads)
    constant_count, check_count = _count_items(sig, items, items_per_thread)
    chosen.check_constants(sig, name, constant_count)
    guarded = sig.run_time_int(valid_items, "valid_items") is not None
    with_default = not is_none(oob_default)
    if with_default:  # (stores take no oob_default)
        if not guarded:
            raise sig.error("oob_default", "is only used with valid_items (it fills the items past them)")
        _check_default(sig, oob_default, item_type)
    limit_of = tile_limit(valid_items)
    convert_default = converter(item_type)
    access = _access_function(chosen, item_type, array, guarded, is_load)
    positions = chosen.access
    rearrange = chosen.rearrangement(sig, item_type, threads, constant_count, temp_storage, is_load, shape)
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
                items[i] = element(array, first + i * stride)
        elif writes_all:
            for i in range(n):
                set_element(array, first + i * stride, items[i])
        elif counted:
            access(array, items, first, stride, limit, default)
        else:
            access(array, items, n, first, stride, limit, default)
        if rearrange_after:
            rearrange(items, rank, group, temp_storage)

    return device_function(without_dead_branches(move)), chosen


def tile_temp_storage_bytes(table, sig, value_type, threads, block_threads, items_per_thread, algorithm):
    """Bytes a ``temp_storage=`` array needs for a load or store (0 for the algorithms
    that use no shared memory), from the algorithm's scratch layout."""
    name, chosen = choose(sig, algorithm, table)
    if chosen.scratch is None:
        return 0
    chosen.check_requirements(sig, name, threads=block_threads)
    chosen.check_constants(sig, name, items_per_thread)
    return chosen.temp_storage_bytes(value_type, threads, items_per_thread)
