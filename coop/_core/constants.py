"""Compile-time constants bound into device functions, and the branches they decide
removed before Numba reads the function.

Numba compiles each device function, per signature, through its whole pipeline, and
that costs about the same for every statement it reads, live or not: a branch on a
constant is pruned only after it has been translated and scanned, and every parameter
is typed and lowered at every call. So a specialisation binds what it knows:

- ``without_dead_branches(fn)``: ``fn`` (typically a closure over the constants a
  generator computed) without the ``if`` statements whose test its free variables
  decide: names bound to ``True``, ``False``, ``None``, numbers or strings, combined
  with ``not``, ``and``, ``or`` and comparisons (``if is_items:``,
  ``if threads <= 32:``, ``if cache is not None:``). The branch taken replaces the
  statement.
- ``specialised(fn, **constants)``: a device function computing ``fn`` with the named
  parameters bound to constants (they leave its signature: callers pass the others, in
  order) and the branches they decide removed. Cached: equal constants give one device
  function, which Numba compiles once per signature.

The copies are compiled from ``fn``'s source (checked to compile to ``fn``'s code), in
its globals, with its names and line numbers (errors point at ``fn``'s source); their
other free variables keep their values. The simulator runs the same copies. Where the
source cannot be read, ``specialised`` gives a function passing the constants to ``fn``
(the same results, without the savings).
"""

import ast
import functools
import inspect
import linecache
import re
import textwrap
import threading
import types
from copy import deepcopy

import numpy as np

from coop._core.backend import device_function

# values a branch test may be decided on
_DECIDING = (bool, type(None), int, float, str, np.integer, np.bool_)

_COMPARE = {
    ast.Eq: lambda a, b: a == b,
    ast.NotEq: lambda a, b: a != b,
    ast.Lt: lambda a, b: a < b,
    ast.LtE: lambda a, b: a <= b,
    ast.Gt: lambda a, b: a > b,
    ast.GtE: lambda a, b: a >= b,
    ast.Is: lambda a, b: a is b,
    ast.IsNot: lambda a, b: a is not b,
}


#: Held while coop parses or compiles Python source (here and in ``coop._core.call_site``):
#: CPython 3.11's AST machinery is not thread-safe ("AST constructor recursion depth
#: mismatch", python/cpython#106905), and the simulator specialises primitives in many
#: threads at once.
SOURCE_LOCK = threading.RLock()


def without_dead_branches(fn):
    """``fn`` without the branches its constant free variables decide (see the module
    docstring); ``fn`` itself if there are none, or if its source cannot be read."""
    with SOURCE_LOCK:
        return _copy(fn, {}) or fn


def specialised(fn, **constants):
    """A device function computing ``fn`` with the parameters ``constants`` names bound
    to those values (see the module docstring)."""
    with SOURCE_LOCK:
        return _specialised(inspect.unwrap(fn), tuple(sorted(constants.items())))


@functools.lru_cache(maxsize=None)
def _specialised(fn, constants):
    bound = dict(constants)
    copy = _copy(fn, bound)
    if copy is None:  # no source: a function passing the constants to fn (a device function)
        copy = _forwarding(fn, bound)
    return device_function(copy)


def _forwarding(fn, bound):
    names = list(inspect.signature(fn).parameters)
    kept = ", ".join(name for name in names if name not in bound)
    passed = ", ".join(f"_bound_{name}" if name in bound else name for name in names)
    source = (
        f"def _bind(_fn, {', '.join('_bound_' + name for name in bound)}):\n"
        f"    def bound({kept}):\n"
        f"        return _fn({passed})\n"
        f"    return bound\n"
    )
    namespace = {}
    exec(source, {}, namespace)
    return namespace["_bind"](fn, *bound.values())


def _copy(fn, bound):
    source = _source(fn)
    if source is None:
        return None
    function = _function(source)
    code = fn.__code__
    if code not in _ASSIGNED:
        stores = [n.id for n in ast.walk(function) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)]
        _ASSIGNED[code] = {name: stores.count(name) for name in stores}
    assigned = _ASSIGNED[code]
    parameters = function.args
    names = [a.arg for a in parameters.posonlyargs + parameters.args]
    if set(bound) - set(names):
        raise ValueError(f"{fn.__qualname__} has no parameters {sorted(set(bound) - set(names))}")
    if bound and (parameters.vararg or parameters.kwarg or parameters.kwonlyargs or parameters.posonlyargs
                  or parameters.defaults):
        raise ValueError(f"{fn.__qualname__}: only plain parameters without defaults can be bound")
    if set(assigned) & set(bound):
        raise ValueError(f"{fn.__qualname__}: cannot bind {sorted(set(assigned) & set(bound))}, assigned in its body")
    values = {name: cell.cell_contents for name, cell in zip(fn.__code__.co_freevars, fn.__closure__ or ())}
    values.update(bound)
    # module-level numbers are constants too: Numba freezes globals when it compiles
    local = set(fn.__code__.co_varnames) | set(fn.__code__.co_cellvars) | set(assigned)
    known = {name: value for name, value in fn.__globals__.items()
             if name in fn.__code__.co_names and name not in local and isinstance(value, _DECIDING)}
    known.update((name, value) for name, value in values.items() if isinstance(value, _DECIDING))
    pruner = _Pruner(known, {name for name, count in assigned.items() if count == 1})
    function.body = pruner.statements(function.body, top=True) or [_located(ast.Pass(), function.lineno)]
    if not (pruner.pruned or pruner.fold.changed or bound):
        return None
    parameters.args = [a for a in parameters.args if a.arg not in bound]
    return _build(fn, function, values)


def with_parameters(fn, signature):
    """A copy of ``fn`` taking the parameters of ``signature`` (an ``inspect.Signature``:
    names and defaults), of which ``fn``'s are some, by name: the same code, compiled from
    ``fn``'s source as the copies above (nothing pruned), and ``fn``'s closure. None where
    the source cannot be read. Raises ValueError where ``fn`` reads a name of
    ``signature`` it does not take (from its closure or globals): as a parameter, the name
    would mean the argument. The copy's code is compiled once per code of ``fn`` and list
    of parameters: closures a generator makes share it."""
    names = tuple(signature.parameters)
    defaults = tuple(p.default for p in signature.parameters.values() if p.default is not inspect.Parameter.empty)
    key = (fn.__code__, names, len(defaults))
    with SOURCE_LOCK:
        if key not in _WITH_PARAMETERS:
            _WITH_PARAMETERS[key] = _code_with_parameters(fn, names, len(defaults))
        code = _WITH_PARAMETERS[key]
    if code is None:
        return None
    cells = dict(zip(fn.__code__.co_freevars, fn.__closure__ or ()))
    copy = types.FunctionType(code, fn.__globals__, fn.__name__, defaults,
                              tuple(cells[name] for name in code.co_freevars))
    copy.__qualname__, copy.__module__, copy.__doc__ = fn.__qualname__, fn.__module__, fn.__doc__
    return copy


_WITH_PARAMETERS = {}  # {(code of a body, parameter names, number of defaults): code of its copy, or None}


def _code_with_parameters(fn, names, default_count):
    function = _tree(fn)
    if function is None:
        return None
    local = {a.arg for a in function.args.args} | set(fn.__code__.co_varnames) | set(fn.__code__.co_cellvars)
    # names of the code objects (attributes too): the source is walked only where one is a
    # parameter's name
    suspects = (set(names) - local) & _code_names(fn.__code__)
    read = {node.id for node in ast.walk(function) if isinstance(node, ast.Name)} - local if suspects else set()
    shadowed = sorted(read & set(names))
    if shadowed:
        raise ValueError(f"{fn.__qualname__} reads {shadowed} from outside, which are parameters of the "
                         f"primitive: take them as parameters, or rename the outside names")
    # (the defaults' values are the copy's own, given when it is made: placeholders here)
    at = _place(function.lineno)
    function.args = ast.arguments(posonlyargs=[], args=[ast.arg(arg=name, **at) for name in names], vararg=None,
                                  kwonlyargs=[], kw_defaults=[], kwarg=None,
                                  defaults=[ast.Constant(value=None, **at)] * default_count)
    return _build(fn, function, dict.fromkeys(fn.__code__.co_freevars)).__code__


def _code_names(code):
    """The global, attribute, free and local names of ``code`` and the code nested in it."""
    names = set(code.co_names) | set(code.co_freevars) | set(code.co_varnames)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _code_names(const)
    return names


def _tree(fn):
    """A new AST of ``fn``'s function definition (a copy's is kept when it is built), or
    None."""
    tree = getattr(fn, "_coop_tree", None)
    if tree is not None:
        return deepcopy(tree)
    source = _source(fn)
    return None if source is None else _function(source)


_SOURCES = {}
_ASSIGNED = {}  # {code: {name: times assigned in its source}}


def _source(fn):
    """The source of ``fn``'s code, padded so that it parses at its own line numbers, if
    the file read now compiles to that code, else None (no source, or a file changed
    since it was imported). Closures made by one generator share one code object: cached
    by it."""
    code = fn.__code__
    if code not in _SOURCES:
        _SOURCES[code] = _read_source(fn)
    return _SOURCES[code]


def _read_source(fn):
    code = fn.__code__
    lines = linecache.getlines(code.co_filename)
    if not lines:
        return None
    first_line = code.co_firstlineno  # (a decorated function's first decorator)
    for block in (_indented_block, inspect.getblock):  # the first is quicker, the second sure
        try:
            text = "\n" * (first_line - 1) + textwrap.dedent("".join(block(lines[first_line - 1:])))
            same = _build(fn, _function(text), dict.fromkeys(code.co_freevars)).__code__
        except (SyntaxError, IndexError, ValueError):
            continue
        if (same.co_code, same.co_names, same.co_varnames, same.co_freevars, same.co_consts[1:]) == (
            code.co_code, code.co_names, code.co_varnames, code.co_freevars, code.co_consts[1:]
        ):
            return text
    return None


def _indentation(line):
    return len(line) - len(line.lstrip())


def _indented_block(lines):
    """The lines of the function (decorators first) that ``lines`` starts with: up to the
    next code at its indentation or less (but a header's closing parenthesis)."""
    indent = _indentation(lines[0])
    end = 1
    while end < len(lines) and not lines[end - 1].lstrip().startswith("def "):  # decorators
        end += 1
    for end in range(end, len(lines)):
        line = lines[end]
        code = line.strip()
        if code and not code.startswith(("#", ")")) and _indentation(line) <= indent:
            break
    else:
        end = len(lines)
    return lines[:end]


def _function(text):
    tree = ast.parse(text)
    function = tree.body[0]
    if not isinstance(function, ast.FunctionDef):
        raise ValueError("not a function")
    function.decorator_list = []
    return function


_IMPORT_STATEMENT = re.compile(r"^(?:import|from)[ \t][^\n(]*(?:\([^)]*\)[^\n]*)?", re.M)


@functools.lru_cache(maxsize=None)
def _imports(filename):
    """The import statements at the top level of a source file, under an ``if False:``
    (read from its import lines alone where they parse by themselves: quicker than the
    whole file)."""
    text = "".join(linecache.getlines(filename))
    try:
        tree = ast.parse("\n".join(match.group(0) for match in _IMPORT_STATEMENT.finditer(text)))
    except SyntaxError:
        tree = ast.parse(text)
    imports = _located(ast.If(test=ast.Constant(value=False), body=[ast.Pass()], orelse=[]), 1)
    imports.body += [node for node in tree.body if isinstance(node, (ast.Import, ast.ImportFrom))]
    return imports


def _place(line):
    """The location attributes of a new node at ``line`` (given to its constructor:
    quicker than ``_located``)."""
    return {"lineno": line, "end_lineno": line, "col_offset": 0, "end_col_offset": 0}


def _located(node, line):
    """``node`` and the nodes in it, placed at ``line`` (new nodes need a place)."""
    for each in ast.walk(node):
        if "lineno" in each._attributes:
            each.lineno = each.end_lineno = line
            each.col_offset = each.end_col_offset = 0
    return node


def _build(fn, function, values):
    """The function that ``function`` (an AST) defines, compiled in ``fn``'s globals
    with ``values`` for its free variables (and bound parameters)."""
    line = function.lineno
    # fn's module's imports, never run: Python compiles ``module.f()`` differently
    # (LOAD_ATTR, not LOAD_METHOD) when ``module`` was imported, and the copy's code
    # should be fn's
    imports = _imports(fn.__code__.co_filename)
    # a factory taking the free variables, so that the copy's names resolve as fn's do
    at = _place(line)
    factory = ast.FunctionDef(
        name="_bind",
        args=ast.arguments(posonlyargs=[], args=[ast.arg(arg=name, **at) for name in values], vararg=None,
                           kwonlyargs=[], kw_defaults=[], kwarg=None, defaults=[]),
        body=[ast.Return(value=ast.Name(id=function.name, ctx=ast.Load(), **at), **at)],
        decorator_list=[],
        **at,
    )
    factory.body.insert(0, function)
    namespace = {}
    module = ast.Module(body=[imports, factory], type_ignores=[])
    exec(compile(module, fn.__code__.co_filename, "exec"), fn.__globals__, namespace)
    built = namespace["_bind"](*values.values())
    built.__qualname__, built.__module__, built.__doc__ = fn.__qualname__, fn.__module__, fn.__doc__
    built._coop_tree = function  # (its source, for a copy of the copy)
    return built


_ARITHMETIC = {
    ast.Add: lambda a, b: a + b,
    ast.Sub: lambda a, b: a - b,
    ast.Mult: lambda a, b: a * b,
    ast.FloorDiv: lambda a, b: a // b,
    ast.Mod: lambda a, b: a % b,
    ast.LShift: lambda a, b: a << b,
    ast.RShift: lambda a, b: a >> b,
    ast.BitAnd: lambda a, b: a & b,
    ast.BitOr: lambda a, b: a | b,
    ast.BitXor: lambda a, b: a ^ b,
}


def _integer(value):
    return isinstance(value, int) and abs(value) < 2**62  # (bools too; far from int64's limits)


class _Fold(ast.NodeTransformer):
    """Integer arithmetic on constants computed, as Python and Numba's int64 agree on
    it for such values: ``(threads + 31) >> 5`` with ``threads`` bound to 128 is 4."""

    def __init__(self, constants):
        self.constants = constants
        self.changed = False

    def visit_Name(self, node):
        value = self.constants.get(node.id)
        if isinstance(node.ctx, ast.Load) and _integer(value):
            self.changed = True
            return ast.copy_location(ast.Constant(value=value), node)
        return node

    def visit_BinOp(self, node):
        self.generic_visit(node)
        if isinstance(node.left, ast.Constant) and isinstance(node.right, ast.Constant) and type(node.op) in _ARITHMETIC:
            a, b = node.left.value, node.right.value
            if _integer(a) and _integer(b):
                try:
                    value = _ARITHMETIC[type(node.op)](int(a), int(b))
                except (ArithmeticError, ValueError):
                    return node
                if _integer(value):
                    return ast.copy_location(ast.Constant(value=value), node)
        return node

    def _scope(self, node):
        return node  # (names in a nested scope may be its own)

    visit_FunctionDef = visit_Lambda = visit_ListComp = visit_SetComp = visit_DictComp = visit_GeneratorExp = _scope


class _Pruner:
    """Replaces ``if`` statements decided by ``constants`` with the branch taken, and
    computes integer arithmetic on them; a name assigned once, at the top level, a
    computed integer becomes a constant too."""

    def __init__(self, constants, assigned_once):
        self.constants = constants
        self.assigned_once = assigned_once
        self.fold = _Fold(constants)
        self.pruned = False

    def value(self, node):
        """``(True, value)`` of an expression of constants only, else ``(False, None)``."""
        if isinstance(node, ast.Constant):
            return True, node.value
        if isinstance(node, ast.Name) and node.id in self.constants:
            return True, self.constants[node.id]
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            known, value = self.value(node.operand)
            return known, (not value) if known else None
        if isinstance(node, ast.BinOp) and type(node.op) in _ARITHMETIC:
            (known_a, a), (known_b, b) = self.value(node.left), self.value(node.right)
            if not (known_a and known_b and isinstance(a, (int, np.integer)) and isinstance(b, (int, np.integer))):
                return False, None
            try:
                return True, _ARITHMETIC[type(node.op)](a, b)
            except (ArithmeticError, TypeError):
                return False, None
        if isinstance(node, ast.BoolOp):
            values = [self.value(v) for v in node.values]
            if not all(known for known, _ in values):
                return False, None
            truths = [bool(v) for _, v in values]
            return True, all(truths) if isinstance(node.op, ast.And) else any(truths)
        if isinstance(node, ast.Compare) and all(type(op) in _COMPARE for op in node.ops):
            operands = [self.value(node.left)] + [self.value(c) for c in node.comparators]
            if not all(known for known, _ in operands):
                return False, None
            values = [v for _, v in operands]
            try:
                return True, all(_COMPARE[type(op)](a, b) for op, a, b in zip(node.ops, values, values[1:]))
            except TypeError:
                return False, None
        return False, None

    def statements(self, body, top=False):
        result = []
        for statement in body:
            if isinstance(statement, ast.If):
                statement.test = self.fold.visit(statement.test)
                known, taken = self.value(statement.test)
                if known:
                    self.pruned = True
                    result.extend(self.statements(statement.body if taken else statement.orelse))
                    continue
                statement.body = self.statements(statement.body) or [_located(ast.Pass(), statement.lineno)]
                statement.orelse = self.statements(statement.orelse)
            elif isinstance(statement, (ast.For, ast.While)):
                if isinstance(statement, ast.For):
                    statement.iter = self.fold.visit(statement.iter)
                else:
                    statement.test = self.fold.visit(statement.test)
                statement.body = self.statements(statement.body) or [_located(ast.Pass(), statement.lineno)]
                statement.orelse = self.statements(statement.orelse)
            elif isinstance(statement, ast.With):
                statement.body = self.statements(statement.body) or [_located(ast.Pass(), statement.lineno)]
            else:
                statement = self.fold.visit(statement)
                if (top and isinstance(statement, ast.Assign) and len(statement.targets) == 1
                        and isinstance(statement.targets[0], ast.Name)
                        and statement.targets[0].id in self.assigned_once
                        and isinstance(statement.value, ast.Constant) and _integer(statement.value.value)):
                    self.constants[statement.targets[0].id] = statement.value.value
                    self.pruned = True
            result.append(statement)
        return result
