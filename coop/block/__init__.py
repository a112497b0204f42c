"""Block-level primitives (CUB's block/ layer): reductions and scans over all threads of
a thread block (1-, 2- or 3-D, 1 to 1024 threads), built from the warp primitives and a
little shared memory. Each call synchronises the block internally: consecutive calls
need no barrier between them."""

from coop.block.reduce import all_reduce, all_sum, reduce, sum
from coop.block.scan import exclusive_scan, exclusive_sum, inclusive_scan, inclusive_sum

__all__ = [
    "reduce",
    "sum",
    "all_reduce",
    "all_sum",
    "inclusive_scan",
    "exclusive_scan",
    "inclusive_sum",
    "exclusive_sum",
]
