"""The primitive registry (``coop._core.specialize.PRIMITIVES``: every ``@primitive``) and
the lists derived from it, so that adding a primitive cannot leave one behind:

- every kernel-side name a namespace exports is a registered primitive, and every
  registered primitive is reachable under its qualified name;
- every public primitive is named in the README's list;
- every public primitive is compiled by at least one codegen case (``tests/codegen_cases``:
  registers only, no calls), named there as it is in the README (``coop.block.sum``);
- the docs tests (``tests/test_docs.py``) walk the same namespaces (``coop._core.namespace
  .namespaces()``);
- a primitive's host ``temp_storage_bytes`` takes the primitive's defaults (its sizer
  writes ``PRIMITIVE_DEFAULT``, not a copy) and its docstring shows that call
  (``{temp_storage_size}``).
"""

import importlib
import inspect
import pathlib
import re
import types

import pytest

import coop
from coop._core.namespace import namespaces
from coop._core.specialize import PRIMITIVE_DEFAULT, PRIMITIVES, _host_sizer

ROOT = pathlib.Path(__file__).resolve().parents[1]
KERNEL_SIDE = [name for name in namespaces() if not name.startswith("coop.device")]


def _resolve(qualname):
    value = coop
    for part in qualname.split(".")[1:]:
        value = getattr(value, part)
    return value


def _public():
    """``{qualified name: primitive}`` of the registered primitives a namespace exports."""
    registered = set(map(id, PRIMITIVES.values()))
    found = {}
    for namespace in KERNEL_SIDE:
        module = importlib.import_module(namespace)
        for name in module.__all__:
            if id(getattr(module, name)) in registered:
                found[f"{namespace}.{name}"] = getattr(module, name)
    return found


PUBLIC = _public()


def _codegen_sources():
    return "\n".join(path.read_text() for path in sorted((ROOT / "tests" / "codegen_cases").glob("*.py")))


def test_registered_primitives_are_reachable_by_their_names():
    assert len(PRIMITIVES) >= 60, sorted(PRIMITIVES)
    wrong = [qualname for qualname, primitive in PRIMITIVES.items() if _resolve(qualname) is not primitive]
    assert not wrong, wrong


@pytest.mark.parametrize("namespace", KERNEL_SIDE)
def test_every_kernel_side_export_is_a_registered_primitive(namespace):
    module = importlib.import_module(namespace)
    registered = set(map(id, PRIMITIVES.values()))
    unregistered = [name for name in module.__all__ if callable(getattr(module, name))
                    and not isinstance(getattr(module, name), types.ModuleType)
                    and id(getattr(module, name)) not in registered]
    assert not unregistered, f"{namespace} exports {unregistered}, which @primitive did not make"


@pytest.mark.parametrize("qualname", sorted(PUBLIC))
def test_the_readme_lists_the_primitive(qualname):
    """Named in backquotes (``coop.block.flag_heads`` / ``flag_tails``)."""
    readme = (ROOT / "README.md").read_text()
    name = qualname.rsplit(".", 1)[1]
    assert re.search(r"`[^`\n]*\b%s\b" % re.escape(name), readme), f"README.md does not name {qualname}"


@pytest.mark.parametrize("qualname", sorted(PUBLIC))
def test_a_codegen_case_compiles_the_primitive(qualname):
    assert re.search(r"\b%s\b" % re.escape(qualname), _codegen_sources()), (
        f"no case in tests/codegen_cases calls {qualname} (by that name): add one (@case)")


def test_the_checks_find_a_missing_primitive():
    """The checks above can fail: a name no document and no case uses is found missing."""
    assert not re.search(r"\bcoop\.block\.no_such_primitive\b", _codegen_sources())
    assert "coop.block.sum" in PUBLIC and "coop.ops.add" in PUBLIC and "coop.warp.exchange.striped_to_blocked" in PUBLIC
    assert not any(name.startswith("coop._core") or name.startswith("coop.warp.scan.") for name in PUBLIC)


SIZED = sorted(qualname for qualname, primitive in PRIMITIVES.items() if hasattr(primitive, "temp_storage_bytes"))


def _copied_defaults(primitive):
    """The host sizer's parameters whose default repeats the primitive's (a copy that a
    changed default would leave behind)."""
    sizer = inspect.signature(primitive.temp_storage_bytes.__wrapped__).parameters
    public = inspect.signature(primitive).parameters
    return [name for name, parameter in sizer.items()
            if name in public and parameter.default is not inspect.Parameter.empty
            and parameter.default is not PRIMITIVE_DEFAULT and parameter.default == public[name].default]


@pytest.mark.parametrize("qualname", SIZED)
def test_the_sizer_takes_the_primitives_defaults(qualname):
    primitive = PRIMITIVES[qualname]
    assert not _copied_defaults(primitive), f"{qualname}'s sizer copies defaults: write PRIMITIVE_DEFAULT"
    host = inspect.signature(primitive.temp_storage_bytes).parameters
    public = inspect.signature(primitive).parameters
    for name, parameter in host.items():
        if name in public and public[name].default not in (inspect.Parameter.empty, None):
            assert parameter.default is not inspect.Parameter.empty, (qualname, name)


@pytest.mark.parametrize("qualname", SIZED)
def test_the_docstring_shows_the_sizer_call(qualname):
    text = " ".join(PRIMITIVES[qualname].__doc__.split())
    assert f"Size: ``{qualname}.temp_storage_bytes(dtype, threads" in text
    assert "{temp_storage_size}" not in text


def test_the_sizer_checks_can_fail():
    """A sizer copying a default is found; PRIMITIVE_DEFAULT on a parameter the primitive
    does not default is refused."""

    def primitive(value, threads=None, algorithm="a"):
        pass

    def copying(sig, value_type, threads, algorithm="a"):
        pass

    def taking(sig, value_type, threads=PRIMITIVE_DEFAULT, value=PRIMITIVE_DEFAULT):
        pass

    primitive.temp_storage_bytes = _host_sizer("coop.x", copying, inspect.signature(primitive))
    assert _copied_defaults(primitive) == ["algorithm"]
    with pytest.raises(TypeError, match="value has no default"):
        _host_sizer("coop.x", taking, inspect.signature(primitive))
