"""Run-time checks of compiled kernels in debug mode (``coop.config.debug``): a thread
whose check fails prints the message and traps, which ends the kernel with a launch
failure (the message appears on the process's standard output).

Each check is an intrinsic that lowers to nothing unless debug mode was on when the
calling primitive was specialised.
"""

from llvmlite import ir
from numba.cuda import cgutils, nvvmutils, types
from numba.cuda.extending import intrinsic

from coop._core.config import config
from coop._core.errors import launch_message

__all__ = ["launch_check", "trap_if"]


def _special_register(builder, name):  # (a PTX special register: tid.x, ntid.x, ...)
    i32 = ir.IntType(32)
    fn = cgutils.get_or_insert_function(builder.module, ir.FunctionType(i32, []), f"llvm.nvvm.read.ptx.sreg.{name}")
    return builder.call(fn, [])


def trap_if(context, builder, condition, message, values=()):
    """Emit: if ``condition`` (an i1), print ``message`` (a printf format taking the
    64-bit integers ``values``) and trap. Every thread that fails prints before it traps:
    the first trap ends the kernel, and a thread that had not printed by then never will,
    so only a thread's own printf is sure to come before its trap."""
    with builder.if_then(condition, likely=False):
        voidptr = ir.PointerType(ir.IntType(8))
        text = context.insert_string_const_addrspace(builder, message + "\n")
        if values:
            arguments = cgutils.make_anonymous_struct(builder, list(values))
            pointer = builder.bitcast(cgutils.alloca_once_value(builder, arguments), voidptr)
        else:
            pointer = ir.Constant(voidptr, None)
        builder.call(nvvmutils.declare_vprint(builder.module), (text, pointer))
        builder.asm(ir.FunctionType(ir.VoidType(), []), "trap;", "", [], side_effect=True)


def launch_check(qualname, given, threads):
    """A device function checking that the block has ``threads`` threads (``given``:
    the ``threads=`` argument as written, e.g. ``(16, 16)``)."""

    @intrinsic
    def check(typingctx):
        def codegen(context, builder, sig, args):
            if not config.debug:
                return context.get_dummy_value()
            i64 = ir.IntType(64)
            count = builder.zext(_special_register(builder, "ntid.x"), i64)
            for axis in "yz":
                count = builder.mul(count, builder.zext(_special_register(builder, f"ntid.{axis}"), i64))
            wrong = builder.icmp_unsigned("!=", count, ir.Constant(i64, threads))
            trap_if(context, builder, wrong, launch_message(qualname, given, "%lld"), [count])
            return context.get_dummy_value()

        return types.void(), codegen

    return check
