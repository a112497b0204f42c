"""Tiles of tuples: an items argument that is either one items array or a tuple of items
arrays of the same length (a tile of tuples, stored as one array per member, as
``cuda.local.array`` cannot hold tuples), read and written one tuple value at a time.

A primitive written in terms of ``read(items, i)`` (the value at item ``i``: a scalar,
or a tuple of the members' items) and ``write(items, i, value)`` handles both with one
implementation: what it compares, shuffles or scatters is a value, and coop's scratch
and shuffles take tuple values.

``local_arrays(count, dtypes)`` gives ``allocate()``, which makes a tuple of
``cuda.local.array(count, dtype)``, one per dtype (for one dtype, that one array, so that
code written for tuples serves plain values too): the items of a tile of tuples of
different types (Numba has no loop over the members of such a tuple, and a device
function may not return an array it makes).
"""

import functools

import numpy as np
from numba.cuda import types

from coop._core.backend import SIMULATOR, device_function
from coop._core.misuse import size_check

__all__ = ["items_or_tuple", "array_tuple", "array_lengths_check", "TileItems", "accessors", "local_arrays", "generated"]


def items_or_tuple(sig, arrays, param):
    """``(element types, is_tuple)`` of an items array or a tuple of items arrays."""
    if isinstance(arrays, types.BaseTuple):
        if len(arrays) == 0:
            raise sig.error(param, "must be an items array or a tuple of items arrays, got an empty tuple")
        return [types.unliteral(sig.items(member, param)) for member in arrays.types], True
    return [types.unliteral(sig.items(arrays, param))], False


def array_tuple(is_tuple, given=True):
    """A device function giving an items argument as a tuple of items arrays: a tuple
    (``is_tuple``) as it is, one array as a tuple of one, an omitted argument (not
    ``given``) as ``()``."""
    if not given:
        return _no_arrays
    return _as_given if is_tuple else _one_array


@device_function
def _as_given(arrays):
    return arrays


@device_function
def _one_array(array):
    return (array,)


@device_function
def _no_arrays(unused):
    return ()


def array_lengths_check(qualname, param, n, count):
    """A device function ``check(arrays)``: each of the ``count`` items arrays of the tuple
    ``arrays`` (``param``'s, as ``array_tuple`` gives them) holds exactly ``n`` items."""
    lines = "".join(f"    check(arrays[{j}], {n})\n" for j in range(count))
    return generated(f"def check_lengths(arrays):\n    pass\n{lines}", "check_lengths",
                     check=size_check(qualname, param, exact=True))


class TileItems:
    """An items argument checked and described: ``value_type`` (the element type, or the
    tuple of the members' types), ``is_tuple``, and the device functions ``read``,
    ``write`` and ``length`` (the items of the first member)."""

    def __init__(self, sig, arrays, param):
        element_types, self.is_tuple = items_or_tuple(sig, arrays, param)
        if self.is_tuple:
            self.value_type = types.Tuple(element_types)
        else:
            self.value_type = element_types[0]
        self.members = len(element_types)
        self.read, self.write, self.length = accessors_of(self.value_type)

    def checker(self, primitive_name, param):
        """A device function ``check(arrays) -> n``: the items per thread, each member of a
        tuple checked (at link time) to hold as many as the first."""
        if not self.is_tuple or self.members == 1:
            return self.length
        check = size_check(primitive_name, param, exact=True)
        source = "def check(arrays):\n    n = len(arrays[0])\n" + "".join(
            f"    check_member(arrays[{k}], n)\n" for k in range(1, self.members)
        ) + "    return n\n"
        return generated(source, "check", check_member=check)

    def size_checker(self, primitive_name, param, exact=False):
        """A device function ``check(arrays, n)``: every member holds ``n`` items (at
        least ``n``; with ``exact``, exactly), checked at link time."""
        check = size_check(primitive_name, param, exact=exact)
        if not self.is_tuple:
            return check
        source = "def check(arrays, n):\n" + "".join(
            f"    check_member(arrays[{k}], n)\n" for k in range(self.members)
        )
        return generated(source, "check", check_member=check)

    def check_output(self, sig, arrays, param):
        """Check that ``arrays`` (an output) has this argument's form and member types."""
        element_types, is_tuple = items_or_tuple(sig, arrays, param)
        for member in (arrays.types if is_tuple else (arrays,)):
            sig.writable(member, param)
        mine = list(self.value_type.types) if self.is_tuple else [self.value_type]
        if is_tuple != self.is_tuple or element_types != mine:
            form = "a tuple of items arrays" if self.is_tuple else "an items array"
            raise sig.error(param, f"must be {form} of {self.value_type} like the input, got {arrays}")


def accessors_of(value_type):
    """``accessors`` of items whose item is of ``value_type``: one items array, or a tuple
    of them where it is a tuple type (an items array cannot hold tuples)."""
    return accessors(len(value_type) if isinstance(value_type, types.BaseTuple) else 0)


@functools.lru_cache(maxsize=None)
def accessors(members):
    """``(read, write, length)`` device functions for one items array (``members ==
    0``) or a tuple of ``members`` items arrays."""
    if members == 0:
        return _read_one, _write_one, _length_one
    read = "def read(arrays, i):\n    return (" + "".join(f"arrays[{k}][i], " for k in range(members)) + ")\n"
    write = "def write(arrays, i, value):\n" + "".join(f"    arrays[{k}][i] = value[{k}]\n" for k in range(members))
    return generated(read, "read"), generated(write, "write"), _first_length


@device_function
def _read_one(items, i):
    return items[i]


@device_function
def _write_one(items, i, value):
    items[i] = value


def generated(source, name, **names):
    """The device function ``name`` defined by ``source`` (straight-line code a generator
    wrote out: a line per member of a tuple, per step of an unrolled tree), with ``names``
    as its globals."""
    namespace = dict(names, __name__=__name__)  # (coop's: a second compiler rebuilds it)
    exec(source, namespace)  # noqa: S102
    return device_function(namespace[name])


@device_function
def _length_one(items):
    return len(items)


@device_function
def _first_length(arrays):
    return len(arrays[0])


def local_arrays(count, dtypes):
    """A function ``allocate()`` returning a tuple of ``cuda.local.array(count, dtype)``,
    one per dtype of ``dtypes`` (a tuple or list; for one dtype, that one array); like those,
    registers once the accesses are at constant indices."""
    single = not isinstance(dtypes, (tuple, list))
    if SIMULATOR:

        def allocate():
            # (zeroed: the items a partial tile leaves unspecified are combined, and
            # NumPy would warn of leftover bits that make NaNs or overflow)
            if single:
                return np.zeros(count, dtypes)
            return tuple(np.zeros(count, dtype) for dtype in dtypes)

        return allocate

    from numba.cuda.np.numpy_support import from_dtype

    from coop._core.compilers import numba_cuda_intrinsics as compiled

    if single:
        return compiled.local_array_tuple(count, from_dtype(np.dtype(dtypes)))
    return compiled.local_array_tuple(count, tuple(from_dtype(np.dtype(dtype)) for dtype in dtypes))
