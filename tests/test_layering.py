"""The package's layering (coop/_core/__init__.py): ``coop._core`` < ``coop.ops`` <
``coop.thread`` < ``coop.warp`` < ``coop.block``, each module importing only from its
own layer or below, and no import cycle among the modules of ``coop._core`` (imports
inside functions included)."""

import ast
import pathlib

import pytest

PACKAGE = pathlib.Path(__file__).resolve().parent.parent / "coop"
LAYERS = ["coop._core", "coop.ops", "coop.thread", "coop.warp", "coop.block"]


def module_name(path):
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def layer_of(module):
    for index, layer in enumerate(LAYERS):
        if module == layer or module.startswith(layer + "."):
            return index
    return None


def imports(path):
    """The coop modules ``path`` imports (``from coop._core import x`` counts as
    ``coop._core.x``)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "coop":
            if node.module in ("coop._core", "coop"):
                found.update(f"{node.module}.{alias.name}" for alias in node.names)
            else:
                found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names if alias.name.split(".")[0] == "coop")
    return found


MODULES = {module_name(path): imports(path) for path in sorted(PACKAGE.rglob("*.py"))}


@pytest.mark.parametrize("module", [m for m in MODULES if layer_of(m) is not None])
def test_imports_stay_in_their_layer_or_below(module):
    above = sorted(
        imported for imported in MODULES[module]
        if layer_of(imported) is not None and layer_of(imported) > layer_of(module)
    )
    assert not above, f"{module} imports from a layer above it: {above}"


def test_core_has_no_import_cycle():
    core = {m: {i for i in deps if i in MODULES and i.startswith("coop._core.")}
            for m, deps in MODULES.items() if m.startswith("coop._core.")}
    done, path = set(), []

    def visit(module):
        if module in path:
            cycle = path[path.index(module):] + [module]
            pytest.fail("import cycle in coop._core: " + " -> ".join(cycle))
        if module in done:
            return
        path.append(module)
        for imported in sorted(core[module]):
            visit(imported)
        path.pop()
        done.add(module)

    for module in sorted(core):
        visit(module)
