"""Only the compiler adapter (``coop/_core/compilers/``) touches a compiler's private names,
or emits code below the compiler's own lowering.

A private name is one with a leading underscore (dunders aside) that coop does not define
itself: imported from a compiler package (``from numba.cuda.cudaimpl import
_generic_array``), or read or written as an attribute (``cuda.shared._allocations``,
``nvvm._datalayout``). Replacing a compiler's public function (``compiler.compile_cuda =
...``) counts too: an assignment to an attribute of a module or class coop imported from a
compiler. What coop needs from a compiler beyond its public API then lives in one place,
which an upgrade of numba-cuda, or a second compiler, has to revisit.

The same goes for code generation: registering overloads and intrinsics, and writing LLVM
IR (llvmlite, numba-cuda's ``extending``, ``cgutils``, NVVM). Those differ between
compilers (numba-cuda-mlir's intrinsics emit MLIR), so they are the adapter's too
(``numba_cuda``, ``numba_cuda_intrinsics``).
"""

import ast
import pathlib

import pytest

PACKAGE = pathlib.Path(__file__).resolve().parent.parent / "coop"
ADAPTER = PACKAGE / "_core" / "compilers"
COMPILERS = ("numba", "numba_cuda", "numba_cuda_mlir", "llvmlite", "cuda")


def is_private(name):
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def sources(inside_adapter):
    return sorted(path for path in PACKAGE.rglob("*.py") if (ADAPTER in path.parents) == inside_adapter)


# Python's own private names coop uses (the standard library's, not a compiler's)
PYTHON_OWN = {"_getframe", "_replace", "_asdict", "_fields", "_make", "_current_frames", "_attributes"}


def compiler_imports(tree):
    """The names a module binds by importing from a compiler."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] in COMPILERS:
            names.update(alias.asname or alias.name for alias in node.names)
        elif isinstance(node, ast.Import):
            names.update((alias.asname or alias.name).split(".")[0] for alias in node.names
                         if alias.name.split(".")[0] in COMPILERS)
    return names


def attribute_uses(tree):
    """``(node, object, name, stores)`` for every attribute read or written, by dot or by
    ``getattr`` / ``setattr`` / ``hasattr`` with a constant name."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute):
            yield node, node.value, node.attr, isinstance(node.ctx, ast.Store)
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
              and node.func.id in ("getattr", "setattr", "hasattr") and len(node.args) >= 2
              and isinstance(node.args[1], ast.Constant) and isinstance(node.args[1].value, str)):
            yield node, node.args[0], node.args[1].value, node.func.id == "setattr"


def on_compiler_object(value, imported):
    return isinstance(value, ast.Name) and value.id in imported


def names_coop_defines():
    """Every private name coop binds anywhere: functions, classes, parameters, variables,
    attributes it sets on its own objects."""
    defined = set(PYTHON_OWN)
    for path in PACKAGE.rglob("*.py"):
        tree = ast.parse(path.read_text())
        imported = compiler_imports(tree)
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                defined.add(node.name)
            elif isinstance(node, ast.arg):
                defined.add(node.arg)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                defined.add(node.id)
            elif isinstance(node, ast.alias):
                defined.add(node.asname or node.name.split(".")[0])
        for _, value, name, stores in attribute_uses(tree):
            if stores and not on_compiler_object(value, imported):
                defined.add(name)
    return {name for name in defined if is_private(name)}


def private_uses(path, own):
    """``(line, what)`` for each private compiler name ``path`` uses."""
    tree = ast.parse(path.read_text())
    imported = compiler_imports(tree)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] in COMPILERS:
            private = [part for part in node.module.split(".") if is_private(part)]
            private += [alias.name for alias in node.names if is_private(alias.name)]
            found += [(node.lineno, f"imports {name} from {node.module}") for name in private]
        elif isinstance(node, ast.Import):
            found += [(node.lineno, f"imports {alias.name}") for alias in node.names
                      if alias.name.split(".")[0] in COMPILERS and any(map(is_private, alias.name.split(".")))]
    for node, value, name, stores in attribute_uses(tree):
        if is_private(name) and (name not in own or on_compiler_object(value, imported)):
            found.append((node.lineno, f"uses .{name}"))
        elif stores and on_compiler_object(value, imported):
            found.append((node.lineno, f"replaces {value.id}.{name}"))
    return sorted(found)


OWN = names_coop_defines()

#: What emits or registers code: modules (and their submodules) only the adapter imports.
CODE_GENERATION = ("llvmlite", "numba.extending", "numba.core.extending", "numba.cuda.extending",
                   "numba.cuda.cgutils", "numba.cuda.nvvmutils", "numba.cuda.cudaimpl", "numba.cuda.cudadrv.nvvm",
                   "numba.cuda.core.imputils", "numba.cuda.typing.templates")


def code_generation_imports(path):
    """``(line, module)`` for each import statement of ``path`` that takes a code-generation
    module (or a name from one)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module:
            modules = [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
        elif isinstance(node, ast.Import):
            modules = [alias.name for alias in node.names]
        else:
            continue
        banned = [module for module in modules
                  if any(module == name or module.startswith(name + ".") for name in CODE_GENERATION)]
        found += [(node.lineno, banned[0])] if banned else []
    return found


@pytest.mark.parametrize("path", sources(inside_adapter=False), ids=lambda path: str(path.relative_to(PACKAGE)))
def test_code_generation_only_in_the_adapter(path):
    found = code_generation_imports(path)
    assert not found, f"{path.relative_to(PACKAGE.parent)}: " + "; ".join(
        f"line {line} imports {module}" for line, module in found) + " (only coop/_core/compilers/ may)"


def test_the_code_generation_check_finds_imports(tmp_path):
    path = tmp_path / "example.py"
    path.write_text("from llvmlite import ir\nfrom numba.cuda import cgutils, types\n"
                    "import numba.cuda.extending\nfrom numba.cuda.extending import intrinsic\n")
    assert code_generation_imports(path) == [(1, "llvmlite"), (2, "numba.cuda.cgutils"), (3, "numba.cuda.extending"),
                                             (4, "numba.cuda.extending")]


@pytest.mark.parametrize("path", sources(inside_adapter=False), ids=lambda path: str(path.relative_to(PACKAGE)))
def test_no_private_compiler_name_outside_the_adapter(path):
    found = private_uses(path, OWN)
    assert not found, f"{path.relative_to(PACKAGE.parent)}: " + "; ".join(
        f"line {line} {what}" for line, what in found) + " (only coop/_core/compilers/ may)"


def test_the_check_finds_private_names():
    """The check itself: each kind of use it must catch, in a module written for it."""
    source = (
        "from numba.cuda.cudaimpl import _generic_array\n"
        "import numba.cuda._internal as internal\n"
        "from numba.cuda import compiler\n"
        "def f(cuda, nvvm):\n"
        "    nvvm._datalayout = 'e'\n"
        "    compiler.compile_cuda = None\n"
        "    return cuda.shared._allocations\n"
    )
    path = PACKAGE.parent / "tests" / "_private_names_example.py"
    path.write_text(source)
    try:
        found = [what for _, what in private_uses(path, OWN)]
    finally:
        path.unlink()
    assert found == ["imports _generic_array from numba.cuda.cudaimpl", "imports numba.cuda._internal",
                     "uses ._datalayout", "replaces compiler.compile_cuda", "uses ._allocations"], found


def test_the_adapter_uses_them():
    """The adapter is where they are (else the check above would prove little)."""
    assert any(private_uses(path, OWN) for path in sources(inside_adapter=True))


def test_unsupported_numba_cuda_is_named():
    """``import coop`` warns for a numba-cuda release coop is not tested with, naming those it is."""
    from coop._core.compilers import numba_cuda

    assert numba_cuda.version_problem() is None, "the installed numba-cuda should be a supported one"
    assert numba_cuda.version_problem((0, 30, 4)) is None
    for found in [(0, 31, 0), (1, 0), (0, 29, 9)]:
        message = numba_cuda.version_problem(found)
        assert message is not None and ".".join(map(str, found)) in message and "0.30.x" in message, message
    assert "unknown version" in numba_cuda.version_problem(())
