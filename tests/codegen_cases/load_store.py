"""Loads, stores, transform and shuffles (coop.block.load/store/transform/shuffle,
coop.warp.load/store)."""

import numpy as np
from numba import cuda
from numba.cuda import types

import coop

from ._registry import SCALARS, case, misuse


# -- loads, stores, transform and shuffles (coop.block.load/store/transform/shuffle, ------
# -- coop.warp.load/store) -------------------------------------------------------------------
# Names start with "load_store-" or "block_shuffle-", not "warp": warp loads use no shuffles.


def load_store_kernel(dtype, algorithm, threads, items):
    T, N, ALG = threads, items, algorithm

    @cuda.jit
    def kernel(x, out, valid):
        values = cuda.local.array(N, dtype)
        base = cuda.blockIdx.x * T * N
        coop.block.load(x[base:], values, threads=T, algorithm=ALG)
        coop.block.store(out[base:], values, threads=T, algorithm=ALG)
        coop.block.load(x[base:], values, threads=T, algorithm=ALG, valid_items=valid, oob_default=x[0])
        coop.block.store(out[base:], values, threads=T, algorithm=ALG, valid_items=valid)
        warp_base = (cuda.grid(1) // 16) * 16 * N
        coop.warp.load(x[warp_base:], values, 16, algorithm=ALG, valid_items=valid)
        coop.warp.store(out[warp_base:], values, width=16, algorithm=ALG)

    return kernel


for _name, (_np_dtype, _nb_type) in SCALARS.items():
    for _alg in ("direct", "striped", "vectorize"):
        if _alg != "vectorize" and _name not in ("bool", "int8", "float16", "float64", "complex128"):
            continue
        for _n in (4, 3) if _alg == "vectorize" and _name in ("int8", "int32", "complex64") else (4,):
            case(f"load_store-{_name}-{_alg}-items{_n}", (_nb_type[::1], _nb_type[::1], types.int32))(
                load_store_kernel(_np_dtype, _alg, 128, _n)
            )


@case("load_store-items16-strided-arrays", (types.int8[:], types.int8[:], types.int64))
def load_store_items16_strided_arrays(x, out, valid):
    values = cuda.local.array(16, np.int8)
    base = cuda.blockIdx.x * 64 * 16
    coop.block.load(x[base:], values, algorithm="vectorize")
    coop.block.store(out[base:], values, threads=64, items_per_thread=8, algorithm="striped", valid_items=valid)


def transpose_kernel(dtype, algorithm, threads, items):
    T, N, ALG = threads, items, algorithm
    BYTES = coop.block.load.temp_storage_bytes(dtype, T, N, algorithm=ALG)

    @cuda.jit
    def kernel(x, out, valid):
        values = cuda.local.array(N, dtype)
        temp = cuda.shared.array(BYTES, np.uint8, alignment=16)
        base = cuda.blockIdx.x * T * N
        coop.block.load(x[base:], values, threads=T, items_per_thread=N, algorithm=ALG)
        coop.block.store(out[base:], values, threads=T, items_per_thread=N, algorithm=ALG)
        coop.block.load(x[base:], values, threads=T, items_per_thread=N, algorithm=ALG, valid_items=valid,
                        oob_default=x[0], temp_storage=temp)
        coop.block.store(out[base:], values, threads=T, items_per_thread=N, algorithm=ALG, valid_items=valid,
                         temp_storage=temp)
        warp_base = (cuda.grid(1) // 16) * 16 * N
        coop.warp.load(x[warp_base:], values, 16, items_per_thread=N, algorithm="transpose", threads=T)
        coop.warp.store(out[warp_base:], values, width=16, items_per_thread=N, algorithm="transpose", threads=T,
                        valid_items=valid)

    return kernel


for _name in ("bool", "int8", "int32", "float64", "complex128"):
    _np_dtype, _nb_type = SCALARS[_name]
    for _alg in ("transpose", "warp_transpose", "warp_transpose_timesliced"):
        _t = 96 if _alg == "warp_transpose" and _name == "int8" else 128
        case(f"load_store-{_name}-{_alg}-threads{_t}", (_nb_type[::1], _nb_type[::1], types.int32))(
            transpose_kernel(_np_dtype, _alg, _t, 8 if _name == "int32" else 4)
        )
# 16 warps taking turns (the benchmark's 512 x 8): NVVM unrolls a plain loop of 16 turns
# only twice; the turns must be straight-line code, as CUB's
case("load_store-int32-warp_transpose_timesliced-threads512", (types.int32[::1], types.int32[::1], types.int32))(
    transpose_kernel(np.int32, "warp_transpose_timesliced", 512, 8)
)


@case("load_store-transform", (types.int16[::1], types.float32[::1], types.int64))
def load_store_transform(x, out, valid):
    base = cuda.blockIdx.x * 128 * 4
    coop.block.transform(x[base:], out[base:], lambda v: v * 3 + 1, threads=128, items_per_thread=4,
                         algorithm="vectorize")
    coop.block.transform(x[base:], out[base:], lambda v: -v, threads=128,
                         items_per_thread=4, algorithm="striped", valid_items=valid)
    coop.block.transform(x[base:], out[base:], lambda v: v, items_per_thread=4, valid_items=valid)
    coop.block.transform(x[base:], out[base:], lambda v: v + 2, threads=128, items_per_thread=4,
                         algorithm="warp_transpose", valid_items=valid)


def tile_offset_kernel(tile_start, algorithm, items):
    """A float64 tile copy by the block and by logical warps of 16, the tiles given as
    ``offset=`` or as slices (``tile_start``): ``test_codegen`` counts the slices'
    clamps (max.s64), none with ``offset=``."""
    N, ALG = items, algorithm
    by_offset = tile_start == "offset"

    @cuda.jit
    def kernel(x, out):
        values = cuda.local.array(N, np.float64)
        base = cuda.blockIdx.x * 128 * N
        warp_base = (cuda.grid(1) // 16) * 16 * N
        if by_offset:
            coop.block.load(x, values, threads=(128,), items_per_thread=N, algorithm=ALG, offset=base)
            coop.block.store(out, values, threads=(128,), items_per_thread=N, algorithm=ALG, offset=base)
            coop.warp.load(x, values, 16, items_per_thread=N, offset=warp_base)
            coop.warp.store(out, values, width=16, items_per_thread=N, offset=warp_base)
            coop.block.transform(x, out, lambda v: -v, threads=(128,), items_per_thread=N, offset=base)
        else:
            coop.block.load(x[base:], values, threads=(128,), items_per_thread=N, algorithm=ALG)
            coop.block.store(out[base:], values, threads=(128,), items_per_thread=N, algorithm=ALG)
            coop.warp.load(x[warp_base:], values, 16, items_per_thread=N)
            coop.warp.store(out[warp_base:], values, width=16, items_per_thread=N)
            coop.block.transform(x[base:], out[base:], lambda v: -v, threads=(128,), items_per_thread=N)

    return kernel


for _start in ("offset", "slice"):
    for _alg, _n in (("direct", 16), ("vectorize", 4), ("warp_transpose", 4)):
        case(f"load_store-tile_{_start}-float64-{_alg}-128x{_n}", (types.float64[::1], types.float64[::1]))(
            tile_offset_kernel(_start, _alg, _n)
        )


def block_shuffle_kernel(dtype, threads):
    T = threads

    @cuda.jit
    def kernel(x, out):
        i = cuda.grid(1)
        values = cuda.local.array(3, dtype)
        for j in range(3):
            values[j] = x[3 * i + j]
        out[0, i] = coop.block.shuffle.offset(x[i], -3, threads=T)
        out[1, i] = coop.block.shuffle.rotate(x[i], 5, threads=T)
        out[2, i] = coop.block.shuffle.up(values, values, threads=T)
        out[3, i] = coop.block.shuffle.down(values, values, threads=T)
        for j in range(3):
            out[4 + j, i] = values[j]

    return kernel


for _name in ("bool", "int8", "int32", "float16", "float64", "complex128"):
    _np_dtype, _nb_type = SCALARS[_name]
    for _t in (128, None) if _name == "int32" else (96,):
        case(f"block_shuffle-{_name}-threads{_t}", (_nb_type[::1], _nb_type[:, ::1]))(block_shuffle_kernel(_np_dtype, _t))


@misuse(
    "load-unknown-algorithm",
    (types.int32[::1], types.int32[::1]),
    "coop.block.load: algorithm must be one of 'direct', 'striped', 'warp_striped', 'vectorize', 'transpose', "
    "'warp_transpose', 'warp_transpose_timesliced'; got 'transposed'",
)
def load_unknown_algorithm(x, out):
    values = cuda.local.array(4, np.int32)
    coop.block.load(x, values, threads=64, algorithm="transposed")
    out[0] = values[0]


@misuse(
    "warp-load-unknown-algorithm",
    (types.int32[::1], types.int32[::1]),
    "coop.warp.store: algorithm must be one of 'direct', 'striped', 'vectorize', 'transpose'; got 'vectorized'",
)
def warp_load_unknown_algorithm(x, out):
    values = cuda.local.array(4, np.int32)
    values[0] = x[0]
    coop.warp.store(out, values, algorithm="vectorized")


@misuse(
    "store-striped-without-threads",
    (types.int32[::1], types.int32[::1]),
    "coop.block.store: threads is required by algorithm 'striped': the block's thread count, a compile-time constant",
)
def store_striped_without_threads(x, out):
    values = cuda.local.array(4, np.int32)
    values[0] = x[0]
    coop.block.store(out, values, algorithm="striped")


@misuse(
    "load-warp-striped-without-threads",
    (types.int32[::1], types.int32[::1]),
    "coop.block.load: threads is required by algorithm 'warp_striped': the block's thread count, a compile-time "
    "constant",
)
def load_warp_striped_without_threads(x, out):
    values = cuda.local.array(4, np.int32)
    coop.block.load(x, values, algorithm="warp_striped")
    out[0] = values[0]


@misuse(
    "load-threads-not-constant",
    (types.int32[::1], types.int32[::1]),
    "coop.block.load: threads must be a compile-time constant",
)
def load_threads_not_constant(x, out):
    values = cuda.local.array(4, np.int32)
    coop.block.load(x, values, threads=cuda.blockDim.x, algorithm="striped")
    out[0] = values[0]


@misuse(
    "load-items-dtype",
    (types.float32[::1], types.float32[::1]),
    "coop.block.load: items must hold float32 items like src, got float64",
)
def load_items_dtype(x, out):
    values = cuda.local.array(4, np.float64)
    coop.block.load(x, values)
    out[0] = values[0]


@misuse(
    "warp-store-items-dtype",
    (types.int32[::1], types.int32[::1]),
    "coop.warp.store: items must hold int32 items like dst, got int64",
)
def warp_store_items_dtype(x, out):
    values = cuda.local.array(4, np.int64)
    values[0] = x[0]
    coop.warp.store(out, values, 8)


@misuse(
    "load-transpose-items-per-thread-missing",
    (types.int32[::1], types.int32[::1]),
    "coop.block.load: items_per_thread is required by algorithm 'warp_transpose': the items per thread as a "
    "compile-time constant",
)
def load_transpose_items_per_thread_missing(x, out):
    values = cuda.local.array(4, np.int32)
    coop.block.load(x, values, threads=64, algorithm="warp_transpose")
    out[0] = values[0]


@misuse(
    "warp-store-transpose-threads-missing",
    (types.int32[::1], types.int32[::1]),
    "coop.warp.store: threads is required by algorithm 'transpose': the block's thread count",
)
def warp_store_transpose_threads_missing(x, out):
    values = cuda.local.array(4, np.int32)
    values[0] = x[0]
    coop.warp.store(out, values, items_per_thread=4, algorithm="transpose")


@misuse(
    "warp-load-transpose-partial-logical-warps",
    (types.int32[::1], types.int32[::1]),
    "coop.warp.load: threads must be a multiple of width (16)",
)
def warp_load_transpose_partial_logical_warps(x, out):
    values = cuda.local.array(4, np.int32)
    coop.warp.load(x, values, 16, items_per_thread=4, algorithm="transpose", threads=40)
    out[0] = values[0]


@misuse(
    "load-transpose-too-big",
    (types.float64[::1], types.float64[::1]),
    "coop.block.load: items_per_thread makes a tile of 1024 x 8 float64 items",
)
def load_transpose_too_big(x, out):
    values = cuda.local.array(8, np.float64)
    coop.block.load(x, values, threads=1024, items_per_thread=8, algorithm="transpose")
    out[0] = values[0]


@misuse(
    "load-src-not-1d",
    (types.int32[:, ::1], types.int32[::1]),
    "coop.block.load: src must be a 1-D array, got 2-D",
)
def load_src_not_1d(x, out):
    values = cuda.local.array(4, np.int32)
    coop.block.load(x, values)
    out[0] = values[0]


@misuse(
    "load-oob-default-without-valid-items",
    (types.int32[::1], types.int32[::1]),
    "coop.block.load: oob_default is only used with valid_items",
)
def load_oob_default_without_valid_items(x, out):
    values = cuda.local.array(4, np.int32)
    coop.block.load(x, values, oob_default=0)
    out[0] = values[0]


@misuse(
    "warp-load-oob-default-type",
    (types.int32[::1], types.int32[::1]),
    "coop.warp.load: oob_default must be convertible to the items' type int32, got complex128",
)
def warp_load_oob_default_type(x, out):
    values = cuda.local.array(4, np.int32)
    coop.warp.load(x, values, valid_items=5, oob_default=1j)
    out[0] = values[0]


@misuse(
    "store-valid-items-type",
    (types.float32[::1], types.float32[::1]),
    "coop.block.store: valid_items must be an integer, got float32",
)
def store_valid_items_type(x, out):
    values = cuda.local.array(4, np.float32)
    values[0] = x[0]
    coop.block.store(out, values, valid_items=x[0])


@misuse(
    "load-items-shorter-than-items-per-thread",
    (types.int32[::1], types.int32[::1]),
    "coop_error__coop_block_load__items_too_short",
)
def load_items_shorter_than_items_per_thread(x, out):
    values = cuda.local.array(3, np.int32)
    coop.block.load(x, values, items_per_thread=4)
    out[0] = values[0]


@misuse(
    "transform-items-per-thread-missing",
    (types.int32[::1], types.int32[::1]),
    "coop.block.transform: items_per_thread is required",
)
def transform_items_per_thread_missing(x, out):
    coop.block.transform(x, out, lambda v: v + 1, threads=128)


@misuse(
    "transform-op-result-type",
    (types.int32[::1], types.float32[::1]),
    "coop.block.transform: op returns UniTuple(int32 x 2), which cannot be converted to float32",
)
def transform_op_result_type(x, out):
    coop.block.transform(x, out, lambda v: (v, v), items_per_thread=2)


@misuse(
    "shuffle-up-output-dtype",
    (types.int32[::1], types.int32[::1]),
    "coop.block.shuffle.up: output must hold int32 items like the input, got int64",
)
def shuffle_up_output_dtype(x, out):
    values = cuda.local.array(4, np.int32)
    wide = cuda.local.array(4, np.int64)
    values[0] = x[0]
    out[0] = coop.block.shuffle.up(values, wide)


@misuse(
    "shuffle-offset-items",
    (types.int32[::1], types.int32[::1]),
    "coop.block.shuffle.offset: value must be one value per thread (for items arrays use up or down)",
)
def shuffle_offset_items(x, out):
    values = cuda.local.array(4, np.int32)
    values[0] = x[0]
    coop.block.shuffle.offset(values, 1)


@misuse(
    "shuffle-threads-not-constant",
    (types.int32[::1], types.int32[::1]),
    "coop.block.shuffle.rotate: threads must be a compile-time constant",
)
def shuffle_threads_not_constant(x, out):
    i = cuda.grid(1)
    out[i] = coop.block.shuffle.rotate(x[i], 1, threads=cuda.blockDim.x)


@misuse(
    "shuffle-distance-type",
    (types.float32[::1], types.float32[::1]),
    "coop.block.shuffle.offset: distance must be an integer, got float32",
)
def shuffle_distance_type(x, out):
    i = cuda.grid(1)
    out[i] = coop.block.shuffle.offset(x[i], x[0])


@misuse(
    "shuffle-down-output-too-short",
    (types.int32[::1], types.int32[::1]),
    "coop_error__coop_block_shuffle_down__output_too_short",
)
def shuffle_down_output_too_short(x, out):
    values = cuda.local.array(4, np.int32)
    shorter = cuda.local.array(3, np.int32)
    for k in range(4):
        values[k] = x[k]
    out[0] = coop.block.shuffle.down(values, shorter)
    out[1] = shorter[2]
