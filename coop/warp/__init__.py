"""Warp-level primitives (CUB's warp/ layer): reductions, scans and broadcast over a
warp or a logical sub-warp of ``width`` = 1, 2, 4, 8, 16 or 32 lanes.

All are shuffle-based or direct memory accesses: no shared memory, no barriers,
results in registers; except the exchanges of items between lanes
(``coop.warp.exchange``), the ``"transpose"`` loads and stores built on them, the
merge sort (``merge_sort``) and the top-k's placement (``top_k``), which go through
shared memory and synchronise the logical warp.
"""

from coop.warp.load_store import load, store
from coop.warp import exchange
from coop.warp.merge import merge_sort
from coop.warp.reduce import (
    all_reduce,
    all_sum,
    head_segmented_reduce,
    reduce,
    sum,
    tail_segmented_reduce,
)
from coop.warp.reduce_batched import reduce_batched, sum_batched
from coop.warp.scan import broadcast, exclusive_scan, exclusive_sum, inclusive_scan, inclusive_sum
from coop.warp.top_k import top_k
from coop._core.namespace import public_namespace, registered_names

__all__ = registered_names(__name__, "exchange")

public_namespace(__name__)
