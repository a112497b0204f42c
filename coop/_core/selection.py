"""What the block and warp top-k share: the class each key of a tile gets while a radix
select runs (``SELECTED``, ``OTHER``, ``PAST_VALID``, or ``TIED``: still a candidate,
equal to the ``k``-th best in the bits seen so far), how classes start and how the
candidates left at the end are settled (the earliest in the tile first), their
arguments, and the value types a sizer is given."""

import numpy as np
from numba.cuda import types

from coop._core import radix
from coop._core.items import items_or_tuple
from coop._core.specialize import device_function, is_none
from coop._core.values import check_dtype, value_type_of

U32 = np.uint32
SELECTED, OTHER, PAST_VALID, TIED = 0, 1, 2, 3


@device_function
def start_classes(classes, n, base, count, wanted):
    """The classes of a thread's ``n`` keys, tile positions ``base ..``, where the tile's
    first ``count`` keys are valid and ``wanted`` of them are selected: candidates, or
    settled where all or none of the valid keys are selected."""
    for i in range(n):
        if base + i >= count:
            classes[i] = PAST_VALID
        elif wanted == count:
            classes[i] = SELECTED
        elif wanted == 0:
            classes[i] = OTHER
        else:
            classes[i] = TIED


@device_function
def candidates_of(classes, n):
    """How many of a thread's ``n`` keys are still candidates."""
    count = U32(0)
    for i in range(n):
        if classes[i] == TIED:
            count = U32(count + U32(1))
    return count


@device_function
def settle_candidates(classes, n, earlier, all_needed, needed):
    """The candidates left selected where ``all_needed``, else the first ``needed`` of
    the tile's (``earlier``: the candidates before the thread's first), the others not."""
    for i in range(n):
        if classes[i] == TIED:
            classes[i] = SELECTED if all_needed or earlier < needed else OTHER
            earlier = U32(earlier + U32(1))


def top_k_arguments(sig, keys, k, values):
    """``(key type, value types, values a tuple)`` of a top-k's arguments, checked: radix
    keys, an integer ``k``, values an items array or a tuple of them, or None."""
    key_type = types.unliteral(sig.items(keys, "keys"))
    radix.check_key_type(sig, key_type, "keys")
    if sig.run_time_int(k, "k") is None:
        raise sig.error("k", "is required: how many keys to select, an integer (run time allowed)")
    value_types, values_tuple = items_or_tuple(sig, values, "values") if not is_none(values) else ([], False)
    return key_type, value_types, values_tuple


def value_types_of(sig, value_dtype):
    """The value types a top-k sizer's ``value_dtype`` names (a dtype, a tuple of dtypes
    for a tuple of value arrays, or None), checked."""
    value_types = []
    if value_dtype is not None:
        for dtype in value_dtype if isinstance(value_dtype, tuple) else (value_dtype,):
            value_types.append(value_type_of(dtype))
            check_dtype(value_types[-1], sig, "value_dtype")
    return value_types
