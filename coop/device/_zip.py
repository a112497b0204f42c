"""Tuple values for coop.device's reductions and scans, as CUB's zip iterators give them.

A tuple of 1-D device arrays of one length is one sequence of tuples, stored as one
array per member (struct of arrays): item ``i`` of ``(keys, values)`` is ``(keys[i],
values[i])``. An algorithm taking tuple values takes such a tuple as ``d_in`` and one of
the same arity as ``d_out``; its operator takes and returns tuples, its ``initial`` is a
tuple, and values are combined in ``d_out``'s dtypes (member by member). Inside the
kernels a tile of tuples is a tuple of items arrays, one per member, read and written one
tuple value at a time with ``coop._core.items.accessors``. The kernels are written once for
both: a plain value is the case of no members (``members(dtype) == 0``), its tile one
items array, read and written by the same accessors.

Host side (the checks made before any launch, as ``coop.device._host``'s, with its
wording; a member is named ``d_in[k]``):

- ``is_zipped(d_in, d_out)``: whether a call has tuple values (either is a tuple, or a
  list given for one): its arrays then go through ``zipped_arrays``, others through
  ``coop.device._host`` (no cost added to them).
- ``zipped_arrays(function, d_in, d_out, out_length=None, instead=None) -> (d_in, d_out,
  n)``: each member checked by ``device_array``; ``d_in``'s of one length ``n``, ``d_out``
  a tuple of as many arrays, each at least ``out_length`` long (default ``n``). The sums
  take no tuples: for them (``instead`` names the function to use) it raises.
- ``value_dtype(x)``: the dtype of an array, a tuple of dtypes for a tuple of arrays;
  ``members(dtypes)``: how many (0 for one dtype).
- ``host_value(function, name, value, dtype)``: a value given on the host (``initial``)
  as a kernel argument of ``dtype``: for a tuple of dtypes, a tuple of as many values.

Device side:

- ``local_arrays(count, dtypes)`` (``coop._core.items``'): ``allocate()`` giving a tuple
  of ``cuda.local.array(count, dtype)``, one per dtype (for one dtype, that one array).
- ``for_each_member(members, parameters, statement, **names)``: a device function running
  ``statement`` for each member, ``{m}`` standing for the member's subscript (``[k]``;
  nothing for a plain value's single array).
"""

from coop._core.backend import device_function
from coop._core.errors import ArgumentTypeError, ArgumentValueError
from coop._core.items import local_arrays
from coop.device._host import check_length, device_array

__all__ = ["is_zipped", "zipped_arrays", "value_dtype", "members", "host_value", "local_arrays", "for_each_member"]


def is_zipped(d_in, d_out):
    """Whether a call has tuple values (see the module docstring)."""
    return isinstance(d_in, (tuple, list)) or isinstance(d_out, (tuple, list))


def zipped_arrays(function, d_in, d_out, out_length=None, instead=None):
    """``(d_in, d_out, n)`` of a call with tuple values, checked (see the module docstring).
    ``instead``: the function to name in the error of a sum, which takes no tuples."""
    if instead is not None:
        raise ArgumentTypeError(f"coop.device.{function}: d_in and d_out must be device arrays of numbers, got a tuple "
                                f"(for tuple values: coop.device.{instead} with an operator on tuples)")
    d_in = _device_arrays(function, "d_in", d_in)
    d_out = _device_arrays(function, "d_out", d_out, equal=False)
    _matching_form(function, d_in, d_out)
    n = d_in[0].size
    for k, member in enumerate(d_out):
        check_length(function, f"d_out[{k}]", member, n if out_length is None else out_length)
    return d_in, d_out, n


def _device_arrays(function, name, x, equal=True):
    """``x`` as ``device_array`` gives it, or a tuple of such arrays (of one length with
    ``equal``)."""
    if isinstance(x, list):
        raise ArgumentTypeError(f"coop.device.{function}: {name} must be a device array or a tuple of device arrays "
                                "(one per member of tuple values), got a list (pass a tuple)")
    if not isinstance(x, tuple):
        return device_array(function, name, x)
    if not x:
        raise ArgumentValueError(f"coop.device.{function}: {name} must not be an empty tuple (give one device "
                                 "array per member of the values)")
    arrays = tuple(device_array(function, f"{name}[{k}]", member) for k, member in enumerate(x))
    for k, array in enumerate(arrays[1:], 1):
        if equal and array.size != arrays[0].size:
            raise ArgumentValueError(f"coop.device.{function}: {name}[{k}] has {array.size} items, {name}[0] "
                                     f"{arrays[0].size}: the arrays of a tuple (item i is their i-th items) must be "
                                     "equal in length")
    return arrays


def _matching_form(function, d_in, d_out):
    """Raise unless ``d_out`` is a tuple of as many arrays as ``d_in`` (one array for one)."""
    if isinstance(d_in, tuple) != isinstance(d_out, tuple):
        if isinstance(d_in, tuple):
            raise ArgumentTypeError(f"coop.device.{function}: d_out must be a tuple of {len(d_in)} device arrays, as "
                                    "d_in is (tuple values), got one array")
        raise ArgumentTypeError(f"coop.device.{function}: d_out must be one device array, as d_in is, got a tuple of "
                                f"{len(d_out)} arrays")
    if isinstance(d_in, tuple) and len(d_in) != len(d_out):
        raise ArgumentValueError(f"coop.device.{function}: d_out has {len(d_out)} arrays, d_in {len(d_in)}: one per "
                                 "member of the values in both")


def value_dtype(x):
    """The dtype of an array, or the tuple of the dtypes of a tuple's arrays."""
    return tuple(member.dtype for member in x) if isinstance(x, tuple) else x.dtype


def host_value(function, name, value, dtype):
    """``value`` converted to ``dtype`` (a NumPy dtype, or a tuple of them)."""
    if isinstance(dtype, tuple):
        if not isinstance(value, tuple):
            raise ArgumentTypeError(f"coop.device.{function}: {name} must be a tuple of {len(dtype)} values (tuple "
                                    f"values: one per array of d_out), got {type(value).__name__}")
        if len(value) != len(dtype):
            raise ArgumentValueError(f"coop.device.{function}: {name} must be a tuple of {len(dtype)} values (one per "
                                     f"array of d_out), got {len(value)}")
        return tuple(member.type(v) for member, v in zip(dtype, value))
    if isinstance(value, tuple):
        raise ArgumentTypeError(f"coop.device.{function}: {name} must be one value (d_out is one array), got a tuple")
    return dtype.type(value)


def members(dtypes):
    """The number of members of tuple values of ``dtypes`` (0 for one dtype)."""
    return len(dtypes) if isinstance(dtypes, tuple) else 0


def for_each_member(members, parameters, statement, **names):
    """A device function ``apply(<parameters>)`` running ``statement`` for members ``0 ..
    members - 1`` in order, ``{m}`` in it standing for the member's subscript ``[k]``
    (``members == 0``: once, for a plain value's single array, ``{m}`` standing for
    nothing), with ``names`` as its globals (``coop._core.items``'s way: one generated line
    per member)."""
    subscripts = [f"[{k}]" for k in range(members)] if members else [""]
    source = f"def apply({parameters}):\n" + "".join(f"    {statement.format(m=m)}\n" for m in subscripts)
    namespace = dict(names)
    exec(source, namespace)  # noqa: S102
    return device_function(namespace["apply"])
