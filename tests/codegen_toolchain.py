"""How the codegen checks compile, and whether they can here.

The codegen checks (the tests marked ``codegen``) compile kernels with Numba's GPU
backend and no GPU (``compile_for_sm90``): numba-cuda asks NVRTC for the target, NVVM
makes the PTX, nvJitLink assembles it. Under the simulator they run in a subprocess with
the simulator off (``compile_env``). ``missing()`` compiles and assembles a trivial kernel
that way (this file run as a script) and says what failed, NVRTC, NVVM or nvJitLink
missing among others: conftest.py skips every codegen test with that reason, or fails it
where ``COOP_REQUIRE_CODEGEN`` is set (CI installs the toolkit). Probing NVVM alone skipped
nothing on a machine with NVVM but no NVRTC, where every codegen test then failed.

Imported by conftest.py: Numba is imported only by the functions that compile.
"""

import os
import pathlib
import subprocess
import sys

HERE = pathlib.Path(__file__).resolve().parent


def compile_env(environ=None):
    """The environment of a subprocess that compiles with Numba's GPU backend and no GPU:
    ``environ`` (by default this process's) without the simulator and the test mode,
    coop and the tests importable."""
    environ = os.environ if environ is None else environ
    env = {k: v for k, v in environ.items() if k not in ("NUMBA_ENABLE_CUDASIM", "COOP_TEST_MODE")}
    env["NUMBA_ENABLE_CUDASIM"] = "0"
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(HERE.parent), str(HERE), environ.get("PYTHONPATH")]))
    return env


def missing(environ=None):
    """None where the codegen checks can compile, else why they cannot: the first line of
    the error of compiling and assembling a trivial kernel (``probe``) in a subprocess with
    ``compile_env(environ)``."""
    run = subprocess.run([sys.executable, __file__], env=compile_env(environ), capture_output=True, text=True,
                         timeout=600)
    if run.returncode == 0:
        return None
    # the probe's error, or the last line of a crash's traceback (importing Numba or coop)
    lines = run.stdout.strip().splitlines() or run.stderr.strip().splitlines()[-1:]
    return lines[0] if lines else f"the probe exited with status {run.returncode}, saying nothing"


def compile_for_sm90(fn, sig):
    """``(ptx, assembly_error)``: ``fn`` (a Python function, or a dispatcher's) compiled
    for ``sig`` to PTX for sm_90, and ``assembly_error(ptx)``."""
    from numba import cuda

    ptx, _ = cuda.compile_ptx(getattr(fn, "py_func", fn), sig, cc=(9, 0))
    return ptx, assembly_error(ptx)


def assembly_error(ptx):
    """None, or why ptxas rejects ``ptx`` for sm_90: NVVM's PTX is not yet a kernel, and
    ptxas refuses some that NVVM accepts (a partial warp's radix ranking ran out of
    predicate registers, C7600; a kernel's static shared memory past 48 KiB). Assembled by
    nvJitLink (cuda-bindings), whose ptxas is the NVVM's release: a ptxas on PATH may be
    older and reject the PTX version."""
    from cuda.bindings import nvjitlink

    handle = nvjitlink.create(1, ["-arch=sm_90"])
    try:
        source = ptx.encode()
        nvjitlink.add_data(handle, nvjitlink.InputType.PTX, source, len(source), "kernel.ptx")
        nvjitlink.complete(handle)
    except nvjitlink.nvJitLinkError as exc:
        log = bytearray(nvjitlink.get_error_log_size(handle))
        nvjitlink.get_error_log(handle, log)
        return f"{exc}: {log.decode(errors='replace').rstrip(chr(0)).strip()}"
    finally:
        nvjitlink.destroy(handle)
    return None


def probe():
    """Compile and assemble a trivial kernel as the codegen checks compile theirs (coop
    imported first, as by the codegen cases): exit status 0, or 1 and the error."""
    import coop  # noqa: F401
    from numba.cuda import types

    def kernel(x):
        x[0] = 1

    try:
        _, error = compile_for_sm90(kernel, (types.int32[::1],))
    except Exception as exc:  # (what is missing: reported, not raised)
        error = f"{type(exc).__name__}: {exc}"
    if error is None:
        return 0
    print(error.strip(), flush=True)
    return 1


if __name__ == "__main__":
    sys.exit(probe())
