"""Shared-memory scratch for block and warp primitives: named regions of typed slots
over one raw buffer.

A primitive describes its scratch as a *layout* (CUB's TempStorage struct): ``Region``s
of values of one type (any supported type: scalars, complex, float16, bools, tuples),
put one after another in a ``Struct`` or on top of one another in a ``Union`` (phases
that reuse the memory), nested as needed. For example block scan's raking algorithm::

    Struct("block_scan.raking",
           Region("grid", dtype, threads + 32),   # the padded raking grid
           Region("aggregate", dtype, 1),
           Region("prefix", dtype, 1))            # the prefix callback's broadcast

and radix sort's will be ``Union("radix_sort", ranking_scratch, exchange_buffer)``. A
layout gives its regions' byte offsets (``offset("aggregate")``; a nested region by its
path, ``"ranking.counters"``) and its size, ``nbytes``, in whole 8-byte words: what the
primitive allocates and what its host-side ``temp_storage_bytes`` reports, so the two
cannot disagree. Each region starts at a multiple of its value's size, so its values
are slots of a typed array over the buffer: ``store(buffer, layout.slot("aggregate") +
i, value)`` and ``load(buffer, ...)`` (``loader(value_type)``) write and read value
``i`` of the region; ``atomic_add(buffer, index, value)`` adds to an integer slot
atomically and returns what it held (shared-memory counters), as
``atomic_add_element(array, index, value)`` does to an element of a shared or global
array (a histogram's counters). ``store`` writes a value
as its own type; ``storer(value_type)`` converts it to the region's type first (compiled, a value wider than its slot, such as
Numba's int64 sum of two int32 values, would otherwise overwrite the next slot).

Compiled, the buffer is one static ``cuda.shared.array`` of 8-byte words per
specialisation (as CUB's TempStorage), read and written through a pointer of the
value's own data type, so a tuple is one slot, not one array per element.

``temp_storage=`` (any primitive with scratch takes it) replaces that buffer by the
caller's shared array, so that several primitives can share one, as CUB's TempStorage
unions do; ``storage`` below decides which buffer a specialisation uses.

Under the simulator, a buffer is a per-block object array (the simulator keys
``cuda.shared.array`` by source line, which would alias specialisations of different
types) with one entry per byte, whose entries hold Python values: a region's value
``i`` is entry ``offset + i`` (``slot`` gives the byte offset there), which no other
region of a ``Struct`` reaches, whatever the sizes of their types.
"""
import functools
import math
import threading

import numpy as np
from numba.cuda import types

from coop._core.backend import SIMULATOR, cuda, device_function
from coop._core.misuse import size_check
from coop._core.values import converter, size_and_alignment, zero

if SIMULATOR:
    from coop._core.compilers import numba_cuda_simulator
else:
    from coop._core.compilers import numba_cuda_intrinsics as compiled

WORD = 8  # bytes per word of the backing array: aligns every value type coop supports
MAX_BLOCK_THREADS = 1024  # scratch is sized for this when the block size is not given


def slot_bytes(value_type):
    """Bytes one slot of ``value_type`` takes."""
    return size_and_alignment(value_type)[0]


def slot_unit(value_type):
    """Bytes of a slot of ``value_type`` in a buffer's indices (the simulator's slots are
    bytes: see above): the unit of ``part_offsets``' indices."""
    return 1 if SIMULATOR else slot_bytes(value_type)


def _whole_words(nbytes):
    return -(-nbytes // WORD) * WORD


# -- layouts --------------------------------------------------------------------------------


class Layout:
    """A piece of scratch: ``name``, ``bytes`` (its extent) and ``alignment`` (it is
    placed at a multiple of it). ``Region``, ``Struct`` and ``Union`` are the kinds."""

    name = ""
    bytes = 0
    alignment = 1

    @property
    def nbytes(self):
        """Bytes of a buffer holding this layout, in whole 8-byte words: the scratch a
        primitive allocates, and its ``temp_storage_bytes``."""
        return _whole_words(self.bytes)

    def region(self, path):
        """``(byte offset, Region)`` of the region at ``path`` (member names joined by
        dots; ``""``: this layout, if it is a region)."""
        if not path:
            if not isinstance(self, Region):
                raise KeyError(f"{self.name!r} is a {type(self).__name__}, not a region")
            return 0, self
        head, _, rest = path.partition(".")
        member_offset, member = self._member(head)
        offset, region = member.region(rest)
        return member_offset + offset, region

    def _member(self, name):
        raise KeyError(f"{self.name!r} has no member {name!r}")

    def offset(self, path):
        """Byte offset of the region at ``path``."""
        return self.region(path)[0]

    def slot(self, path=""):
        """Where the region at ``path`` starts, as an index for ``store`` and ``load``
        with its value type (compiled: in slots of its type; simulated: in bytes, see
        the module docstring)."""
        offset, region = self.region(path)
        if SIMULATOR:
            return offset
        return offset // region.slot_bytes


class Region(Layout):
    """``count`` values of ``value_type``."""

    def __init__(self, name, value_type, count):
        self.name = name
        self.value_type = value_type
        self.count = int(count)
        self.slot_bytes = slot_bytes(value_type)
        self.bytes = self.slot_bytes * self.count
        # a multiple of the size (not only of the type's alignment): slot indices are exact
        self.alignment = self.slot_bytes

    def __repr__(self):
        return f"Region({self.name!r}, {self.value_type}, {self.count})"


class _Composite(Layout):
    def __init__(self, name, *members):
        names = [member.name for member in members]
        if len(set(names)) != len(names):
            raise ValueError(f"{name!r}: member names must differ, got {names}")
        self.name = name
        self.members = members
        self.alignment = math.lcm(1, *(member.alignment for member in members))
        self.offsets = dict(zip(names, self._place(members)))

    def _member(self, name):
        for member in self.members:
            if member.name == name:
                return self.offsets[name], member
        return super()._member(name)

    def __repr__(self):
        inner = ", ".join(map(repr, self.members))
        return f"{type(self).__name__}({self.name!r}, {inner})"


class Struct(_Composite):
    """Members one after another (each at the next multiple of its alignment): scratch
    whose parts are live at the same time."""

    def _place(self, members):
        offsets, end = [], 0
        for member in members:
            offset = -(-end // member.alignment) * member.alignment
            offsets.append(offset)
            end = offset + member.bytes
        self.bytes = end
        return offsets


class Union(_Composite):
    """Members on top of one another, all at offset 0: phases of a primitive (or
    primitives sharing a ``temp_storage``) that use the memory one after another."""

    def _place(self, members):
        self.bytes = max((member.bytes for member in members), default=0)
        return [0] * len(members)


# -- buffers --------------------------------------------------------------------------------


def allocator(layout, owner):
    """A function ``allocate(unused)`` returning this specialisation's scratch buffer for
    ``layout`` (``unused``: the omitted ``temp_storage``). Being an intrinsic, it may be called from
    a device function that returns the buffer, which Numba forbids for an array the
    function creates itself. ``owner`` names the primitive and algorithm (it only
    matters under the simulator, below)."""
    if SIMULATOR:
        # Keyed by primitive, algorithm and size, not by specialisation: under the
        # simulator, threads of one call can reach different specialisations (a Python
        # int is typed by its value), and they must share one buffer. Consecutive calls
        # of one primitive and algorithm are safe on one buffer, as on the GPU.
        nbytes = layout.nbytes
        key = ("coop.scratch", owner, nbytes)

        def allocate(unused):
            return numba_cuda_simulator.shared_buffer(key, nbytes)

        return allocate

    # one static allocation wherever this is lowered, i.e. once per specialisation
    return compiled.word_array(layout.nbytes // WORD, "shared", "_coop_scratch", True)


def local_allocator(value_type, slots):
    """A function ``allocate()`` returning a thread-private buffer of ``slots`` values of
    ``value_type`` (any type, tuples included), read and written with ``store`` and the
    ``loader``: what ``cuda.local.array`` cannot give for a tuple. Compiled, it is a
    ``cuda.local.array`` of 8-byte words; accessed at constant indices, NVVM keeps it in
    registers. Under the simulator, an object array."""
    if SIMULATOR:

        def allocate():
            return np.empty(slots, dtype=object)

        return allocate

    words = _whole_words(slot_bytes(value_type) * slots) // WORD
    return compiled.word_array(words, "local", "_coop_registers", False)


def storage(sig, temp_storage, layout, owner):
    """Where a primitive keeps its scratch, laid out as ``layout``: ``(buffer,
    lead_barrier)``.

    ``buffer(temp_storage)`` is a device function giving the array to use: the
    primitive's own static buffer (see ``allocator``) when the caller passed no
    ``temp_storage``, else the caller's array, checked to hold ``layout.nbytes`` bytes
    (see ``coop._core.misuse``). ``lead_barrier`` is True with a caller's buffer: other
    primitives may have used it just before, so the primitive must wait for every
    thread to be done with it before writing (a buffer of its own is reused only by
    calls of the same specialisation, whose access pattern the primitive knows)."""
    if sig.temp_storage(temp_storage) is None:
        return allocator(layout, owner), False

    needed = layout.nbytes
    check = size_check(sig.primitive, "temp_storage", unit="bytes")
    if SIMULATOR:
        # Slots hold Python values under the simulator: a shadow object array per user
        # array, shared by every primitive given that array, as the array would be.
        def shadow(temp_storage):
            check(temp_storage, needed)
            return numba_cuda_simulator.shared_buffer(("coop.temp_storage", id(temp_storage)), temp_storage.nbytes)

        return shadow, True

    def users_buffer(temp_storage):
        check(temp_storage, needed)
        return temp_storage

    return device_function(users_buffer), True



# -- per-warp parts: logical warps sharing one buffer, each its own part -----------------

PART_ALIGNMENT = 16  # bytes: where parts start (a slot of every scalar type may start there)


def part_bytes(nbytes, *slots):
    """A logical warp's part of a buffer holding its ``nbytes`` of scratch, rounded up to
    ``PART_ALIGNMENT`` and to a multiple of the sizes ``slots`` (bytes of the slots the
    part holds, where one does not divide ``PART_ALIGNMENT``: a tuple's 24, say). A
    layout of ``warps`` parts is ``warps * part_bytes(...)``."""
    step = math.lcm(PART_ALIGNMENT, *slots)
    return -(-nbytes // step) * step


def part_offsets(sig, temp_storage, parts, bytes_per_part, value_type):
    """``offset(temp_storage, part)``: where part ``part`` (a logical warp's) of the
    scratch buffer starts, as an index of slots of ``value_type`` (``slot_unit``, which
    divides ``bytes_per_part``, see ``part_bytes``).

    In the primitive's own buffer the parts are ``bytes_per_part`` apart (see
    ``part_bytes``). A caller's ``temp_storage`` is divided into ``parts`` equal parts
    whatever the primitive needs (its bytes over ``parts``, rounded down to
    ``PART_ALIGNMENT``), so warp primitives given the same array put each logical warp's
    scratch in the same part, and a warp may call one after another without waiting for
    the other warps, as CUB's per-warp TempStorage union allows (an array sized with the
    largest ``temp_storage_bytes`` of the calls gives each part enough). Values whose
    slots do not divide ``PART_ALIGNMENT`` (a tuple's 12 or 24 bytes, say) cannot start
    at such parts: a caller's array is refused them."""
    unit = slot_unit(value_type)
    assert bytes_per_part % unit == 0 and bytes_per_part % PART_ALIGNMENT == 0, (unit, bytes_per_part)
    size = slot_bytes(value_type)
    given = sig.temp_storage(temp_storage)
    if given is not None and PART_ALIGNMENT % size:
        raise sig.error("temp_storage", f"cannot hold {value_type} items ({size} bytes in shared memory): a "
                                        f"caller's array is divided into the logical warps' parts at multiples of "
                                        f"{PART_ALIGNMENT} bytes, where such items cannot start; leave it out (the "
                                        f"call takes its own), or use items of 1, 2, 4, 8 or 16 bytes")
    if given is None:
        step = bytes_per_part // unit

        def own_offset(temp_storage, part):
            return part * step

        return device_function(own_offset)

    itemsize = given.dtype.bitwidth // 8

    def shared_offset(temp_storage, part):
        # (its bytes as its length times its item's size: numba-cuda-mlir 0.6 has no
        # array.nbytes)
        return part * (len(temp_storage) * itemsize // parts // PART_ALIGNMENT * PART_ALIGNMENT // unit)

    return device_function(shared_offset)

if SIMULATOR:

    def store(buffer, index, value):
        buffer[index] = value

    @functools.lru_cache(maxsize=None)
    def storer(value_type):
        convert = converter(value_type)

        def store_as(buffer, index, value):
            buffer[index] = convert(value)

        return store_as

    _ATOMIC = threading.Lock()  # (the simulator's threads are Python threads)

    def atomic_add(buffer, index, value):
        """``slot[index] += value``, atomically; the value it held."""
        with _ATOMIC:
            held = buffer[index]
            held = type(value)(0) if held is None else held
            buffer[index] = type(value)(held + value)
        return held

    def atomic_add_element(array, index, value):
        """``array[index] += value``, atomically (CUDA's atomicAdd on a shared or global
        array's element); the value it held."""
        return cuda.atomic.add(array, index, value)

    def loader(value_type):
        # A slot no thread wrote (which some primitives read and discard, e.g. a guarded
        # scatter's unfilled positions) reads as zero; a GPU gives whatever it held.
        unwritten = zero(value_type)

        def load(buffer, index):
            value = buffer[index]
            return unwritten if value is None else value

        return load

else:
    store, atomic_add, storer, loader = compiled.store, compiled.atomic_add, compiled.storer, compiled.loader
    atomic_add_element = compiled.atomic_add_element


# 16-bit counters read and written two at a time, as one 32-bit word (CUB's
# PackedCounter): slot ``index`` (even) in the low half, ``index + 1`` in the high half.
if SIMULATOR:

    def load_pair(buffer, index):
        """The 16-bit slots ``index`` and ``index + 1`` as one 32-bit word."""
        low, high = buffer[index], buffer[index + 1]
        return np.uint32((0 if low is None else int(low)) | (0 if high is None else int(high)) << 16)

    def store_pair(buffer, index, value):
        """Write a 32-bit word to the 16-bit slots ``index`` and ``index + 1``."""
        value = int(value)
        buffer[index] = np.uint16(value & 0xFFFF)
        buffer[index + 1] = np.uint16(value >> 16)

else:
    _load_word = loader(types.uint32)

    @device_function
    def load_pair(buffer, index):
        """The 16-bit slots ``index`` and ``index + 1`` as one 32-bit word."""
        return _load_word(buffer, index >> 1)

    @device_function
    def store_pair(buffer, index, value):
        """Write a 32-bit word to the 16-bit slots ``index`` and ``index + 1``."""
        store(buffer, index >> 1, value)


@functools.lru_cache(maxsize=None)
def block_rank_of(shape, fresh=False):
    """A device function ``()`` giving the calling thread's linear rank in its block (x
    fastest, as CUB): read from the block's run-time shape where ``shape`` is None, or
    computed from the constant shape ``(x, y, z)`` of a ``threads=`` tuple
    (``Signature.block_shape``), as CUB's BLOCK_DIM_X/Y/Z: without reading the block's
    shape, and without ``threadIdx.y`` / ``.z`` where that size is 1 (the launch is
    checked against the shape: on the simulator, and in debug mode). ``fresh``: read
    so that what a call computes from it is not shared with another call's: LLVM would
    otherwise compute, say, a tile load's and a later store's slot addresses once and
    keep them in registers across the kernel between them (through a sort, there)."""
    if SIMULATOR:
        if shape is None:

            def block_rank():
                return (
                    cuda.threadIdx.x
                    + cuda.threadIdx.y * cuda.blockDim.x
                    + cuda.threadIdx.z * cuda.blockDim.x * cuda.blockDim.y
                )
        else:
            x, y, _ = shape

            def block_rank():
                return cuda.threadIdx.x + cuda.threadIdx.y * x + cuda.threadIdx.z * x * y

        return block_rank
    read = compiled.block_rank_reader(fresh, shape)

    def block_rank():
        return read()

    return device_function(block_rank)


@device_function
def block_threads():
    return cuda.blockDim.x * cuda.blockDim.y * cuda.blockDim.z


@functools.lru_cache(maxsize=None)
def thread_count(threads):
    """A device function giving the block's thread count: the constant ``threads`` if the
    caller gave one (so loops over warps unroll), else read from the block shape."""
    if threads is None:
        return block_threads
    if SIMULATOR:
        return lambda: threads

    # an intrinsic: no function of its own to compile. (block_rank and block_threads
    # stay functions: as intrinsics, NVVM schedules some kernels' code differently.)
    return compiled.int64_constant(threads)


def striped_steps(count, threads):
    """``(steps, exact)`` of a loop over ``count`` slots striped over a block of
    ``threads`` (slot ``rank + k*threads`` at step ``k``): a constant trip count unrolls,
    where ``range(rank, count, threads)`` compiles to a run-time loop (CUB's loops are
    the same); ``exact``: every step's slot is in range."""
    return -(-count // threads), count % threads == 0


@device_function
def raking_slot(index, segment):
    """Where grid index ``index`` lives in a raking grid of ``segment``-long segments: one
    padding slot after each even segment longer than 2 (CUB's BlockRakingLayout), so the
    32 lanes raking segments side by side hit different banks; a segment's slots are
    consecutive. A grid for ``threads`` indices needs ``threads + 32`` slots."""
    if segment > 2 and segment % 2 == 0:
        return index + index // segment
    return index
