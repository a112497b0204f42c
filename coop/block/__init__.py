"""Block-level primitives (CUB's block/ layer): reductions and scans over all threads of
a thread block (1-, 2- or 3-D, 1 to 1024 threads), built from the warp primitives and a
little shared memory, exchanges of items between threads (``coop.block.exchange``),
shuffles (``coop.block.shuffle``), tile loads and stores (``load``, ``store``,
``transform``), radix ranking and sorting (``radix_rank``, ``radix_sort``), top-k selection
(``top_k``), merge sorting (``merge_sort``), and the tile analytics: ``histogram``, discontinuities (``flag_heads``,
``flag_tails``, ``flag_heads_and_tails``), adjacent differences (``subtract_left``,
``subtract_right``) and run-length coding (``run_length_decode``, ``run_length_encode``). Each call that uses shared memory synchronises the block internally
(of the loads and stores, only the transposing algorithms use any): consecutive calls
need no barrier between them."""

from coop.block import exchange
from coop.block import shuffle
from coop.block.adjacent_difference import subtract_left, subtract_right
from coop.block.discontinuity import flag_heads, flag_heads_and_tails, flag_tails
from coop.block.histogram import histogram
from coop.block.load_store import load, store, transform
from coop.block.run_length import run_length_decode, run_length_encode
from coop.block.reduce import all_reduce, all_sum, reduce, sum
from coop.block.merge import merge_sort
from coop.block.radix import radix_sort
from coop.block.radix_ranking import radix_rank
from coop.block.top_k import top_k
from coop.block.scan import exclusive_scan, exclusive_sum, inclusive_scan, inclusive_sum
from coop._core.namespace import public_namespace, registered_names

__all__ = registered_names(__name__, "exchange", "shuffle")

public_namespace(__name__)
