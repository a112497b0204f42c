"""Block-level primitives (CUB's block/ layer): reductions and scans over all threads of
a thread block (1-, 2- or 3-D, 1 to 1024 threads), built from the warp primitives and a
little shared memory."""

from coop.block.reduce import all_reduce, all_sum, reduce, sum

__all__ = ["reduce", "sum", "all_reduce", "all_sum"]
