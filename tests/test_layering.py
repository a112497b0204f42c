"""The package's layering (coop/_core/__init__.py): ``coop._core`` < ``coop.ops`` <
``coop.thread`` < ``coop.warp`` < ``coop.block`` < ``coop.device``, each module importing
only from its own layer or below, and no import cycle among the modules of ``coop._core``
(imports inside functions included). Across modules above ``coop._core``, a module takes
only what another exports: its primitives (``__all__``) or its building blocks
(``BUILDING_BLOCKS``: what other families compose, each documented)."""

import ast
import importlib
import pathlib

import pytest

PACKAGE = pathlib.Path(__file__).resolve().parent.parent / "coop"
LAYERS = ["coop._core", "coop.ops", "coop.thread", "coop.warp", "coop.block", "coop.device"]


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


def exported_names(module):
    """``__all__`` and ``BUILDING_BLOCKS`` of a coop module, read from its source (a
    namespace package's ``__all__``, derived from the registry, from the module), and
    its path."""
    path = PACKAGE.parent.joinpath(*module.split("."))
    path = path / "__init__.py" if path.is_dir() else path.with_suffix(".py")
    names = {}
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            name = node.targets[0].id
            if name in ("__all__", "BUILDING_BLOCKS"):
                derived = isinstance(node.value, ast.Call)
                names[name] = set(getattr(importlib.import_module(module), name) if derived
                                  else ast.literal_eval(node.value))
    return names, path


def taken_names(path):
    """``(module, name)`` for each name ``path`` imports from a coop module above coop._core."""
    for node in ast.walk(ast.parse(path.read_text())):
        if (isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("coop.")
                and not node.module.startswith("coop._core")):
            for alias in node.names:
                yield node.module, alias.name


def test_modules_take_only_exported_names():
    wrong = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for module, name in taken_names(path):
            names, _ = exported_names(module)
            is_module = PACKAGE.parent.joinpath(*module.split("."), name).with_suffix(".py").exists()
            if not is_module and name not in names.get("__all__", set()) | names.get("BUILDING_BLOCKS", set()):
                wrong.append(f"{path.relative_to(PACKAGE.parent)} takes {name} from {module}")
    assert not wrong, "names taken that their module neither exports nor lists in BUILDING_BLOCKS:\n" + "\n".join(wrong)


@pytest.mark.parametrize("module", [m for m in MODULES if "BUILDING_BLOCKS" in exported_names(m)[0]])
def test_building_blocks_are_documented(module):
    names, path = exported_names(module)
    tree = ast.parse(path.read_text())
    documented = {node.name for node in tree.body
                  if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and ast.get_docstring(node)}
    missing = sorted(names["BUILDING_BLOCKS"] - documented)
    assert not missing, f"{module}: building blocks without a docstring: {missing}"
