"""Device-wide algorithms (CUB's device layer), called from the host on device arrays and
built from coop's own block and warp primitives: the code of each is a worked example of
composing them.

- ``reduce(d_in, d_out, op, initial)``, ``sum(d_in, d_out)`` (DeviceReduce).
- ``inclusive_scan``, ``exclusive_scan(d_in, d_out, op, initial)``, ``inclusive_sum``,
  ``exclusive_sum(d_in, d_out)`` (DeviceScan): one pass, decoupled look-back.
- ``inclusive_scan_by_key(d_keys, d_values, d_out, op, equality=None)``,
  ``exclusive_scan_by_key(..., op, initial, ...)``, ``inclusive_sum_by_key``,
  ``exclusive_sum_by_key`` (DeviceScan::*ByKey): scans starting again at each run of keys.
- ``select(d_in, d_out, predicate)``, ``select_flagged(d_in, flags, d_out)``,
  ``unique(d_in, d_out, equality=None)``, ``partition(d_in, d_out, predicate)``
  (DeviceSelect, DevicePartition): return the count.
- ``unique_by_key(d_keys_in, d_values_in, d_keys_out, d_values_out, equality=None)``
  (DeviceSelect::UniqueByKey) and ``three_way_partition(d_in, d_first_part_out,
  d_second_part_out, d_unselected_out, select_first_part_op, select_second_part_op)``
  (DevicePartition::If, three-way): return the count(s).
- ``run_length_encode(d_in, d_unique_out, d_counts_out)`` (DeviceRunLengthEncode::Encode)
  and ``non_trivial_runs(d_in, d_offsets_out, d_lengths_out)`` (::NonTrivialRuns): return
  the number of runs.
- ``histogram_even(d_samples, d_histogram, bins, lower, upper)`` (DeviceHistogram).
- ``segmented_reduce(d_in, d_out, offsets, op, initial)`` (DeviceSegmentedReduce).
- ``radix_sort(d_keys, d_values=None, descending=False, begin_bit=0, end_bit=None)``
  (DeviceRadixSort, Onesweep): in place.
- ``merge_sort(d_keys, d_values=None, compare=None)`` (DeviceMergeSort): by any
  comparator, stably, in place.
- ``segmented_sort(d_keys, offsets, d_values=None, descending=False)``
  (DeviceSegmentedSort): each segment on its own, stably, in place.
- ``top_k(d_keys, d_keys_out, k, d_values=None, d_values_out=None, largest=True)``
  (DeviceTopK): the ``k`` largest or smallest keys, in no particular order.
- ``subtract_left(d_in, d_out=None, op=None)``, ``subtract_right(...)``
  (DeviceAdjacentDifference): each item's difference with its neighbour.
- ``lower_bound(d_range, d_values, d_output, comp=None)``, ``upper_bound(...)``
  (DeviceFind): binary searches of a sorted range.

Temporary storage is coop's own, kept between calls per stream and device, unless the
call gets ``temp_storage=``, a device array of at least ``temp_storage_bytes(function,
<the call's arguments>)`` bytes (CUB's two-phase pattern; the sizing runs the call's host
side and launches nothing; the first call on a buffer lays it out, later calls with the
same arrays reuse that layout). A call repeated with the same arrays, scalars, operators
and stream (and buffer) queues again the launches an earlier one made, without running its
host side: after the first call with ``temp_storage=``, after the second without (then on a
buffer of the stream's own, for calls of up to 64 MiB of temporaries). What an array holds
is read anew each time; a call that returns a value rather than writing it to device
memory runs in full each time.

CUDA graphs: a call with ``temp_storage=`` on a stream that is capturing (Numba's stream
with cuda.bindings' ``cuStreamBeginCapture``, CuPy's ``Stream.begin_capture``,
``torch.cuda.graph``) is captured, and each replay initialises the storage again; calls a
graph cannot hold raise, saying what to pass (no ``temp_storage=``, a count returned
rather than written to ``d_num_selected_out=``, the default stream while another stream
captures). Make one call before capturing: the first compiles.

Several GPUs: each device has its own temporaries, SM count and kernels; call from a
thread per device (``cuda.select_device(i)`` in it, or ``with cuda.gpus[i]:``).

``coop.device.lookback``: the decoupled look-back the single-pass kernels are built on
(``TileStates``, ``claim_tile``, ``tile_prefix``...), for kernels of your own.

``reduce`` and the scans also take tuples of arrays (item ``i`` is ``(d_in[0][i],
d_in[1][i], ...)``) with an operator on tuples and a tuple ``initial``.

Every function takes 1-D contiguous device arrays (Numba, CuPy, PyTorch: any CUDA Array
Interface object) and ``stream=``; operators may be coop.ops operators, ``operator.add``
and the like, lambdas or functions given on the host (compiled for the device), or
``@cuda.jit(device=True)`` functions. Bad input raises before any launch. Calls return
without waiting for the GPU, as CUB's do, except those that return a count (select,
select_flagged, partition), which wait to read it.
"""

from coop.device import lookback
from coop.device._host import temp_storage_bytes
from coop.device.reduce import reduce, sum  # noqa: A004
from coop.device.scan import exclusive_scan, exclusive_sum, inclusive_scan, inclusive_sum
from coop.device.scan_by_key import (exclusive_scan_by_key, exclusive_sum_by_key, inclusive_scan_by_key,
                                     inclusive_sum_by_key)
from coop.device.histogram import histogram_even
from coop.device.segmented_reduce import segmented_reduce
from coop.device.select import (non_trivial_runs, partition, run_length_encode, select, select_flagged,
                                three_way_partition, unique, unique_by_key)
from coop.device.radix_sort import radix_sort
from coop.device.merge_sort import merge_sort
from coop.device.segmented_sort import segmented_sort
from coop.device.top_k import top_k
from coop.device.adjacent_difference import subtract_left, subtract_right
from coop.device.find import lower_bound, upper_bound
from coop._core.namespace import public_namespace

__all__ = ["reduce", "sum", "inclusive_scan", "exclusive_scan", "inclusive_sum", "exclusive_sum",
           "inclusive_scan_by_key", "exclusive_scan_by_key", "inclusive_sum_by_key", "exclusive_sum_by_key", "select",
           "select_flagged", "unique", "unique_by_key", "run_length_encode", "non_trivial_runs", "partition",
           "three_way_partition", "histogram_even", "segmented_reduce", "radix_sort", "merge_sort", "segmented_sort", "top_k",
           "subtract_left", "subtract_right", "lower_bound", "upper_bound", "temp_storage_bytes", "lookback"]

public_namespace(__name__)
