"""Warp shuffles of any value type, and the masks of logical warps.

``shuffler(mode, width)`` returns a function ``(mask, value, b) -> value`` that
shuffles a value of any supported type among the lanes of ``mask`` with CUDA's
``__shfl_*_sync(mask, value, b, width)`` semantics (PTX ``shfl.sync`` with clamp and
segment mask derived from ``width``). Compiled, it is an intrinsic that moves the value
as 32-bit words: 8- and 16-bit values and bools widened to one word, 64-bit values
split in two, complex numbers and tuples element by element. Under the simulator it is
the simulator's shuffle, which moves any Python value.

``same_bit_lanes(mask, label, bit)`` is one step of CUB's MatchAny: the lanes of ``mask``
whose ``label`` has bit ``bit`` as the caller's does (a ballot, inverted where the
caller's bit is clear); the lanes holding the same ``B``-bit label are the intersection
of ``B`` of them. ``lanes_below()`` is ``cuda.lanemask_lt()``, made from a recipe by a
second compiler as the others are.

``up_with_source`` is the shfl.sync.up that also returns the instruction's predicate
(whether the source lane is in the logical warp), and ``up_sum_step`` CUB's fused scan
step for sums: the shuffle and an add predicated on it. Both take the clamp operand
``clamp(UP, width)`` as their last argument.
"""

import builtins
import functools
import operator

import numpy as np

from numba.cuda import types

from coop._core.backend import SIMULATOR, cuda
from coop._core.specialize import device_function

if not SIMULATOR:
    from coop._core.compilers import numba_cuda_intrinsics as compiled

IDX, UP, DOWN, XOR = 0, 1, 2, 3
FULL_MASK = 0xFFFFFFFF


def clamp(mode, width):
    """The ``c`` operand of shfl.sync for CUDA's ``width`` argument."""
    return ((32 - width) << 8) | (0 if mode == UP else 0x1F)


@functools.lru_cache(maxsize=None)
def shuffler(mode, width):
    c = clamp(mode, width)
    if SIMULATOR:
        from coop._core import simulator

        def shuffle(mask, value, b):
            return simulator.shfl(mask, mode, value, b, c)

        return shuffle
    return compiled.shuffle(mode, c)


def _simulated_up_source(delta, c):
    """Whether shfl.sync.up by ``delta`` reads another lane (the PTX ISA's rule, as in
    ``coop._core.simulator.shfl``)."""
    lane = cuda.laneid
    segmask = (c >> 8) & 31
    return lane - (delta & 31) >= ((lane & segmask) | (c & 31 & ~segmask))


def has_up_sum_step(value_type):
    """Whether ``up_sum_step`` serves ``value_type``: integers and 32/64-bit floats."""
    ty = types.unliteral(value_type)
    return (isinstance(ty, types.Integer) and ty.bitwidth <= 64) or ty in (types.float32, types.float64)


if SIMULATOR:

    def up_with_source(mask, value, delta, c):
        """``(moved, from_source)``: shfl.sync.up by ``delta`` with clamp operand ``c``
        (``clamp(UP, width)``) and its predicate, true where the source lane exists in
        the logical warp (``moved`` is the caller's own value where it does not)."""
        from coop._core import simulator

        return simulator.shfl(mask, UP, value, delta, c), _simulated_up_source(delta, c)

    def up_sum_step(mask, value, delta, c):
        """``value`` plus the value of the lane ``delta`` below, where that lane exists in
        the logical warp (clamp operand ``c``), else ``value``: CUB's InclusiveScanStep
        for sums, one shfl.sync.up and an add predicated on its source predicate
        (integers narrower than 32 bits add in 32 bits: the same modulo their width)."""
        from coop._core import simulator

        moved = simulator.shfl(mask, UP, value, delta, c)
        if not _simulated_up_source(delta, c):
            return value
        with np.errstate(over="ignore"):  # integers wrap, as on the GPU
            return type(value)(moved + value)

else:
    up_with_source = compiled.shuffle(UP, None, with_predicate=True)
    up_sum_step = compiled.up_sum_step


@device_function
def logical_warp(width):
    """(logical lane, member mask) of the caller's logical warp of ``width`` lanes.

    The mask names the lanes of that logical warp (CUB's WarpMask), so sub-warps of a
    diverged warp synchronise only among themselves.
    """
    lane = cuda.laneid
    logical_lane = lane & (width - 1)
    if width == 32:
        return logical_lane, FULL_MASK
    return logical_lane, ((1 << width) - 1) << (lane - logical_lane)


if SIMULATOR:
    #: What each redux.sync operation does to two lanes' values (integers wrap, as on
    #: the GPU)
    _REDUX_COMBINE = {"add": operator.add, "min": builtins.min, "max": builtins.max, "and": operator.and_,
                      "or": operator.or_, "xor": operator.xor}

    @functools.lru_cache(maxsize=None)
    def warp_redux(kind):
        """``kind`` (add, min, max, and, or, xor) over the lanes of ``mask`` (CUDA's
        ``__reduce_<kind>_sync``), every lane gets it (coop.ops.redux_kind says which
        operators and values)."""
        combine = _REDUX_COMBINE[kind]

        def warp_reduced(mask, value):
            from coop._core import simulator

            mask &= FULL_MASK
            lanes = bin(mask).count("1")
            first = (mask & -mask).bit_length() - 1
            if lanes & (lanes - 1) == 0 and first % lanes == 0 and mask == ((1 << lanes) - 1) << first:
                # a logical warp: butterfly within it
                total, offset = value, 1
                while offset < lanes:
                    with np.errstate(over="ignore"):
                        total = combine(total, simulator.shfl(mask, XOR, total, offset, clamp(XOR, lanes)))
                    offset *= 2
                return total
            total = None
            for lane in range(32):
                if mask >> lane & 1:
                    other = simulator.shfl(mask, IDX, value, lane, 0x1F)
                    with np.errstate(over="ignore"):
                        total = other if total is None else combine(total, other)
            return total

        return warp_reduced

else:
    warp_redux = compiled.warp_redux

warp_sum = warp_redux("add")


if SIMULATOR:

    def same_bit_lanes(mask, label, bit):
        """The lanes of ``mask`` whose ``label`` has bit ``bit`` equal to the caller's."""
        is_set = (int(label) >> int(bit)) & 1 != 0
        ones = int(cuda.ballot_sync(mask, is_set)) & FULL_MASK
        return np.uint32(ones if is_set else ~ones & FULL_MASK)

    def lanes_below():
        """The lanes of the caller's warp below it (``cuda.lanemask_lt()``)."""
        return cuda.lanemask_lt()

else:
    same_bit_lanes = compiled.same_bit_lanes
    lanes_below = compiled.lanes_below
