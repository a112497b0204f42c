"""Sweep of the select kernel's tile for coop.device.unique, run_length_encode and
three_way_partition.

    python benchmarks/select_tiles.py THREADS:ITEMS[:BLOCKS_PER_SM] ...

int32 items, 2^24 and 2^28 of them: for unique and run_length_encode ``i >> 4`` (runs of
16, as benchmarks/device.py's), for three_way_partition the draws of ``i * 2654435761``'s
top byte split at 64 and 192 (a quarter, a half, a quarter); for each tile shape the select
kernel (``coop.device.select``'s private ``_select_kernel``) is built with those threads
and items a thread (and launch bounds), checked, then timed with CUDA events around each
of 10 calls (median). Needs a GPU.
"""
import importlib
import sys

import numpy as np

import coop  # (before numba.cuda)
from numba import cuda

select_module = importlib.import_module("coop.device.select")
built = select_module._select_kernel


def shaped(threads, items, blocks):
    """The select kernel builder with this tile, and the module's launches of that size."""
    select_module.THREADS = threads
    select_module._select_kernel = lambda *args, **kwargs: built(*args, threads=threads, n_items=items,
                                                                 blocks_per_sm=blocks, **kwargs)


def median_us(call):
    times = []
    for _ in range(10):
        start, end = cuda.event(), cuda.event()
        start.record()
        call()
        end.record()
        end.synchronize()
        times.append(cuda.event_elapsed_time(start, end))
    return np.median(times) * 1e3


def main(shapes):
    for log2n in (24, 28):
        n = 1 << log2n
        d_x = cuda.to_device((np.arange(n, dtype=np.int64) >> 4).astype(np.int32))
        d_out, d_lengths = cuda.device_array(n, np.int32), cuda.device_array(n, np.int32)
        d_count = cuda.device_array(1, np.int64)
        runs = np.arange(-(-n // 16), dtype=np.int32)
        mixed = ((np.arange(n, dtype=np.uint64) * np.uint64(2654435761)) >> np.uint64(24) & np.uint64(255))
        mixed = mixed.astype(np.int32)
        d_mixed, d_parts = cuda.to_device(mixed), [cuda.device_array(n, np.int32) for _ in range(3)]
        d_counts = cuda.device_array(2, np.int64)
        low, middle = mixed[mixed < 64], mixed[(mixed >= 64) & (mixed < 192)]
        for shape in shapes:
            threads, items, *blocks = (int(v) for v in shape.split(":"))
            shaped(threads, items, blocks[0] if blocks else None)
            for name, call in (("unique", lambda: coop.device.unique(d_x, d_out, d_num_selected_out=d_count)),
                               ("run_length_encode", lambda: coop.device.run_length_encode(
                                   d_x, d_out, d_lengths, d_num_runs_out=d_count))):
                call()
                count = int(d_count.copy_to_host()[0])
                ok = count == runs.size and np.array_equal(d_out[:count].copy_to_host(), runs)
                print(f"2^{log2n} {shape:>10} {name:19}: median {median_us(call):8.1f} us "
                      f"{'ok' if ok else 'MISMATCH'}", flush=True)

            def three_way():
                coop.device.three_way_partition(d_mixed, *d_parts, lambda v: v < 64, lambda v: v < 192,
                                                d_num_selected_out=d_counts)

            three_way()
            ok = (tuple(d_counts.copy_to_host()) == (low.size, middle.size)
                  and np.array_equal(d_parts[0][:low.size].copy_to_host(), low)
                  and np.array_equal(d_parts[1][:middle.size].copy_to_host(), middle))
            print(f"2^{log2n} {shape:>10} three_way_partition: median {median_us(three_way):8.1f} us "
                  f"{'ok' if ok else 'MISMATCH'}", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:] or ["256:32", "256:16"])
