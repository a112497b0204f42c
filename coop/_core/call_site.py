"""Which arguments of a call Numba would see as compile-time constants (simulator only).

Compiled, a primitive's generator sees literal types (``Literal[int](128)``) only for
arguments that Numba's type inference knows as constants, and rejects a run-time value
where it needs a constant (``threads=``, ``items_per_thread=``, ``algorithm=``...). The
simulator runs the kernel as Python and sees only values, so it reads the call in the
kernel's source instead, with the rules that numba-cuda 0.30 applies (checked against
its type inference; see ``tests/test_simulator_debugger.py``):

- a literal (``128``, ``"raking"``, ``True``, ``None``), a constant expression Python
  folds (``-4``, ``16 * 2``), a tuple or constant subscript of constants: constant;
- a global or closure variable of the kernel: constant (Numba freezes them); a free
  variable of a lambda or closure defined in the kernel is the kernel's variable;
- a local variable: constant if every assignment to it gives the same constant value
  (``n = 16``; ``n = N``), not if it is a loop variable, augmented, unpacked, or
  assigned different values;
- a parameter of a device function or lambda: what the caller passed (literals reach
  device functions as literals), looked up at the caller's call; of the kernel: run time;
- anything else (``cuda.blockDim.x``, ``module.CONST``, ``N * 2``, ``np.int32(4)``,
  ``len(x)``): a run-time value.

Where the source cannot be read (a kernel made by ``exec`` or ``python -c``) or the call
not found, the bytecode still shows a kernel passing one of its own parameters as it is
(a run-time value); every other argument then counts as a constant (the simulator misses
the error rather than inventing one).
"""

import ast
import dis
import inspect
import os
import textwrap

import numpy as np

from coop._core.constants import SOURCE_LOCK

__all__ = ["CallSite", "call_site"]

_MAX_CALLERS = 8  # how far up device-function calls a parameter is followed


class CallSite:
    """A call of a primitive in user code: ``where`` (``file.py:12 in kernel``), the
    names of the parameters given run-time values there (``run_time``), and of those
    given a global array, which Numba makes a read-only constant (``read_only``)."""

    __slots__ = ("where", "run_time", "read_only")

    def __init__(self, where, run_time=frozenset(), read_only=frozenset()):
        self.where = where
        self.run_time = run_time
        self.read_only = read_only


_sites = {}


def call_site(frame, parameters):
    """The ``CallSite`` of the call that ``frame`` (user code) is making now, to a
    primitive whose parameters are ``parameters`` (names, in order)."""
    chain = _caller_chain(frame)
    key = tuple((f.f_code, f.f_lasti) for f in chain)
    site = _sites.get(key)
    if site is None:
        with SOURCE_LOCK:
            site = _sites.get(key) or _analyse(frame, chain, parameters)
            _sites[key] = site
    return site


def _analyse(frame, chain, parameters):
    """The CallSite of ``frame``'s call (``chain``: it and its callers, see ``_caller_chain``)."""
    where = _describe(frame)
    scope = _Scope.of(chain)
    call = scope.call() if scope is not None else None
    if call is None:
        from coop._core.compilers.numba_cuda_simulator import is_kernel_frame

        run_time = _kernel_parameters_passed(frame, parameters) if is_kernel_frame(frame) else frozenset()
        return CallSite(where, run_time)
    arguments = list(_arguments(call, parameters))
    run_time = frozenset(name for name, argument in arguments if not scope.constant(argument))
    read_only = frozenset(name for name, argument in arguments if scope.global_array(argument))
    return CallSite(where, run_time, read_only)


def _describe(frame):
    code = frame.f_code
    return "%s:%d in %s" % (os.path.basename(code.co_filename), frame.f_lineno, code.co_name)


def _kernel_parameters_passed(frame, parameters):
    """Without the kernel's source (code made by ``exec``, ``python -c``): the names of
    the parameters of the call ``frame`` is making that are given one of the kernel's
    own parameters as it is (a run-time value), read from the bytecode. Other arguments
    count as constants."""
    code = frame.f_code
    instructions = [i for i in dis.get_instructions(code) if i.opname != "CACHE"]
    # (the call under way: f_lasti may point into its inline caches, which follow it)
    at = max((k for k, i in enumerate(instructions) if i.offset <= frame.f_lasti), default=None)
    if at is None or not instructions[at].opname.startswith("CALL") or instructions[at].arg is None:
        return frozenset()
    count, keywords, end = instructions[at].arg, (), at
    while end > 0 and instructions[end - 1].opname in ("PRECALL", "KW_NAMES"):
        end -= 1
        if instructions[end].opname == "KW_NAMES":
            keywords = code.co_consts[instructions[end].arg]
    if instructions[at].opname in ("CALL_KW", "CALL_FUNCTION_KW") and instructions[end - 1].opname == "LOAD_CONST":
        end -= 1
        keywords = instructions[end].argval
    arguments = []  # (each argument's instructions, last argument first)
    while len(arguments) < count:
        start, depth = end, 0
        while depth < 1 and start > 0:
            start -= 1
            instruction = instructions[start]
            if instruction.opcode in dis.hasjabs or instruction.opcode in dis.hasjrel:
                return frozenset()  # (a conditional expression: not followed)
            depth += dis.stack_effect(instruction.opcode, instruction.arg)
        if depth != 1:
            return frozenset()
        arguments.append(instructions[start:end])
        end = start
    arguments.reverse()
    names = list(parameters[: count - len(keywords)]) + list(keywords)
    kernel_parameters = set(code.co_varnames[: code.co_argcount + code.co_kwonlyargcount])
    return frozenset(
        name for name, loads in zip(names, arguments)
        if len(loads) == 1 and loads[0].opname.startswith("LOAD_FAST") and loads[0].argval in kernel_parameters
    )


def _library_dirs():
    import numba

    from coop._core.backend import PACKAGE_DIR

    return (
        PACKAGE_DIR,
        os.path.dirname(os.path.abspath(numba.__file__)),
    )


def _caller_chain(frame):
    """``frame`` and the user frames that called it as a device function or lambda
    (through the simulator's device-function wrapper, or directly), innermost first. It
    ends at the kernel, or at a frame called from coop (an operator) or from elsewhere."""
    coop_dir, numba_dir = _library_dirs()
    chain = [frame]
    while len(chain) < _MAX_CALLERS:
        caller = chain[-1].f_back
        through_wrapper = False
        while caller is not None and os.path.abspath(caller.f_code.co_filename).startswith(numba_dir):
            through_wrapper = True
            caller = caller.f_back
        if caller is None or os.path.abspath(caller.f_code.co_filename).startswith(coop_dir):
            break
        if through_wrapper and not _is_device_function_wrapper(chain[-1].f_back):
            break
        chain.append(caller)
    return chain


def _is_device_function_wrapper(frame):
    """The simulator's ``FakeCUDAKernel.__call__`` running a device function."""
    return frame.f_code.co_name == "__call__" and frame.f_code.co_filename.endswith(
        os.path.join("simulator", "kernel.py")
    )


def _arguments(call, parameters):
    """(parameter name, argument expression) for each argument of ``call``."""
    for position, argument in enumerate(call.args):
        if isinstance(argument, ast.Starred) or position >= len(parameters):
            break
        yield parameters[position], argument
    for keyword in call.keywords:
        if keyword.arg is not None:
            yield keyword.arg, keyword.value


class _Scope:
    """A user function's source, the call it is making now, and what its local
    names are bound to; ``caller`` is the scope of the call that passed its parameters
    (None for a kernel)."""

    def __init__(self, frame, function, offset, caller):
        self.frame = frame
        self.function = function
        self.line_offset, self.column_offset = offset
        self.caller = caller
        self.parameters = _parameter_names(function)
        self.assignments = _assignments(function)

    @classmethod
    def of(cls, chain):
        """The scope of ``chain[0]``, with its callers' scopes; None without source."""
        caller = cls.of(chain[1:]) if len(chain) > 1 else None
        parsed = _parse(chain[0].f_code)
        if parsed is None:
            return None
        function, offset = parsed
        return cls(chain[0], function, offset, caller)

    def call(self):
        """The ast.Call this scope's frame is executing, or None."""
        frame = self.frame
        positions = _positions(frame)
        calls = [node for node in ast.walk(self.function) if isinstance(node, ast.Call)]
        if positions is not None:
            line, end_line, column, end_column = positions
            for node in calls:
                if (
                    node.lineno + self.line_offset == line
                    and node.end_lineno + self.line_offset == end_line
                    and node.col_offset + self.column_offset == column
                    and node.end_col_offset + self.column_offset == end_column
                ):
                    return node
            return None
        on_line = [node for node in calls if node.lineno + self.line_offset == frame.f_lineno]
        return on_line[0] if len(on_line) == 1 else None

    def constant(self, node, depth=0):
        """Whether Numba would type the expression ``node`` as a compile-time constant."""
        if depth > 32:
            return False
        if isinstance(node, ast.Constant):
            return True
        if isinstance(node, ast.UnaryOp):
            return isinstance(node.operand, ast.Constant)
        if isinstance(node, ast.BinOp):  # folded by Python only between literals
            return isinstance(node.left, ast.Constant) and isinstance(node.right, ast.Constant)
        if isinstance(node, ast.Tuple):
            return all(self.constant(element, depth + 1) for element in node.elts)
        if isinstance(node, ast.Subscript):
            return self.constant(node.value, depth + 1) and self.constant(node.slice, depth + 1)
        if isinstance(node, ast.Name):
            return self._constant_name(node.id, depth)
        return False

    def _constant_name(self, name, depth):
        if name in self.parameters:
            return self.caller is not None and self.caller.constant_argument(
                self.parameters, name, depth + 1
            )
        values = self.assignments.get(name)
        if values is None:
            if name in self.frame.f_code.co_freevars and self.caller is not None and self.caller.defines(self.frame):
                # a variable of the kernel (device function) that defines and calls this lambda
                return self.caller._constant_name(name, depth + 1)
            return True  # a global, or a closure variable of the kernel: frozen as a constant
        if any(value is None for value in values):
            return False
        if not all(self.constant(value, depth + 1) for value in values):
            return False
        if len(values) > 1:  # a literal type survives only if every value is the same
            seen = {self._evaluate(value) for value in values}
            return len(seen) == 1 and _NOT_EVALUATED not in seen
        return True

    def defines(self, frame):
        """Whether ``frame`` runs a function (a lambda, a closure) defined in this scope's."""
        pending = list(self.frame.f_code.co_consts)
        while pending:
            constant = pending.pop()
            if constant is frame.f_code:
                return True
            if inspect.iscode(constant):
                pending.extend(constant.co_consts)
        return False

    def global_array(self, node):
        """Whether ``node`` is a global or closure array (or a slice of one)."""
        while isinstance(node, ast.Subscript):
            node = node.value
        if not isinstance(node, ast.Name) or node.id in self.parameters or node.id in self.assignments:
            return False
        value = self.frame.f_locals.get(node.id, self.frame.f_globals.get(node.id))
        return isinstance(value, np.ndarray)

    def constant_argument(self, callee_parameters, name, depth):
        """Whether this scope's current call passes a constant for ``name``."""
        call = self.call()
        if call is None:
            return True
        for parameter, argument in _arguments(call, callee_parameters):
            if parameter == name:
                return self.constant(argument, depth)
        return True  # not passed: its default

    def _evaluate(self, node):
        try:
            expression = compile(ast.Expression(node), "<constant>", "eval")
            return eval(expression, self.frame.f_globals, dict(self.frame.f_locals))  # noqa: S307
        except Exception:  # a name not bound yet, or unhashable: assume they differ
            return _NOT_EVALUATED


_NOT_EVALUATED = object()
_parsed = {}


def _parse(code):
    """(function node, (line offset, column offset)) of a code object's source, cached."""
    if code in _parsed:
        return _parsed[code]
    result = None
    try:
        lines, first_line = inspect.getsourcelines(code)
        indent = len(lines[0]) - len(lines[0].lstrip())
        tree = ast.parse(textwrap.dedent("".join(lines)))
    except (OSError, TypeError, SyntaxError, IndentationError):
        tree = None
    if tree is not None:
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                if getattr(node, "name", "<lambda>") == code.co_name or code.co_name == "<lambda>":
                    result = (node, (first_line - 1, indent))
                    break
    _parsed[code] = result
    return result


def _positions(frame):
    """(line, end line, column, end column) of the instruction a frame is executing
    (Python 3.11 and later), else None."""
    positions = getattr(frame.f_code, "co_positions", None)
    if positions is None:
        return None
    try:
        line, end_line, column, end_column = list(positions())[frame.f_lasti // 2]
    except (IndexError, ValueError):
        return None
    if None in (line, end_line, column, end_column):
        return None
    return line, end_line, column, end_column


def _parameter_names(function):
    arguments = function.args
    every = arguments.posonlyargs + arguments.args + arguments.kwonlyargs
    names = [a.arg for a in every]
    names += [a.arg for a in (arguments.vararg, arguments.kwarg) if a is not None]
    return tuple(names)


def _assignments(function):
    """name -> the expressions assigned to it in ``function`` (not in nested functions);
    None marks an assignment whose value is not one expression (loop variable,
    augmented assignment, unpacking, ``with ... as``, ``:=``)."""
    found = {}

    def bind(target, value):
        if isinstance(target, ast.Name):
            found.setdefault(target.id, []).append(value)
        elif isinstance(target, (ast.Tuple, ast.List)):
            for element in target.elts:
                bind(element, None)
        elif isinstance(target, ast.Starred):
            bind(target.value, None)

    body = function.body if isinstance(function.body, list) else [function.body]
    pending = list(body)
    while pending:
        node = pending.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            if not isinstance(node, ast.Lambda):
                found.setdefault(node.name, []).append(None)
            continue
        if isinstance(node, (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
            continue
        if isinstance(node, ast.Assign):
            for target in node.targets:
                bind(target, node.value)
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            bind(node.target, node.value)
        elif isinstance(node, (ast.AugAssign, ast.For, ast.AsyncFor)):
            bind(node.target, None)
        elif isinstance(node, ast.withitem) and node.optional_vars is not None:
            bind(node.optional_vars, None)
        elif isinstance(node, ast.NamedExpr):
            bind(node.target, None)
        pending.extend(ast.iter_child_nodes(node))
    return found

