"""Docstring paragraphs that many primitives share, written once.

A primitive's docstring names a shared paragraph on a line of its own, in braces::

    Barriers
    --------
    {block_barriers}

and ``expand`` (applied by the ``primitive`` decorator, so ``help()`` shows the result)
replaces that line with the paragraph, indented as the placeholder was; text after the
placeholder on its line (``{threads} Required.``) follows the paragraph on a line of its
own. Only lines starting with a known name are replaced: other braces in a docstring
are left alone.
"""

import re

__all__ = ["PARAGRAPHS", "expand"]

#: name -> paragraph (plain text, unindented; may span several lines).
PARAGRAPHS = {}

_PLACEHOLDER = re.compile(r"^(?P<indent>[ \t]*)\{(?P<name>[a-z_]+)\}[ \t]*(?P<rest>\S[^\n]*?)?[ \t]*$", re.MULTILINE)


def expand(doc, **own):
    """``doc`` with every placeholder line of a known paragraph replaced by it; ``own``
    adds paragraphs of this docstring's primitive (``temp_storage_size``)."""
    if not doc:
        return doc

    def paragraph(match):
        text = own.get(match["name"]) or PARAGRAPHS.get(match["name"])
        if text is None:
            return match[0]
        indent = match["indent"]
        lines = text.strip("\n").splitlines()
        if match["rest"]:  # ("{threads} Required.": the paragraph, then the rest)
            lines.append(match["rest"])
        return "\n".join(indent + line if line else "" for line in lines)

    return _PLACEHOLDER.sub(paragraph, doc)


# -- the shared paragraphs ----------------------------------------------------------------
# Each is plain text, unindented; a placeholder line in a docstring takes its indentation.
# Parameter descriptions are written to sit under a ``name : kind`` line of a numpydoc
# Parameters section.

# The radix primitives' values and tile (sort, top-k).
PARAGRAPHS["moved_values"] = """
The thread's values (any coop value type), moved with their keys; a tuple of
items arrays moves each.
"""

# ``offset`` of tile loads and stores (block, warp).
PARAGRAPHS["tile_offset"] = """
Where the tile starts in the array (run time, from 0 to the array's length; the
same in every thread of the group: the block, or the logical warp): passing the
whole array and ``offset=base`` moves the tile of ``array[base:]`` without
computing that slice, as CUB's ``d_in + block_offset`` (Numba's slicing also makes
the start non-negative and clamps it to the length; which form is quicker depends
on the kernel, BENCHMARKS.md). Past the array it is undefined, as such a pointer
is in CUB; the simulator raises. ``valid_items`` counts from it. Default None: the
tile starts at the array's first element.
"""

# The merge sorts' keys (block, warp).
PARAGRAPHS["merge_keys"] = """
Keys of any value type ``compare`` takes; sorted in place. A tuple ``(a, b, ...)``
of items arrays is one key per position, ``(a[i], b[i], ...)``, which ``compare``
receives as a tuple: ``operator.lt`` (``gt``, ``le``, ``ge``) compares such keys
as Python compares tuples, the first members that differ deciding (``a`` most
significant); a lambda or device function may read their members.
"""

PARAGRAPHS["merge_oob_default"] = """
A key that sorts after every valid key (CUB's oob_default), e.g. the key type's
largest value for ``operator.lt``; a tuple for tuple keys. It fills the positions
past ``valid_items`` while sorting. Required with ``valid_items``.
"""

PARAGRAPHS["radix_tile_length"] = """
The length of ``keys`` (and ``values``) (required); ``threads *
items_per_thread`` at most 65535.
"""

# Every block and warp primitive (Notes).
PARAGRAPHS["collective"] = """
Collective: every thread of the block (for a warp primitive: every lane of the
logical warp) must make the call, with the same ``threads=``, ``valid_items``,
``algorithm``, ``items_per_thread`` and ``width``, and ``threads=`` must match
the launch. Do not call it in a branch that some of those threads skip, or after
some of them have returned. On the simulator every call is checked: a violation
raises an error naming the primitive, the call site and the threads that did not
arrive. On a GPU a violation is undefined (a hang or wrong results);
``coop.config.debug = True`` (or the environment variable ``COOP_DEBUG=1``) set
before the kernel compiles adds run-time checks (launch size against
``threads=``, array lengths) that trap with a message. Called from host code,
outside a kernel, a primitive raises an error ("call coop.X inside a @cuda.jit
kernel").
"""

# Thread primitives and operators (Notes).
PARAGRAPHS["kernel_side"] = """
Call it inside a ``@cuda.jit`` kernel or device function; called from host code
it raises an error ("call coop.X inside a @cuda.jit kernel"). Only the calling
thread takes part: other threads need not call it.
"""

# The ``op`` parameter of reductions and scans.
PARAGRAPHS["op"] = """
A binary function, fixed when the kernel compiles: ``operator.add`` and its kin,
a lambda written in the kernel, a ``@cuda.jit(device=True)`` function or a
``coop.ops`` operator. Warp and block primitives combine values in a tree, so it
must be associative; it need not be commutative (values are combined in order),
except for the block ``algorithm="raking_commutative_only"``. Results are
converted back to the value's type, as C++ assignment does (Numba types
``int32 + int32`` as int64; the primitive returns int32, wrapping).
"""

# ``width`` of warp primitives.
PARAGRAPHS["width"] = """
Lanes per logical warp: 1, 2, 4, 8, 16 or 32 (the default), a compile-time
constant (a literal or a module-level constant). Each hardware warp splits into
``32 // width`` logical warps of consecutive lanes, which work independently; a
thread's logical lane is ``cuda.laneid % width``. Logical warps must be
complete: a block whose last warp is partial needs a ``width`` that divides the
lanes it has.
"""

# Where a primitive's ``valid_items`` counts from, for items arrays.
PARAGRAPHS["blocked_positions"] = """
Positions are counted in blocked order: item ``i`` of rank ``r`` (the thread's
rank in the block, the lane's in the logical warp) is position ``r *
items_per_thread + i``, CUB's blocked arrangement. Items held in another
arrangement (after a ``"striped"`` load, item ``i`` of rank ``r`` holds tile
position ``i * threads + r``) must be exchanged to blocked first
(``coop.block.exchange``, ``coop.warp.exchange``), or other items than the
tile's first ``valid_items`` are taken.
"""

# ``valid_items`` of warp reductions.
PARAGRAPHS["warp_valid_items"] = """
The same in every lane of the logical warp: a partial warp. With one value per
lane, only logical lanes ``0 .. valid_items-1`` contribute (the other lanes
still call, with any value); with items arrays, only the first ``valid_items``
items of the warp's tile. At least 1; the whole tile or more means every item.
Default None: everything contributes.
""" + PARAGRAPHS["blocked_positions"]

# ``valid_items`` of block reductions.
PARAGRAPHS["block_valid_items"] = """
The same in every thread: a partial tile. With one value per thread, only ranks
``0 .. valid_items-1`` contribute (the other threads still call, with any
value); with items arrays, only the first ``valid_items`` items of the tile. At
least 1; the whole tile or more means every item. Default None: everything
contributes.
""" + PARAGRAPHS["blocked_positions"]

# The ``value`` of warp reductions and scans.
PARAGRAPHS["warp_value"] = """
The lane's value, or an items array (``cuda.local.array(N, dtype)``, N >= 1) of
the lane's ``N`` consecutive items of the warp's tile: logical lane ``l`` holds
tile items ``l*N .. l*N+N-1`` (blocked arrangement).
"""

# The ``value`` of block reductions and scans.
PARAGRAPHS["block_value"] = """
The thread's value, or an items array (``cuda.local.array(N, dtype)``, N >= 1)
of the thread's ``N`` consecutive items of the block's tile: the thread of rank
``r`` holds tile items ``r*N .. r*N+N-1`` (blocked arrangement; rank
``r = x + y*dx + z*dx*dy`` in a 1-, 2- or 3-D block).
"""

# The value types of reductions and scans with an operator (after warp_value or block_value).
PARAGRAPHS["value_types"] = """
Values may be bool, int8 ... uint64, float16, float32, float64, complex64,
complex128, or tuples of these (one value per thread only: items arrays hold
scalars).
"""

# The value types of the sums (after warp_value or block_value).
PARAGRAPHS["sum_types"] = """
Numbers (integers, floats, complex) or bools, not tuples; the sum of bools counts
the True values.
"""

# The value types of the scans' sums (after warp_value or block_value).
PARAGRAPHS["scan_sum_types"] = """
Numbers (integers, floats, complex), not bools (for those, the scan with an
operator) nor tuples. Integer sums wrap in the value's type.
"""

# ``output`` of the batched warp reductions.
PARAGRAPHS["batched_output"] = """
Receives the lane's ``ceil(batches / width)`` results, of the items' type (it may
be ``items``): with ``arrangement="striped"``, ``output[k]`` is the result of
batch ``l + k*width`` in logical lane ``l``; with ``"blocked"``, of batch
``l*ceil(batches / width) + k``. Slots past the last batch are unspecified.
Default None: the result is returned instead (for at most ``width`` batches).
"""

# ``batches`` and ``arrangement`` of the batched warp reductions.
PARAGRAPHS["batches"] = """
The number of batches, the length of ``items`` (required).
"""
PARAGRAPHS["batched_arrangement"] = """
How the results spread over the lanes: ``"striped"`` or ``"blocked"`` (see
``output``).
"""

# Warp primitives without shared memory (Barriers).
PARAGRAPHS["warp_barriers"] = """
None: no shared memory and no barrier. Lanes exchange values with warp
intrinsics (``shfl.sync``; ``redux.sync`` for sums, minima, maxima and bitwise
operations of integers of 32 bits or fewer; ``vote.ballot`` for segment flags) over
the lanes of the caller's logical warp only, so the logical warps of a hardware warp
proceed independently; results stay in registers.
"""

# ``threads=`` of block primitives: its form (each docstring adds default and use).
PARAGRAPHS["threads"] = """
The block's size as a compile-time constant (a literal or a module-level
constant): its thread count, 1 to 1024 (a block of any shape with that many
threads), or its shape as a tuple of 1 to 3 sizes, x first (sizes left out are
1), e.g. ``threads=(16, 16)`` for a 16 x 16 block or ``threads=(128,)`` for a
1-D block of 128 threads. It must match the launch: the thread count, or, for a
tuple, the shape. A shape is CUB's BLOCK_DIM_X, BLOCK_DIM_Y and BLOCK_DIM_Z:
the thread's rank in the block is then computed from constants, without reading
``cuda.blockDim`` (or ``threadIdx.y`` and ``.z`` where those sizes are 1).
"""

# Block primitives (Barriers).
PARAGRAPHS["block_barriers"] = """
The call synchronises the block itself (``cuda.syncthreads()``) as far as its
use of shared memory needs and leaves no barrier to the caller: consecutive
calls of coop primitives need no ``cuda.syncthreads()`` between them.
"""

# ``temp_storage`` of block primitives (each docstring adds its temp_storage_bytes).
PARAGRAPHS["temp_storage"] = """
A shared array of your own, ``cuda.shared.array(BYTES, np.uint8, alignment=8)``
(1-D, contiguous, of numbers), to hold the call's scratch instead of its own
static shared buffer, so that several primitives share one allocation (CUB's
TempStorage unions). Size it on the host with this primitive's
``temp_storage_bytes`` (below), taking the largest of the sizes of the
primitives that share it, and give the calls the same ``threads=``. A call given
``temp_storage`` waits at a block barrier before writing it, so coop calls
sharing one array need no barrier between them; code of your own that uses the
array needs ``cuda.syncthreads()`` before and after, as with CUB. An array too
small for the call fails to link, naming the primitive, when its length is a
constant (with an NVVM that folds ``llvm.is.constant``, as CUDA 13's does); on
the simulator the call raises. Default None: the primitive's own buffer.
"""

# ``temp_storage`` of warp exchanges and warp "transpose" loads and stores.
PARAGRAPHS["warp_temp_storage"] = """
A shared array of your own, ``cuda.shared.array(BYTES, np.uint8, alignment=8)``,
for the primitive's buffer instead of its own static one (sized with
``temp_storage_bytes``, below). The array is divided into equal parts, one per
logical warp of the block, whatever this primitive needs: warp primitives given
the same array (with the same ``threads`` and ``width``) keep each logical warp's
scratch in the same part, so a warp may load, sort and store through one array
without waiting for the other warps, as with CUB's per-warp TempStorage union
(size it with the largest ``temp_storage_bytes`` of the calls). A warp primitive
synchronises only its logical warp (``cuda.syncwarp``), never the block: when the
array was just used by a block-wide primitive, or by logical warps of another
width, put a ``cuda.syncthreads()`` between, as CUB requires for reused
TempStorage. Default None.
"""

# ``output`` of warp and block scans.
PARAGRAPHS["scan_output"] = """
Items scans only, and required there: the items array receiving the thread's
scanned items, of the same dtype and at least as long as ``value``; it may be
``value`` itself (an in-place scan). Must be None (the default) when ``value``
is one value.
"""

# ``return_aggregate`` of warp and block scans.
PARAGRAPHS["return_aggregate"] = """
One-value scans only: True returns ``(result, aggregate)`` instead of
``result``. Items scans always return the aggregate and reject True.
"""

# Returns of warp scans.
PARAGRAPHS["warp_scan_returns"] = """
One value: the lane's scan result, or ``(result, aggregate)`` with
``return_aggregate=True``. Items array: the aggregate (the scan is written to
``output``). The aggregate, the reduction of every input of the logical warp
(items included, ``initial`` not), goes to every lane. Results have the value's
type.
"""

# Returns of block scans.
PARAGRAPHS["block_scan_returns"] = """
One value: the thread's scan result, or ``(result, aggregate)`` with
``return_aggregate=True``. Items array: the aggregate (the scan is written to
``output``). The aggregate, the reduction of every input of the block (items
included, ``initial`` and the callback's prefix not), goes to every thread.
Results have the value's type.
"""

# ``prefix_op`` of block scans.
PARAGRAPHS["prefix_op"] = """
CUB's BlockPrefixCallbackOp, for running scans over consecutive tiles: a
function ``prefix_op(prefix_state, block_aggregate) -> prefix``, fixed when the
kernel compiles (a ``@cuda.jit(device=True)`` function or another operator
form). Once the block aggregate is known, each thread of the first warp (ranks
0..31) calls it with its own ``prefix_state``; the prefix that thread 0 returns
is combined before every result of the tile (in an exclusive scan, thread 0's
first item gets it as is). Default None.
"""

# ``prefix_state`` of block scans.
PARAGRAPHS["prefix_state"] = """
The callback's state, passed as its first argument: any array, typically a
``cuda.local.array(1, dtype)`` set up before the loop over tiles. Each calling
thread passes its own, so a thread-local array works as CUB's per-thread functor
does (a shared or global array would be updated by each of the 32 calling
threads). Required with ``prefix_op``; otherwise None, the default.
"""

# ``algorithm`` of block scans.
PARAGRAPHS["block_scan_algorithm"] = """
``"raking"`` (the default; CUB BLOCK_SCAN_RAKING): values go to shared memory,
the first warp reduces consecutive segments of them, scans the segment totals
with shuffles and writes each thread's prefix back. ``"raking_memoize"``
(BLOCK_SCAN_RAKING_MEMOIZE): the same, keeping each segment in registers between
the two passes (given ``threads=`` above 32; otherwise it is ``"raking"``); at
1024 threads a segment is 32 values, more than a thread's 64 registers hold
under ``launch_bounds=1024`` (ptxas spills some to local memory): use ``"raking"``
there.
``"warp_scans"`` (BLOCK_SCAN_WARP_SCANS): shuffle scans within warps, then every
thread folds the totals of the warps before its own. All combine values in rank
order. With ``"raking"`` and at most 32 threads the scan is one warp's shuffles.
"""

# ``algorithm`` of block reductions.
PARAGRAPHS["block_reduce_algorithm"] = """
``"warp_reductions"`` (the default; CUB BLOCK_REDUCE_WARP_REDUCTIONS): shuffle
reductions within warps, then thread 0 folds the warp totals in order.
``"raking"`` (BLOCK_REDUCE_RAKING): every value goes to shared memory, the first
warp reduces consecutive segments in rank order, then shuffles.
``"raking_commutative_only"`` (BLOCK_REDUCE_RAKING_COMMUTATIVE_ONLY): the first
warp keeps its own values and folds in the others' out of rank order: for
commutative operators only. With at most 32 threads, both raking algorithms are
one warp's shuffles (no shared memory, no barrier).
"""

# ``src`` / ``dst`` of tile loads, stores and transforms.
PARAGRAPHS["tile_array"] = """
A 1-D array (global, shared or local memory) starting at the tile of the calling
group (block or logical warp), e.g. ``d_in[tile_base:]`` or ``d_out[tile_base:]``.
Only the tile's positions (below ``valid_items`` if given) are accessed.
"""

# ``items`` of tile loads and stores.
PARAGRAPHS["tile_items"] = """
The thread's items array (``cuda.local.array(N, dtype)``) of the same dtype as
the memory array, at least ``items_per_thread`` long.
"""

# ``items_per_thread`` of tile loads, stores and transforms.
PARAGRAPHS["tile_items_per_thread"] = """
How many items each thread moves, at least 1: the first ``items_per_thread`` of
``items``. Default None: ``len(items)``. The transposing algorithms require it:
it sizes their shared memory.
"""

# ``valid_items`` of tile loads, stores and transforms.
PARAGRAPHS["tile_valid_items"] = """
The same in every thread of the group: a partial last tile. Only tile positions
``0 .. valid_items-1`` are accessed; nothing past them is read or written. The
tile size or more means the whole tile; 0 or less, none. Default None: the whole
tile, unguarded.
"""

# ``oob_default`` of tile loads.
PARAGRAPHS["oob_default"] = """
Only with ``valid_items``: what the items past ``valid_items`` get (converted to
the items' dtype). Without it they keep their previous contents with
``"direct"``, ``"striped"`` and ``"vectorize"``, and are unspecified after a
transpose (the exchange moves them between threads, as CUB's does). Default
None.
"""

# ``algorithm`` of block loads, stores and transforms.
PARAGRAPHS["block_tile_algorithm"] = """
CUB's BLOCK_LOAD_* and BLOCK_STORE_* algorithms. With ``N`` items per thread and
``T`` threads, the thread of rank ``r`` holds:

- ``"direct"``: tile items ``r*N .. r*N+N-1`` (blocked), each thread accessing
  its own run;
- ``"striped"``: items ``r, r+T, ..., r+(N-1)*T`` (striped, coalesced); needs
  ``threads``;
- ``"warp_striped"``: lane ``l`` of warp ``w`` holds items ``32*w*N + L*i + l``
  (``L`` the warp's lanes: 32, or fewer in a last partial warp), each warp's ``32*N``
  items coalesced, kept warp-striped (CUB's Load/StoreDirectWarpStriped); needs
  ``threads``;
- ``"vectorize"``: blocked, accessed with 2- to 16-byte vector instructions when
  the thread's items fill whole vectors and the tile is aligned to the vector
  size (checked at run time); otherwise, and in guarded calls (``valid_items``),
  as ``"direct"``;
- ``"transpose"``: blocked, accessed striped (coalesced) and rearranged through
  shared memory (``coop.block.exchange``);
- ``"warp_transpose"``: blocked, accessed warp-striped (each warp its own
  ``32*N`` consecutive items, coalesced) and rearranged within each warp; blocks
  need not be a multiple of 32 threads;
- ``"warp_transpose_timesliced"``: as ``"warp_transpose"`` through a buffer for
  one warp's items, the warps taking turns (less shared memory, more block
  barriers).

The three transposes need ``threads`` and ``items_per_thread``.
"""

# ``items`` of exchanges.
PARAGRAPHS["exchange_items"] = """
The thread's items array (``cuda.local.array(items_per_thread, dtype)``; bool,
integers, float16/32/64 or complex64/128), exactly ``items_per_thread`` long.
"""

# ``output`` of exchanges.
PARAGRAPHS["exchange_output"] = """
The items array receiving the thread's items in the new arrangement: the same
dtype and length as ``items``. It may be ``items`` itself: every item is written
to shared memory before any is read.
"""

# ``items_per_thread`` of exchanges.
PARAGRAPHS["exchange_items_per_thread"] = """
Required, at least 1: the length of each items array of the call (it sizes the
shared memory).
"""

# ``ranks`` of scatters.
PARAGRAPHS["ranks"] = """
An items array of integers, exactly ``items_per_thread`` long: ``ranks[i]`` is
the tile position that the thread's item ``i`` goes to.
"""

# ``warp_time_slicing`` of block exchanges.
PARAGRAPHS["warp_time_slicing"] = """
True (CUB's WARP_TIME_SLICING): exchange through a buffer for one warp's items,
``min(threads, 32) * items_per_thread`` values, instead of the whole tile, the
warps taking turns: less shared memory, more block barriers. A tile over 48 KiB
(the static shared memory of a kernel) needs it, or ``temp_storage``.
"""

# ``items`` of thread primitives.
PARAGRAPHS["thread_items"] = """
The thread's items array, ``cuda.local.array(N, dtype)`` with ``N >= 1``. With a
constant ``N`` the loop unrolls fully and the items stay in registers.
"""

# ``output`` of thread scans.
PARAGRAPHS["thread_output"] = """
An items array of the same dtype, at least as long as ``items``, receiving the
results; it may be ``items`` itself (in place).
"""

# ``threads=`` where it is optional and sizes a scratch (block reductions, scans, shuffles).
PARAGRAPHS["threads_optional"] = """
Default None: the block shape is read at run time and the scratch is sized for
1024 threads. Given, the scratch is sized exactly and loops over warps unroll.
"""

# Barriers of reduce and sum (after block_barriers).
PARAGRAPHS["block_reduce_barriers"] = """
Here: two ``cuda.syncthreads()``, three with ``temp_storage``; none with a
raking algorithm in a block of at most 32 threads. Shared memory:
``"warp_reductions"`` one value per warp plus one; the raking algorithms a
padded grid of ``threads + 33`` values.
"""

# Barriers of all_reduce and all_sum (after block_barriers).
PARAGRAPHS["block_all_reduce_barriers"] = """
Here: two ``cuda.syncthreads()``, three with ``temp_storage``; one with a raking
algorithm in a block of at most 32 threads. Shared memory: ``"warp_reductions"``
one value per warp plus one; the raking algorithms a padded grid of
``threads + 33`` values.
"""

# ``threads`` of warp exchanges.
PARAGRAPHS["warp_exchange_threads"] = """
Required: the block's thread count, 1 to 1024 and a multiple of ``width`` (every
logical warp complete), or its shape as a tuple (as the block primitives'
``threads=``: then the launch's shape). The shared buffer holds a slice for each
logical warp of the block; over 48 KiB (the static shared memory of a kernel) it
is rejected at compile time: then pass ``temp_storage``.
"""

# Barriers of warp exchanges.
PARAGRAPHS["warp_exchange_barriers"] = """
``cuda.syncwarp`` over the logical warp's lanes before writing its slice of
shared memory (earlier calls' reads of it are done) and between writing and
reading; never the block's barrier. Consecutive warp exchanges need nothing
between them. Shared memory: ``threads // width`` slices of
``width * items_per_thread + 1`` values, plus CUB's bank-conflict padding when
``items_per_thread`` is a power of two above 4.
"""

# ``threads`` of warp loads and stores.
PARAGRAPHS["warp_tile_threads"] = """
The block's thread count, 1 to 1024 and a multiple of ``width``, or its shape as
a tuple (as the block primitives' ``threads=``: then the launch's shape).
Required by ``"transpose"``, whose shared memory holds a slice for every logical
warp of the block; unused by the other algorithms. Default None.
"""

# Barriers of warp loads and stores.
PARAGRAPHS["warp_tile_barriers"] = """
``"direct"``, ``"striped"`` and ``"vectorize"``: none, and no shared memory.
``"transpose"``: ``cuda.syncwarp`` over the logical warp before writing its
slice of shared memory and between writing and reading; never the block's
barrier.
"""

# Barriers of block scans (after block_barriers).
PARAGRAPHS["block_scan_barriers"] = """
Here: two ``cuda.syncthreads()`` (none with ``"raking"`` or ``"raking_memoize"``
in a block of at most 32 threads), one more with ``prefix_op``, and one more
first with ``temp_storage``. Shared memory: ``"raking"`` and
``"raking_memoize"`` a padded grid of ``threads + 34`` values; ``"warp_scans"``
one value per warp plus one.
"""

# ``threads`` of block loads, stores and transforms.
PARAGRAPHS["tile_threads"] = """
Optional for ``"direct"`` and ``"vectorize"`` (default None: unused there);
required by ``"striped"`` (the stride) and by the transposes (it sizes their
shared memory).
"""

# Barriers of block loads, stores and transforms.
PARAGRAPHS["block_tile_barriers"] = """
``"direct"``, ``"striped"`` and ``"vectorize"``: no barrier and no shared
memory. Each transposing load or store: ``"transpose"``, two
``cuda.syncthreads()`` (before writing its shared buffer, and between writing
and reading); ``"warp_transpose"``, two ``cuda.syncwarp`` over each warp (the
first a ``cuda.syncthreads()`` when the buffer is a ``temp_storage``);
``"warp_transpose_timesliced"``, a ``cuda.syncthreads()`` and a
``cuda.syncwarp`` per warp of the block. Their shared memory:
``threads * items_per_thread`` values (``"warp_transpose_timesliced"``:
``min(threads, 32) * items_per_thread``), plus CUB's bank-conflict padding when
``items_per_thread`` is a power of two above 4.
"""

# Barriers of the block exchanges that move items between warps (after block_barriers).
PARAGRAPHS["block_exchange_barriers"] = """
Here: ``cuda.syncthreads()`` before writing to shared memory (earlier calls' reads
are done) and between writing and reading; with ``warp_time_slicing=True``, these
two for each warp of the block. Shared memory: ``threads * items_per_thread``
values (``min(threads, 32) * items_per_thread`` with ``warp_time_slicing``), plus
CUB's bank-conflict padding when ``items_per_thread`` is a power of two above 4.
"""

# Barriers of the block exchanges within warps (after block_barriers).
PARAGRAPHS["block_warp_exchange_barriers"] = """
Here items move only within warps: ``cuda.syncwarp`` over the warp's lanes before
writing to shared memory and between writing and reading (a ``cuda.syncthreads()``
instead of the first with ``temp_storage``: other primitives may have read that
array). With ``warp_time_slicing=True``, a ``cuda.syncthreads()`` and a
``cuda.syncwarp`` for each warp of the block. Shared memory: ``threads *
items_per_thread`` values (``min(threads, 32) * items_per_thread`` with
``warp_time_slicing``), plus CUB's bank-conflict padding when
``items_per_thread`` is a power of two above 4.
"""

# ``threads`` of block exchanges (after threads).
PARAGRAPHS["exchange_threads"] = """
Required: with ``items_per_thread`` it sizes the shared memory.
"""

# Barriers of block shuffles (after block_barriers).
PARAGRAPHS["block_shuffle_barriers"] = """
Here: two ``cuda.syncthreads()``, before writing the scratch (earlier calls' reads
of it are done) and after (every value is written). Shared memory: one value per
thread.
"""

# Discontinuity and adjacent difference (their items and barriers).
PARAGRAPHS["edge_items"] = """
The thread's ``N`` items, blocked; any value type, or a tuple of items arrays of
one length (a tile of tuples: the operator gets tuples).
"""

PARAGRAPHS["edge_barriers"] = """
Here: two ``cuda.syncthreads()``, before and after the exchange of the threads'
edge items through shared memory (one item per thread).
"""

# ``threads`` of block shuffles.
PARAGRAPHS["shuffle_threads"] = """
Default None: the block shape is read at run time and the scratch is sized for
1024 threads; given, it is sized exactly.
"""

# ``a, b`` and Returns of the arithmetic and bitwise operators.
PARAGRAPHS["operator_arguments"] = """
The two operands, of the types the operation takes (Numba's rules); for ``a`` and
``b`` of the value type being reduced or scanned when passed to a primitive.
"""

PARAGRAPHS["operator_result"] = """
The result, of the type Numba gives the operation (``int32 + int32`` is int64). A
primitive that calls it converts the result back to its values' type.
"""


# coop.device's host functions.

PARAGRAPHS["device_array"] = """
A 1-D contiguous device array: Numba's, CuPy's, PyTorch's (any CUDA Array Interface
object). A NumPy array in host memory is an error.
"""

PARAGRAPHS["device_operator"] = """
A coop.ops operator, ``operator.add``, ``operator.lt`` and the like, a lambda or
function given here (compiled for the device, once for its code and the values it
reads: a lambda written in the call, new each time, compiles once), or a
``@cuda.jit(device=True)`` function. One that cannot take the values it is given
raises before anything compiles.
"""

PARAGRAPHS["device_combining_operator"] = """
``op(a, b)``, associative (not necessarily commutative).
""" + PARAGRAPHS["device_operator"].lstrip("\n")

PARAGRAPHS["device_stream"] = """
A Numba, CuPy or PyTorch stream, or a ``cudaStream_t`` handle; default: the default
stream. The call returns without waiting for the GPU. A stream capturing a CUDA graph
takes the call with ``temp_storage=`` (and, where the function returns a count, with
the device array to write it to); without them the call raises, saying what to pass.
"""

PARAGRAPHS["device_temp_storage"] = """
A device array (any dtype; its bytes are used) for the call's temporary storage,
CUB's two-phase pattern: at least ``coop.device.temp_storage_bytes(<this function>,
<the same arguments>)`` bytes. Without it the call uses coop's own, kept between calls
per stream and device. The call initialises what it needs, so the memory may serve other
purposes between calls, and a CUDA graph capturing the call replays it correctly. The
first call on a buffer with given arguments sizes and lays it out; later ones with the
same arrays, sizes and buffer reuse that layout, and where the call returns nothing,
queue its launches again without running its host side (the quickest way to call
coop.device repeatedly).
"""

PARAGRAPHS["device_returns"] = """
The output holds the result once the GPU has run the call (it is queued on ``stream``;
copying the output to the host waits for it).
"""
