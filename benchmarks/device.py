"""coop.device's algorithms against CUB's device layer and CuPy, side by side on one GPU.

    python benchmarks/device.py [--log2n 16,20,24,28] [--algorithms reduce_sum,select_if,...]
                                [--out DIR] [--cub-binary PATH] [--sim-check]

Algorithms (named as benchmarks/cub_device.cu names them, so that the rows pair up):

- reduce_sum: ``coop.device.sum`` / ``cub::DeviceReduce::Sum`` / ``cupy.sum``, int32 and float32.
- inclusive_sum: ``coop.device.inclusive_sum`` / ``cub::DeviceScan::InclusiveSum`` / ``cupy.cumsum``,
  int32 and float32.
- exclusive_sum: ``coop.device.exclusive_sum`` / ``cub::DeviceScan::ExclusiveSum``, int32 (CuPy has none).
- select_flagged: ``coop.device.select_flagged`` / ``cub::DeviceSelect::Flagged`` / CuPy's boolean
  indexing ``x[flags]``, int32 items, one-byte flags set on every other item from the first
  (the CUB side's ``char`` flags; coop takes them as int8, CuPy as a bool view of the same bytes).
- select_if: ``coop.device.select`` / ``cub::DeviceSelect::If``, int32, predicate ``x % 2 == 0``
  (the CUB side's IsEven; coop's is a Python function, compiled once); no CuPy.
- histogram_even: ``coop.device.histogram_even`` / ``cub::DeviceHistogram::HistogramEven`` /
  ``cupy.histogram(x, bins=256, range=(0, 1))``, float32 samples, 256 bins over [0, 1), int32
  counters (CuPy's: int64, a new array each call). CuPy counts as NumPy does, its last bin
  closed (a sample equal to 1.0 counts in bin 255), where CUB and coop leave out a sample
  equal to the upper bound; no sample here is 1.0, so the counts are the same, and CuPy's
  are checked exactly too. CuPy's call also makes its bin edges (a linspace) and zeroes a
  new histogram each time.
- segmented_reduce_sum: ``coop.device.segmented_reduce(x, out, offsets, coop.ops.add, 0)`` /
  ``cub::DeviceSegmentedReduce::Sum``, int32, n / 1024 segments of 1024 items (offsets
  0, 1024, 2048, ..., int32); no CuPy.
- segmented_reduce_sum_power: the same in segmented_sort_keys_power's segments of power-law
  sizes (``power_law_offsets``, below).
- radix_sort_keys, radix_sort_pairs: ``coop.device.radix_sort`` / ``cub::DeviceRadixSort::SortKeys``,
  ``SortPairs`` / ``cupy.sort`` (keys only), uint32 keys, all 32 bits; the pairs' values are
  the keys' positions 0, 1, ..., n - 1 (uint32). Skipped on coop's side where coop.device has no
  ``radix_sort`` yet. CUB's sorts here out of place (keys_in -> keys_out, its input never
  written), and so does coop's with ``d_keys_out=`` (impl "coop_out":
  the input sorted into the work buffer below, no copy; the table's line "out of place").
  coop's main rows sort in place. So that each of those timed calls sorts the same input, its
  call is a device-to-device copy of the input (kept untouched on the device) into a work
  buffer (keys, and the positions too for the pairs: ``work.copy_to_device(input)``,
  cuMemcpyDtoD on the legacy default stream, which does not wait on the host) followed by the
  sort of the work buffer; the "coop" rows time both. The copy alone is timed the same way in
  rows of impl "copy", algorithm "radix_sort_keys_copy" / "radix_sort_pairs_copy" (checked:
  the work buffer equals the input), and the table adds a line per size with coop's sort
  time taken as the difference of the two medians (an estimate: the two are timed
  separately). ``cupy.sort(x)`` copies ``x`` into a new array and sorts that, so CuPy's row
  includes a copy (and an allocation from its pool) as coop's does. CuPy's pairs are not
  timed: ``cupy.argsort`` plus gathering keys is not the same algorithm.
- merge_sort_keys, merge_sort_pairs: ``coop.device.merge_sort(x, d_keys_out=out)`` (by its default
  ``a < b``) / ``cub::DeviceMergeSort::SortKeysCopy``, ``SortPairsCopy`` (a functor ``a < b``) /
  ``cupy.sort`` (keys only: a radix sort, for scale), the radix sorts' uint32 keys, out of place on
  both sides (no copy); the pairs' values the positions, checked to be the stable order.
- segmented_sort_keys: ``coop.device.segmented_sort(x, offsets, d_keys_out=out)`` /
  ``cub::DeviceSegmentedSort::StableSortKeys``, the uint32 keys in segments of 64 to 4096
  keys (``sort_offsets``: segment j holds 64 + ((j * 2654435761 mod 2^32) >> 8) mod 4033
  keys, the last cut at n; int32 offsets), out of place on both sides; no CuPy.
- segmented_sort_keys_power: the same in segments of power-law sizes (``power_law_offsets``:
  segment j holds 65536 // (r + 1) keys, r = ((j + 1) * 2654435761 mod 2^32) >> 16, so 1 to
  65,536 keys, about 1/s of the segments at least s long: half of them of one or two keys,
  one in 4,096 longer than 4,096).
- top_k_keys: ``coop.device.top_k(x, out, 1024)`` / ``cub::DeviceTopK::MaxKeys`` (unordered, not
  deterministic: the only requirements CUB implements) / ``torch.topk(x, 1024, sorted=False,
  out=...)``, the 1,024 largest float32 items (multiples of 2^-24 in [0, 1): at 2^28 each
  value is drawn about 16 times, so there are ties at the k-th). CUB's DeviceTopK is in CCCL
  3.3 on: CUDA 13.0's headers (3.0) lack it, so these rows need ``CCCL_INCLUDE`` naming newer
  ones (pip's nvidia-cuda-cccl wheel's ``nvidia/cu13/include/cccl``), else they are left out.
  PyTorch's call also writes the int64 indices (it has no keys-only form). PyTorch is
  optional (skipped if it does not import).
- top_k_keys_many: the same with k = n / 256.
- subtract_left: ``coop.device.subtract_left(x, out)`` / ``cub::DeviceAdjacentDifference::SubtractLeftCopy``,
  int32; no CuPy.
- unique: ``coop.device.unique(runs, out, d_num_selected_out=count)`` / ``cub::DeviceSelect::Unique``, int32
  items ``runs[i] = i >> 4`` (runs of 16: ``runs_input``, the same on the CUB side), out of place; no CuPy.
- run_length_encode: ``coop.device.run_length_encode(runs, values, lengths, d_num_runs_out=count)`` /
  ``cub::DeviceRunLengthEncode::Encode``, the same items, int32 lengths.
- lower_bound: ``coop.device.lower_bound(sorted_keys, keys, positions)`` / ``cub::DeviceFind::LowerBound``
  (CCCL 3.1 on: with CUDA 13.0's headers the CUB rows are left out), the uint32 keys searched in
  their sorted copy, int64 positions; CuPy's ``cupy.searchsorted(sorted_keys, keys)``.
- unique_by_key: ``coop.device.unique_by_key(runs, values, keys_out, values_out, d_num_selected_out=count)``
  / ``cub::DeviceSelect::UniqueByKey``, unique's items as keys, int32 values ``i``.
- three_way_partition: ``coop.device.three_way_partition(x, first, second, unselected, v < 2, v < 6,
  d_num_selected_out=counts)`` / ``cub::DevicePartition::If`` (three-way), the int32 items (in [0, 8):
  a quarter, a half, a quarter).
- non_trivial_runs: ``coop.device.non_trivial_runs(runs, offsets, lengths, d_num_runs_out=count)`` /
  ``cub::DeviceRunLengthEncode::NonTrivialRuns``, unique's items (every run of 16 counts), int32 outputs.
- inclusive_sum_by_key: ``coop.device.inclusive_sum_by_key(runs, x, out)`` /
  ``cub::DeviceScan::InclusiveSumByKey``, unique's items as keys (runs of 16), the int32 items as values.
- top_k_pairs: ``coop.device.top_k(x, out, 1024, positions, values_out)`` /
  ``cub::DeviceTopK::MaxPairs``, the values uint32 positions 0, 1, ..., n - 1; PyTorch's row is
  the keys' row's call (its indices are the positions).

Each on n = 2^LOG2N items. The inputs are the CUB side's, bit for bit: its splitmix64 stream
(benchmarks/cub_timing.cuh's ``Rng``, seed 7; cub_device.cu draws three numbers an item, its
int32, its float32 and its uint32 key in that order, one stream through the sizes in their
order, every size drawing all three whatever the algorithms run) is replayed here with
NumPy: int32 items in [0, 8) (the draw modulo 8), float32 multiples of 2^-24 in [0, 1) (its
top 24 bits times 2^-24), uint32 keys (its top 32 bits). The flags, offsets and positions
are not drawn. Each input is copied to the device once and shared with CuPy without a copy
(CUDA Array Interface). CuPy is optional (skipped if it does not import).

Timing, alike for every implementation (benchmarks/cub_timing.cuh's, through
radix_sort.median_launch_seconds): median of 20 back-to-back calls after 3 warm-ups, CUDA
events recorded on the default stream between them (Numba's events: coop's and CuPy's
calls go to that legacy default stream too, in the same context). A coop or CuPy call is
timed whole, host work included, as a CUB call is (its temporary storage allocated once,
outside the loop). coop's select_flagged and select are timed two ways: impl "coop" writes
the number selected to device memory (``d_num_selected_out=``) and returns at once, as CUB's
does; impl "coop_count" returns the number, so each call waits for the GPU to read it (a
synchronisation, and the next call's launch after it, are part of its time; the table's
line "returning the count"). CuPy's ``x[flags]`` waits too (it sizes its output, a new
array, from the count). reduce_sum, the scans, select_flagged, histogram_even and
segmented_reduce_sum are also timed with ``temp_storage=`` (impl "coop_temp": CUB's
two-phase pattern, the buffer sized with ``coop.device.temp_storage_bytes`` and allocated
once, outside the loop; the table's line "with temp_storage="). Also measured: coop's
``first_call_s``, the wall-clock of the first call at each size up to its result (the first
size's compiles coop's kernels for the dtype; the CUDA context and Numba's setup come
before, untimed); and for n <= 2^20, coop's, CUB's and CuPy's ``host_us_per_call``:
wall-clock per call of 200 back-to-back calls and one synchronize (what a call costs when
the GPU's part is smaller than the host's; the host-time benchmark of issue 26 runs
``--log2n 10,12,14,16,18,20``).

Checks, of the last timed call's output, each as the CUB side checks (CuPy's outputs and the
copies too): int32 sums exactly, every prefix, modulo 2^32 (the wrap-around of int32
arithmetic, as the CUB side's unsigned reference); float32 sums within a relative 1e-3
(absolute near zero) of a float64 host sum: the sum, or a scan's last prefix and 16 spread
over it (the CUB side's tolerance); the selections (the count and the selected items), the
histogram's counts (a float32 sample's bin is ``int(x * 256.0f)``, exact), the segment sums
and the sorted keys exactly; the pairs' values as a permutation of the positions that
carries each key to its place (the CUB side's check: not stability).

The CUB side, benchmarks/cub_device.cu, is built with nvcc (headers from $CCCL_INCLUDE)
while coop and CuPy are timed (or built beforehand: ``--cub-binary``), then run with the
same sizes; the rows of the requested
algorithms are kept. Writes DIR/device.jsonl, one line per (impl, algorithm, dtype, n):
impl ("coop", "coop_count", "coop_out", "coop_temp", "cub", "cupy", "torch", "copy"), algorithm, dtype, n, seconds (per call), gitems (n /
seconds / 1e9; Gkeys/s for the sorts), gbytes (the CUB side's nominal bytes read and written,
/ seconds / 1e9: 4n + 4 for reduce_sum, 8n for the scans, 5n + 4k for select_flagged and
4n + 4k for select_if with k items selected, 4n for histogram_even and segmented_reduce_sum,
8n for radix_sort_keys and segmented_sort_keys and 16n for radix_sort_pairs, whatever the passes; the copies: their
sort's, which are also the bytes they move), check ("ok" / "MISMATCH") and, where measured,
first_call_s and host_us_per_call; prints those lines and a Markdown table
(benchmarks/plot_device.py plots the file).

``--sim-check``: coop only, on Numba's CUDA simulator (NUMBA_ENABLE_CUDASIM=1, set here
before Numba is imported), n = 1000 and 4097, one call each (and the sorts' copies), checked;
nothing timed or written. The segmented reduce then has 0 and 4 segments (the items past
the last whole segment are not summed, as on the CUB side).
"""

import argparse
import ast
import importlib
import json
import os
import pathlib
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = pathlib.Path(__file__).resolve().parent
REPO = HERE.parent
sys.path[:0] = [str(REPO), str(HERE)]  # this checkout's coop; radix_sort's helpers
from radix_sort import median_launch_seconds, warm_up  # noqa: E402  (neither imports Numba at import)

# algorithm: (input dtypes, bytes a call moves as the CUB side counts them, of n and the number selected k)
ALGORITHMS = {
    "reduce_sum": (("int32", "float32"), lambda n, k: 4 * n + 4),
    "inclusive_sum": (("int32", "float32"), lambda n, k: 8 * n),
    "exclusive_sum": (("int32",), lambda n, k: 8 * n),
    "select_flagged": (("int32",), lambda n, k: 5 * n + 4 * k),
    "select_if": (("int32",), lambda n, k: 4 * n + 4 * k),
    "histogram_even": (("float32",), lambda n, k: 4 * n),
    "segmented_reduce_sum": (("int32",), lambda n, k: 4 * n),
    "segmented_reduce_sum_power": (("int32",), lambda n, k: 4 * n),
    "radix_sort_keys": (("uint32",), lambda n, k: 8 * n),
    "radix_sort_pairs": (("uint32",), lambda n, k: 16 * n),
    "merge_sort_keys": (("uint32",), lambda n, k: 8 * n),
    "merge_sort_pairs": (("uint32",), lambda n, k: 16 * n),
    "segmented_sort_keys": (("uint32",), lambda n, k: 8 * n),
    "segmented_sort_keys_power": (("uint32",), lambda n, k: 8 * n),
    "top_k_keys": (("float32",), lambda n, k: 4 * n + 4 * k),
    "top_k_keys_many": (("float32",), lambda n, k: 4 * n + 4 * k),
    "top_k_pairs": (("float32",), lambda n, k: 4 * n + 8 * k),
    "subtract_left": (("int32",), lambda n, k: 8 * n),
    "unique": (("int32",), lambda n, k: 4 * n + 4 * k),
    "run_length_encode": (("int32",), lambda n, k: 4 * n + 8 * k),
    "lower_bound": (("uint32",), lambda n, k: 12 * n),
    "unique_by_key": (("int32",), lambda n, k: 8 * n + 8 * k),
    "three_way_partition": (("int32",), lambda n, k: 8 * n),
    "inclusive_sum_by_key": (("int32",), lambda n, k: 12 * n),
    "non_trivial_runs": (("int32",), lambda n, k: 4 * n + 8 * k),
}
SUMS = {"reduce_sum": "sum", "inclusive_sum": "inclusive_sum", "exclusive_sum": "exclusive_sum"}  # coop's names
COPY = "_copy"  # the sorts' copies' algorithm: the sort's name and this
DTYPES = ("int32", "float32", "uint32")  # (also the order of an item's draws)
BINS, LOWER, UPPER = 256, 0.0, 1.0  # cub_device.cu's histogram
SEGMENT = 1024  # cub_device.cu's segment length
TOP_K = 1024  # cub_device.cu's k of top_k_keys and top_k_pairs
SIM_SIZES = (1000, 4097)  # (not multiples of a tile: partial last tiles)
HOST_MAX_N = 1 << 20
HOST_CALLS = 200
FLOAT_SAMPLES = 16
RTOL = 1e-3

# cub_timing.cuh's Rng (splitmix64, which cub_device.cu draws from): its k-th draw (from 1) mixes the state SEED + k * GOLDEN.
SEED, GOLDEN, MIX1, MIX2 = 7, 0x9E3779B97F4A7C15, 0xBF58476D1CE4E5B9, 0x94D049BB133111EB
DRAWS = 3  # per item: its int32, its float32, its uint32 key
CHUNK = 1 << 22  # items generated at a time (bounds the uint64 temporaries)


def cub_input(dtype, drawn, n):
    """The CUB side's ``n`` items of ``dtype`` for a size after ``drawn`` draws of its
    stream: item i's int32 is draw ``drawn + 3i + 1`` modulo 8, its float32 the top 24 bits
    of draw ``drawn + 3i + 2`` times 2^-24, its uint32 key the top 32 bits of draw
    ``drawn + 3i + 3``."""
    draw = drawn + 1 + DTYPES.index(dtype)
    x = np.empty(n, dtype)
    for start in range(0, n, CHUNK):
        stop = min(start + CHUNK, n)
        z = np.arange(draw + DRAWS * start, draw + DRAWS * stop, DRAWS, dtype=np.uint64)
        z *= np.uint64(GOLDEN)  # (uint64 arrays wrap, as the C++ unsigned long long does)
        z += np.uint64(SEED)
        z ^= z >> np.uint64(30)
        z *= np.uint64(MIX1)
        z ^= z >> np.uint64(27)
        z *= np.uint64(MIX2)
        z ^= z >> np.uint64(31)
        if dtype == "int32":
            x[start:stop] = z & np.uint64(7)
        elif dtype == "float32":
            x[start:stop] = (z >> np.uint64(40)).astype(np.float32) * np.float32(2.0**-24)  # (exact)
        else:
            x[start:stop] = z >> np.uint64(32)
    return x


def is_even(x):
    """select_if's predicate (the CUB side's IsEven; one function object, so coop compiles it once)."""
    return x % 2 == 0


def flags_of(n):
    """select_flagged's flags: the CUB side's, one byte an item, set on every other item from the first."""
    return (np.arange(n) % 2 == 0).astype(np.int8)


def offsets_of(n):
    """segmented_reduce_sum's offsets: the CUB side's n // 1024 segments of 1024 items."""
    return np.arange(n // SEGMENT + 1, dtype=np.int32) * SEGMENT


def sort_offsets(n):
    """segmented_sort_keys' offsets: the CUB side's segments of 64 to 4096 keys."""
    j = np.arange(n // 64 + 2, dtype=np.uint64)
    sizes = 64 + (((j * np.uint64(2654435761)) & np.uint64(0xFFFFFFFF)) >> np.uint64(8)) % np.uint64(4033)
    ends = np.cumsum(sizes.astype(np.int64))
    count = int(np.searchsorted(ends, n)) + 1  # (the first segment to reach n, cut there)
    return np.concatenate(([0], np.minimum(ends[:count], n))).astype(np.int32)


def power_law_offsets(n):
    """segmented_sort_keys_power's offsets: the CUB side's power-law segment sizes."""
    j = np.arange(n + 1, dtype=np.uint64)  # (more segments than needed: each holds a key at least)
    r = (((j + np.uint64(1)) * np.uint64(2654435761)) & np.uint64(0xFFFFFFFF)) >> np.uint64(16)
    ends = np.cumsum((np.uint64(65536) // (r + np.uint64(1))).astype(np.int64))
    count = int(np.searchsorted(ends, n)) + 1
    return np.concatenate(([0], np.minimum(ends[:count], n))).astype(np.int32)


SEGMENTED_SORT_OFFSETS = {"segmented_sort_keys": sort_offsets, "segmented_sort_keys_power": power_law_offsets}
SEGMENTED_REDUCE_OFFSETS = {"segmented_reduce_sum": offsets_of, "segmented_reduce_sum_power": power_law_offsets}


def runs_input(n):
    """unique's and run_length_encode's items (the CUB side's): i >> 4, runs of 16."""
    return (np.arange(n) >> 4).astype(np.int32)


def top_k_of(algorithm, n):
    """The k of a top_k algorithm at ``n`` items (the CUB side's), else None."""
    if not algorithm.startswith("top_k"):
        return None
    return min(n, n // 256 if algorithm == "top_k_keys_many" else TOP_K)


def expected_of(algorithm, x):
    """What an output of ``algorithm`` of ``x`` is checked against: the inclusive prefix sums
    of ``x`` in int64 or float64 for the sums, else the exact output (the sorts: the sorted
    keys)."""
    if algorithm in SUMS:
        return np.cumsum(x, dtype=np.int64 if x.dtype.kind == "i" else np.float64)
    if algorithm == "select_flagged":
        return x[flags_of(x.size) != 0]
    if algorithm == "select_if":
        return x[x % 2 == 0]
    if algorithm == "histogram_even":
        # CUB's float bin, int((x - lower) * (bins / (upper - lower))) in float32: exact here (x * 256)
        scale = np.float32(BINS / (UPPER - LOWER))
        return np.bincount(((x - np.float32(LOWER)) * scale).astype(np.int64), minlength=BINS)
    if algorithm in SEGMENTED_REDUCE_OFFSETS:
        offsets = SEGMENTED_REDUCE_OFFSETS[algorithm](x.size)
        within = x[:offsets[-1]].astype(np.int64)  # (items past the last segment: not summed)
        sums = np.add.reduceat(within, offsets[:-1]) if offsets.size > 1 else np.zeros(0, np.int64)
        sums[offsets[:-1] == offsets[1:]] = 0  # (reduceat gives an empty segment's next item)
        return sums.astype(np.int32)
    if algorithm == "subtract_left":
        return np.concatenate((x[:1], np.diff(x))).astype(x.dtype)
    if algorithm == "unique":
        return np.arange(-(-x.size // 16), dtype=np.int32)
    if algorithm == "run_length_encode":
        runs = -(-x.size // 16)
        return np.arange(runs, dtype=np.int32), np.minimum(16, x.size - 16 * np.arange(runs)).astype(np.int32)
    if algorithm == "lower_bound":
        return np.searchsorted(np.sort(x), x, side="left")
    if algorithm == "unique_by_key":  # (the first of each run of 16: its values 16 j)
        runs = -(-x.size // 16)
        return np.arange(runs, dtype=np.int32), 16 * np.arange(runs, dtype=np.int32)
    if algorithm == "three_way_partition":
        return x[x < 2], x[(x >= 2) & (x < 6)], x[x >= 6]
    if algorithm == "non_trivial_runs":  # (runs of 16, the last one shorter: possibly of one)
        starts = np.arange(0, x.size, 16)
        lengths = np.minimum(16, x.size - starts)
        return starts[lengths > 1].astype(np.int32), lengths[lengths > 1].astype(np.int32)
    if algorithm == "inclusive_sum_by_key":  # (runs of 16: each run's running sums)
        padded = np.zeros(-(-x.size // 16) * 16, np.int32)
        padded[:x.size] = x
        return np.cumsum(padded.reshape(-1, 16), axis=1, dtype=np.int32).ravel()[:x.size]
    k = top_k_of(algorithm, x.size)
    if k is not None:  # the k largest, sorted (whichever ties are taken, the keys are these)
        return np.sort(np.partition(x, x.size - k)[x.size - k:])
    if algorithm in SEGMENTED_SORT_OFFSETS:
        offsets = SEGMENTED_SORT_OFFSETS[algorithm](x.size)
        segment = np.repeat(np.arange(offsets.size - 1), np.diff(offsets))
        return x[np.lexsort((x, segment))]
    return np.sort(x)


def check(algorithm, x, expected, got):
    """"ok" or "MISMATCH": ``got`` (an output of ``algorithm`` of ``x``, on the host; the
    pairs' and the pairs' copy's: (keys, values)) against ``expected`` (``expected_of``)."""
    if algorithm == "radix_sort_keys" + COPY:  # the work buffer holds the input again
        ok = np.array_equal(got, x)
    elif algorithm == "radix_sort_pairs" + COPY:  # and the values' the positions
        ok = np.array_equal(got[0], x) and np.array_equal(got[1], np.arange(x.size))
    elif algorithm == "merge_sort_pairs":  # the keys sorted; the values a permutation, in order among equal keys
        keys, values = got
        ok = np.array_equal(keys, expected) and bool((values < x.size).all())
        if ok:
            seen = np.zeros(x.size, bool)
            seen[values] = True
            ok = (bool(seen.all()) and np.array_equal(x[values], keys)
                  and bool(((keys[1:] != keys[:-1]) | (values[1:] > values[:-1])).all()))
    elif algorithm == "radix_sort_pairs":  # the keys sorted; the values a permutation carrying each key to its place
        keys, values = got
        ok = np.array_equal(keys, expected) and bool((values < x.size).all())
        if ok:
            seen = np.zeros(x.size, bool)
            seen[values] = True  # (n values, all seen: a permutation)
            ok = bool(seen.all()) and np.array_equal(x[values], keys)
    elif algorithm in ("run_length_encode", "unique_by_key", "three_way_partition", "non_trivial_runs"):
        ok = len(got) == len(expected) and all(np.array_equal(g, e) for g, e in zip(got, expected))
    elif algorithm.startswith("top_k"):  # the keys as a multiset; values (if any) distinct positions of their keys
        keys, values = got if isinstance(got, tuple) else (got, None)
        ok = np.array_equal(np.sort(keys), expected)
        if ok and values is not None:
            ok = (bool(((values >= 0) & (values < x.size)).all()) and np.unique(values).size == values.size
                  and np.array_equal(x[values], keys))
    elif algorithm not in SUMS:
        ok = np.array_equal(got, expected)  # (lengths too: a wrong count fails)
    else:
        prefixes = expected
        if algorithm == "reduce_sum":
            expected, got = prefixes[-1:], got[:1]
        elif algorithm == "inclusive_sum":
            expected = prefixes
        else:
            expected = prefixes - x
        if x.dtype.kind == "i":
            # Exact, modulo 2^32: int32 sums wrap on the GPU (none does with items < 8 up to n = 2^28,
            # 7 * 2^28 < 2^31, but one could from n = 2^29), and int64 -> int32 wraps alike here.
            ok = np.array_equal(got, expected.astype(np.int32))
        else:  # float sums differ from the host's by the order of the additions, not by a bug
            at = np.unique(np.linspace(0, expected.size - 1, FLOAT_SAMPLES + 1).astype(np.int64))  # (the last included)
            error = np.abs(got[at] - expected[at])
            ok = bool((error <= RTOL * np.maximum(np.abs(expected[at]), 1.0)).all())  # (a NaN fails)
    return "ok" if ok else "MISMATCH"


def host_us_per_call(call):
    """Wall-clock microseconds per call of HOST_CALLS back-to-back calls and one synchronize."""
    from numba import cuda

    cuda.synchronize()
    start = time.perf_counter()
    for _ in range(HOST_CALLS):
        call()
    cuda.synchronize()
    return (time.perf_counter() - start) / HOST_CALLS * 1e6


def measure(impl, algorithm, x, expected, call, output, sim):
    """One row: ``call`` (``impl``'s ``algorithm`` of ``x``) timed, and ``output()`` (its
    last call's output, on the host) checked."""
    from numba import cuda

    n = x.size
    first_call_s = seconds = host_us = None
    if sim:
        call()
        cuda.synchronize()
    else:
        if impl == "coop":
            start = time.perf_counter()
            call()
            cuda.synchronize()  # (to the result: compiling, launching and running)
            first_call_s = time.perf_counter() - start
        seconds = median_launch_seconds(call)
    ok = check(algorithm, x, expected, output())
    if not sim and n <= HOST_MAX_N and impl != "copy":
        host_us = host_us_per_call(call)
    selected = (expected[0].size if algorithm in ("run_length_encode", "unique_by_key", "non_trivial_runs")
                else expected.size if algorithm.startswith(("select", "top_k", "unique")) else 0)
    nbytes = ALGORITHMS[algorithm.removesuffix(COPY)][1](n, selected)
    row = {"impl": impl, "algorithm": algorithm, "dtype": x.dtype.name, "n": n, "seconds": seconds,
           "gitems": n / seconds * 1e-9 if seconds else None, "gbytes": nbytes / seconds * 1e-9 if seconds else None,
           "check": ok}
    if first_call_s is not None:
        row["first_call_s"] = first_call_s
    if host_us is not None:
        row["host_us_per_call"] = host_us
    return row


def poisoned(dtype, size):
    """A device output that no result can leave as it is by chance: -1 (no sum, count or
    selected item here is negative), NaN, or for unsigned integers their largest value (a
    sorted output is not all of it)."""
    from numba import cuda

    kind = np.dtype(dtype).kind
    return cuda.to_device(np.full(size, np.nan if kind == "f" else np.iinfo(dtype).max if kind == "u" else -1, dtype))


def cupy_view(cupy, d_array):
    """``d_array`` as a CuPy array, no copy; CuPy's calls must go to the legacy default stream,
    where the timing's events are recorded."""
    if cupy.cuda.get_current_stream().ptr != 0:
        raise RuntimeError("CuPy's current stream is not the legacy default stream")
    return cupy.asarray(d_array)


def torch_view(torch, d_array):
    """``d_array`` as a PyTorch tensor, no copy; PyTorch's calls must go to the legacy default
    stream, where the timing's events are recorded."""
    if torch.cuda.current_stream().cuda_stream != 0:
        raise RuntimeError("PyTorch's current stream is not the legacy default stream")
    return torch.as_tensor(d_array, device="cuda")


def with_temp_storage(function, *args, **kwargs):
    """A call of ``function(*args, **kwargs)`` on a caller's temporary storage (CUB's
    two-phase pattern: sized once and allocated once, here)."""
    import coop
    from numba import cuda

    storage = cuda.device_array(max(1, coop.device.temp_storage_bytes(function, *args, **kwargs)), np.uint8)
    return lambda: function(*args, temp_storage=storage, **kwargs)


def implementations(algorithm, x, d_x, cupy, torch=None):
    """``(impl, row's algorithm, call, output)`` for each implementation of ``algorithm`` timed
    on ``x`` (on the device: ``d_x``), made as the loop gets to it (a fresh, poisoned output
    each: no result left by another implementation can pass): ``call()`` is one call as a user
    makes it, ``output()`` its last call's output on the host."""
    import coop
    from numba import cuda

    n = x.size
    last = [None]  # (what the last call returned, for the calls that return their output or its size)
    if algorithm in SUMS:
        function = getattr(coop.device, SUMS[algorithm])
        d_out = poisoned(x.dtype, 1 if algorithm == "reduce_sum" else n)
        yield "coop", algorithm, lambda: function(d_x, d_out), d_out.copy_to_host
        yield "coop_temp", algorithm, with_temp_storage(function, d_x, d_out), d_out.copy_to_host
        if cupy is not None and algorithm != "exclusive_sum":  # (CuPy has no exclusive sum)
            # dtype=: summed in the input's type, as CUB and coop sum here (CuPy would sum int32 in
            # int64); out=: into the given output, no allocation, as the others
            d_cupy_out = poisoned(x.dtype, 1 if algorithm == "reduce_sum" else n)
            c_x, c_out = cupy_view(cupy, d_x), cupy_view(cupy, d_cupy_out)
            if algorithm == "reduce_sum":
                total = c_out.reshape(())  # (a full reduction's out= is 0-d: a view of d_out[0])
                call = lambda: cupy.sum(c_x, dtype=c_x.dtype, out=total)  # noqa: E731
            else:
                call = lambda: cupy.cumsum(c_x, dtype=c_x.dtype, out=c_out)  # noqa: E731
            yield "cupy", algorithm, call, d_cupy_out.copy_to_host
    elif algorithm in ("select_flagged", "select_if"):
        d_out, d_count = poisoned(x.dtype, n), poisoned(np.int64, 1)
        if algorithm == "select_flagged":
            d_flags = cuda.to_device(flags_of(n))
            select = lambda **count: coop.device.select_flagged(d_x, d_flags, d_out, **count)  # noqa: E731
        else:
            select = lambda **count: coop.device.select(d_x, d_out, is_even, **count)  # noqa: E731

        def coop_select():  # (the count to device memory, as CUB's: nothing waited for)
            select(d_num_selected_out=d_count)

        def coop_select_count():  # (the count returned: the call waits for it)
            last[0] = select()

        yield "coop", algorithm, coop_select, lambda: d_out.copy_to_host()[:int(d_count.copy_to_host()[0])]
        if algorithm == "select_flagged":
            yield ("coop_temp", algorithm,
                   with_temp_storage(coop.device.select_flagged, d_x, d_flags, d_out, d_num_selected_out=d_count),
                   lambda: d_out.copy_to_host()[:int(d_count.copy_to_host()[0])])
        yield "coop_count", algorithm, coop_select_count, lambda: d_out.copy_to_host()[:last[0]]
        if cupy is not None and algorithm == "select_flagged":
            c_x, c_flags = cupy_view(cupy, d_x), cupy_view(cupy, d_flags).view(cupy.bool_)  # (flags 0 or 1)

            def cupy_select():
                last[0] = c_x[c_flags]

            yield "cupy", algorithm, cupy_select, lambda: last[0].get()
    elif algorithm == "histogram_even":
        d_histogram = poisoned(np.int32, BINS)
        yield ("coop", algorithm, lambda: coop.device.histogram_even(d_x, d_histogram, BINS, LOWER, UPPER),
               d_histogram.copy_to_host)
        yield ("coop_temp", algorithm, with_temp_storage(coop.device.histogram_even, d_x, d_histogram, BINS, LOWER,
                                                         UPPER), d_histogram.copy_to_host)
        if cupy is not None:
            c_x = cupy_view(cupy, d_x)

            def cupy_histogram():
                last[0] = cupy.histogram(c_x, bins=BINS, range=(LOWER, UPPER))[0]

            yield "cupy", algorithm, cupy_histogram, lambda: last[0].get()
    elif algorithm in SEGMENTED_REDUCE_OFFSETS:
        offsets = SEGMENTED_REDUCE_OFFSETS[algorithm](n)
        d_offsets = cuda.to_device(offsets)
        d_out = poisoned(np.int32, offsets.size - 1)
        yield ("coop", algorithm, lambda: coop.device.segmented_reduce(d_x, d_out, d_offsets, coop.ops.add, 0),
               d_out.copy_to_host)
        yield ("coop_temp", algorithm, with_temp_storage(coop.device.segmented_reduce, d_x, d_out, d_offsets,
                                                         coop.ops.add, 0), d_out.copy_to_host)
    elif algorithm == "subtract_left":
        d_out = poisoned(x.dtype, n)
        yield "coop", algorithm, lambda: coop.device.subtract_left(d_x, d_out), d_out.copy_to_host
    elif algorithm == "unique_by_key":
        d_runs, d_values = cuda.to_device(runs_input(n)), cuda.to_device(np.arange(n, dtype=np.int32))
        d_keys_out, d_values_out, d_count = poisoned(np.int32, n), poisoned(np.int32, n), poisoned(np.int64, 1)
        yield ("coop", algorithm,
               lambda: coop.device.unique_by_key(d_runs, d_values, d_keys_out, d_values_out, d_num_selected_out=d_count),
               lambda: tuple(a.copy_to_host()[:int(d_count.copy_to_host()[0])] for a in (d_keys_out, d_values_out)))
    elif algorithm == "non_trivial_runs":
        d_runs, d_offsets, d_lengths = cuda.to_device(runs_input(n)), poisoned(np.int32, n), poisoned(np.int32, n)
        d_count = poisoned(np.int64, 1)
        yield ("coop", algorithm,
               lambda: coop.device.non_trivial_runs(d_runs, d_offsets, d_lengths, d_num_runs_out=d_count),
               lambda: tuple(a.copy_to_host()[:int(d_count.copy_to_host()[0])] for a in (d_offsets, d_lengths)))
    elif algorithm == "inclusive_sum_by_key":
        d_runs, d_out = cuda.to_device(runs_input(n)), poisoned(np.int32, n)
        yield "coop", algorithm, lambda: coop.device.inclusive_sum_by_key(d_runs, d_x, d_out), d_out.copy_to_host
    elif algorithm == "three_way_partition":
        parts, d_counts = [poisoned(x.dtype, n) for _ in range(3)], poisoned(np.int64, 2)

        def parts_written():
            first, second = (int(v) for v in d_counts.copy_to_host())
            return tuple(part.copy_to_host()[:size] for part, size in zip(parts, (first, second, n - first - second)))

        yield ("coop", algorithm,
               lambda: coop.device.three_way_partition(d_x, *parts, lambda v: v < 2, lambda v: v < 6,
                                                       d_num_selected_out=d_counts), parts_written)
    elif algorithm in ("unique", "run_length_encode"):
        d_runs, d_values, d_lengths = cuda.to_device(runs_input(n)), poisoned(np.int32, n), poisoned(np.int32, n)
        d_count = poisoned(np.int64, 1)
        if algorithm == "unique":
            yield ("coop", algorithm, lambda: coop.device.unique(d_runs, d_values, d_num_selected_out=d_count),
                   lambda: d_values.copy_to_host()[:int(d_count.copy_to_host()[0])])
        else:
            yield ("coop", algorithm,
                   lambda: coop.device.run_length_encode(d_runs, d_values, d_lengths, d_num_runs_out=d_count),
                   lambda: tuple(a.copy_to_host()[:int(d_count.copy_to_host()[0])] for a in (d_values, d_lengths)))
    elif algorithm == "lower_bound":
        d_sorted, d_positions = cuda.to_device(np.sort(x)), poisoned(np.int64, n)
        yield "coop", algorithm, lambda: coop.device.lower_bound(d_sorted, d_x, d_positions), d_positions.copy_to_host
        if cupy is not None:
            c_sorted, c_x = cupy_view(cupy, d_sorted), cupy_view(cupy, d_x)

            def cupy_search():
                last[0] = cupy.searchsorted(c_sorted, c_x, side="left")

            yield "cupy", algorithm, cupy_search, lambda: last[0].get()
    elif algorithm.startswith("top_k"):
        k = top_k_of(algorithm, n)
        d_out = poisoned(x.dtype, k)
        if algorithm == "top_k_pairs":
            d_positions, d_values_out = cuda.to_device(np.arange(n, dtype=np.uint32)), poisoned(np.uint32, k)
            yield ("coop", algorithm, lambda: coop.device.top_k(d_x, d_out, k, d_positions, d_values_out),
                   lambda: (d_out.copy_to_host(), d_values_out.copy_to_host()))
        else:
            yield "coop", algorithm, lambda: coop.device.top_k(d_x, d_out, k), d_out.copy_to_host
        if torch is not None:
            t_x = torch_view(torch, d_x)
            t_out = (torch_view(torch, poisoned(x.dtype, k)), torch_view(torch, poisoned(np.int64, k)))
            yield ("torch", algorithm, lambda: torch.topk(t_x, k, largest=True, sorted=False, out=t_out),
                   lambda: tuple(t.cpu().numpy() for t in t_out) if algorithm == "top_k_pairs"
                   else t_out[0].cpu().numpy())
    elif algorithm in SEGMENTED_SORT_OFFSETS:
        d_offsets = cuda.to_device(SEGMENTED_SORT_OFFSETS[algorithm](n))
        d_out = poisoned(x.dtype, n)
        yield ("coop", algorithm, lambda: coop.device.segmented_sort(d_x, d_offsets, d_keys_out=d_out),
               d_out.copy_to_host)
    elif algorithm.startswith("merge_sort"):  # out of place on both sides
        d_keys_out = poisoned(x.dtype, n)
        if algorithm == "merge_sort_pairs":
            d_positions, d_values_out = cuda.to_device(np.arange(n, dtype=np.uint32)), poisoned(np.uint32, n)
            yield ("coop", algorithm,
                   lambda: coop.device.merge_sort(d_x, d_positions, d_keys_out=d_keys_out, d_values_out=d_values_out),
                   lambda: (d_keys_out.copy_to_host(), d_values_out.copy_to_host()))
        else:
            yield "coop", algorithm, lambda: coop.device.merge_sort(d_x, d_keys_out=d_keys_out), d_keys_out.copy_to_host
            if cupy is not None:
                c_x = cupy_view(cupy, d_x)

                def cupy_sort():
                    last[0] = cupy.sort(c_x)

                yield "cupy", algorithm, cupy_sort, lambda: last[0].get()
    else:  # the sorts: coop's sorts a copy of d_x (in place), CUB's d_x itself (out of place)
        pairs = algorithm == "radix_sort_pairs"
        if hasattr(coop.device, "radix_sort"):
            d_keys = cuda.device_array(n, x.dtype)
            if pairs:
                d_positions = cuda.to_device(np.arange(n, dtype=np.uint32))
                d_values = cuda.device_array(n, np.uint32)

                def copy():
                    d_keys.copy_to_device(d_x)
                    d_values.copy_to_device(d_positions)

                def coop_sort():
                    d_keys.copy_to_device(d_x)
                    d_values.copy_to_device(d_positions)
                    coop.device.radix_sort(d_keys, d_values)

                def output():
                    return d_keys.copy_to_host(), d_values.copy_to_host()
            else:
                def copy():
                    d_keys.copy_to_device(d_x)

                def coop_sort():
                    d_keys.copy_to_device(d_x)
                    coop.device.radix_sort(d_keys)

                output = d_keys.copy_to_host
            yield "copy", algorithm + COPY, copy, output
            yield "coop", algorithm, coop_sort, output
            # (outputs of its own, poisoned: the in-place rows' sorted work buffers cannot pass for its result)
            d_keys_out = poisoned(x.dtype, n)
            if pairs:
                d_values_out = poisoned(np.uint32, n)

                def coop_sort_out_of_place():  # (d_x and the positions left as they are: no copy)
                    coop.device.radix_sort(d_x, d_positions, d_keys_out=d_keys_out, d_values_out=d_values_out)

                def output_out_of_place():
                    return d_keys_out.copy_to_host(), d_values_out.copy_to_host()
            else:
                def coop_sort_out_of_place():
                    coop.device.radix_sort(d_x, d_keys_out=d_keys_out)

                output_out_of_place = d_keys_out.copy_to_host
            yield "coop_out", algorithm, coop_sort_out_of_place, output_out_of_place
        if cupy is not None and not pairs:
            c_x = cupy_view(cupy, d_x)

            def cupy_sort():
                last[0] = cupy.sort(c_x)

            yield "cupy", algorithm, cupy_sort, lambda: last[0].get()


def time_coop_and_cupy(sizes, algorithms, cupy, sim, torch=None):
    """Rows of coop (and CuPy's and PyTorch's, if given) for every size, dtype and
    algorithm; printed as they come."""
    from numba import cuda

    rows, drawn = [], 0
    for n in sizes:
        for dtype in DTYPES:
            wanted = [a for a in algorithms if dtype in ALGORITHMS[a][0]]
            if not wanted:
                continue
            x = cub_input(dtype, drawn, n)
            d_x = cuda.to_device(x)
            for algorithm in wanted:
                expected = expected_of(algorithm, x)
                for impl, row_algorithm, call, output in implementations(algorithm, x, d_x, cupy, torch):
                    rows.append(measure(impl, row_algorithm, x, expected, call, output, sim))
                    print(json.dumps(rows[-1]), flush=True)
                    del call, output
            del d_x
        drawn += DRAWS * n
    return rows


def build_cub(work):
    """nvcc building the CUB side into ``work``, in the background: (process, binary), or
    None without nvcc."""
    include = os.environ.get("CCCL_INCLUDE", "/usr/local/cuda/targets/x86_64-linux/include/cccl")
    binary = work / "cub_device"
    try:
        return subprocess.Popen(["nvcc", "-O3", "-std=c++17", "-arch=sm_90", f"-I{include}",
                                 str(HERE / "cub_device.cu"), "-o", str(binary)]), binary
    except FileNotFoundError:
        return None


def run_cub(build, log2ns, algorithms):
    """The CUB side's rows of ``algorithms`` (it runs those, CUB_DEVICE_ALGORITHMS, and
    whatever else a substring match there selects: reduce_sum with segmented_reduce_sum, both
    sorts with either), or None if it could not be built or run."""
    if build is None or build[0].wait() != 0:
        print("nvcc failed or missing: no CUB side", file=sys.stderr)
        return None
    done = subprocess.run([str(build[1]), *map(str, log2ns)], capture_output=True, text=True,
                          env=dict(os.environ, CUB_DEVICE_ALGORITHMS=",".join(algorithms)))
    if done.returncode != 0:
        print(f"cub_device failed:\n{done.stderr}", file=sys.stderr)
        return None
    rows = [row for row in map(json.loads, done.stdout.splitlines()) if row["algorithm"] in algorithms]
    for row in rows:
        print(json.dumps(row), flush=True)
    return rows


def table(rows):
    """The Markdown table: one line per (algorithm, dtype, n), the implementations side by
    side; after a sort's line, one with coop's sort alone (its time less its copy's)."""
    by_key = {(r["impl"], r["algorithm"], r["dtype"], r["n"]): r for r in rows}
    keys = sorted({(r["algorithm"], r["dtype"], r["n"]) for r in rows if r["impl"] != "copy"},
                  key=lambda k: (list(ALGORITHMS).index(k[0]), DTYPES.index(k[1]), k[2]))

    def number(value, digits=1):
        return "—" if value is None else f"{value:.{digits}f}"

    def gbytes(row):
        if row is None:
            return "—"
        return number(row["gbytes"]) + ("" if row["check"] == "ok" else f" ({row['check']})")

    def ratio(a, b, bold=False):
        if not (a and b and a["gbytes"] and b["gbytes"]):
            return "—"
        return f"**{a['gbytes'] / b['gbytes']:.3f}**" if bold else f"{a['gbytes'] / b['gbytes']:.3f}"

    lines = ["| algorithm | dtype | n | coop GB/s | CUB GB/s | CuPy (PyTorch) GB/s | coop/CUB | coop/CuPy (PyTorch) "
             "| host µs/call coop / CUB / CuPy (PyTorch) |", "|---|---|--:|--:|--:|--:|--:|--:|--:|"]
    for algorithm, dtype, n in keys:
        coop, cub, cupy = (by_key.get((impl, algorithm, dtype, n)) for impl in ("coop", "cub", "cupy"))
        cupy = cupy or by_key.get(("torch", algorithm, dtype, n))  # (top_k's third: PyTorch)
        host = [number(r and r.get("host_us_per_call")) for r in (coop, cub, cupy)]
        lines.append(f"| {algorithm} | {dtype} | 2^{n.bit_length() - 1} | {gbytes(coop)} | {gbytes(cub)} "
                     f"| {gbytes(cupy)} | {ratio(coop, cub, bold=True)} | {ratio(coop, cupy)} "
                     f"| {'—' if set(host) == {'—'} else ' / '.join(host)} |")
        for impl, label in (("coop_temp", "coop with temp_storage="),
                            ("coop_count", "coop returning the count (the call waits)"),
                            ("coop_out", "coop out of place (d_keys_out=, no copy)")):
            variant = by_key.get((impl, algorithm, dtype, n))
            if variant:
                lines.append(f"| ↳ {label} | {dtype} | 2^{n.bit_length() - 1} | {gbytes(variant)} | {gbytes(cub)} "
                             f"| {gbytes(cupy)} | {ratio(variant, cub, bold=True)} | {ratio(variant, cupy)} "
                             f"| {number(variant.get('host_us_per_call'))} |")
        copy = by_key.get(("copy", algorithm + COPY, dtype, n))
        if coop and copy and coop["seconds"] and copy["seconds"]:
            seconds = coop["seconds"] - copy["seconds"]
            sort = dict(coop, check="ok" if coop["check"] == copy["check"] == "ok" else "MISMATCH",
                        gbytes=ALGORITHMS[algorithm][1](n, 0) / seconds * 1e-9 if seconds > 0 else None)
            lines.append(f"| ↳ sort only (less the copy's {copy['seconds'] * 1e6:.1f} µs) | {dtype} "
                         f"| 2^{n.bit_length() - 1} | {gbytes(sort)} | {gbytes(cub)} | — "
                         f"| {ratio(sort, cub, bold=True)} | — | — |")
    return "\n".join(lines)


def main(argv=None):
    def log2n_list(text):
        log2ns = [int(part) for part in text.split(",") if part]
        if not log2ns or not all(10 <= v <= 30 for v in log2ns):
            raise argparse.ArgumentTypeError("comma-separated LOG2N in [10, 30] (the CUB side's range)")
        return log2ns

    def algorithm_list(text):
        algorithms = [part for part in text.split(",") if part]
        if not algorithms or not set(algorithms) <= set(ALGORITHMS):
            raise argparse.ArgumentTypeError(f"comma-separated among {', '.join(ALGORITHMS)}")
        return algorithms

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--log2n", type=log2n_list, default=[16, 20, 24, 28], help="sizes, n = 2^LOG2N")
    parser.add_argument("--algorithms", type=algorithm_list, default=list(ALGORITHMS))
    parser.add_argument("--out", default=".", help="where device.jsonl goes")
    parser.add_argument("--cub-binary", type=pathlib.Path,
                        help="the CUB side built beforehand (nvcc -O3 -std=c++17 -arch=sm_90 -I$CCCL_INCLUDE "
                             "benchmarks/cub_device.cu), instead of building it here")
    parser.add_argument("--sim-check", action="store_true",
                        help=f"coop only, n in {SIM_SIZES}, one call each, checked (NUMBA_ENABLE_CUDASIM=1)")
    parser.add_argument("--set", action="append", default=[], metavar="MODULE.NAME=VALUE",
                        help="a tuning constant of coop.device.MODULE set before anything compiles (a Python "
                             "literal; repeatable), e.g. scan.THREADS=128 or lookback.SPIN_NANOSECONDS=648: a "
                             "sweep, one process a setting; the rows record the settings")
    parser.add_argument("--no-cub", action="store_true", help="coop and CuPy only (a sweep's other settings)")
    args = parser.parse_args(argv)

    sim = args.sim_check
    if sim:
        os.environ["NUMBA_ENABLE_CUDASIM"] = "1"  # (Numba reads it when first imported: just below)
    import coop  # (before numba.cuda: coop's backend module sees to Numba's simulator setting first)

    if coop.SIMULATOR != sim:
        raise SystemExit("--sim-check needs Numba's simulator, which Numba, imported before, did not choose"
                         if sim else "no GPU (coop is on Numba's simulator): run with --sim-check")
    settings = dict(setting.split("=", 1) for setting in args.set)
    for target, value in settings.items():
        module_name, _, name = target.rpartition(".")
        module = importlib.import_module(f"coop.device.{module_name}")
        if not hasattr(module, name):
            raise SystemExit(f"--set {target}: coop.device.{module_name} has no {name}")
        setattr(module, name, ast.literal_eval(value))
    if not hasattr(coop.device, "radix_sort") and any(a.startswith("radix_sort") for a in args.algorithms):
        print("coop.device has no radix_sort: no coop side for the sorts", file=sys.stderr)
    cupy = torch = None
    if not sim:
        try:
            import cupy
        except ImportError:
            print("CuPy not importable: no CuPy side", file=sys.stderr)
        if any(a.startswith("top_k") for a in args.algorithms):
            try:
                import torch
            except ImportError:
                print("PyTorch not importable: no PyTorch side", file=sys.stderr)
    sizes = SIM_SIZES if sim else [1 << v for v in args.log2n]
    # nvcc builds (on one CPU core) while coop compiles and runs; the CUB binary runs afterwards,
    # when nothing else does
    if sim or args.no_cub:
        build = None
    elif args.cub_binary is not None:
        build = subprocess.Popen(["true"]), args.cub_binary
    else:
        build = build_cub(pathlib.Path(tempfile.mkdtemp()))

    warm_up()
    rows = time_coop_and_cupy(sizes, args.algorithms, cupy, sim, torch)
    cub_rows = None if sim or args.no_cub else run_cub(build, args.log2n, args.algorithms)
    failed = cub_rows is None and not (sim or args.no_cub)
    rows += cub_rows or []
    for row in rows:
        if settings and row["impl"] != "cub":
            row["settings"] = settings
    failed |= any(row["check"] != "ok" for row in rows)
    if not sim:
        out = pathlib.Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        with open(out / "device.jsonl", "w") as f:
            f.writelines(json.dumps(row) + "\n" for row in rows)
        print()
        print(table(rows))
    print("checks: " + ("MISMATCH or failure (above)" if failed else "ok"))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
