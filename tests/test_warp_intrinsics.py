"""Warp intrinsics (shuffles, votes, matches, masks, syncwarp) against NumPy references.

The kernels use plain ``from numba import cuda``, so this file runs unchanged on a GPU
and on Numba's CUDA simulator, where ``import coop`` installs the intrinsics. Expected
values are computed from the inputs with NumPy reimplementations of CUDA's definitions.
Where CUDA leaves a result undefined (reading a lane that does not take part), the GPU
run skips it and the simulator run checks the simulator's documented choice: the
caller's own value. Tests of simulator-only behaviour are skipped on a GPU.
"""

import os
import threading
import time
import warnings

import numpy as np
import pytest
from numba import cuda

import coop  # noqa: F401  (installs the intrinsics on the simulator)
from coop._core.backend import SIMULATOR

WARP = 32
FULL = 0xFFFFFFFF
EVEN_LANES = 0x55555555
LOW_HALF = 0x0000FFFF
HIGH_HALF = 0xFFFF0000
SHARED_SLOTS = 128

# The types numba.cuda's shuffles accept on a GPU.
SHUFFLE_DTYPES = [np.int32, np.int64, np.float32, np.float64]

simulator_only = pytest.mark.skipif(
    not SIMULATOR, reason="simulator behaviour; CUDA leaves it undefined or it is no user API"
)


# --------------------------------------------------------------------------------------
# NumPy references


def warp_layout(nthreads):
    """Per linear thread id: its lane, the id of its warp's lane 0, and its warp's size."""
    tid = np.arange(nthreads)
    lane = tid % WARP
    base = tid - lane
    warp_len = np.minimum(WARP, nthreads - base)
    return lane, base, warp_len


def gather_from_lanes(x, source_lane):
    """x of each thread's `source_lane`, and whether that lane exists.

    Where it does not, the value is the thread's own: undefined in CUDA, the
    simulator's documented choice.
    """
    lane, base, warp_len = warp_layout(len(x))
    exists = source_lane < warp_len
    return np.where(exists, x[base + np.where(exists, source_lane, lane)], x), exists


def ref_shfl(x, kind, b, width=WARP):
    """``__shfl{,_up,_down,_xor}_sync(0xffffffff, x, b, width)`` as CUDA's C++ guide defines them.

    idx reads lane ``b % width`` of the caller's width-lane segment; up reads ``delta``
    lanes lower, keeping its own value if that leaves the segment; down likewise
    upwards; xor reads ``lane ^ b``, keeping its own value if that lies in a later
    segment. `b` must lie in [0, 32) except for idx.
    """
    lane, _, _ = warp_layout(len(x))
    b = np.broadcast_to(np.asarray(b, dtype=np.int64), lane.shape)
    first = lane - lane % width
    pos = lane % width
    if kind == "idx":
        source = first + b % width
    elif kind == "up":
        source = np.where(pos >= b, lane - b, lane)
    elif kind == "down":
        source = np.where(pos + b < width, lane + b, lane)
    elif kind == "xor":
        source = np.where((lane ^ b) < first + width, lane ^ b, lane)
    else:
        raise ValueError(kind)
    return gather_from_lanes(x, source)


def ref_ptx_shfl(x, mode, b, c):
    """PTX ``shfl.sync`` with mode 0 idx, 1 up, 2 down, 3 bfly, per the PTX ISA pseudocode."""
    lane, _, _ = warp_layout(len(x))
    bval = np.broadcast_to(np.asarray(b, dtype=np.int64), lane.shape) & 31
    clamp = c & 31
    segmask = (c >> 8) & 31
    max_lane = (lane & segmask) | (clamp & ~segmask)
    min_lane = lane & segmask
    if mode == 1:
        j, in_range = lane - bval, lane - bval >= max_lane
    elif mode == 2:
        j, in_range = lane + bval, lane + bval <= max_lane
    elif mode == 3:
        j, in_range = lane ^ bval, (lane ^ bval) <= max_lane
    else:
        j = min_lane | (bval & ~segmask)
        in_range = j <= max_lane
    return gather_from_lanes(x, np.where(in_range, j, lane))


def ref_ballot(flags, taking_part):
    """Per thread: bits of the lanes of its warp that take part and whose flag is set."""
    lane, base, _ = warp_layout(len(flags))
    out = np.zeros(len(flags), dtype=np.uint32)
    for first in np.unique(base):
        in_warp = base == first
        bits = 0
        for lane_id in lane[in_warp & taking_part & flags]:
            bits |= 1 << int(lane_id)
        out[in_warp] = bits
    return out


def ref_match_any(values):
    """Per thread: bits of the lanes of its warp that hold the same value."""
    lane, base, _ = warp_layout(len(values))
    out = np.zeros(len(values), dtype=np.uint32)
    for t in range(len(values)):
        same = (base == base[t]) & (values == values[t])
        out[t] = sum(1 << int(lane_id) for lane_id in lane[same])
    return out


def existing_lanes(nthreads):
    """Per thread: bits of the lanes that exist in its warp."""
    _, _, warp_len = warp_layout(nthreads)
    return ((np.uint64(1) << warp_len.astype(np.uint64)) - np.uint64(1)).astype(np.uint32)


def assert_defined_equal(actual, expected, defined):
    """Compare everywhere on the simulator; on a GPU only where CUDA defines the result."""
    if SIMULATOR:
        np.testing.assert_array_equal(actual, expected)
    else:
        np.testing.assert_array_equal(actual[defined], expected[defined])


def integer_valued(rng, n, dtype):
    return (rng.permutation(n) * 3 - 40).astype(dtype)


# --------------------------------------------------------------------------------------
# Kernels


@cuda.jit(device=True)
def linear_tid():
    return cuda.threadIdx.x + cuda.blockDim.x * (
        cuda.threadIdx.y + cuda.blockDim.y * cuda.threadIdx.z
    )


@cuda.jit
def shuffles_kernel(x, src, delta, lane_mask, out_idx, out_up, out_down, out_xor):
    tid = linear_tid()
    v = x[tid]
    out_idx[tid] = cuda.shfl_sync(FULL, v, src[tid])
    out_up[tid] = cuda.shfl_up_sync(FULL, v, delta[tid])
    out_down[tid] = cuda.shfl_down_sync(FULL, v, delta[tid])
    out_xor[tid] = cuda.shfl_xor_sync(FULL, v, lane_mask[tid])


@cuda.jit
def shuffle_table_kernel(x, offsets, sources, out_up, out_down, out_xor, out_idx):
    tid = linear_tid()
    v = x[tid]
    for k in range(offsets.size):
        out_up[k, tid] = cuda.shfl_up_sync(FULL, v, offsets[k])
        out_down[k, tid] = cuda.shfl_down_sync(FULL, v, offsets[k])
        out_xor[k, tid] = cuda.shfl_xor_sync(FULL, v, offsets[k])
    for k in range(sources.size):
        out_idx[k, tid] = cuda.shfl_sync(FULL, v, sources[k])


@cuda.jit
def reduce_and_scan_kernel(x, out_total, out_scan):
    tid = linear_tid()
    lane = tid % WARP
    total = x[tid]
    offset = 16
    while offset > 0:
        total += cuda.shfl_xor_sync(FULL, total, offset)
        offset //= 2
    out_total[tid] = cuda.shfl_sync(FULL, total, 0)
    scan = x[tid]
    delta = 1
    while delta < WARP:
        below = cuda.shfl_up_sync(FULL, scan, delta)
        if lane >= delta:
            scan += below
        delta *= 2
    out_scan[tid] = scan


@cuda.jit
def even_lanes_kernel(x, pred, out_idx, out_xor, out_ballot, out_all, out_any):
    tid = linear_tid()
    lane = tid % WARP
    if lane % 2 == 0:
        v = x[tid]
        out_idx[tid] = cuda.shfl_sync(EVEN_LANES, v, (lane + 2) % WARP)
        out_xor[tid] = cuda.shfl_xor_sync(EVEN_LANES, v, 6)
        out_ballot[tid] = cuda.ballot_sync(EVEN_LANES, pred[tid])
        out_all[tid] = cuda.all_sync(EVEN_LANES, pred[tid])
        out_any[tid] = cuda.any_sync(EVEN_LANES, pred[tid])


@cuda.jit
def half_warps_kernel(x, pred, out_xor, out_idx, out_ballot, out_any):
    tid = linear_tid()
    lane = tid % WARP
    v = x[tid]
    if lane < 16:
        out_xor[tid] = cuda.shfl_xor_sync(LOW_HALF, v, 1)
        out_idx[tid] = cuda.shfl_sync(LOW_HALF, v, 15 - lane)
        out_ballot[tid] = cuda.ballot_sync(LOW_HALF, pred[tid])
        out_any[tid] = cuda.any_sync(LOW_HALF, pred[tid])
    else:
        out_xor[tid] = cuda.shfl_xor_sync(HIGH_HALF, v, 3)
        out_idx[tid] = cuda.shfl_sync(HIGH_HALF, v, 47 - lane)
        out_ballot[tid] = cuda.ballot_sync(HIGH_HALF, pred[tid])
        out_any[tid] = cuda.any_sync(HIGH_HALF, pred[tid])


@cuda.jit
def votes_kernel(pred, out_ballot, out_all, out_any, out_eq):
    tid = linear_tid()
    p = pred[tid]
    out_ballot[tid] = cuda.ballot_sync(FULL, p)
    out_all[tid] = cuda.all_sync(FULL, p)
    out_any[tid] = cuda.any_sync(FULL, p)
    out_eq[tid] = cuda.eq_sync(FULL, p)


@cuda.jit
def match_kernel(x, out_any, out_all_mask, out_all_pred):
    tid = linear_tid()
    v = x[tid]
    out_any[tid] = cuda.match_any_sync(FULL, v)
    mask, pred = cuda.match_all_sync(FULL, v)
    out_all_mask[tid] = mask
    out_all_pred[tid] = pred


@cuda.jit
def lane_masks_kernel(out_lt, out_active):
    tid = linear_tid()
    out_lt[tid] = cuda.lanemask_lt()
    cuda.syncwarp()
    active = cuda.activemask()
    # No lane may exit before all have asked: on the simulator exited lanes are inactive.
    cuda.syncwarp()
    out_active[tid] = active


@cuda.jit
def syncwarp_kernel(x, out_pair, out_rotated, out_half):
    tid = linear_tid()
    lane = tid % WARP
    first = tid - lane
    warp_len = min(WARP, cuda.blockDim.x * cuda.blockDim.y * cuda.blockDim.z - first)
    shared = cuda.shared.array(SHARED_SLOTS, np.int64)
    shared[tid] = x[tid]
    cuda.syncwarp()
    out_pair[tid] = shared[tid ^ 1]
    cuda.syncwarp()
    shared[tid] = 2 * x[tid]
    cuda.syncwarp(FULL)
    out_rotated[tid] = shared[first + (lane + 1) % warp_len]
    cuda.syncwarp()
    if lane < 16:
        shared[tid] = 3 * x[tid]
        cuda.syncwarp(LOW_HALF)
        out_half[tid] = shared[first + 15 - lane]
    else:
        shared[tid] = 5 * x[tid]
        cuda.syncwarp(HIGH_HALF)
        out_half[tid] = shared[first + 47 - lane]


@cuda.jit
def early_exit_kernel(x, pred, out_xor, out_ballot, out_all, out_active):
    tid = linear_tid()
    lane = tid % WARP
    if lane >= 16:
        return
    out_xor[tid] = cuda.shfl_xor_sync(FULL, x[tid], 1)
    out_ballot[tid] = cuda.ballot_sync(FULL, pred[tid])
    out_all[tid] = cuda.all_sync(FULL, pred[tid])
    # Lanes 16-31 have exited by now: the full-mask collectives above waited for them.
    out_active[tid] = cuda.activemask()
    cuda.syncwarp()


# --------------------------------------------------------------------------------------
# Tests that hold on a GPU and on the simulator

BLOCK_SHAPES = [(32,), (40,), (8,), (16, 4), (8, 2, 3)]


@pytest.mark.parametrize("dtype", SHUFFLE_DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("block", BLOCK_SHAPES, ids=str)
def test_shuffles_with_per_lane_operands(block, dtype):
    n = int(np.prod(block))
    rng = np.random.default_rng(n)
    _, _, warp_len = warp_layout(n)
    x = integer_valued(rng, n, dtype)
    # Sources mostly exist, including in partial warps; values >= 32 wrap modulo 32.
    src = (rng.integers(0, warp_len) + WARP * rng.integers(0, 2, n)).astype(np.int32)
    delta = rng.integers(0, WARP, n).astype(np.int32)
    lane_mask = rng.integers(0, WARP, n).astype(np.int32)
    outs = [np.zeros_like(x) for _ in range(4)]

    shuffles_kernel[1, block](x, src, delta, lane_mask, *outs)

    for out, kind, b in zip(outs, ("idx", "up", "down", "xor"), (src, delta, delta, lane_mask)):
        expected, defined = ref_shfl(x, kind, b)
        assert_defined_equal(out, expected, defined)


@pytest.mark.parametrize("n", [32, 40])
def test_shuffle_edges_and_consecutive_calls(n):
    # Offsets outside [0, 32) are defined by PTX, which uses only their low 5 bits (as
    # an H200 does); the CUDA C++ guide leaves them out.
    offsets = np.array([0, 1, 2, 15, 16, 31, 32, 33, 35, -1, 65], dtype=np.int32)
    sources = np.array([0, 7, 31, 32, 63, -1], dtype=np.int32)
    x = np.arange(100, 100 + n, dtype=np.int64)
    out_up, out_down, out_xor = (np.zeros((offsets.size, n), np.int64) for _ in range(3))
    out_idx = np.zeros((sources.size, n), np.int64)

    shuffle_table_kernel[1, n](x, offsets, sources, out_up, out_down, out_xor, out_idx)

    for outs, operands, modes in (
        ((out_up, out_down, out_xor), offsets, (1, 2, 3)),
        ((out_idx,), sources, (0,)),
    ):
        for out, mode in zip(outs, modes):
            kind = ("idx", "up", "down", "xor")[mode]
            for k, b in enumerate(operands):
                expected, defined = ref_ptx_shfl(x, mode, b, width_operand(mode, WARP))
                assert_defined_equal(out[k], expected, defined)
                if 0 <= b < WARP or kind == "idx" and b >= 0:
                    np.testing.assert_array_equal(expected, ref_shfl(x, kind, b)[0])


@pytest.mark.parametrize("dtype", [np.int64, np.float64], ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("n", [64, 40])
def test_warp_reduction_and_scan(n, dtype):
    rng = np.random.default_rng(7)
    x = rng.integers(-50, 50, n).astype(dtype)
    out_total = np.zeros_like(x)
    out_scan = np.zeros_like(x)

    reduce_and_scan_kernel[1, n](x, out_total, out_scan)

    lane, base, warp_len = warp_layout(n)
    full_warp = warp_len == WARP
    expected_total = np.array([x[b : b + WARP].sum() for b in base], dtype=dtype)
    # Butterflies in a partial warp read absent lanes: undefined, so not compared.
    np.testing.assert_array_equal(out_total[full_warp], expected_total[full_warp])
    expected_scan = np.array([x[b : b + l + 1].sum() for b, l in zip(base, lane)], dtype=dtype)
    np.testing.assert_array_equal(out_scan, expected_scan)


def test_even_lanes_with_their_own_mask():
    n = 64
    rng = np.random.default_rng(3)
    x = integer_valued(rng, n, np.int32)
    lane, base, _ = warp_layout(n)
    even = lane % 2 == 0
    # Warp 0: every even lane's predicate true; warp 1: mixed.
    pred = rng.integers(0, 2, n).astype(np.int32)
    pred[(base == 0) & even] = 1
    pred[[WARP, WARP + 2]] = [0, 1]
    sentinel = -99
    out_idx, out_xor = np.full(n, sentinel, np.int32), np.full(n, sentinel, np.int32)
    out_ballot = np.zeros(n, np.uint32)
    out_all, out_any = np.full(n, sentinel, np.int32), np.full(n, sentinel, np.int32)

    even_lanes_kernel[1, n](x, pred, out_idx, out_xor, out_ballot, out_all, out_any)

    expected_idx, _ = ref_shfl(x, "idx", (lane + 2) % WARP)
    expected_xor, _ = ref_shfl(x, "xor", 6)
    ballot = ref_ballot(pred != 0, even)
    even_bits = ref_ballot(even, even)
    np.testing.assert_array_equal(out_idx[even], expected_idx[even])
    np.testing.assert_array_equal(out_xor[even], expected_xor[even])
    np.testing.assert_array_equal(out_ballot[even], ballot[even])
    np.testing.assert_array_equal(out_all[even], (ballot == even_bits)[even])
    np.testing.assert_array_equal(out_any[even], (ballot != 0)[even])
    assert np.all(out_idx[~even] == sentinel) and np.all(out_all[~even] == sentinel)
    assert out_all[0] == 1 and out_all[WARP] == 0 and out_any[WARP] == 1


def test_half_warps_with_their_own_masks():
    n = 64
    rng = np.random.default_rng(4)
    x = integer_valued(rng, n, np.float32)
    lane, base, _ = warp_layout(n)
    low = lane < 16
    pred = rng.integers(0, 2, n).astype(np.int32)
    pred[(base == 0) & ~low] = 0  # warp 0's upper half: any_sync is false
    out_xor, out_idx = np.zeros_like(x), np.zeros_like(x)
    out_ballot, out_any = np.zeros(n, np.uint32), np.full(n, -1, np.int32)

    half_warps_kernel[1, n](x, pred, out_xor, out_idx, out_ballot, out_any)

    np.testing.assert_array_equal(out_xor, ref_shfl(x, "xor", np.where(low, 1, 3))[0])
    mirrored = np.where(low, 15 - lane, 47 - lane)
    np.testing.assert_array_equal(out_idx, ref_shfl(x, "idx", mirrored)[0])
    ballot = np.where(low, ref_ballot(pred != 0, low), ref_ballot(pred != 0, ~low))
    np.testing.assert_array_equal(out_ballot, ballot)
    np.testing.assert_array_equal(out_any, ballot != 0)
    assert not out_any[16:32].any()


@pytest.mark.parametrize("block", [(128,), (40,), (8,), (16, 4)], ids=str)
def test_votes_with_mixed_predicates(block):
    n = int(np.prod(block))
    rng = np.random.default_rng(n + 1)
    lane, base, warp_len = warp_layout(n)
    # Per warp in turn: all true, all false, mixed, a single true lane. Any non-zero
    # value is true.
    nonzero = rng.choice(np.array([1, 2, -7, 100], np.int32), n)
    pattern = (base // WARP) % 4
    mixed = rng.integers(0, 2, n).astype(bool)
    single = lane == (warp_len - 1) // 2
    truth = np.select(
        [pattern == 0, pattern == 1, pattern == 2],
        [np.ones(n, bool), np.zeros(n, bool), mixed],
        single,
    )
    pred = np.where(truth, nonzero, 0).astype(np.int32)
    out_ballot = np.zeros(n, np.uint32)
    out_all, out_any, out_eq = (np.full(n, -1, np.int32) for _ in range(3))

    votes_kernel[1, block](pred, out_ballot, out_all, out_any, out_eq)

    everyone = np.ones(n, bool)
    ballot = ref_ballot(truth, everyone)
    lanes = existing_lanes(n)
    np.testing.assert_array_equal(out_ballot, ballot)
    np.testing.assert_array_equal(out_all, ballot == lanes)
    np.testing.assert_array_equal(out_any, ballot != 0)
    np.testing.assert_array_equal(out_eq, (ballot == lanes) | (ballot == 0))


@pytest.mark.parametrize("dtype", SHUFFLE_DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("n", [96, 40])
def test_match_any_and_match_all(n, dtype):
    lane, base, _ = warp_layout(n)
    # Warp 0: groups of equal values; warp 1: all equal; warp 2: all equal but one.
    values = np.where(base == 0, (lane // 4) * 3 - 5, 11)
    values[(base == 2 * WARP) & (lane == 9)] = 12
    x = values.astype(dtype)
    out_any, out_all_mask = np.zeros(n, np.uint32), np.zeros(n, np.uint32)
    out_all_pred = np.full(n, -1, np.int32)

    match_kernel[1, n](x, out_any, out_all_mask, out_all_pred)

    same = ref_match_any(values)
    all_same = same == existing_lanes(n)
    np.testing.assert_array_equal(out_any, same)
    np.testing.assert_array_equal(out_all_pred, all_same)
    np.testing.assert_array_equal(out_all_mask, np.where(all_same, existing_lanes(n), 0))


@pytest.mark.parametrize("block", [(64,), (40,), (8,), (16, 4)], ids=str)
def test_lanemask_lt_and_activemask_in_converged_code(block):
    n = int(np.prod(block))
    out_lt, out_active = np.zeros(n, np.uint32), np.zeros(n, np.uint32)

    lane_masks_kernel[1, block](out_lt, out_active)

    lane, _, _ = warp_layout(n)
    np.testing.assert_array_equal(out_lt, (1 << lane) - 1)
    np.testing.assert_array_equal(out_active, existing_lanes(n))


@pytest.mark.parametrize("n", [64, 40])
def test_syncwarp_orders_shared_memory(n):
    x = np.arange(1000, 1000 + n, dtype=np.int64)
    out_pair, out_rotated, out_half = (np.zeros(n, np.int64) for _ in range(3))

    syncwarp_kernel[1, n](x, out_pair, out_rotated, out_half)

    lane, base, warp_len = warp_layout(n)
    tid = np.arange(n)
    np.testing.assert_array_equal(out_pair, x[tid ^ 1])
    np.testing.assert_array_equal(out_rotated, 2 * x[base + (lane + 1) % warp_len])
    mirrored = np.where(lane < 16, base + 15 - lane, base + 47 - lane)
    defined = mirrored < base + warp_len
    expected_half = np.where(lane < 16, 3, 5) * x[np.where(defined, mirrored, tid)]
    np.testing.assert_array_equal(out_half[defined], expected_half[defined])


@cuda.jit
def sleep_then_publish_kernel(flag, out):
    # (a wait on another warp's write with sleeps between polls: the look-back's pattern)
    if cuda.threadIdx.x == 32:
        cuda.atomic.exch(flag, 0, 7)
    if cuda.threadIdx.x == 0:
        while cuda.atomic.add(flag, 0, 0) == 0:
            cuda.nanosleep(np.uint32(100))
        out[0] = flag[0]


def test_nanosleep_between_polls():
    flag, out = np.zeros(1, np.int32), np.zeros(1, np.int32)
    sleep_then_publish_kernel[1, 64](flag, out)
    assert out[0] == 7


def test_exited_lanes_are_not_waited_for():
    n = 64
    rng = np.random.default_rng(5)
    x = integer_valued(rng, n, np.int64)
    lane, base, _ = warp_layout(n)
    stay = lane < 16
    pred = np.where(base == 0, 1, rng.integers(0, 2, n)).astype(np.int32)
    out_xor = np.zeros(n, np.int64)
    out_ballot = np.zeros(n, np.uint32)
    out_all = np.full(n, -1, np.int32)
    out_active = np.zeros(n, np.uint32)

    early_exit_kernel[1, n](x, pred, out_xor, out_ballot, out_all, out_active)

    ballot = ref_ballot(pred != 0, stay)
    np.testing.assert_array_equal(out_xor[stay], ref_shfl(x, "xor", 1)[0][stay])
    np.testing.assert_array_equal(out_ballot[stay], ballot[stay])
    np.testing.assert_array_equal(out_all[stay], (ballot == LOW_HALF)[stay])
    np.testing.assert_array_equal(out_active[stay], LOW_HALF)
    assert np.all(out_all[~stay] == -1)


# --------------------------------------------------------------------------------------
# The PTX shuffle that coop's own code calls on the simulator

WIDTHS = [1, 2, 4, 8, 16, 32]


def width_operand(mode, width):
    """``c`` of CUDA's ``__shfl_*_sync(..., width)``: segment mask, plus clamp 31 except for up."""
    return ((WARP - width) << 8) | (0 if mode == 1 else 0x1F)


def test_width_operands_give_cuda_width_semantics():
    """The PTX reference with CUDA's ``c`` per width agrees with the CUDA C++ definitions."""
    x = np.arange(WARP) * 10
    lane = np.arange(WARP)
    for mode, kind in enumerate(("idx", "up", "down", "xor")):
        for width in WIDTHS:
            for b in (0, 1, 3, width - 1, width, 17, 31, lane % width, lane):
                if kind == "idx" or np.all(np.asarray(b) < WARP):
                    actual, _ = ref_ptx_shfl(x, mode, b, width_operand(mode, width))
                    expected, _ = ref_shfl(x, kind, b, width)
                    message = f"{kind} width={width} b={b}"
                    np.testing.assert_array_equal(actual, expected, err_msg=message)


@simulator_only
def test_ptx_shfl_with_sub_warp_widths():
    from coop._core import simulator

    @cuda.jit
    def ptx_shuffle_kernel(x, modes, b, c, out):
        tid = cuda.threadIdx.x
        for k in range(modes.size):
            out[k, tid] = simulator.shfl(FULL, modes[k], x[tid], b[k, tid], c[k])

    n = 48  # the second warp is partial: lanes 16-31 absent
    configs = [(mode, width_operand(mode, width)) for mode in range(4) for width in WIDTHS]
    configs += [(mode, c) for mode in range(4) for c in (0x0805, 0x1803, 0x0010)]
    modes = np.array([mode for mode, _ in configs])
    c = np.array([c for _, c in configs])
    rng = np.random.default_rng(11)
    b = rng.integers(0, 40, (len(configs), n))  # b >= 32: only its low 5 bits count
    x = np.arange(n, dtype=np.int64) * 7 + 1
    out = np.zeros((len(configs), n), np.int64)

    ptx_shuffle_kernel[1, n](x, modes, b, c, out)

    for k, (mode, c_value) in enumerate(configs):
        expected, _ = ref_ptx_shfl(x, mode, b[k], c_value)
        np.testing.assert_array_equal(out[k], expected, err_msg=f"mode={mode} c={c_value:#06x}")


@simulator_only
def test_any_python_object_passes_through_unchanged():
    @cuda.jit
    def object_shuffle_kernel(objects, src, out):
        tid = cuda.threadIdx.x
        out[tid] = cuda.shfl_sync(FULL, objects[tid], src[tid])

    n = 32
    objects = [(i, "t%d" % i) if i % 4 == 0 else complex(i, -i) if i % 4 == 1 else
               np.float16(i) if i % 4 == 2 else bool(i % 8 == 3) for i in range(n)]
    src = np.arange(n)[::-1].copy()
    out = [None] * n

    object_shuffle_kernel[1, n](objects, src, out)

    assert all(out[i] is objects[src[i]] for i in range(n))


@simulator_only
def test_reading_a_lane_outside_the_mask_gives_own_value():
    @cuda.jit
    def outside_mask_kernel(x, out):
        tid = cuda.threadIdx.x
        if tid % 2 == 0:
            out[tid] = cuda.shfl_sync(EVEN_LANES, x[tid], tid + 1)

    n = 32
    x = np.arange(n, dtype=np.int32) + 50
    out = np.zeros(n, np.int32)
    outside_mask_kernel[1, n](x, out)
    np.testing.assert_array_equal(out[::2], x[::2])


@simulator_only
def test_mask_without_the_calling_lane_raises():
    @cuda.jit
    def bad_mask_kernel(x, out):
        tid = cuda.threadIdx.x
        out[tid] = cuda.shfl_sync(0x1, x[tid], 0)

    x = np.arange(32, dtype=np.int32)
    with pytest.raises(ValueError, match=r"not in mask 0x00000001"):
        bad_mask_kernel[1, 32](x, np.zeros_like(x))


@simulator_only
def test_deadlock_is_reported_at_once():
    from coop._core.simulator import WarpSyncError

    @cuda.jit
    def deadlock_kernel(x, out):
        tid = cuda.threadIdx.x
        if tid < 16:
            out[tid] = cuda.shfl_sync(FULL, x[tid], 0)
        else:
            # Names lane 0, which waits at the full-mask shuffle instead.
            out[tid] = cuda.shfl_sync(0xFFFF0001, x[tid], 0)

    x = np.arange(32, dtype=np.int32)
    start = time.monotonic()
    with pytest.raises(WarpSyncError, match=r"deadlock.*0xffff0001.*never arrive"):
        deadlock_kernel[1, 32](x, np.zeros_like(x))
    assert time.monotonic() - start < 10


@simulator_only
def test_mismatched_intrinsics_raise():
    from coop._core.simulator import WarpSyncError

    @cuda.jit
    def mismatch_kernel(x, out):
        tid = cuda.threadIdx.x
        if tid < 16:
            out[tid] = cuda.shfl_sync(FULL, x[tid], 0)
        else:
            out[tid] = cuda.ballot_sync(FULL, x[tid])

    x = np.arange(32, dtype=np.int32)
    with pytest.raises(WarpSyncError, match=r"same call"):
        mismatch_kernel[1, 32](x, np.zeros_like(x))


@simulator_only
def test_lane_waiting_in_syncthreads_is_reported_at_once():
    from coop._core import simulator

    @cuda.jit
    def stuck_kernel(x, out):
        tid = cuda.threadIdx.x
        if tid == 31:
            cuda.syncthreads()  # never completes: the other lanes wait in the shuffle
        else:
            out[tid] = cuda.shfl_down_sync(FULL, x[tid], 1)

    x = np.arange(32, dtype=np.int32)
    start = time.monotonic()
    where = r"threads 0-30: waiting in shfl_down_sync\(mask=0xffffffff\) at test_warp_intrinsics.py:\d+ in stuck_kernel; thread 31: waiting in cuda.syncthreads\(\)"
    with pytest.raises(simulator.CollectiveError, match=where):
        stuck_kernel[1, 32](x, np.zeros_like(x))
    assert time.monotonic() - start < 10


@simulator_only
def test_wait_times_out_naming_missing_lanes(monkeypatch):
    """A lane that is neither waiting nor done (here: sleeping) is waited for until
    DEADLOCK_TIMEOUT_S, then the wait fails naming where every thread is."""
    from coop._core import simulator

    monkeypatch.setattr(simulator, "DEADLOCK_TIMEOUT_S", 0.5)

    @cuda.jit
    def slow_kernel(x, out):
        tid = cuda.threadIdx.x
        if tid == 31:
            time.sleep(2)
        out[tid] = cuda.shfl_down_sync(FULL, x[tid], 1)

    x = np.arange(32, dtype=np.int32)
    missing_lane_31 = r"shfl_down_sync.*waited 0.5 s.*thread 31: running"
    with pytest.raises(simulator.WarpSyncError, match=missing_lane_31):
        slow_kernel[1, 32](x, np.zeros_like(x))


@simulator_only
def test_exception_in_one_lane_is_reported_not_hung():
    @cuda.jit
    def failing_kernel(x, out):
        tid = cuda.threadIdx.x
        v = x[tid]
        if tid == 5:
            v = x[tid + 1000]
        out[tid] = cuda.shfl_xor_sync(FULL, v, 1)

    x = np.arange(32, dtype=np.int32)
    start = time.monotonic()
    with pytest.raises(IndexError):
        failing_kernel[1, 32](x, np.zeros_like(x))
    assert time.monotonic() - start < 10


@simulator_only
def test_install_is_idempotent_and_kernel_module_is_visible():
    from numba.cuda.simulator.kernel import BlockManager
    from numba.cuda.simulator.kernelapi import FakeCUDAModule, FakeCUDAShared

    from coop._core.compilers import numba_cuda_simulator

    numba_cuda_simulator.install()
    shared_array = FakeCUDAShared.array
    numba_cuda_simulator.install()
    assert BlockManager.run is numba_cuda_simulator._run_block and FakeCUDAShared.array is shared_array
    assert numba_cuda_simulator.running_kernel_module() is None

    seen = []

    @cuda.jit
    def record_module_kernel():
        seen.append(numba_cuda_simulator.running_kernel_module())

    record_module_kernel[1, 2]()
    assert len(seen) == 2 and isinstance(seen[0], FakeCUDAModule) and seen[0] is seen[1]


@simulator_only
def test_each_block_starts_on_fresh_threads():
    """The simulator keeps its threads from block to block: nothing a thread left (an
    attribute, the abort of a failed launch, a SystemExit) reaches the next block, and
    every thread has its own threadIdx, blockIdx and lane."""

    @cuda.jit
    def mark_kernel(out, fail):
        thread = threading.current_thread()
        i = cuda.grid(1)
        out[i, 0] = getattr(thread, "left_by_a_block", -1)
        thread.left_by_a_block = i
        out[i, 1] = cuda.threadIdx.x + 1000 * cuda.blockIdx.x
        out[i, 2] = cuda.laneid
        cuda.syncthreads()
        if fail == 1 and i == 3:
            raise ValueError("thread 3 fails")
        if fail == 2 and i == 70:
            raise SystemExit("thread 70 leaves")
        cuda.syncthreads()

    for fail in (1, 0, 2, 0):
        out = np.zeros((3 * 64, 3), dtype=np.int64)
        if fail:
            with pytest.raises((ValueError, SystemExit), match="thread 3 fails" if fail == 1 else "thread 70 leaves"):
                mark_kernel[3, 64](out, fail)
            continue
        mark_kernel[3, 64](out, 0)
        i = np.arange(3 * 64)
        np.testing.assert_array_equal(out[:, 0], -1)
        np.testing.assert_array_equal(out[:, 1], i % 64 + 1000 * (i // 64))
        np.testing.assert_array_equal(out[:, 2], i % 32)


@simulator_only
@pytest.mark.skipif(not hasattr(os, "fork"), reason="os.fork: POSIX only")
def test_a_forked_child_runs_kernels():
    """The threads the simulator keeps between blocks are the parent's: a child forked
    after a launch (multiprocessing's fork start method) starts threads of its own rather
    than waiting for them forever."""

    @cuda.jit
    def doubled_kernel(out):
        out[cuda.threadIdx.x] = 2 * cuda.threadIdx.x

    out = np.zeros(64, np.int64)
    doubled_kernel[1, 64](out)  # (the parent now keeps 64 idle threads)
    read, write = os.pipe()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # (Python 3.12+: a fork of a process with threads)
        pid = os.fork()
    if pid == 0:  # the child: its result through the pipe, or exit 3 if the launch hangs
        try:
            threading.Timer(30, lambda: os._exit(3)).start()
            child_out = np.zeros(64, np.int64)
            doubled_kernel[1, 64](child_out)
            os.write(write, str(int(child_out.sum())).encode())
        finally:
            os._exit(0)
    os.close(write)
    _, status = os.waitpid(pid, 0)
    result = os.read(read, 64).decode()
    os.close(read)
    assert os.waitstatus_to_exitcode(status) == 0 and result == str(2 * sum(range(64))), (status, result)
