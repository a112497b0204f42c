"""coop.device's kernels, typed for the arguments their host side passes."""

import importlib

import numpy as np
from numba import cuda, typeof

import coop

from ._registry import SCALARS, _op_for, case


# -- coop.device's kernels ------------------------------------------------------------------
# Each algorithm's kernels for float16, bool and int8 (where it takes them), and the
# scans and reduction of tuple values, typed for the arguments their host side passes
# (NumPy stand-ins: Numba types an array as it types a device array of its dtype). A
# float16 constant in a kernel (a closure's np.float16(0)) is invalid IR to NVVM with
# numba-cuda 0.30: the GPU found one in inclusive_scan without initial, which the
# simulator never compiles.

DEVICE_DTYPES = ("float16", "bool", "int8")


def _types_of(*stand_ins):
    return tuple(typeof(value) for value in stand_ins)


def _array(dtype):
    return np.empty(1, dtype)


def _tile_states(value_dtype):
    """``TileStates(...).arrays`` and its epoch (coop.device.lookback), as stand-ins."""
    from coop.device import lookback

    status = _array(np.uint64 if lookback._packs(value_dtype) else np.uint32)
    if isinstance(value_dtype, tuple):
        values = tuple(_array(member) for member in value_dtype)
        return status, values, values, np.uint32(1)
    if lookback._packs(value_dtype):
        return status, status, status, np.uint32(1)
    return status, _array(value_dtype), _array(value_dtype), np.uint32(1)


@cuda.jit(device=True)
def _nonzero(value):
    return np.float32(value) != 0  # (float16 compared as float32: Numba's float16 compare is a call)


@cuda.jit(device=True)
def _segmented_sum(a, b):
    """(head flag, value) pairs: associative, not commutative."""
    return a[0] | b[0], b[1] if b[0] else a[1] + b[1]


def device_cases(name):
    """The kernels of every coop.device algorithm for items of dtype ``name``."""
    device = {module: importlib.import_module(f"coop.device.{module}")
              for module in ("scan", "reduce", "select", "histogram", "segmented_reduce", "radix_sort",
                             "segmented_sort", "top_k", "adjacent_difference", "find")}
    dtype = np.dtype(SCALARS[name][0])
    op = _op_for(name)
    for exclusive, has_initial in ((False, False), (False, True), (True, True)):
        kernel, _ = device["scan"]._scan_kernel(op, dtype, dtype, exclusive, has_initial)
        form = "exclusive" if exclusive else "inclusive" if has_initial else "inclusive-without-initial"
        case(f"device-scan-{form}-{name}", _types_of(_array(dtype), _array(dtype), 1, *_tile_states(dtype),
                                                     dtype.type(0)))(kernel)
    kernel, _, _ = device["reduce"]._kernel(op, dtype, dtype)
    case(f"device-reduce-{name}", _types_of(_array(dtype), 1, _array(dtype), _array(np.uint32), dtype.type(0),
                                            _array(dtype)))(kernel)
    segment_kernel, segments_kernel = device["segmented_reduce"]._kernels(op, dtype, dtype)
    case(f"device-segmented_reduce-{name}", _types_of(_array(dtype), _array(dtype), _array(np.int64),
                                                      dtype.type(0)))(segment_kernel)
    case(f"device-segmented_reduce-by_size-{name}", _types_of(_array(dtype), _array(dtype), _array(np.int64),
                                                              dtype.type(0), 1))(segments_kernel)
    for form, predicate, flags in (("select_flagged", None, np.bool_), ("partition", _nonzero, None)):
        kernel, _ = device["select"]._select_kernel(predicate, dtype, flags, np.int32, form == "partition")
        flag_array = _array(flags if flags is not None else dtype)  # (d_in where there are no flags)
        case(f"device-{form}-{name}", _types_of(_array(dtype), flag_array, _array(dtype), _array(np.int64),
                                                _array(np.int64), 1, *_tile_states(np.int32)))(kernel)
    for left in (True, False):
        neighbours_kernel, difference_kernel, _ = device["adjacent_difference"]._kernels(None, dtype, dtype, left)
        side = "left" if left else "right"
        case(f"device-subtract_{side}-neighbours-{name}", _types_of(_array(dtype), 1, _array(dtype), 1))(
            neighbours_kernel)
        if dtype.kind in "iuf":  # (the default difference subtracts numbers)
            case(f"device-subtract_{side}-{name}", _types_of(_array(dtype), _array(dtype), 1, _array(dtype),
                                                             True))(difference_kernel)
    for upper in (False, True):
        kernel = device["find"]._search_kernel(device["find"].less, np.int64, upper)  # (the default)
        case(f"device-{'upper' if upper else 'lower'}_bound-{name}", _types_of(_array(dtype), 1, _array(dtype), 1,
                                                                              _array(np.int64)))(kernel)
    for form, with_positions, run_edges in (("unique", False, False), ("run_length_encode", True, False),
                                            ("non_trivial_runs", True, True)):
        kernel, _ = device["select"]._select_kernel(None, dtype, None, np.int32, False,
                                                    differs=device["select"].adjacent_differs(None),
                                                    with_positions=with_positions, run_edges=run_edges,
                                                    with_items=not run_edges)
        case(f"device-{form}-{name}", _types_of(_array(dtype), _array(dtype), _array(dtype),
                                                _array(np.int32 if run_edges else np.int64), _array(np.int64), 1,
                                                *_tile_states(np.int32)))(kernel)
    if name == DEVICE_DTYPES[0]:  # (its items are positions: one case)
        case("device-run_length_encode-lengths", _types_of(_array(np.int64), _array(np.int64), 1, _array(np.int32)))(
            device["select"]._run_lengths_kernel(np.int32))
        case("device-non_trivial_runs-lengths", _types_of(_array(np.int32), _array(np.int64), _array(np.int64),
                                                          _array(np.int32), _array(np.int64)))(
            device["select"]._run_edges_kernel(np.int64, np.int32, np.int64))
    case(f"device-unique_by_key-values-{name}", _types_of(_array(dtype), _array(np.int64), _array(np.int64),
                                                          _array(dtype)))(device["select"]._gather_kernel)
    by_key = importlib.import_module("coop.device.scan_by_key")
    for exclusive in (False, True):
        kernel, _ = by_key._scan_by_key_kernel(op, device["select"].adjacent_differs(None), dtype, dtype, dtype,
                                               exclusive)
        case(f"device-{'exclusive' if exclusive else 'inclusive'}_scan_by_key-{name}",
             _types_of(_array(dtype), _array(dtype), _array(dtype), 1, *_tile_states((by_key.FLAG, dtype)),
                       dtype.type(0)))(kernel)
    kernel, _ = device["select"]._select_kernel(_nonzero, dtype, None, np.uint64, False, second=_nonzero)
    three_parts = (_array(dtype),) * 3
    case(f"device-three_way_partition-{name}", _types_of(_array(dtype), _array(dtype), three_parts, _array(np.int64),
                                                         _array(np.int64), 1, *_tile_states(np.uint64)))(kernel)
    if dtype.kind in "iuf":  # (histogram_even's samples)
        kernel, _, position_type = device["histogram"]._histogram_kernel(dtype, np.uint32, 10)
        case(f"device-histogram_even-{name}", _types_of(_array(dtype), 1, _array(np.uint32), _array(np.uint32),
                                                        position_type(0), position_type(1)))(kernel)
    sort = device["radix_sort"]
    key_bits = sort._key_bits(dtype)
    digit_bits, passes = sort._passes(0, key_bits)
    kernel, _ = sort._histogram_kernel(dtype, passes, digit_bits, False)
    case(f"device-radix_sort-histogram-{name}", _types_of(_array(dtype), 1, 0, key_bits, _array(np.int32),
                                                          _array(np.int32)))(kernel)
    for form, values in (("keys", None), ("pairs", dtype)):
        kernel, _ = sort._onesweep_kernel(dtype, values, digit_bits, False)
        carried = _array(dtype if values is None else values)
        status, _, _, epoch = _tile_states(np.uint32)
        case(f"device-radix_sort-onesweep-{form}-{name}", _types_of(_array(dtype), _array(dtype), carried, carried, 1,
                                                                    _array(np.int32), 0, 0, status, epoch))(kernel)
        warp_kernel, block_kernel, _ = device["segmented_sort"]._segment_kernels(dtype, values, values is not None)
        segments = (_array(np.int64), 0, _array(np.int32), _array(np.int32))
        case(f"device-segmented_sort-warp-{form}-{name}", _types_of(_array(dtype), _array(dtype), carried, carried,
                                                                    *segments))(warp_kernel)
        case(f"device-segmented_sort-block-{form}-{name}", _types_of(_array(dtype), _array(dtype), _array(dtype),
                                                                     carried, carried, carried, segments[0], 0,
                                                                     *segments[2:]))(block_kernel)
        count_kernel, filter_kernel, select_kernel, *_ = device["top_k"]._kernels(dtype, values, values is None)
        counters, state, prefix, positions = _array(np.uint32), _array(np.int64), _array(np.uint64), _array(np.int64)
        if values is None:
            case(f"device-top_k-count-{name}", _types_of(_array(dtype), 1, 1, counters, state, prefix))(count_kernel)
        case(f"device-top_k-filter-{form}-{name}", _types_of(_array(dtype), carried, 1, 1, 1, _array(dtype), positions,
                                                             _array(dtype), positions, _array(dtype), carried,
                                                             counters, state, prefix))(filter_kernel)
        case(f"device-top_k-select-{form}-{name}", _types_of(_array(dtype), carried, 1, 1, _array(dtype), positions,
                                                             _array(dtype), carried, state, prefix))(select_kernel)


def device_merge_sort_cases(name):
    """coop.device.merge_sort's kernels for keys of dtype ``name``, alone and with values
    of their dtype, by the default comparator."""
    merge = importlib.import_module("coop.device.merge_sort")
    dtype = np.dtype(SCALARS[name][0])
    case(f"device-merge_sort-partition-{name}", _types_of(_array(dtype), 1, 1, 1, 1, _array(np.int64)))(
        merge._partition_kernel(merge.less, dtype))
    for form, values in (("keys", None), ("pairs", dtype)):
        carried = _array(dtype if values is None else values)
        kernel, _ = merge._tile_sort_kernel(merge.less, dtype, values)
        case(f"device-merge_sort-tiles-{form}-{name}", _types_of(_array(dtype), _array(dtype), carried, carried,
                                                                 1))(kernel)
        case(f"device-merge_sort-merge-{form}-{name}", _types_of(_array(dtype), _array(dtype), carried, carried, 1, 1,
                                                                 _array(np.int64)))(
            merge._merge_kernel(merge.less, dtype, values))


def device_tuple_cases(dtypes):
    """The scans and reduction of tuple values of ``dtypes``."""
    scan, reduce = (importlib.import_module(f"coop.device.{module}") for module in ("scan", "reduce"))
    dtypes = tuple(np.dtype(d) for d in dtypes)
    values = tuple(_array(d) for d in dtypes)
    initial = tuple(d.type(0) for d in dtypes)
    label = "-".join(d.name for d in dtypes)
    for exclusive, has_initial in ((False, False), (False, True), (True, True)):
        kernel, _ = scan._scan_kernel(_segmented_sum, dtypes, dtypes, exclusive, has_initial)
        form = "exclusive" if exclusive else "inclusive" if has_initial else "inclusive-without-initial"
        case(f"device-tuple-scan-{form}-{label}", _types_of(values, values, 1, *_tile_states(dtypes),
                                                            initial))(kernel)
    for name, op in (("segmented_sum", _segmented_sum), ("argmax", coop.ops.argmax)):
        kernel, _, _ = reduce._kernel(op, dtypes, dtypes)
        case(f"device-tuple-reduce-{name}-{label}", _types_of(values, 1, values, _array(np.uint32), initial,
                                                              values))(kernel)


for _name in DEVICE_DTYPES:
    device_cases(_name)
for _name in DEVICE_DTYPES + ("int32", "float64"):
    device_merge_sort_cases(_name)
device_tuple_cases((np.int32, np.float32))
