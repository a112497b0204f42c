"""coop.block.radix_rank and coop.block.radix_sort against NumPy's stable sorts: every key
type, block shapes and items per thread, partial bit ranges, descending, values (the
original positions, which proves stability), the striped result. Misuse is in the
table of tests/codegen_cases.py, run on both paths by tests/test_misuse.py."""

import numpy as np
import pytest
from numba import cuda

import coop
from helpers import (
    FULL_MATRIX,
    INTEGER_DTYPES,
    STATIC_SHARED_BYTES,
    assert_equal_exact,
    jit_any_block,
    launch_shape,
    launch_with_dynamic_shared,
    shape_id,
    size_of,
)
from test_radix_keys import reference_ordered, special_keys

KEY_DTYPES = [np.bool_] + INTEGER_DTYPES + [np.float16, np.float32, np.float64]

if FULL_MATRIX:
    SHAPES = [32, 64, 96, 128, 256, 512, 1024, (16, 8), (8, 4, 4)]
    ITEMS = [1, 2, 3, 4, 7, 8, 16]
else:
    SHAPES = [32, 96, (16, 4)]
    ITEMS = [1, 3]


def sort_bytes(shape, items, key_dtype, value_dtype=np.int32, radix_bits=4):
    """The sort's temp_storage bytes (its ranking, or its exchange of keys or of values)."""
    return coop.block.radix_sort.temp_storage_bytes(key_dtype, shape, items, value_dtype, radix_bits=radix_bits)


def digit_keys(keys, begin, end, descending):
    """The sort key NumPy's stable argsort needs: the ordered bits begin..end-1, -0.0
    read as +0.0, inverted for descending."""
    ordered = reference_ordered(keys).astype(np.uint64)
    width = 8 if keys.dtype == np.bool_ else keys.dtype.itemsize * 8
    if keys.dtype.kind == "f":
        ordered = np.where(ordered == (1 << (width - 1)) - 1, np.uint64(1 << (width - 1)), ordered)
    field = (ordered >> np.uint64(begin)) & np.uint64((1 << (end - begin)) - 1)
    return (np.uint64((1 << (end - begin)) - 1) - field) if descending else field


def sort_kernel(shape, n, key_dtype, begin, end, descending, striped, radix_bits, dynamic=False):
    """The sort with its own buffer, or (``dynamic``) with a dynamic shared temp_storage."""
    T, N, KT = shape, n, key_dtype
    THREADS = size_of(shape)
    TILE = THREADS * n

    @jit_any_block
    def kernel(x, out, positions):
        rank = cuda.threadIdx.x + cuda.threadIdx.y * cuda.blockDim.x + cuda.threadIdx.z * cuda.blockDim.x * cuda.blockDim.y
        base = cuda.blockIdx.x * TILE
        keys = cuda.local.array(N, KT)
        values = cuda.local.array(N, np.int32)
        for i in range(N):
            keys[i] = x[base + rank * N + i]
            values[i] = rank * N + i
        if dynamic:
            temp = cuda.shared.array(0, np.uint8)
            coop.block.radix_sort(keys, values, threads=T, items_per_thread=N, begin_bit=begin, end_bit=end,
                                  descending=descending, blocked_to_striped=striped, radix_bits=radix_bits,
                                  temp_storage=temp)
        else:
            coop.block.radix_sort(keys, values, threads=T, items_per_thread=N, begin_bit=begin, end_bit=end,
                                  descending=descending, blocked_to_striped=striped, radix_bits=radix_bits)
        for i in range(N):
            position = i * THREADS + rank if striped else rank * N + i
            out[base + position] = keys[i]
            positions[base + position] = values[i]

    return kernel


def check_sort(key_dtype, shape, n, begin=0, end=None, descending=False, striped=False, radix_bits=4, blocks=2,
               seed=0):
    rng = np.random.default_rng(seed)
    threads = size_of(shape)
    tile = threads * n
    width = 8 if np.dtype(key_dtype) == np.bool_ else np.dtype(key_dtype).itemsize * 8
    x = np.concatenate([special_keys(key_dtype, rng, tile) for _ in range(blocks)])[: blocks * tile]
    rng.shuffle(x)
    out, positions = np.zeros_like(x), np.zeros(x.size, np.int32)
    nbytes = sort_bytes(shape, n, key_dtype, radix_bits=radix_bits)
    dynamic = nbytes > STATIC_SHARED_BYTES
    kernel = sort_kernel(shape, n, key_dtype, begin, width if end is None else end, descending, striped, radix_bits,
                         dynamic)
    if dynamic:  # more than a kernel's static shared memory: the caller's temp_storage
        launch_with_dynamic_shared(kernel, blocks, launch_shape(shape), nbytes, x, out, positions)
    else:
        kernel[blocks, launch_shape(shape)](x, out, positions)
    for b in range(blocks):
        tile_keys = x[b * tile:(b + 1) * tile]
        order = np.argsort(digit_keys(tile_keys, begin, width if end is None else end, descending), kind="stable")
        what = f"block {b}"
        assert_equal_exact(positions[b * tile:(b + 1) * tile], order.astype(np.int32), f"{what}: positions")
        got = out[b * tile:(b + 1) * tile]
        expected = tile_keys[order]
        if got.dtype.kind == "f":  # bit for bit: NaN payloads, -0.0 against +0.0
            unsigned = np.dtype("uint%d" % (got.dtype.itemsize * 8))
            got, expected = got.view(unsigned), expected.view(unsigned)
        assert_equal_exact(got, expected, f"{what}: keys")


@pytest.mark.parametrize("key_dtype", [pytest.param(d, id=np.dtype(d).name) for d in KEY_DTYPES])
def test_radix_sort_every_key_type(key_dtype):
    check_sort(key_dtype, 64, 3)
    check_sort(key_dtype, 64, 3, descending=True, striped=True, seed=1)


@pytest.mark.parametrize("key_dtype", [np.uint32, np.float32] if FULL_MATRIX else [np.int32])
@pytest.mark.parametrize("n", ITEMS)
@pytest.mark.parametrize("shape", SHAPES, ids=shape_id)
def test_radix_sort_shapes(shape, n, key_dtype):
    check_sort(key_dtype, shape, n, seed=n)


@pytest.mark.parametrize(
    "key_dtype,begin,end,descending,radix_bits",
    [
        (np.uint32, 3, 17, False, 4),
        (np.int64, 0, 64, True, 5),
        (np.float32, 8, 32, False, 3),
        (np.uint16, 5, 5, False, 4),  # an empty bit range: the tile as it was
        (np.int8, 0, 8, True, 1),
        (np.uint64, 40, 64, False, 8),
    ],
    ids=lambda v: np.dtype(v).name if isinstance(v, type) else str(v),
)
def test_radix_sort_bit_ranges(key_dtype, begin, end, descending, radix_bits):
    check_sort(key_dtype, 64, 2, begin=begin, end=end, descending=descending, radix_bits=radix_bits)


def rank_kernel(threads, n, key_dtype, begin, num_bits, descending, algorithm, tracked):
    T, N, KT, B = threads, n, key_dtype, tracked

    @cuda.jit
    def kernel(x, ranks_out, prefix_out, counts_out):
        t = cuda.threadIdx.x
        keys = cuda.local.array(N, KT)
        ranks = cuda.local.array(N, np.int32)
        prefix = cuda.local.array(B, np.int32)
        counts = cuda.local.array(B, np.uint32)
        for i in range(N):
            keys[i] = x[t * N + i]
        coop.block.radix_rank(keys, ranks, begin, num_bits, threads=T, items_per_thread=N, descending=descending,
                              algorithm=algorithm, exclusive_digit_prefix=prefix)
        # a second call straight after: the counters of the first must not leak into it
        coop.block.radix_rank(keys, ranks, begin, num_bits, threads=T, items_per_thread=N, descending=descending,
                              algorithm=algorithm, exclusive_digit_prefix=prefix, digit_counts=counts)
        for i in range(N):
            ranks_out[t * N + i] = ranks[i]
        for j in range(B):
            prefix_out[t * B + j] = prefix[j]
            counts_out[t * B + j] = counts[j]

    return kernel


def sequence_positions(threads, n, algorithm):
    """Where each key (thread t's item i, at t*n + i) comes in the order a ranking keeps
    among equal digits: blocked order, or warp-striped for the "match" rankings."""
    t, i = np.divmod(np.arange(threads * n), n)
    if not algorithm.startswith("match"):
        return t * n + i
    warp, lane = np.divmod(t, 32)
    lanes = np.minimum(32, threads - warp * 32)
    return warp * 32 * n + i * lanes + lane


# Partial last warps with 7 and 8 bits: the "match" rankings' ballots there once failed in
# ptxas (tests/codegen_cases.py assembles them; here they run).
PARTIAL_WARP_SHAPES = [(33, 7), (33, 8), (63, 7), (63, 8), (100, 7), (100, 8)] if FULL_MATRIX else [(33, 7), (100, 8)]
RANK_CASES = [(threads, num_bits, algorithm)
              for threads, num_bits in [(32, 6), (64, 4), (96, 5), (40, 3)]
              for algorithm in ["memoize", "basic", "match", "match_early_counts"]]
RANK_CASES += [(threads, num_bits, algorithm)
               for threads, num_bits in PARTIAL_WARP_SHAPES for algorithm in ["match", "match_early_counts"]]


@pytest.mark.parametrize("descending", [False, True])
@pytest.mark.parametrize("threads,num_bits,algorithm", RANK_CASES)
def test_radix_rank(threads, num_bits, descending, algorithm):
    n, begin = 3, 2
    rng = np.random.default_rng(threads + num_bits)
    keys = rng.integers(-1000, 1000, threads * n).astype(np.int16)
    digits = 1 << num_bits
    tracked = max(1, -(-digits // threads))
    ranks, prefix = np.zeros(keys.size, np.int32), np.zeros(threads * tracked, np.int32)
    counts_out = np.zeros(threads * tracked, np.uint32)
    rank_kernel(threads, n, np.int16, begin, num_bits, descending, algorithm, tracked)[1, threads](keys, ranks, prefix,
                                                                                                   counts_out)
    field = digit_keys(keys, begin, begin + num_bits, descending)
    position = sequence_positions(threads, n, algorithm)
    in_sequence = np.empty_like(field)
    in_sequence[position] = field
    rank_of_position = np.empty(keys.size, np.int32)
    rank_of_position[np.argsort(in_sequence, kind="stable")] = np.arange(keys.size)
    assert_equal_exact(ranks, rank_of_position[position], "ranks")
    # exclusive_digit_prefix: keys ranked before each digit's, for the digits tracked
    plain = digit_keys(keys, begin, begin + num_bits, False)
    counts = np.bincount(plain.astype(np.int64), minlength=digits)
    before = np.concatenate([[0], np.cumsum(counts[::-1] if descending else counts)[:-1]])
    if descending:
        before = before[::-1]
    assert_equal_exact(prefix[:digits], before.astype(np.int32), "exclusive_digit_prefix")
    assert_equal_exact(counts_out[:digits], counts.astype(np.uint32), "digit_counts")


def test_temp_storage_shared_by_load_sort_rank_and_store():
    """One shared array for a warp-transpose load, a key-value sort, a ranking and a
    warp-transpose store, as CUB's TempStorage union of the four; no barriers between."""
    T, N = 64, 3
    TILE = T * N
    BYTES = max(
        coop.block.load.temp_storage_bytes(np.int16, T, N, algorithm="warp_transpose"),
        coop.block.radix_sort.temp_storage_bytes(np.int16, T, N, value_dtype=np.int32),
        coop.block.radix_rank.temp_storage_bytes(np.int16, T, 5),
        coop.block.store.temp_storage_bytes(np.int16, T, N, algorithm="warp_transpose"),
    )

    @cuda.jit
    def kernel(x, out, positions, ranks_out):
        temp = cuda.shared.array(BYTES, np.uint8, alignment=8)
        t = cuda.threadIdx.x
        base = cuda.blockIdx.x * TILE
        keys = cuda.local.array(N, np.int16)
        values = cuda.local.array(N, np.int32)
        ranks = cuda.local.array(N, np.int32)
        coop.block.load(x[base:], keys, threads=T, items_per_thread=N, algorithm="warp_transpose",
                        temp_storage=temp)
        for i in range(N):
            values[i] = t * N + i
        coop.block.radix_rank(keys, ranks, 3, 5, threads=T, items_per_thread=N, temp_storage=temp)
        coop.block.radix_sort(keys, values, threads=T, items_per_thread=N, temp_storage=temp)
        coop.block.store(out[base:], keys, threads=T, items_per_thread=N, algorithm="warp_transpose",
                         temp_storage=temp)
        for i in range(N):
            positions[base + t * N + i] = values[i]
            ranks_out[base + t * N + i] = ranks[i]

    rng = np.random.default_rng(5)
    blocks = 2
    x = rng.integers(-3000, 3000, blocks * TILE).astype(np.int16)
    out, positions, ranks = np.zeros_like(x), np.zeros(x.size, np.int32), np.zeros(x.size, np.int32)
    kernel[blocks, T](x, out, positions, ranks)
    for b in range(blocks):
        tile = slice(b * TILE, (b + 1) * TILE)
        # the load is warp-striped to blocked: thread t's items are tile items t*N..t*N+N-1
        order = np.argsort(x[tile], kind="stable")
        assert_equal_exact(out[tile], x[tile][order], f"block {b}: keys")
        assert_equal_exact(positions[tile], order.astype(np.int32), f"block {b}: positions")
        by_digit = np.argsort(digit_keys(x[tile], 3, 8, False), kind="stable")
        expected = np.empty(TILE, np.int32)
        expected[by_digit] = np.arange(TILE)
        assert_equal_exact(ranks[tile], expected, f"block {b}: ranks")


def test_temp_storage_bytes():
    """The sizes are those of the layouts the primitives use, and grow with what they
    hold: a ranking's with the digit, a sort's with values and items."""
    from coop.block.radix_ranking import rank_layout

    assert coop.block.radix_rank.temp_storage_bytes(np.uint32, 128, 4) == rank_layout(128, 4).nbytes
    assert coop.block.radix_rank.temp_storage_bytes(np.uint8, 128, 6) > coop.block.radix_rank.temp_storage_bytes(
        np.uint8, 128, 4)
    keys_only = coop.block.radix_sort.temp_storage_bytes(np.uint32, 128, 4)
    assert keys_only >= 128 * 4 * 4
    assert coop.block.radix_sort.temp_storage_bytes(np.uint32, 128, 4, value_dtype=np.float64) >= 128 * 4 * 8
    assert coop.block.radix_sort.temp_storage_bytes(np.uint32, 128, 4, radix_bits=6) > keys_only
    assert coop.block.radix_sort.temp_storage_bytes(np.uint32, 128, 16) > keys_only
    with pytest.raises(coop.CoopError, match="radix_sort.temp_storage_bytes: dtype must hold radix keys"):
        coop.block.radix_sort.temp_storage_bytes(np.complex64, 128, 4)
    with pytest.raises(coop.CoopError, match="radix_rank.temp_storage_bytes: num_bits must be from 1 to 8"):
        coop.block.radix_rank.temp_storage_bytes(np.uint32, 128, 9)


@pytest.mark.parametrize("bits, largest_block", [(8, 95), (7, 188), (6, 371), (5, 721), (4, 1024)])
def test_the_documented_widest_digits_a_block_takes(bits, largest_block):
    """The docstrings' table of radix_bits (radix_sort) and num_bits (radix_rank's
    "memoize" and "basic") against block sizes: the largest block taking the bits, one
    thread more refused with the most bits that fit; the "match" rankings take 8 bits in
    any block."""
    for size in (lambda threads: coop.block.radix_sort.temp_storage_bytes(np.uint32, threads, 2, radix_bits=bits),
                 lambda threads: coop.block.radix_rank.temp_storage_bytes(np.uint32, threads, bits),
                 lambda threads: coop.block.radix_rank.temp_storage_bytes(np.uint32, threads, bits, algorithm="basic")):
        assert size(largest_block) <= STATIC_SHARED_BYTES
        if largest_block < 1024:
            with pytest.raises(coop.CoopError, match=f"{bits} needs .* bytes of digit counters in blocks of "
                                                     f"{largest_block + 1} threads.*use at most {bits - 1} bits"):
                size(largest_block + 1)
    for algorithm in ("match", "match_early_counts"):
        assert coop.block.radix_rank.temp_storage_bytes(np.uint32, 1024, 8, algorithm=algorithm) <= STATIC_SHARED_BYTES


def tuple_sort_kernel(threads, n, dtypes, begin, end, descending, striped):
    """A sort of keys (a, b) carrying two value arrays: original positions and a copy of
    a as float64."""
    T, N = threads, n
    A, B = dtypes
    TILE = T * N

    @cuda.jit
    def kernel(xa, xb, out_a, out_b, positions, copies):
        t = cuda.threadIdx.x
        base = cuda.blockIdx.x * TILE
        a = cuda.local.array(N, A)
        b = cuda.local.array(N, B)
        where = cuda.local.array(N, np.int32)
        copy = cuda.local.array(N, np.float64)
        for i in range(N):
            a[i] = xa[base + t * N + i]
            b[i] = xb[base + t * N + i]
            where[i] = t * N + i
            copy[i] = a[i]
        coop.block.radix_sort((a, b), (where, copy), threads=T, items_per_thread=N, begin_bit=begin, end_bit=end,
                              descending=descending, blocked_to_striped=striped)
        for i in range(N):
            p = base + (i * T + t if striped else t * N + i)
            out_a[p], out_b[p], positions[p], copies[p] = a[i], b[i], where[i], copy[i]

    return kernel


def concatenated_digits(members, begin, end, descending):
    """Bits begin..end-1 of the tile's members' concatenated ordered bits (the last
    member's lowest; each float's -0.0 read as +0.0), inverted for descending."""
    key = [0] * len(members[0])
    for keys in members:
        width = 8 if keys.dtype == np.bool_ else keys.dtype.itemsize * 8
        ordered = digit_keys(keys, 0, width, False)
        key = [(k << width) | int(o) for k, o in zip(key, ordered)]
    mask = (1 << (end - begin)) - 1
    field = [(k >> begin) & mask for k in key]
    return np.array([mask - f for f in field] if descending else field, dtype=object)


def concatenated_key_order(members, begin, end, descending):
    """The stable order of a tile by ``concatenated_digits``."""
    field = concatenated_digits(members, begin, end, descending)
    return np.array(sorted(range(len(field)), key=field.__getitem__))


@pytest.mark.parametrize(
    "dtypes,begin,end,descending,striped",
    [
        ((np.int16, np.float32), 0, 48, False, False),  # one 48-bit word
        ((np.float64, np.uint8), 0, 72, True, True),  # two words: 8 bits, then 64
        ((np.uint64, np.int64), 40, 100, False, False),  # a bit range across the words' boundary
        ((np.int32, np.int64), 0, 8, False, True),  # the most significant word's range is empty
    ],
    ids=lambda v: "-".join(np.dtype(d).name for d in v) if isinstance(v, tuple) else str(v),
)
def test_radix_sort_tuple_keys(dtypes, begin, end, descending, striped):
    threads, n, blocks = 64, 3, 2
    tile = threads * n
    rng = np.random.default_rng(begin + end)
    # few distinct values per member, so that the lower members decide between equals
    xa = np.concatenate([special_keys(dtypes[0], rng, tile)[:8] for _ in range(blocks * tile // 8 + 1)])
    xa = rng.permutation(xa)[: blocks * tile]
    xb = np.concatenate([special_keys(dtypes[1], rng, tile) for _ in range(blocks)])[: blocks * tile]
    out_a, out_b = np.zeros_like(xa), np.zeros_like(xb)
    positions, copies = np.zeros(xa.size, np.int32), np.zeros(xa.size, np.float64)
    tuple_sort_kernel(threads, n, dtypes, begin, end, descending, striped)[blocks, threads](
        xa, xb, out_a, out_b, positions, copies)
    for blk in range(blocks):
        part = slice(blk * tile, (blk + 1) * tile)
        order = concatenated_key_order([xa[part], xb[part]], begin, end, descending)
        assert_equal_exact(positions[part], order.astype(np.int32), f"block {blk}: positions")
        for got, x, what in ((out_a, xa, "a"), (out_b, xb, "b")):
            unsigned = np.dtype("uint%d" % (x.dtype.itemsize * 8))
            assert_equal_exact(got[part].view(unsigned), x[part][order].view(unsigned), f"block {blk}: keys {what}")
        assert_equal_exact(copies[part], x_as_float64(xa[part][order]), f"block {blk}: values")


def tuple_rank_kernel(threads, n, dtypes, begin, num_bits, descending, algorithm, tracked):
    T, N, B = threads, n, tracked
    A, K = dtypes

    @cuda.jit
    def kernel(xa, xb, ranks_out, counts_out):
        t = cuda.threadIdx.x
        a = cuda.local.array(N, A)
        b = cuda.local.array(N, K)
        ranks = cuda.local.array(N, np.int32)
        counts = cuda.local.array(B, np.uint32)
        for i in range(N):
            a[i] = xa[t * N + i]
            b[i] = xb[t * N + i]
        coop.block.radix_rank((a, b), ranks, begin, num_bits, threads=T, items_per_thread=N, descending=descending,
                              algorithm=algorithm, digit_counts=counts)
        for i in range(N):
            ranks_out[t * N + i] = ranks[i]
        for j in range(B):
            counts_out[t * B + j] = counts[j]

    return kernel


@pytest.mark.parametrize(
    "dtypes,begin,num_bits,descending,algorithm",
    [
        ((np.int16, np.float32), 29, 6, False, "memoize"),  # one word; the digit takes bits of both members
        ((np.float64, np.uint8), 4, 8, True, "basic"),  # two words: 8 bits, then 64; the digit spans them
        ((np.uint64, np.int64), 60, 7, False, "match"),  # two 64-bit words, the digit across their boundary
        ((np.int32, np.int64), 90, 5, True, "match_early_counts"),  # the most significant word alone
        ((np.int32, np.int64), 94, 4, False, "memoize"),  # the key's top bits, and past them zeros
    ],
    ids=lambda v: "-".join(np.dtype(d).name for d in v) if isinstance(v, tuple) else str(v),
)
def test_radix_rank_tuple_keys(dtypes, begin, num_bits, descending, algorithm):
    """Tuple keys ranked by a digit of their members' concatenated ordered bits."""
    threads, n = 64, 3
    tile, digits = threads * n, 1 << num_bits
    tracked = max(1, -(-digits // threads))
    rng = np.random.default_rng(begin + num_bits)
    # few distinct values of the first member, so that digits across the members vary
    xa = rng.permutation(np.concatenate([special_keys(dtypes[0], rng, tile)[:8] for _ in range(tile // 8 + 1)]))[:tile]
    xb = special_keys(dtypes[1], rng, tile)[:tile]
    ranks, counts = np.zeros(tile, np.int32), np.zeros(threads * tracked, np.uint32)
    tuple_rank_kernel(threads, n, dtypes, begin, num_bits, descending, algorithm, tracked)[1, threads](
        xa, xb, ranks, counts)
    # the digit's bits past the key's width are zeros (a constant part of every digit)
    width = sum(np.dtype(d).itemsize * 8 for d in dtypes)
    end = min(begin + num_bits, width)
    field = concatenated_digits([xa, xb], begin, end, descending)
    position = sequence_positions(threads, n, algorithm)
    in_sequence = np.empty_like(field)
    in_sequence[position] = field
    rank_of_position = np.empty(tile, np.int32)
    rank_of_position[sorted(range(tile), key=in_sequence.__getitem__)] = np.arange(tile)
    assert_equal_exact(ranks, rank_of_position[position], "ranks")
    plain = concatenated_digits([xa, xb], begin, end, False).astype(np.int64)
    assert_equal_exact(counts[:digits], np.bincount(plain, minlength=digits).astype(np.uint32), "digit_counts")


@pytest.mark.parametrize("algorithm", ["memoize", "match", "match_early_counts"])
@pytest.mark.parametrize("descending", [False, True])
def test_radix_rank_counts_op(algorithm, descending):
    """CUB's counts callback: every thread gets the counts of the digits it tracks (40
    threads, 64 digits: two each), once per call."""
    threads, n, begin, num_bits = 40, 3, 3, 6
    tracked = -(-(1 << num_bits) // threads)

    @cuda.jit(device=True)
    def record(state, counts):
        out, calls = state
        t = cuda.threadIdx.x
        for j in range(tracked):
            out[t * tracked + j] = counts[j]
        cuda.atomic.add(calls, t, 1)

    @cuda.jit
    def kernel(x, counts_out, calls):
        t = cuda.threadIdx.x
        keys = cuda.local.array(n, np.int32)
        ranks = cuda.local.array(n, np.int32)
        for i in range(n):
            keys[i] = x[t * n + i]
        coop.block.radix_rank(keys, ranks, begin, num_bits, threads=threads, items_per_thread=n,
                              descending=descending, algorithm=algorithm, counts_op=record,
                              counts_state=(counts_out, calls))

    keys = np.random.default_rng(5).integers(-5000, 5000, threads * n).astype(np.int32)
    counts, calls = np.zeros(threads * tracked, np.uint32), np.zeros(threads, np.int32)
    kernel[1, threads](keys, counts, calls)
    expected = np.bincount(digit_keys(keys, begin, begin + num_bits, False).astype(np.int64), minlength=1 << num_bits)
    assert_equal_exact(counts[:1 << num_bits], expected.astype(np.uint32), "counts")
    assert_equal_exact(calls, np.ones(threads, np.int32), "calls per thread")


def x_as_float64(x):
    return x.astype(np.float64)


@pytest.mark.parametrize("algorithm", ["basic", "match", "match_early_counts"])
def test_radix_rank_2d_block_temp_storage(algorithm):
    """A 2-D block with a partial last warp (8 x 5 threads), the ranking's scratch in a
    caller's array shared with a block scan."""
    shape, n, begin, num_bits = (8, 5), 4, 1, 5
    threads = size_of(shape)
    BYTES = max(coop.block.radix_rank.temp_storage_bytes(np.uint16, shape, num_bits, algorithm=algorithm),
                coop.block.exclusive_sum.temp_storage_bytes(np.int32, shape))

    @cuda.jit
    def kernel(x, ranks_out, sums):
        temp = cuda.shared.array(BYTES, np.uint8, alignment=8)
        t = cuda.threadIdx.x + cuda.threadIdx.y * cuda.blockDim.x
        keys = cuda.local.array(n, np.uint16)
        ranks = cuda.local.array(n, np.int32)
        for i in range(n):
            keys[i] = x[t * n + i]
        sums[t] = coop.block.exclusive_sum(np.int32(keys[0]), threads=shape, temp_storage=temp)
        coop.block.radix_rank(keys, ranks, begin, num_bits, threads=shape, items_per_thread=n, algorithm=algorithm,
                              temp_storage=temp)
        for i in range(n):
            ranks_out[t * n + i] = ranks[i]

    keys = np.random.default_rng(3).integers(0, 1 << 16, threads * n).astype(np.uint16)
    ranks, sums = np.zeros(keys.size, np.int32), np.zeros(threads, np.int32)
    kernel[1, shape](keys, ranks, sums)
    position = sequence_positions(threads, n, algorithm)
    in_sequence = np.empty(keys.size, np.uint64)
    in_sequence[position] = digit_keys(keys, begin, begin + num_bits, False)
    rank_of_position = np.empty(keys.size, np.int32)
    rank_of_position[np.argsort(in_sequence, kind="stable")] = np.arange(keys.size)
    assert_equal_exact(ranks, rank_of_position[position], "ranks")
    firsts = keys[::n].astype(np.int32)
    assert_equal_exact(sums, np.concatenate([[0], np.cumsum(firsts)[:-1]]).astype(np.int32), "exclusive sums")


@pytest.mark.parametrize("algorithm", ["memoize", "basic", "match", "match_early_counts"])
def test_radix_rank_consecutive_calls(algorithm):
    """Rankings straight after one another, with no digit prefix (whose reads end with a
    barrier): each call's counters must be reset only once the previous call's last
    reads are done (compute-sanitizer's racecheck watches this on the GPU)."""
    threads, n = 96, 3

    @cuda.jit
    def kernel(x, ranks_out):
        t = cuda.threadIdx.x
        keys = cuda.local.array(n, np.uint16)
        ranks = cuda.local.array(n, np.int32)
        for i in range(n):
            keys[i] = x[t * n + i]
        for begin in range(0, 16, 4):
            coop.block.radix_rank(keys, ranks, begin, 4, threads=threads, items_per_thread=n, algorithm=algorithm)
            for i in range(n):
                ranks_out[begin // 4, t * n + i] = ranks[i]

    keys = np.random.default_rng(11).integers(0, 1 << 16, threads * n).astype(np.uint16)
    ranks = np.zeros((4, keys.size), np.int32)
    kernel[1, threads](keys, ranks)
    position = sequence_positions(threads, n, algorithm)
    for k, begin in enumerate(range(0, 16, 4)):
        in_sequence = np.empty(keys.size, np.uint64)
        in_sequence[position] = digit_keys(keys, begin, begin + 4, False)
        rank_of_position = np.empty(keys.size, np.int32)
        rank_of_position[np.argsort(in_sequence, kind="stable")] = np.arange(keys.size)
        assert_equal_exact(ranks[k], rank_of_position[position], f"ranks by bits {begin}..{begin + 3}")
