"""Misuse that only the compiled code can see: arrays too small for a primitive.

Numba's array types carry no length, so an output or ``temp_storage`` array that is too
short cannot be rejected while typing. It can be rejected while *compiling*: the arrays
users pass (``cuda.local.array(N, ...)``, ``cuda.shared.array(N, ...)``) have constant
lengths once NVVM has inlined the primitive, so ``size_check`` emits a call to an
undefined function guarded by ``llvm.is.constant(too_small) && too_small``. When the
length is a known constant and too small, that call survives and the kernel fails to
link (before it ever runs) with an undefined reference naming the primitive, the
parameter and the problem, e.g. ``coop_error__coop_block_exclusive_sum__output_too_short``
(``..._wrong_length`` for arrays that must hold exactly a primitive's items per thread).
When the length is known only at run time, nothing is emitted (no cost), unless debug
mode is on (``coop.config.debug``): then a run-time check prints the message the
simulator gives and traps.

Older NVVM (seen with the CUDA 12 toolchain) does not know ``llvm.is.constant`` and would
leave a call to it in the PTX, which ptxas rejects; ``size_checks_available()`` asks the
NVVM in use once per process, and where it cannot fold the test no check is emitted.

Under the simulator, arrays have lengths: the check runs on every call and raises
``CoopError`` with the full message, which names the symbol too.
"""

import functools

from coop._core.backend import SIMULATOR, device_function
from coop._core.errors import CoopError


def _symbol(qualname, param, problem):
    return f"coop_error__{qualname.replace('.', '_')}__{param}_{problem}"


def _problem(param, unit, exact):
    return "wrong_length" if exact else "too_short" if unit == "items" else "too_small"


def size_message(qualname, param, unit, exact, size, minimum):
    """What a check says of an array holding ``size`` items (or bytes) where it needs
    ``minimum``: the same on the simulator and in debug mode, naming the symbol that
    makes the kernel fail to link when the size is known at compile time."""
    needs = f"it must hold exactly {minimum}" if exact else f"it needs at least {minimum}"
    symbol = _symbol(qualname, param, _problem(param, unit, exact))
    return f"{qualname}: {param} holds {size} {unit}, {needs} (compiled: {symbol})"


if SIMULATOR:

    @functools.lru_cache(maxsize=None)
    def size_check(qualname, param, unit="items", exact=False):
        """``check(array, minimum)``: ``array`` must hold ``minimum`` items (or bytes);
        with ``exact``, exactly ``minimum``."""

        def check(array, minimum):
            size = len(array) * (array.itemsize if unit == "bytes" else 1)
            if (size != minimum) if exact else (size < minimum):
                raise CoopError(size_message(qualname, param, unit, exact, size, minimum))

        return check

    def size_checks_available():
        return True

else:
    from llvmlite import ir
    from numba.cuda import types
    from numba.cuda.extending import intrinsic

    from coop._core.config import config
    from coop._core.debug import trap_if

    @functools.lru_cache(maxsize=None)
    def size_checks_available():
        """Whether the NVVM in use folds ``llvm.is.constant`` (a 20 ms compile, once)."""
        from numba.cuda.cudadrv import nvvm

        module = ir.Module("coop_probe")
        module.triple = "nvptx64-nvidia-cuda"
        module.data_layout = nvvm.NVVM().data_layout
        bit = ir.IntType(1)
        probe = ir.Function(module, ir.FunctionType(bit, [bit]), "coop_probe")
        builder = ir.IRBuilder(probe.append_basic_block())
        builder.ret(builder.call(_function(module, "llvm.is.constant.i1", bit, [bit]), probe.args))
        nvvm.add_ir_version(module)
        try:
            ptx = nvvm.compile_ir(str(module))
        except Exception:
            return False
        return b"is.constant" not in bytes(ptx)

    def _function(module, name, return_type, arg_types):
        existing = module.globals.get(name)
        if existing is not None:
            return existing
        return ir.Function(module, ir.FunctionType(return_type, arg_types), name)

    @functools.lru_cache(maxsize=None)
    def size_check(qualname, param, unit="items", exact=False):
        """``check(array, minimum)``: ``array`` must hold ``minimum`` items (or bytes);
        with ``exact``, exactly ``minimum``."""
        symbol = _symbol(qualname, param, _problem(param, unit, exact))
        message = size_message(qualname, param, unit, exact, "%lld", "%lld")

        @intrinsic
        def check(typingctx, array, minimum):
            if not isinstance(array, types.Array) or not isinstance(minimum, types.Integer):
                return None

            def codegen(context, builder, sig, args):
                debug = config.debug
                if not (size_checks_available() or debug):
                    return context.get_dummy_value()
                array_type, minimum_type = sig.args
                data = context.make_array(array_type)(context, builder, args[0])
                size = builder.extract_value(data.shape, 0)
                if unit == "bytes":
                    itemsize = context.get_abi_sizeof(context.get_data_type(array_type.dtype))
                    size = builder.mul(size, context.get_constant(types.intp, itemsize))
                needed = context.cast(builder, args[1], minimum_type, types.intp)
                bad_size = builder.icmp_signed("!=" if exact else "<", size, needed)
                module = builder.module
                if size_checks_available():
                    bit = ir.IntType(1)
                    is_constant = _function(module, "llvm.is.constant.i1", bit, [bit])
                    known = builder.call(is_constant, [bad_size])
                    with builder.if_then(builder.and_(known, bad_size), likely=False):
                        builder.call(_function(module, symbol, ir.VoidType(), []), [])
                if debug:  # sizes known only at run time
                    trap_if(context, builder, bad_size, message, [size, needed])
                return context.get_dummy_value()

            return types.void(array, minimum), codegen

        return check


@device_function
def _no_output_check(value, output):
    pass


def output_check(qualname, is_items):
    """``check(value, output)``: with items arrays, ``output`` must hold as many items
    as the input ``value``; nothing to check for one value per thread."""
    if not is_items:
        return _no_output_check
    check = size_check(qualname, "output")

    def check_items(items, output):
        check(output, len(items))

    return device_function(check_items)
