"""Kernels compiled to sm_90 PTX with the real NVVM, without running them.

``CASES``: kernels whose PTX must assemble (``codegen_toolchain.compile_for_sm90``), keep
items in registers (no local memory) and make no calls. ``MISUSES``: kernels that must
fail to compile with a message naming the primitive and the parameter.
``test_codegen.py`` checks both; under the simulator it runs ``python -m codegen_cases``
(``__main__.py``, in ``tests/``) in a subprocess, which runs ``main`` here and prints one
JSON line per case.

The cases are registered (``_registry``) by one module a family, imported below in the
order their cases take in ``CASES`` and ``MISUSES`` (the tests' ids, ``codegen_ir dump``).
"""

import json
import re
import sys

import numpy as np
from numba import cuda
from numba.cuda import types

import coop
from codegen_toolchain import compile_for_sm90

from ._registry import CASES, LAUNCH_THREADS, MISUSES, NUMERIC, ORDERED, SCALARS, case, misuse  # noqa: F401
from . import (  # noqa: F401  (registering their cases, in this order)
    warp_thread,
    radix,
    merge_sort,
    misuse_general,
    temp_storage,
    exchange,
    load_store,
    tile_analytics,
    device,
    block_shape,
)


# -- compiling ---------------------------------------------------------------------------

LOCAL_MEMORY = re.compile(r"\.local\b|__local_depot")
CALL = re.compile(r"^\s*call(\.uni)?\b", re.MULTILINE)
# a shared-memory access through a 64-bit address register (coop compiles shared
# pointers as 32-bit, as nvcc does: coop._core.backend)
WIDE_SHARED_ACCESS = re.compile(r"\b(ld|st|atom|red)\.shared\S*\s+[^;]*\[%rd")
LINK_ERROR = re.compile(r"\.extern \.func (coop_error__\w+)")
LABEL = re.compile(r"^(\$?\w+):", re.MULTILINE)
BRANCH = re.compile(r"\bbra(?:\.uni)?\s+(\$?\w+);")


def backward_branches(ptx):
    """Branches to a label defined before them: the loops left in the code."""
    defined = {match.group(1): match.start() for match in LABEL.finditer(ptx)}
    return sum(1 for match in BRANCH.finditer(ptx) if defined.get(match.group(1), len(ptx)) < match.start())


def compile_case(name):
    fn, sig = CASES[name]
    try:
        ptx, assembly_error = compile_for_sm90(fn, sig)
    except Exception as exc:  # reported, and failed, by the test of this case
        return {"error": f"{type(exc).__name__}: {str(exc)[-3000:]}"}
    return {
        "error": None,
        "assembly_error": assembly_error,
        "local_memory": bool(LOCAL_MEMORY.search(ptx)),
        "calls": len(CALL.findall(ptx)),
        "shuffles": ptx.count("shfl.sync"),
        "reduxes": sorted(set(re.findall(r"redux\.sync\.\w+\.\w+", ptx))),
        "shared_loads": ptx.count("ld.shared"),
        "shape_reads": {register: ptx.count(register) for register in ("%ntid", "%tid.y", "%tid.z")},
        "slice_clamps": ptx.count("max.s64"),
        "odd_shuffle_blocks": sum(block.count("shfl.sync.idx") % 2 for block in re.split(r"\n\$L__BB\d+_\d+:", ptx)),
        "link_errors": LINK_ERROR.findall(ptx),
        "debug_checks": ptx.count("trap;") + ptx.count("vprintf"),
        "loops": backward_branches(ptx),
        "wide_shared_addresses": len(WIDE_SHARED_ACCESS.findall(ptx)),
    }


# -- debug mode: compiled only with COOP_DEBUG=1 (main(["--debug-probe"]) in a subprocess) --


def debug_probe(x, out, n):
    i = cuda.grid(1)
    items = cuda.local.array(4, np.int32)
    for k in range(4):
        items[k] = x[4 * i + k]
    coop.thread.inclusive_sum(items, out[4 * i : 4 * i + n])  # a length known at run time
    out[i] += coop.block.exclusive_sum(items[0], threads=(16, 8))


def compile_debug_probe():
    from coop import config

    ptx, _ = cuda.compile_ptx(debug_probe, (types.int32[::1], types.int32[::1], types.int64), cc=(9, 0))
    return {"debug": config.debug, "traps": ptx.count("trap;"), "prints": ptx.count("vprintf")}


def compile_misuse(name):
    fn, sig, _ = MISUSES[name]
    try:
        if sig is None:
            fn()
        else:
            ptx, _ = cuda.compile_ptx(fn, sig, cc=(9, 0))
            # arrays too small for a call survive as undefined functions (coop._core.misuse):
            # the kernel would fail to link, naming them
            undefined = LINK_ERROR.findall(ptx)
            if undefined:
                return {"error": f"undefined at link time: {', '.join(undefined)}"}
    except Exception as exc:  # the message is what is checked
        return {"error": f"{type(exc).__name__}: {exc}"}
    from coop._core import misuse

    return {"error": None, "size_checks": misuse.size_checks_available()}


def main():
    """``[--debug-probe | --share K/M [--only NAMES]]``: the probe, or every case and
    misuse (with ``--share``, every M-th from the K-th: processes side by side share the
    work; with ``--only``, of those named, one a line)."""
    if sys.argv[1:] == ["--debug-probe"]:
        print(json.dumps(compile_debug_probe()), flush=True)
        return 0
    share, shares = 0, 1
    if sys.argv[1:2] == ["--share"]:
        share, shares = map(int, sys.argv[2].split("/"))
    only = set(sys.argv[4].split("\n")) if sys.argv[3:4] == ["--only"] else None
    names = [name for name in [*CASES, *MISUSES] if only is None or name in only]
    for k, name in enumerate(names):
        if k % shares != share:
            continue
        if name in CASES:
            print(json.dumps({"kind": "case", "name": name, **compile_case(name)}), flush=True)
        else:
            print(json.dumps({"kind": "misuse", "name": name, **compile_misuse(name)}), flush=True)
