"""coop side of the coop-vs-CUB tile benchmark (``benchmarks/run.py`` drives it).

The kernels are those of ``benchmarks/cub_tiles.cu``, written with coop. Two sections:

*collectives* (int32, float32; ``CONFIGS``): only the collective differs, the loads and
stores are ``coop.block.load`` / ``coop.block.store`` as CUB's are ``LoadDirect*`` /
``StoreDirect*``:

- ``tile_sum``: ``coop.block.load(..., threads=SHAPE, algorithm="striped")`` (item k of
  thread t = tile[k*THREADS + t]), ``coop.block.sum(items, threads=SHAPE)``, thread 0
  writes ``out[blockIdx.x]``;
- ``tile_exclusive_sum``: ``algorithm="direct"`` loads (thread t holds
  tile[t*ITEMS .. +ITEMS-1]), ``coop.block.exclusive_sum(items, items, threads=SHAPE)``,
  ``"direct"`` stores to ``out``.

*data-movement* (int32, float64; ``DM_CONFIGS``; every algorithm of ``ALGORITHMS``, the
same for the load and the store, as CUB's BlockLoad / BlockStore):

- ``tile_copy_ALG``: ``coop.block.load`` the tile into ``cuda.local.array(ITEMS)``,
  ``coop.block.store`` it to ``out``;
- ``tile_transform_ALG``: the same with ``items[k] = items[k] * 3 + 1`` in between;
- ``tile_block_transform_ALG``: ``coop.block.transform(d_in[base:], d_out[base:],
  triple_plus_one, ...)`` (the same computation as one primitive; CUB has no counterpart,
  it is compared with CUB's transform kernel).

Every call passes ``threads=SHAPE, items_per_thread=ITEMS`` (CUB's template arguments:
``SHAPE = (THREADS,)``, a 1-D block, as CUB's ``BLOCK_DIM_X = THREADS`` with
``BLOCK_DIM_Y = BLOCK_DIM_Z = 1``);
the transposes of ``tile_copy`` / ``tile_transform`` share one ``temp_storage=`` between
the load and the store (``cuda.shared.array(BYTES, np.uint8, alignment=16)``, BYTES from
``coop.block.load.temp_storage_bytes`` at import), as CUB's kernels share a TempStorage
union; ``coop.block.transform`` is given none (it shares one buffer itself).

Each (section, dtype, threads, items) configuration is a small generated module
(constants as module globals, the kernels undecorated at module level) so that Numba's
on-disk cache can hold its kernels; ``cuda.jit(sig, cache=True)`` compiles (or loads)
them eagerly. The modules are generated once per compiler of coop's kernels
(``COMPILERS``): numba-cuda (``from numba import cuda``, modules ``coop_tiles_*``) and
numba-cuda-mlir (``from numba_cuda_mlir import cuda``, ``coop_tiles_mlir_*``), the same
source otherwise; each compiler's kernels are timed on its own device arrays, with its own
events. ``--compilers`` selects them (default: those installed). coop refuses some
kernels with numba-cuda-mlir at compile time (``algorithm="vectorize"``; a device
function as ``coop.block.transform``'s operator): those are reported as ``refused``.

A kernel is named by its spec, ``KERNEL:DTYPE:THREADS:ITEMS`` for the collectives
(``sum:int32:128:4``) and ``KERNEL:DTYPE:THREADS:ITEMS:ALGORITHM`` for data movement
(``copy:float64:256:8:warp_transpose``); ``--kernels`` takes shell globs over specs
(``'copy:*'``, ``'*:*:*:*:transpose'``), ``--section`` one section.

Subcommands (each prints one JSON line per measurement):

- ``generate DIR``: write the configuration modules into DIR.
- ``info``: device, compute capability, driver and package versions.
- ``time DIR [--log2n 28] [--section S] [--kernels GLOBS] [--compilers NAMES]``:
  throughput of every kernel (CUDA events, median of REPS launches after WARMUP), with a
  check against NumPy.
- ``compile DIR --phase cold|cached [--compiler NAME] SPEC...``: compile time of each
  named kernel in this process; run with NUMBA_CACHE_DIR set. ``cold`` expects an empty
  cache, ``cached`` the one a ``cold`` run filled.
- ``ptx DIR [--section S] [--kernels GLOBS] [--compilers NAMES]``: compile every kernel
  to PTX for sm_90 without a GPU (with a stand-in device; run with
  ``NUMBA_ENABLE_CUDASIM=0`` on a machine without a GPU) and report its size, barriers,
  vector accesses and local memory use: a codegen check, not a measurement.
"""

import argparse
import fnmatch
import importlib
import importlib.util
import json
import os
import pathlib
import re
import statistics
import sys
import time

# Benchmark the coop of this checkout, whether or not (or whichever) coop is installed.
REPO = pathlib.Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

SECTIONS = ("collectives", "data-movement")

# collectives
DTYPES = ("int32", "float32")
CONFIGS = ((128, 1), (128, 4), (128, 16), (256, 4), (256, 8), (512, 8))
KERNELS = ("sum", "exclusive_sum")

# data movement
DM_DTYPES = ("int32", "float64")
DM_CONFIGS = ((128, 4), (128, 16), (256, 8), (512, 8))
DM_KERNELS = ("copy", "transform", "block_transform")
ALGORITHMS = ("direct", "striped", "vectorize", "transpose", "warp_transpose", "warp_transpose_timesliced")
TRANSPOSES = ("transpose", "warp_transpose", "warp_transpose_timesliced")

WARMUP = 3
REPS = 20  # for both sections: a data-movement launch takes 0.3-1 ms at 2^28 elements


# -- compilers ------------------------------------------------------------------------------
# One kernel source, compiled by each compiler: a configuration module is generated once per
# compiler, differing only in the ``cuda`` it imports. What else differs is here.


class NumbaCuda:
    """numba-cuda: ``from numba import cuda``."""

    name = "numba-cuda"
    package = "numba"  # the package whose ``cuda`` the generated modules import
    module_prefix = "coop_tiles"

    @property
    def cuda_import(self):
        return f"from {self.package} import cuda"

    def available(self):
        return importlib.util.find_spec(self.package) is not None

    def cuda(self):
        """Its ``cuda`` module (jit, device arrays, events), coop imported first: coop
        registers its primitives with numba-cuda-mlir as that loads."""
        import coop  # noqa: F401

        return importlib.import_module(f"{self.package}.cuda")

    def memset(self, array, byte):
        driver = importlib.import_module(f"{self.package}.cuda.cudadrv.driver")
        driver.device_memset(array, byte, array.nbytes)

    def bind(self, dispatcher, compiled):
        compiled.bind()  # a kernel loaded from the cache is bound lazily: count it here

    def ptx(self, function, signature):
        """sm_90 PTX of ``function`` without a GPU."""
        import numba.cuda.dispatcher

        class Sm90:
            compute_capability = (9, 0)

        numba.cuda.dispatcher.get_current_device = lambda: Sm90()  # a stand-in device
        return self.cuda().compile_ptx(function, signature, cc=(9, 0))[0]

    def refusal(self, exc):
        """coop's message where it refuses a kernel with this compiler, else None."""
        return None


class NumbaCudaMlir(NumbaCuda):
    """numba-cuda-mlir: ``from numba_cuda_mlir import cuda``; coop refuses what it does not
    serve there yet (``algorithm="vectorize"``, a device function as an operator) with a
    CoopError at compile time."""

    name = "numba-cuda-mlir"
    package = "numba_cuda_mlir"
    module_prefix = "coop_tiles_mlir"

    def bind(self, dispatcher, compiled):
        # Reading the kernel's attributes loads its module (it has no bind()); they are
        # then the compiled kernel's attributes, as numba-cuda's.
        dispatcher.get_regs_per_thread()

    def ptx(self, function, signature):
        from coop._core.compilers.numba_cuda_mlir import compile_ptx

        return compile_ptx(function, signature, cc=(9, 0))

    def refusal(self, exc):
        message = " ".join(str(exc).split())
        found = re.search(r"coop\.\S+ in a numba-cuda-mlir kernel: .*? is not supported there yet", message)
        return found.group(0) if found else None


COMPILERS = {compiler.name: compiler for compiler in (NumbaCuda(), NumbaCudaMlir())}


def default_compilers():
    """Every compiler that is installed (numba-cuda always is)."""
    return [name for name, compiler in COMPILERS.items() if compiler.available()]


def parse_compilers(value):
    """``--compilers`` (comma-separated names), in COMPILERS' order; without the option,
    the callers take ``default_compilers()``."""
    names = [name for name in value.split(",") if name]
    unknown = [name for name in names if name not in COMPILERS]
    if unknown or not names:
        raise SystemExit(f"unknown compiler(s) {', '.join(unknown) or value!r}: choose from "
                         + ", ".join(COMPILERS))
    return [name for name in COMPILERS if name in names]


MODULE_TEMPLATE = '''\
"""Generated by benchmarks/coop_tiles.py: the tile kernels for {dtype}, {threads} x {items}."""

import numpy as np
{cuda_import}

import coop

THREADS = {threads}
SHAPE = (THREADS,)
ITEMS = {items}
TILE = THREADS * ITEMS
DTYPE = np.{dtype}
SIGNATURE = "void({dtype}[::1], {dtype}[::1])"


def tile_sum(x, out):
    items = cuda.local.array(ITEMS, DTYPE)
    base = cuda.blockIdx.x * TILE
    coop.block.load(x[base:], items, threads=SHAPE, algorithm="striped")
    total = coop.block.sum(items, threads=SHAPE)
    if cuda.threadIdx.x == 0:
        out[cuda.blockIdx.x] = total


def tile_exclusive_sum(x, out):
    items = cuda.local.array(ITEMS, DTYPE)
    base = cuda.blockIdx.x * TILE
    coop.block.load(x[base:], items, threads=SHAPE, algorithm="direct")
    coop.block.exclusive_sum(items, items, threads=SHAPE)
    coop.block.store(out[base:], items, threads=SHAPE, algorithm="direct")
'''

DM_MODULE_HEADER = '''\
"""Generated by benchmarks/coop_tiles.py: the data-movement tile kernels (coop.block.load /
coop.block.store) for {dtype}, {threads} x {items}, every algorithm."""

import numpy as np
{cuda_import}

import coop

THREADS = {threads}
SHAPE = (THREADS,)
ITEMS = {items}
TILE = THREADS * ITEMS
DTYPE = np.{dtype}
SIGNATURE = "void({dtype}[::1], {dtype}[::1])"


@cuda.jit(device=True)
def triple_plus_one(x):
    return x * 3 + 1
'''

# One algorithm's kernels; {temp} declares the shared temp_storage (transposes only),
# {temp_arg} passes it.
DM_ALGORITHM_TEMPLATE = '''{bytes}

def tile_copy_{alg}(d_in, d_out):
{temp}    items = cuda.local.array(ITEMS, DTYPE)
    base = cuda.blockIdx.x * TILE
    coop.block.load(d_in[base:], items, threads=SHAPE, items_per_thread=ITEMS, algorithm="{alg}"{temp_arg})
    coop.block.store(d_out[base:], items, threads=SHAPE, items_per_thread=ITEMS, algorithm="{alg}"{temp_arg})


def tile_transform_{alg}(d_in, d_out):
{temp}    items = cuda.local.array(ITEMS, DTYPE)
    base = cuda.blockIdx.x * TILE
    coop.block.load(d_in[base:], items, threads=SHAPE, items_per_thread=ITEMS, algorithm="{alg}"{temp_arg})
    for k in range(ITEMS):
        items[k] = items[k] * 3 + 1
    coop.block.store(d_out[base:], items, threads=SHAPE, items_per_thread=ITEMS, algorithm="{alg}"{temp_arg})


def tile_block_transform_{alg}(d_in, d_out):
    base = cuda.blockIdx.x * TILE
    coop.block.transform(d_in[base:], d_out[base:], triple_plus_one, threads=SHAPE, items_per_thread=ITEMS,
                         algorithm="{alg}")
'''

DM_TEMP_BYTES = '''
# The shared scratch of the load and the store (one array for both, as CUB's TempStorage union)
TEMP_BYTES_{ALG} = max(
    coop.block.load.temp_storage_bytes(DTYPE, THREADS, ITEMS, algorithm="{alg}"),
    coop.block.store.temp_storage_bytes(DTYPE, THREADS, ITEMS, algorithm="{alg}"),
)
'''


def dm_module_source(cuda_import, dtype, threads, items):
    parts = [DM_MODULE_HEADER.format(cuda_import=cuda_import, dtype=dtype, threads=threads, items=items)]
    for alg in ALGORITHMS:
        if alg in TRANSPOSES:
            fields = dict(
                bytes=DM_TEMP_BYTES.format(alg=alg, ALG=alg.upper()),
                temp=f"    temp = cuda.shared.array(TEMP_BYTES_{alg.upper()}, np.uint8, alignment=16)\n",
                temp_arg=", temp_storage=temp",
            )
        else:
            fields = dict(bytes="", temp="", temp_arg="")
        parts.append(DM_ALGORITHM_TEMPLATE.format(alg=alg, **fields))
    return "\n\n\n".join(part.strip("\n") for part in parts) + "\n"


# -- naming and selecting kernels ----------------------------------------------------------
# A kernel's key: (kernel, dtype, threads, items) for the collectives, (kernel, dtype,
# threads, items, algorithm) for data movement; its spec joins the key with ":".


def module_name(compiler, dtype, threads, items):
    return f"{COMPILERS[compiler].module_prefix}_{dtype}_{threads}x{items}"


def dm_module_name(compiler, dtype, threads, items):
    return f"{COMPILERS[compiler].module_prefix}_dm_{dtype}_{threads}x{items}"


def all_kernels():
    """Every collective kernel as (kernel, dtype, threads, items), in report order."""
    return [(k, d, t, i) for d in DTYPES for (t, i) in CONFIGS for k in KERNELS]


def dm_kernels():
    """Every data-movement kernel as (kernel, dtype, threads, items, algorithm), in report
    order."""
    return [(k, d, t, i, a) for d in DM_DTYPES for (t, i) in DM_CONFIGS for a in ALGORITHMS for k in DM_KERNELS]


def section_of(key):
    return "data-movement" if len(key) == 5 else "collectives"


def kernel_spec(*key):
    return ":".join(map(str, key))


def parse_spec(spec):
    fields = spec.split(":")
    if len(fields) == 4 and fields[0] in KERNELS and fields[1] in DTYPES:
        kernel, dtype, threads, items = fields
        return kernel, dtype, int(threads), int(items)
    if len(fields) == 5 and fields[0] in DM_KERNELS and fields[1] in DM_DTYPES and fields[4] in ALGORITHMS:
        kernel, dtype, threads, items, algorithm = fields
        return kernel, dtype, int(threads), int(items), algorithm
    raise SystemExit(
        f"bad kernel spec {spec!r}: want KERNEL:DTYPE:THREADS:ITEMS ({'/'.join(KERNELS)}) or "
        f"KERNEL:DTYPE:THREADS:ITEMS:ALGORITHM ({'/'.join(DM_KERNELS)})"
    )


def split_patterns(patterns):
    """``--kernels`` values (repeated and/or comma-separated globs) as one list."""
    return [p for value in patterns or () for p in value.split(",") if p]


def selected(section=None, patterns=None, only=None, dtype=None):
    """The keys of the kernels a run covers: ``section`` (None: both), ``patterns`` (globs
    over specs; none: all), ``only`` ("THREADSxITEMS") and ``dtype``, in report order."""
    keys = []
    if section in (None, "all", "collectives"):
        keys += all_kernels()
    if section in (None, "all", "data-movement"):
        keys += dm_kernels()
    patterns = split_patterns(patterns)
    return [
        key for key in keys
        if (not patterns or any(fnmatch.fnmatchcase(kernel_spec(*key), p) for p in patterns))
        and (only is None or f"{key[2]}x{key[3]}" == only)
        and (dtype is None or key[1] == dtype)
    ]


CHECK_MODULE = '''\
"""Generated by benchmarks/coop_tiles.py: the data-movement check (plain Numba)."""

{cuda_import}


@cuda.jit
def count_mismatches(got, want, result):
    for i in range(cuda.grid(1), got.size, cuda.gridsize(1)):
        if got[i] != want[i]:
            cuda.atomic.add(result, 0, 1)
            cuda.atomic.min(result, 1, i)
'''


def generate(directory):
    """Every configuration module, once per compiler (installed or not: importing one is
    what needs it)."""
    directory = pathlib.Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    sources = {}
    for name, compiler in COMPILERS.items():
        cuda_import = compiler.cuda_import
        sources[f"{compiler.module_prefix}_check"] = CHECK_MODULE.format(cuda_import=cuda_import)
        for dtype in DTYPES:
            for threads, items in CONFIGS:
                source = MODULE_TEMPLATE.format(cuda_import=cuda_import, dtype=dtype, threads=threads, items=items)
                sources[module_name(name, dtype, threads, items)] = source
        for dtype in DM_DTYPES:
            for threads, items in DM_CONFIGS:
                source = dm_module_source(cuda_import, dtype, threads, items)
                sources[dm_module_name(name, dtype, threads, items)] = source
    for name, source in sources.items():
        path = directory / f"{name}.py"
        # Rewriting an unchanged module would change its mtime and so miss the cache.
        if not path.exists() or path.read_text() != source:
            path.write_text(source)


def load_module(directory, compiler, key):
    directory = str(pathlib.Path(directory).resolve())
    if directory not in sys.path:
        sys.path.insert(0, directory)
    COMPILERS[compiler].cuda()  # coop first (see NumbaCuda.cuda)
    if key == ("check",):
        return importlib.import_module(f"{COMPILERS[compiler].module_prefix}_check")
    name = (dm_module_name if section_of(key) == "data-movement" else module_name)(compiler, *key[1:4])
    return importlib.import_module(name)


def python_function(module, key):
    if section_of(key) == "data-movement":
        return getattr(module, f"tile_{key[0]}_{key[4]}")
    return getattr(module, f"tile_{key[0]}")


def key_fields(key, compiler):
    """The JSON fields naming a kernel and its compiler (``algorithm`` for data movement
    only, so that the collectives' lines keep their fields)."""
    fields = dict(impl="coop", compiler=compiler, kernel=key[0], dtype=key[1], threads=key[2], items=key[3])
    if len(key) == 5:
        fields["algorithm"] = key[4]
    return fields


def emit(**fields):
    print(json.dumps(fields), flush=True)


# -- on the GPU -----------------------------------------------------------------------------


def import_cuda(compiler="numba-cuda"):
    """The compiler's ``cuda`` and coop, refusing to run on the simulator (benchmarks
    need a GPU)."""
    cuda = COMPILERS[compiler].cuda()

    import coop

    if coop.SIMULATOR:
        raise SystemExit(
            "coop_tiles: Numba's CUDA simulator is active (no GPU, or NUMBA_ENABLE_CUDASIM=1);"
            " the benchmark needs a GPU"
        )
    return cuda, coop


def jit(compiler, module, key, cache):
    """Eager compile (or load from the disk cache) of one kernel; the dispatcher and its
    one compiled kernel, bound to the context (module loaded), ready to launch."""
    cuda = COMPILERS[compiler].cuda()
    dispatcher = cuda.jit(module.SIGNATURE, cache=cache)(python_function(module, key))
    compiled = next(iter(dispatcher.overloads.values()))
    COMPILERS[compiler].bind(dispatcher, compiled)
    return dispatcher, compiled


def emit_failure(compiler, fields, exc, **more):
    """A kernel that did not compile or run: ``refused`` (coop's message) where coop
    refuses it with this compiler, else ``error``."""
    refusal = COMPILERS[compiler].refusal(exc)
    if refusal:
        emit(**fields, **more, refused=refusal)
    else:
        emit(**fields, **more, error=f"{type(exc).__name__}: {str(exc)[-2000:]}")


def warm_up_compiler(cuda):
    """Compile, bind and run a trivial kernel without coop (no cache), so that the first
    measured compile does not pay the compiler's, the linker's and the context's one-time
    setup. Returns its seconds (reported for information)."""
    import numpy as np

    start = time.perf_counter()

    @cuda.jit("void(int32[::1])")
    def plain(x):
        i = cuda.grid(1)
        if i < x.size:
            x[i] += 1

    array = cuda.to_device(np.zeros(32, np.int32))
    plain[1, 32](array)
    cuda.synchronize()
    return time.perf_counter() - start


def info():
    import importlib.metadata as metadata
    import platform

    cuda, coop = import_cuda()
    device = cuda.get_current_device()
    name = device.name.decode() if isinstance(device.name, bytes) else device.name
    from numba.cuda.cudadrv import driver

    def version(package):
        try:
            return metadata.version(package)
        except metadata.PackageNotFoundError:
            return None

    try:  # the kernel module's release, e.g. 580.65.06
        text = pathlib.Path("/proc/driver/nvidia/version").read_text()
        release = re.search(r"Kernel Module\s+(?:for \S+\s+)?([\d.]+)", text).group(1)
    except (OSError, AttributeError):
        release = None
    emit(
        impl="info",
        device=name,
        cc="%d.%d" % device.compute_capability,
        driver=".".join(map(str, driver.driver.get_version())),
        driver_release=release,
        python=platform.python_version(),
        coop=coop.__version__,
        numba=version("numba"),
        numba_cuda=version("numba-cuda"),
        numba_cuda_mlir=version("numba-cuda-mlir"),
        numpy=version("numpy"),
    )


def pattern(n, dtype):
    """value(i) = (i % 13) * scale (1 for int32, 0.25 for float32): every tile sum and
    scan prefix is exact in float32, so the checks compare exactly."""
    import numpy as np

    values = np.arange(n, dtype=np.int32) % np.int32(13)
    if dtype == "float32":
        return values.astype(np.float32) * np.float32(0.25)
    return values


def move_pattern(n, dtype):
    """Data movement's input: value(i) = i mod 2^28 (as cub_tiles.cu): distinct within any
    2^28 items, so a misplaced item is caught, and ``x * 3 + 1`` is exact in int32 and
    float64."""
    import numpy as np

    return (np.arange(n, dtype=np.int64) & 0x0FFFFFFF).astype(dtype)


def median_seconds(cuda, launch):
    """Median seconds per launch: WARMUP launches, then REPS launches back to back with an
    event recorded between consecutive ones, so that the GPU, kept busy by the queue,
    times the kernels and not Python's launch overhead (as cub_tiles.cu does)."""
    for _ in range(WARMUP):
        launch()
    cuda.synchronize()
    events = [cuda.event() for _ in range(REPS + 1)]
    events[0].record()
    for r in range(REPS):
        launch()
        events[r + 1].record()
    events[-1].synchronize()
    ms = [events[r].elapsed_time(events[r + 1]) for r in range(REPS)]
    return statistics.median(ms) * 1e-3


def fill(compiler, array, byte):
    COMPILERS[compiler].memset(array, byte)
    COMPILERS[compiler].cuda().synchronize()


def check_sums(got, host, tile):
    import numpy as np

    expect = host.reshape(-1, tile).sum(axis=1, dtype=np.float64)
    bad = np.flatnonzero(got.astype(np.float64) != expect)
    if bad.size:
        return f"FAILED: {bad.size} of {expect.size} tile sums wrong (first: tile {bad[0]})"
    return "ok"


def check_scan(d_out, host, tile):
    """Spot-check the first, a middle and the last tile."""
    import numpy as np

    tiles = host.size // tile
    bad = 0
    for t in (0, tiles // 2, tiles - 1):
        got = d_out[t * tile : (t + 1) * tile].copy_to_host().astype(np.float64)
        values = host[t * tile : (t + 1) * tile].astype(np.float64)
        expect = np.concatenate(([0.0], np.cumsum(values)[:-1]))
        bad += int(np.count_nonzero(got != expect))
    return f"FAILED: {bad} wrong prefixes in 3 spot-checked tiles" if bad else "ok"


def mismatch_counter(directory, compiler):
    """``count_mismatches[blocks, threads](got, want, result)``, a kernel without coop of
    the generated modules (compiled by ``compiler``, for its arrays): ``result[0]`` += the
    positions where ``got != want``, ``result[1]`` = the lowest of them (exact comparison,
    the whole array, on the device)."""
    return load_module(directory, compiler, ("check",)).count_mismatches


def check_move(cuda, counter, d_out, d_want, want, tile):
    """The whole output compared with NumPy's expected array on the device, and the first,
    a middle and the last tile on the host."""
    import numpy as np

    result = cuda.to_device(np.array([0, np.iinfo(np.int64).max], np.int64))
    counter[min(1024, (want.size + 255) // 256), 256](d_out, d_want, result)
    wrong, first = result.copy_to_host()
    tiles = want.size // tile
    spot = 0
    for t in (0, tiles // 2, tiles - 1):
        got = d_out[t * tile : (t + 1) * tile].copy_to_host()
        spot += int(np.count_nonzero(got != want[t * tile : (t + 1) * tile]))
    if wrong or spot:
        return (f"FAILED: {wrong} of {want.size} items wrong (first: item {first if wrong else -1}); "
                f"{spot} wrong in 3 spot-checked tiles")
    return "ok"


def compiled_kernels(directory, compiler, keys, **more):
    """(key, fields, dispatcher, compiled, seconds to compile or load) of each of the keys'
    kernels compiled by ``compiler`` (from the cache where filled), ready to launch; the
    failures are reported (with the fields ``more``), not yielded."""
    for key in keys:
        module = load_module(directory, compiler, key)
        fields = key_fields(key, compiler)
        start = time.perf_counter()
        try:
            dispatcher, compiled = jit(compiler, module, key, cache=True)
        except Exception as exc:  # reported; the other kernels go on
            emit_failure(compiler, fields, exc, **more)
            continue
        yield key, fields, dispatcher, compiled, time.perf_counter() - start


def time_collectives(directory, n, keys, compilers):
    import numpy as np

    for dtype in DTYPES:
        dtype_keys = [k for k in keys if k[1] == dtype]
        if not dtype_keys:
            continue
        host = pattern(n, dtype)
        for compiler in compilers:
            cuda = COMPILERS[compiler].cuda()  # its own device arrays and events
            d_in = cuda.to_device(host)
            d_out = cuda.device_array(n, dtype=np.dtype(dtype))
            for key, fields, dispatcher, compiled, _ in compiled_kernels(directory, compiler, dtype_keys):
                kernel, _, threads, items = key
                tile = threads * items
                tiles = n // tile
                configured = dispatcher[tiles, threads]
                launch = lambda: configured(d_in, d_out)  # noqa: E731
                try:
                    fill(compiler, d_out, 0)
                    seconds = median_seconds(cuda, launch)
                    if kernel == "sum":
                        check = check_sums(d_out[:tiles].copy_to_host(), host, tile)
                        moved = n * host.itemsize
                    else:
                        check = check_scan(d_out, host, tile)
                        moved = 2 * n * host.itemsize
                except Exception as exc:  # a launch failure: reported (a fault ends the others too)
                    emit_failure(compiler, fields, exc)
                    continue
                emit(
                    **fields,
                    seconds=seconds,
                    gbps=moved / seconds * 1e-9,
                    regs=compiled.regs_per_thread,
                    check=check,
                )
            del d_in, d_out


def time_data_movement(directory, n, keys, compilers):
    import numpy as np

    for dtype in DM_DTYPES:
        dtype_keys = [k for k in keys if k[1] == dtype]
        if not dtype_keys:
            continue
        host = move_pattern(n, dtype)
        transformed = host * host.dtype.type(3) + host.dtype.type(1)  # NumPy, in the dtype
        for compiler in compilers:
            cuda = COMPILERS[compiler].cuda()  # its own device arrays and events
            counter = mismatch_counter(directory, compiler)
            d_in = cuda.to_device(host)
            d_out = cuda.device_array(n, dtype=np.dtype(dtype))
            d_transformed = cuda.to_device(transformed)
            for key, fields, dispatcher, compiled, load_s in compiled_kernels(directory, compiler, dtype_keys):
                kernel, _, threads, items, algorithm = key
                tiles = n // (threads * items)
                configured = dispatcher[tiles, threads]
                launch = lambda: configured(d_in, d_out)  # noqa: E731
                try:
                    fill(compiler, d_out, 0xFF)  # -1 / NaN: nothing a previous kernel left passes
                    seconds = median_seconds(cuda, launch)
                    if kernel == "copy":
                        check = check_move(cuda, counter, d_out, d_in, host, threads * items)
                    else:
                        check = check_move(cuda, counter, d_out, d_transformed, transformed, threads * items)
                except Exception as exc:  # a launch failure: reported (a fault ends the others too)
                    emit_failure(compiler, fields, exc)
                    continue
                emit(
                    **fields,
                    seconds=seconds,
                    gbps=2 * n * host.itemsize / seconds * 1e-9,
                    regs=compiled.regs_per_thread,
                    smem=compiled.shared_mem_per_block,
                    local=compiled.local_mem_per_thread,
                    check=check,
                    jit_s=load_s,
                    cache_hit=sum(dispatcher.stats.cache_hits.values()) > 0,
                )
            del d_in, d_out, d_transformed


def time_all(directory, log2n, keys, compilers):
    import_cuda()
    n = 1 << log2n
    generate(directory)
    time_collectives(directory, n, [k for k in keys if section_of(k) == "collectives"], compilers)
    time_data_movement(directory, n, [k for k in keys if section_of(k) == "data-movement"], compilers)


def compile_times(directory, phase, specs, compiler):
    cuda, _ = import_cuda(compiler)
    if "NUMBA_CACHE_DIR" not in os.environ:
        raise SystemExit("coop_tiles compile: set NUMBA_CACHE_DIR (cold: an empty directory)")
    keys = [parse_spec(spec) for spec in specs]
    cuda.current_context()  # create the context before timing anything
    warm_up = warm_up_compiler(cuda)
    generate(directory)
    # (the module is imported before the clock starts: it compiles nothing)
    for _, fields, dispatcher, _, seconds in compiled_kernels(directory, compiler, keys, phase=phase):
        emit(
            **fields,
            phase=phase,
            compile_s=seconds,
            cache_hit=sum(dispatcher.stats.cache_hits.values()) > 0,
            warm_up_s=warm_up,
        )


# -- without a GPU -----------------------------------------------------------------------


LOCAL_MEMORY = re.compile(r"\.local\b|__local_depot")
BARRIERS = re.compile(r"^\s*(?:bar\.sync|barrier\.sync|bar\.warp\.sync|bar\.red)\b", re.MULTILINE)
WARP_BARRIERS = re.compile(r"^\s*bar\.warp\.sync\b", re.MULTILINE)
GLOBAL_ACCESS = re.compile(r"^\s*(ld|st)\.global(\S*)", re.MULTILINE)


def access_widths(accesses, op):
    """{"v1": scalar count, "v2": ..., "v4": ...} of the global loads or stores."""
    counts = {}
    for kind, suffix in accesses:
        if kind == op:
            width = re.search(r"\.(v[248])\.", suffix + ".")
            name = width.group(1) if width else "v1"
            counts[name] = counts.get(name, 0) + 1
    return dict(sorted(counts.items()))


def ptx_all(directory, keys, compilers):
    import coop

    if coop.SIMULATOR:
        raise SystemExit("coop_tiles ptx: run with NUMBA_ENABLE_CUDASIM=0")
    generate(directory)
    failures = 0
    for compiler in compilers:
        for key in keys:
            failures += not ptx_check(directory, compiler, key)
    return 1 if failures else 0


def ptx_check(directory, compiler, key):
    """Compile one kernel to sm_90 PTX and report what it shows; whether it compiled (or
    was refused as expected)."""
    module = load_module(directory, compiler, key)
    fields = key_fields(key, compiler)
    start = time.perf_counter()
    try:
        ptx = COMPILERS[compiler].ptx(python_function(module, key), module.SIGNATURE)
    except Exception as exc:
        emit_failure(compiler, fields, exc)
        return COMPILERS[compiler].refusal(exc) is not None
    accesses = GLOBAL_ACCESS.findall(ptx)
    emit(
        **fields,
        ptx_s=time.perf_counter() - start,
        ptx_bytes=len(ptx.encode()),
        local_memory=bool(LOCAL_MEMORY.search(ptx)),
        calls=len(re.findall(r"^\s*call(\.uni)?\b", ptx, re.MULTILINE)),
        block_barriers=len(BARRIERS.findall(ptx)) - len(WARP_BARRIERS.findall(ptx)),
        warp_barriers=len(WARP_BARRIERS.findall(ptx)),
        global_loads=access_widths(accesses, "ld"),
        global_stores=access_widths(accesses, "st"),
        error=None,
    )
    return True


def add_selection(parser):
    parser.add_argument("--section", choices=("all",) + SECTIONS, default="all",
                        help="one section's kernels (default: all)")
    parser.add_argument("--kernels", action="append", metavar="GLOB[,GLOB...]",
                        help="only the kernels whose spec matches a glob, e.g. 'copy:*' or "
                        "'*:float64:*:*:transpose' (repeatable)")
    parser.add_argument("--compilers", type=parse_compilers, default=None, metavar="NAME[,NAME...]",
                        help=f"the compilers of coop's kernels, of {', '.join(COMPILERS)} (default: "
                        "those installed)")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("generate", help="write the configuration modules")
    p.add_argument("dir")
    sub.add_parser("info", help="device and versions")
    p = sub.add_parser("time", help="throughput of every kernel")
    p.add_argument("dir")
    p.add_argument("--log2n", type=int, default=28)
    p.add_argument("--only", metavar="THREADSxITEMS", help="time one configuration (profiling)")
    p.add_argument("--dtype", choices=sorted(set(DTYPES + DM_DTYPES)), help="time one dtype (profiling)")
    add_selection(p)
    p = sub.add_parser("compile", help="compile time of the named kernels")
    p.add_argument("dir")
    p.add_argument("--phase", choices=("cold", "cached"), required=True)
    p.add_argument("--compiler", choices=tuple(COMPILERS), default="numba-cuda")
    p.add_argument("kernels", nargs="+", metavar="SPEC",
                   help="KERNEL:DTYPE:THREADS:ITEMS or KERNEL:DTYPE:THREADS:ITEMS:ALGORITHM")
    p = sub.add_parser("ptx", help="compile every kernel to sm_90 PTX (no GPU needed)")
    p.add_argument("dir")
    add_selection(p)
    args = parser.parse_args(argv)

    if args.command == "generate":
        generate(args.dir)
    elif args.command == "info":
        info()
    elif args.command == "time":
        time_all(args.dir, args.log2n, selected(args.section, args.kernels, args.only, args.dtype),
                 args.compilers or default_compilers())
    elif args.command == "compile":
        compile_times(args.dir, args.phase, args.kernels, args.compiler)
    elif args.command == "ptx":
        return ptx_all(args.dir, selected(args.section, args.kernels), args.compilers or default_compilers())
    return 0


if __name__ == "__main__":
    sys.exit(main())
