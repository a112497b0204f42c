"""Radix keys: the bit-ordered form in which radix ranking and sorting see a key.

A radix sort orders keys by the unsigned integer of their bits; for that order to be the
keys' own, each key type is first mapped to its *ordered bits* (CUB's
``Traits<T>::TwiddleIn``), and mapped back after the sort (``TwiddleOut``):

- unsigned integers: their bits;
- signed integers: their bits with the sign bit flipped (negatives first);
- floats (float16, float32, float64): positive values with the sign bit set, negative
  values with every bit inverted; -0.0 sorts just below +0.0 by its bits, but digits
  are taken as if it were +0.0 (CUB's ``ProcessFloatMinusZero``), so that the two sort
  as equal and keep their order (the keys themselves are not changed); NaNs sort by
  their bits: positive NaNs after +inf, negative NaNs before -inf;
- bool: False (0) before True (1), as uint8.

``bits_type(key_type)`` is the unsigned type of a key's width; ``to_ordered(key_type)``
and ``from_ordered(key_type)`` give the device functions ``key -> bits`` and ``bits ->
key``; ``digit(key_type)`` the function ``(bits, begin_bit, num_bits) -> uint32`` that
extracts a digit of ordered bits (``num_bits`` from 0 to 31; ``begin_bit`` below the
key's width). Compiled, each is one intrinsic of a few integer
instructions; on the simulator, NumPy on the same bit patterns.

Tuple keys (CUB's decomposer: lexicographic, the leftmost member most significant) are
the concatenation of their members' ordered bits, the last member's lowest.
``key_words(key_types)`` packs consecutive members into ``Word`` s of at most 64 bits,
least significant first: a word is sorted as one key (``word_digit`` reads its digits,
each float member's -0.0 as +0.0), ``pack`` / ``unpack`` move a member's ordered
bits into and out of its word, and ``word_packer(word)`` gives a key's word.
"""

import functools

import numpy as np
from numba.cuda import types

from coop._core.backend import SIMULATOR, device_function

KEY_TYPES = (
    types.boolean,
    types.int8, types.int16, types.int32, types.int64,
    types.uint8, types.uint16, types.uint32, types.uint64,
    types.float16, types.float32, types.float64,
)
KEY_TYPE_NAMES = "bool, int8-int64, uint8-uint64, float16, float32 and float64"


def is_key_type(key_type):
    return types.unliteral(key_type) in KEY_TYPES


def key_bits(key_type):
    """The width of a key in bits (bool: 8)."""
    key_type = types.unliteral(key_type)
    return 8 if key_type == types.boolean else key_type.bitwidth


def check_key_type(sig, key_type, param):
    """Refuse (``sig``'s error on ``param``) a type that is not a radix key."""
    if not is_key_type(key_type):
        raise sig.error(param, f"must hold radix keys ({KEY_TYPE_NAMES}), got {key_type}")


def bits_type(key_type):
    """The unsigned integer type of a key's width."""
    return types.Integer.from_bitwidth(key_bits(key_type), signed=False)


def last_ordered_bits(key_type, descending=False):
    """The ordered bits that sort after every key (the largest, or the smallest when
    ``descending``): ``from_ordered`` of them pads a partial tile of a sort."""
    bits_dtype = np.dtype("uint%d" % key_bits(key_type))
    return bits_dtype.type(0 if descending else np.iinfo(bits_dtype).max)


def _kind(key_type):
    key_type = types.unliteral(key_type)
    if key_type == types.boolean:
        return "bool"
    if isinstance(key_type, types.Float):
        return "float"
    return "signed" if key_type.signed else "unsigned"


if SIMULATOR:

    def _np_bits(bits):
        return np.dtype("uint%d" % bits).type

    @functools.lru_cache(maxsize=None)
    def to_ordered(key_type):
        kind, bits = _kind(key_type), key_bits(key_type)
        unsigned = _np_bits(bits)
        high = unsigned(1 << (bits - 1))
        float_type = {16: np.float16, 32: np.float32, 64: np.float64}.get(bits)

        def ordered(key):
            if kind == "bool":
                return unsigned(1 if key else 0)
            if kind == "float":
                b = np.asarray(key, float_type).view(unsigned)[()]
                return unsigned(~b) if b & high else unsigned(b ^ high)
            b = np.asarray(key).astype(np.dtype(key_type.name)).view(unsigned)[()]
            return unsigned(b ^ high) if kind == "signed" else unsigned(b)

        return ordered

    @functools.lru_cache(maxsize=None)
    def from_ordered(key_type):
        kind, bits = _kind(key_type), key_bits(key_type)
        unsigned = _np_bits(bits)
        high = unsigned(1 << (bits - 1))
        dtype = np.dtype(np.bool_ if kind == "bool" else key_type.name)

        def key(ordered):
            b = unsigned(ordered)
            if kind == "bool":
                return np.bool_(b != 0)
            if kind == "float":
                b = unsigned(b ^ high) if b & high else unsigned(~b)
            elif kind == "signed":
                b = unsigned(b ^ high)
            return np.asarray(b).view(dtype)[()]

        return key

    @functools.lru_cache(maxsize=None)
    def _digit(bits, float_fields):
        def extract(ordered, begin_bit, num_bits):
            # (compiled, the digit's mask is made in 32 bits: 32 would give garbage)
            assert 0 <= int(num_bits) < 32, f"a radix digit of {int(num_bits)} bits: digits are narrower than 32"
            b = int(ordered)
            for offset, width, minus_zero in float_fields:
                field = (1 << width) - 1
                if (b >> offset) & field == minus_zero:
                    b ^= field << offset  # -0.0's ordered bits to +0.0's
            return np.uint32((b >> int(begin_bit)) & ((1 << int(num_bits)) - 1))

        return extract

    @functools.lru_cache(maxsize=None)
    def pack(word_type, member_type, offset):
        word = _np_bits(word_type.bitwidth)

        def packed(ordered):
            return word(int(ordered) << offset)

        return packed

    @functools.lru_cache(maxsize=None)
    def unpack(word_type, member_type, offset):
        member = _np_bits(key_bits(member_type))
        field = (1 << key_bits(member_type)) - 1

        def unpacked(word):
            return member((int(word) >> offset) & field)

        return unpacked

else:
    from coop._core.compilers import numba_cuda_intrinsics as compiled

    _TWIDDLES = {"bool": ("zext", "nonzero"), "float": ("float_to_ordered", "ordered_to_float"),
                 "signed": ("flip_sign", "flip_sign"), "unsigned": ("same", "same")}

    @functools.lru_cache(maxsize=None)
    def to_ordered(key_type):
        key_type = types.unliteral(key_type)
        step = _TWIDDLES[_kind(key_type)][0]
        return compiled.bit_conversion(key_type, bits_type(key_type), step, key_bits(key_type))

    @functools.lru_cache(maxsize=None)
    def from_ordered(key_type):
        key_type = types.unliteral(key_type)
        step = _TWIDDLES[_kind(key_type)][1]
        return compiled.bit_conversion(bits_type(key_type), key_type, step, key_bits(key_type))

    _digit = compiled.digit_extractor

    @functools.lru_cache(maxsize=None)
    def pack(word_type, member_type, offset):
        return compiled.bit_conversion(bits_type(member_type), word_type, "shift_left", word_type.bitwidth, offset)

    @functools.lru_cache(maxsize=None)
    def unpack(word_type, member_type, offset):
        return compiled.bit_conversion(word_type, bits_type(member_type), "shift_right", word_type.bitwidth, offset)


def _float_fields(key_type, offset=0):
    """``(offset, width, the ordered bits of -0.0)`` of a float key member at bit
    ``offset`` (none for other types)."""
    if _kind(key_type) != "float":
        return ()
    bits = key_bits(key_type)
    return ((offset, bits, (1 << (bits - 1)) - 1),)  # -0.0: every bit but the sign's set


def digit(key_type):
    """``(bits, begin_bit, num_bits) -> uint32``: a digit of ``key_type`` keys' ordered
    bits (a float's -0.0 read as +0.0), of fewer than 32 bits."""
    return _digit(key_bits(key_type), _float_fields(key_type))


def comparable_digit(key_type):
    """``digit``'s for the bits ``comparable`` gives (-0.0 already read as +0.0), in the
    key's width: 32-bit shifts for keys of 4 bytes or fewer, whatever the shift."""
    return _digit(key_bits(key_type), ())


@functools.lru_cache(maxsize=None)
def comparable(key_type):
    """A ``@cuda.jit(device=True)`` function ``key -> ordered bits`` (unsigned, the key's
    width) as the radix sorts order keys: ``to_ordered``'s, with -0.0 read as +0.0."""
    from numba import cuda  # (the simulator's, under NUMBA_ENABLE_CUDASIM)

    ordered = to_ordered(key_type)
    unsigned = np.dtype("uint%d" % key_bits(key_type)).type
    fields = _float_fields(key_type)
    minus_zero = unsigned(fields[0][2] if fields else 0)
    plus_zero = unsigned(minus_zero + 1) if fields else minus_zero  # (the ordered bits follow -0.0's)
    has_minus_zero = bool(fields)

    @cuda.jit(device=True)
    def bits(key):
        b = ordered(key)
        if has_minus_zero and b == minus_zero:
            b = plus_zero  # (a choice, not a sum: Numba adds narrow unsigned ints in 64 bits)
        return b

    return bits


@functools.lru_cache(maxsize=None)
def comparator(key_type, descending=False):
    """A ``@cuda.jit(device=True)`` function ``(a, b) -> bool``: whether key ``a`` sorts
    before key ``b`` in a radix sort's order (by their ordered bits, -0.0 as +0.0), for
    comparison sorts that must order keys as the radix sorts do."""
    from numba import cuda  # (the simulator's, under NUMBA_ENABLE_CUDASIM)

    comparable_bits = comparable(key_type)

    @cuda.jit(device=True)
    def before(a, b):
        if descending:
            return comparable_bits(b) < comparable_bits(a)
        return comparable_bits(a) < comparable_bits(b)

    return before


class Word:
    """Members of a tuple key packed into one unsigned integer (``bits_type``): each
    ``(member index, member type, bit offset in the word)`` of ``members``; ``offset``:
    the word's lowest bit in the key's concatenated bits; ``width``: the bits it
    holds."""

    def __init__(self, members, offset):
        self.members = tuple(members)
        self.offset = offset
        self.width = sum(key_bits(t) for _, t, _ in self.members)
        self.bits_type = types.Integer.from_bitwidth(next(b for b in (8, 16, 32, 64) if b >= self.width), signed=False)
        self.digit = _digit(self.bits_type.bitwidth,
                            tuple(f for _, t, at in self.members for f in _float_fields(t, at)))

    def __repr__(self):
        return f"Word({self.members}, offset={self.offset})"


def key_words(key_types):
    """The ``Word`` s of a key of ``key_types`` (members, most significant first), least
    significant first: consecutive members packed while they fit 64 bits."""
    words, members, width, offset = [], [], 0, 0
    for index in reversed(range(len(key_types))):
        member_type = types.unliteral(key_types[index])
        bits = key_bits(member_type)
        if members and width + bits > 64:
            words.append(Word(members, offset))
            offset += width
            members, width = [], 0
        members.append((index, member_type, width))
        width += bits
    words.append(Word(members, offset))
    return words


def word_packer(word):
    """``pack(key_arrays, i) -> word.bits_type``: ``word``'s bits of the thread's key ``i``
    (its members' ordered bits, packed; ``key_arrays``: the key's members' items arrays,
    most significant first)."""
    return _packer([(member, to_ordered(member_type), pack(word.bits_type, member_type, at))
                    for member, member_type, at in word.members])


def _packer(members):
    """``pack(key_arrays, i)``: the word of ``members`` (each ``(index in key_arrays,
    to_ordered, pack)``) for the thread's key ``i``."""
    (member, to_ordered_bits, pack_bits), rest = members[0], members[1:]
    if not rest:

        def pack_one(key_arrays, i):
            return pack_bits(to_ordered_bits(key_arrays[member][i]))

        return device_function(pack_one)
    pack_rest = _packer(rest)

    def pack_more(key_arrays, i):
        return pack_bits(to_ordered_bits(key_arrays[member][i])) | pack_rest(key_arrays, i)

    return device_function(pack_more)
