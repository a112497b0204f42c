"""A tour of coop: ``python -m coop``.

Runs six small kernels built from coop's warp, thread and block primitives, checks each
result against NumPy (exactly) and prints one line per kernel. It runs on the GPU if there
is one, otherwise on Numba's CUDA simulator, and says which. The exit status is non-zero
if any kernel gives a wrong result.
"""

import sys
import warnings

import numpy as np

import coop  # before numba.cuda: without a GPU, importing coop chooses Numba's simulator
from numba import cuda
from numba.cuda.core.errors import NumbaPerformanceWarning

# The tour launches one tiny block per kernel; Numba would warn that it leaves the GPU idle.
warnings.filterwarnings("ignore", category=NumbaPerformanceWarning)

WARPS = 2
THREADS = 32 * WARPS  # one block of two warps
BLOCK_2D = (32, WARPS)  # the same 64 threads as a 2-D block, for the block-wide scan
ITEMS = 4  # items per thread in the thread-level scan

rng = np.random.default_rng(2024)


# -- 1. warp sum: lane 0 of each warp gets the sum of its warp's 32 values ----------------


@cuda.jit
def warp_sum_kernel(x, sums):
    i = cuda.grid(1)
    total = coop.warp.sum(x[i])
    if cuda.laneid == 0:
        sums[i // 32] = total


def warp_sum():
    x = rng.integers(-1000, 1000, THREADS).astype(np.int32)
    sums = cuda.device_array(WARPS, np.int32)
    warp_sum_kernel[1, THREADS](cuda.to_device(x), sums)
    return np.array_equal(sums.copy_to_host(), x.reshape(WARPS, 32).sum(axis=1))


# -- 2. warp max with an operator written as a lambda inside the kernel -------------------


@cuda.jit
def warp_max_kernel(x, maxima):
    i = cuda.grid(1)
    m = coop.warp.reduce(x[i], lambda a, b: max(a, b))
    if cuda.laneid == 0:
        maxima[i // 32] = m


def warp_max():
    x = rng.standard_normal(THREADS).astype(np.float32)
    maxima = cuda.device_array(WARPS, np.float32)
    warp_max_kernel[1, THREADS](cuda.to_device(x), maxima)
    return np.array_equal(maxima.copy_to_host(), x.reshape(WARPS, 32).max(axis=1))


# -- 3. warp exclusive sum: each lane's offset, and the warp's total in every lane --------


@cuda.jit
def warp_offsets_kernel(counts, offsets, totals):
    i = cuda.grid(1)
    offset, total = coop.warp.exclusive_sum(counts[i], return_aggregate=True)
    offsets[i] = offset
    totals[i] = total


def warp_exclusive_sum():
    counts = rng.integers(0, 10, THREADS).astype(np.int32)
    offsets = cuda.device_array(THREADS, np.int32)
    totals = cuda.device_array(THREADS, np.int32)
    warp_offsets_kernel[1, THREADS](cuda.to_device(counts), offsets, totals)
    per_warp = counts.reshape(WARPS, 32)
    expected_offsets = (np.cumsum(per_warp, axis=1) - per_warp).ravel()
    expected_totals = np.repeat(per_warp.sum(axis=1), 32)
    return np.array_equal(offsets.copy_to_host(), expected_offsets) and np.array_equal(
        totals.copy_to_host(), expected_totals
    )


# -- 4. warp argmax over (value, index) tuples; ties go to the smaller index --------------


@cuda.jit
def warp_argmax_kernel(x, best_values, best_indices):
    i = cuda.grid(1)
    value, index = coop.warp.reduce((x[i], i), coop.ops.argmax)
    if cuda.laneid == 0:
        best_values[i // 32] = value
        best_indices[i // 32] = index


def warp_argmax():
    x = rng.integers(0, 8, THREADS).astype(np.float32)  # few distinct values: many ties
    best_values = cuda.device_array(WARPS, np.float32)
    best_indices = cuda.device_array(WARPS, np.int64)
    warp_argmax_kernel[1, THREADS](cuda.to_device(x), best_values, best_indices)
    per_warp = x.reshape(WARPS, 32)
    expected_indices = np.argmax(per_warp, axis=1) + 32 * np.arange(WARPS)  # first maximum
    return np.array_equal(best_values.copy_to_host(), per_warp.max(axis=1)) and np.array_equal(
        best_indices.copy_to_host(), expected_indices
    )


# -- 5. thread-level scan: each thread scans the items it holds in registers -------------


@cuda.jit
def thread_scan_kernel(x, scanned, totals):
    t = cuda.grid(1)
    items = cuda.local.array(ITEMS, np.int32)
    for k in range(ITEMS):
        items[k] = x[t * ITEMS + k]
    totals[t] = coop.thread.inclusive_sum(items, items)  # in place; returns the total
    for k in range(ITEMS):
        scanned[t * ITEMS + k] = items[k]


def thread_scan():
    x = rng.integers(-100, 100, THREADS * ITEMS).astype(np.int32)
    scanned = cuda.device_array(THREADS * ITEMS, np.int32)
    totals = cuda.device_array(THREADS, np.int32)
    thread_scan_kernel[1, THREADS](cuda.to_device(x), scanned, totals)
    per_thread = x.reshape(THREADS, ITEMS)
    return np.array_equal(
        scanned.copy_to_host(), np.cumsum(per_thread, axis=1).ravel()
    ) and np.array_equal(totals.copy_to_host(), per_thread.sum(axis=1))


# -- 6. block exclusive sum over a 2-D block: each thread's offset, and the block's total --


@cuda.jit
def block_offsets_kernel(counts, offsets, totals):
    rank = cuda.threadIdx.x + cuda.threadIdx.y * cuda.blockDim.x  # CUB's rank in a 2-D block
    offset, total = coop.block.exclusive_sum(counts[rank], threads=THREADS, return_aggregate=True)
    offsets[rank] = offset
    totals[rank] = total


def block_exclusive_sum():
    counts = rng.integers(0, 10, THREADS).astype(np.int32)
    offsets = cuda.device_array(THREADS, np.int32)
    totals = cuda.device_array(THREADS, np.int32)
    block_offsets_kernel[1, BLOCK_2D](cuda.to_device(counts), offsets, totals)
    return np.array_equal(offsets.copy_to_host(), np.cumsum(counts) - counts) and np.array_equal(
        totals.copy_to_host(), np.full(THREADS, counts.sum())
    )


TOUR = [
    ("warp sum", warp_sum),
    ("warp max (lambda)", warp_max),
    ("warp exclusive sum + aggregate", warp_exclusive_sum),
    ("warp argmax (value, index)", warp_argmax),
    ("thread inclusive sum", thread_scan),
    ("block exclusive sum (2-D block)", block_exclusive_sum),
]


def describe_backend():
    if coop.SIMULATOR:
        return "Numba's CUDA simulator on the CPU"
    device = cuda.get_current_device()
    name = device.name.decode() if isinstance(device.name, bytes) else device.name
    major, minor = device.compute_capability
    return f"GPU {name} (compute capability {major}.{minor})"


def main():
    print(f"coop {coop.__version__} on {describe_backend()}")
    failures = 0
    for name, run in TOUR:
        try:
            result = "OK" if run() else "MISMATCH"
        except Exception as exc:  # show every kernel's outcome, then fail
            first_line = (str(exc).strip().splitlines() or [""])[0]
            result = f"ERROR {type(exc).__name__}: {first_line}"
        failures += result != "OK"
        print(f"  {name:<32} {result}")
    if failures:
        print(f"{failures} of {len(TOUR)} kernels failed.")
        return 1
    print(f"All {len(TOUR)} kernels match NumPy.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
