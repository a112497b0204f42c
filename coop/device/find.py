"""Device-wide binary searches (CUB's DeviceFind::LowerBound, UpperBound):
``lower_bound(d_range, d_values, d_output, comp=None)`` and ``upper_bound(...)``, for
each value the position in a sorted range where it would go (``numpy.searchsorted``'s
``side="left"`` and ``"right"``).

One launch whose grid fills the GPU once, each thread searching for one value after
another (a grid-stride loop): a binary search of the range, ``log2(len(d_range)) + 1``
reads each, as CUB's does (its range is read through the L2 and L1 caches: the first
steps of every search read the same few items).
"""

import functools

import numpy as np
from numba import cuda

from coop._core.arithmetic import less
from coop._core.constants import without_dead_branches
from coop._core.errors import ArgumentTypeError, ArgumentValueError
from coop.device._host import (device_array, device_operator, documented, launch_over, launch_stream,
                               takes_temp_storage)

__all__ = ["lower_bound", "upper_bound"]


@functools.lru_cache(maxsize=None)
def _search_kernel(comp, output_dtype, upper):
    output_type = np.dtype(output_dtype).type

    def search_kernel(d_range, m, d_values, n, d_output):
        for v in range(cuda.grid(1), n, cuda.gridDim.x * cuda.blockDim.x):
            value = d_values[v]
            low, high = 0, m
            while low < high:
                middle = (low + high) // 2
                # lower bound: the first item not before the value; upper: the first after it
                if (not comp(value, d_range[middle])) if upper else comp(d_range[middle], value):
                    low = middle + 1
                else:
                    high = middle
            d_output[v] = output_type(low)

    return cuda.jit(without_dead_branches(search_kernel))



def _search(function, d_range, d_values, d_output, comp, upper, stream):
    d_range = device_array(function, "d_range", d_range)
    d_values = device_array(function, "d_values", d_values)
    d_output = device_array(function, "d_output", d_output)
    m, n = d_range.size, d_values.size
    if d_output.size < n:
        raise ArgumentValueError(f"coop.device.{function}: d_output is too short: {d_output.size} items, {n} needed "
                                 "(one position a value)")
    if d_output.dtype.kind not in "iu":
        raise ArgumentTypeError(f"coop.device.{function}: d_output must hold integers (positions in d_range), got "
                                f"{d_output.dtype}")
    if m > np.iinfo(d_output.dtype).max:
        raise ArgumentValueError(f"coop.device.{function}: d_output's dtype {d_output.dtype} cannot hold positions "
                                 f"up to {m} (len(d_range)): use a wider integer type")
    # (by default coop's own less, which compares float16 values through float32: Numba's
    # float16 comparison is an out-of-line call)
    comp = less if comp is None else device_operator(function, "comp", comp)
    stream = launch_stream(stream)
    if n == 0:
        return
    kernel = _search_kernel(comp, d_output.dtype, upper)
    launch_over(kernel, n, stream, d_range, m, d_values, n, d_output)


@documented
@takes_temp_storage
def lower_bound(d_range, d_values, d_output, comp=None, stream=None, temp_storage=None):
    """For each value, the first position of the sorted ``d_range`` whose item is not
    before it (CUB DeviceFind::LowerBound, ``std::lower_bound``; NumPy's
    ``searchsorted(d_range, d_values, side="left")``): where the value would be inserted
    before any equal items.

    Parameters
    ----------
    d_range : device array
        The items searched, sorted by ``comp`` (ascending by default), may be empty.
        {device_array}
    d_values : device array
        The values to search for, in any order, may be empty.
    d_output : device array
        At least as long as ``d_values``, of an integer dtype that holds
        ``len(d_range)``: value ``i``'s position goes to ``d_output[i]`` (0 to
        ``len(d_range)``).
    comp : operator, optional
        ``comp(a, b)``: whether ``a`` comes before ``b`` in ``d_range``'s order (a strict
        weak order, as C++'s). Default None: ``a < b``.
        {device_operator}
    stream : stream, optional
        {device_stream}
    temp_storage : device array, optional
        {device_temp_storage}

    Returns
    -------
    None
        {device_returns}

    Example
    -------
    The bin of each sample, with bins given by their sorted left edges::

        import numpy as np
        import coop
        from numba import cuda

        rng = np.random.default_rng(8)
        edges = np.sort(rng.random(100)).astype(np.float32)
        samples = rng.random(4000).astype(np.float32)
        d_where = cuda.device_array(samples.size, np.int32)
        coop.device.lower_bound(cuda.to_device(edges), cuda.to_device(samples), d_where)
        assert (d_where.copy_to_host() == np.searchsorted(edges, samples, side="left")).all()
    """
    _search("lower_bound", d_range, d_values, d_output, comp, False, stream)


@documented
@takes_temp_storage
def upper_bound(d_range, d_values, d_output, comp=None, stream=None, temp_storage=None):
    """For each value, the first position of the sorted ``d_range`` whose item comes
    after it (CUB DeviceFind::UpperBound, ``std::upper_bound``; NumPy's
    ``searchsorted(d_range, d_values, side="right")``): where the value would be
    inserted after any equal items.

    Parameters
    ----------
    d_range, d_values, d_output, comp, stream, temp_storage : as in ``coop.device.lower_bound``

    Returns
    -------
    None
        {device_returns}

    Example
    -------
    How many items of a descending range are at least each value: its upper bound under
    ``comp = a > b``::

        import numpy as np
        import coop
        from numba import cuda

        scores = -np.sort(-np.random.default_rng(9).integers(0, 1000, 3000)).astype(np.int32)
        thresholds = np.arange(0, 1001, 50, dtype=np.int32)
        d_count = cuda.device_array(thresholds.size, np.int64)
        coop.device.upper_bound(cuda.to_device(scores), cuda.to_device(thresholds), d_count,
                                comp=lambda a, b: a > b)
        assert (d_count.copy_to_host() == [(scores >= t).sum() for t in thresholds]).all()
    """
    _search("upper_bound", d_range, d_values, d_output, comp, True, stream)
