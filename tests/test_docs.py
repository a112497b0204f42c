"""Every public primitive's docstring is complete, as ``help()`` shows it, and its
example runs.

The public primitives are the functions in ``__all__`` of coop.thread, coop.warp,
coop.warp.exchange, coop.block, coop.block.exchange, coop.block.shuffle, coop.ops and
coop.device (host functions: no Barriers section).
Each docstring (after ``coop._core.docs.expand`` has filled in the shared paragraphs)
has numpydoc ``Parameters`` (naming every parameter of the signature), ``Returns`` and
``Example`` sections, block, warp and thread primitives a ``Barriers`` section too, and
no placeholder left unexpanded.

Literal blocks (a paragraph ending in ``::`` and the indented lines after it) in these
docstrings and in the public modules' docstrings are either complete examples (they
contain ``import coop``; ``import coop`` precedes any numba import, so that on a machine
without a GPU coop can switch Numba to its simulator) or fragments (their paragraph
starts with "Fragment"). Each primitive's Example section holds exactly one complete
example. Every complete example is executed here, in a fresh namespace (on the
simulator or the GPU, as the session runs), and a few in a subprocess without
``NUMBA_ENABLE_CUDASIM``, as a user would run them.
"""

import importlib
import inspect
import os
import pathlib
import pkgutil
import pydoc
import re
import subprocess
import sys
import textwrap
import types
import warnings

import pytest

import coop
from coop._core import specialize
from coop._core.docs import PARAGRAPHS
from coop._core.namespace import namespaces

ROOT = pathlib.Path(__file__).resolve().parents[1]

NAMESPACES = namespaces()  # every namespace a user reaches from coop

#: Namespaces of building blocks documented together, in the module's docstring (each
#: name of ``__all__`` described there), rather than one docstring with an example each.
DOCUMENTED_AS_A_MODULE = {
    "coop.device.lookback": "the decoupled look-back's pieces; notebook 05 writes a single-pass scan with them",
}

# Public modules whose docstrings may hold examples.
MODULES = ["coop"] + sorted(  # every public module of coop (no part of its name private)
    module.name for module in pkgutil.walk_packages(coop.__path__, "coop.")
    if not any(part.startswith("_") for part in module.name.split("."))
)


def _public_primitives():
    found = {}
    for namespace in NAMESPACES:
        if namespace in DOCUMENTED_AS_A_MODULE:
            continue
        module = importlib.import_module(namespace)
        for name in module.__all__:
            value = getattr(module, name)
            if callable(value) and not isinstance(value, types.ModuleType):  # (not constants)
                found[f"{namespace}.{name}"] = value
    return found


PRIMITIVES = _public_primitives()
NAMES = list(PRIMITIVES)


# -- reading numpydoc docstrings --------------------------------------------------------


def _sections(doc):
    """``{heading: body}`` of a cleaned docstring; the text before the first heading is
    under ``""``. A heading is an unindented line underlined with dashes."""
    lines = doc.splitlines()
    sections, heading, body = {}, "", []
    i = 0
    while i < len(lines):
        line = lines[i]
        underline = lines[i + 1] if i + 1 < len(lines) else ""
        if (
            line.strip()
            and not line.startswith(" ")
            and re.fullmatch(r"-{3,}", underline)
            and len(underline) == len(line.rstrip())
        ):
            sections[heading] = "\n".join(body)
            heading, body = line.strip(), []
            i += 2
            continue
        body.append(line)
        i += 1
    sections[heading] = "\n".join(body)
    return sections


def _literal_blocks(text):
    """``[(introduction, code)]``: each paragraph ending in ``::`` (joined into one line)
    and the dedented block indented under it."""
    lines = text.splitlines()
    blocks = []
    i = 0
    while i < len(lines):
        line = lines[i]
        if not line.rstrip().endswith("::"):
            i += 1
            continue
        indent = len(line) - len(line.lstrip())
        start = i
        while start > 0 and lines[start - 1].strip():
            start -= 1
        introduction = " ".join(part.strip() for part in lines[start : i + 1])
        j = i + 1
        while j < len(lines) and (not lines[j].strip() or len(lines[j]) - len(lines[j].lstrip()) > indent):
            j += 1
        code = textwrap.dedent("\n".join(lines[i + 1 : j])).strip("\n")
        blocks.append((introduction, code))
        i = j
    return blocks


def _is_complete(code):
    return re.search(r"^import coop\b", code, re.MULTILINE) is not None


def _is_fragment(introduction):
    return introduction.startswith("Fragment")


def _documented_names(parameters):
    """Names of the ``name : kind`` (or ``a, b : kind``) entries of a Parameters section."""
    names = set()
    for match in re.finditer(r"^(\w+(?:\s*,\s*\w+)*)\s+:\s", parameters, re.MULTILINE):
        names.update(name.strip() for name in match[1].split(","))
    return names


def _doc(name):
    doc = PRIMITIVES[name].__doc__
    assert doc, f"{name} has no docstring"
    return inspect.cleandoc(doc)


def _examples(name):
    """The complete examples of a primitive's Example section."""
    section = _sections(_doc(name)).get("Example", "")
    return [code for _, code in _literal_blocks(section) if _is_complete(code)]


def _module_examples():
    params = []
    for module_name in MODULES:
        doc = inspect.cleandoc(importlib.import_module(module_name).__doc__ or "")
        complete = [code for _, code in _literal_blocks(doc) if _is_complete(code)]
        for number, code in enumerate(complete, 1):
            params.append(pytest.param(code, id=f"{module_name}#{number}"))
    return params


def _check_import_order(code, where):
    lines = code.splitlines()
    coop_line = next(i for i, line in enumerate(lines) if re.match(r"import coop\b", line))
    for i, line in enumerate(lines):
        if re.match(r"\s*(import numba\b|from numba\b)", line):
            assert coop_line < i, f"{where}: 'import coop' must come before {line.strip()!r}"


def _run(code, where):
    """Run an example; a warning it prints (an overflow on the simulator...) fails it."""
    _check_import_order(code, where)
    namespace = {"__name__": "coop_example_" + re.sub(r"\W", "_", where)}
    called = set(specialize.CALLED_BODIES)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        exec(compile(code, f"<example {where}>", "exec"), namespace)
    # every body coop's primitives return is made into their implementation from its source
    assert specialize.CALLED_BODIES == called, f"{where}: bodies called, not copied: {specialize.CALLED_BODIES - called}"


# -- the tests ----------------------------------------------------------------------------


def test_primitives_found():
    assert len(PRIMITIVES) >= 50, sorted(PRIMITIVES)
    for name, fn in PRIMITIVES.items():
        assert callable(fn), name


@pytest.mark.parametrize("name", NAMES)
def test_docstring_complete(name):
    doc = _doc(name)
    sections = _sections(doc)
    summary = sections[""].strip().split("\n\n")[0]
    assert "CUB" in summary, f"{name}: the first line should name CUB's counterpart"
    for heading in ("Parameters", "Returns", "Example"):
        assert sections.get(heading, "").strip(), f"{name}: no {heading} section"
    if not name.startswith(("coop.ops.", "coop.device.")):  # (host functions have no barriers)
        assert sections.get("Barriers", "").strip(), f"{name}: no Barriers section"
    if name.startswith(("coop.block.", "coop.warp.")):
        assert PARAGRAPHS["collective"].split()[0] in doc and "must make the call" in doc, (
            f"{name}: the 'collective' paragraph is missing"
        )
    parameters = set(inspect.signature(PRIMITIVES[name]).parameters)
    documented = _documented_names(sections["Parameters"])
    assert parameters - documented == set(), f"{name}: parameters not documented"
    assert documented - parameters == set(), f"{name}: documented parameters not in the signature"
    leftover = re.findall(r"^\s*\{[a-z_]+\}\s*$", doc, re.MULTILINE)
    assert not leftover, f"{name}: placeholders not expanded: {leftover}"


@pytest.mark.parametrize("name", NAMES)
def test_literal_blocks_are_examples_or_fragments(name):
    doc = _doc(name)
    for introduction, code in _literal_blocks(doc):
        assert _is_complete(code) or _is_fragment(introduction), (
            f"{name}: a literal block that is neither a complete example (with 'import coop') "
            f"nor introduced as a fragment: {introduction!r}"
        )
    assert len(_examples(name)) == 1, f"{name}: the Example section needs one complete example"
    complete = [code for _, code in _literal_blocks(doc) if _is_complete(code)]
    assert len(complete) == 1, f"{name}: complete examples outside the Example section"


@pytest.mark.parametrize("name", NAMES)
def test_help_shows_the_docstring(name):
    text = pydoc.plain(pydoc.render_doc(PRIMITIVES[name]))
    assert "Parameters" in text and "Example" in text, name
    first_code_line = _examples(name)[0].splitlines()[0]
    assert first_code_line in text, name


def test_every_shared_paragraph_is_used():
    docs = "\n".join(fn.__doc__ or "" for fn in PRIMITIVES.values())
    unused = [
        key
        for key, text in PARAGRAPHS.items()
        if textwrap.dedent(text).strip().splitlines()[0].strip() not in docs
    ]
    assert not unused, f"shared paragraphs that no primitive uses: {unused}"


@pytest.mark.parametrize("module_name", MODULES)
def test_module_literal_blocks_are_examples_or_fragments(module_name):
    doc = inspect.cleandoc(importlib.import_module(module_name).__doc__ or "")
    for introduction, code in _literal_blocks(doc):
        assert _is_complete(code) or _is_fragment(introduction), (
            f"{module_name}: a literal block that is neither a complete example (with "
            f"'import coop') nor introduced as a fragment: {introduction!r}"
        )


@pytest.mark.parametrize("name", NAMES)
def test_example_runs(name):
    (code,) = _examples(name)
    _run(code, name)


@pytest.mark.parametrize("code", _module_examples())
def test_module_example_runs(code, request):
    _run(code, request.node.callspec.id)


# Run as a user would, in a fresh interpreter: without NUMBA_ENABLE_CUDASIM (and without
# the test suite's COOP_TEST_MODE), ``import coop`` picks the simulator on a machine
# without a GPU, which works only because the examples import coop before numba.cuda.
# On a machine with a GPU they run there.
AS_A_USER = ["coop.block.sum", "coop.warp.reduce", "coop.block.load"]


@pytest.mark.parametrize("name", AS_A_USER)
def test_example_runs_without_simulator_variable(name):
    (code,) = _examples(name)
    env = {k: v for k, v in os.environ.items() if k not in ("NUMBA_ENABLE_CUDASIM", "COOP_TEST_MODE")}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    run = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600
    )
    assert run.returncode == 0, f"{name}: the example failed in a fresh interpreter:\n{run.stderr[-4000:]}"


def _public_objects():
    """{name: object} for coop and everything public reachable from it (each namespace's
    ``__all__``, else its names without a leading underscore, under their first public
    name), the primitives' ``temp_storage_bytes``, and every module of coop."""
    import collections
    import pkgutil

    def in_coop(value):
        name = value.__name__ if isinstance(value, types.ModuleType) else getattr(value, "__module__", None)
        return (name or "").startswith("coop")

    found, seen = {}, set()
    pending = collections.deque([("coop", coop)])
    for module in pkgutil.walk_packages(coop.__path__, "coop."):
        try:
            pending.append((module.name, importlib.import_module(module.name)))
        except ImportError:
            # (a compiler adapter's module for the other backend: the launcher of compiled
            # kernels under the simulator)
            assert module.name.startswith("coop._core.compilers."), module.name
    while pending:
        name, value = pending.popleft()
        if id(value) in seen or not in_coop(value):
            continue
        seen.add(id(value))
        found[name] = value
        if isinstance(value, types.ModuleType):
            public = getattr(value, "__all__", [n for n in vars(value) if not n.startswith("_")])
            pending.extendleft(reversed([(f"{name}.{n}", getattr(value, n)) for n in public if hasattr(value, n)]))
        elif callable(value) and hasattr(value, "temp_storage_bytes"):
            pending.appendleft((f"{name}.temp_storage_bytes", value.temp_storage_bytes))
    return found


def test_no_docstring_keeps_a_placeholder():
    """help() never shows ``{threads}`` and the like: every shared paragraph is filled in,
    also where text follows the placeholder on its line."""
    objects = _public_objects()
    assert "coop.block.radix_sort" in objects and "coop.device.histogram_even" in objects
    pattern = re.compile(r"\{(%s)\}|^\s*\{[a-z_]+\}" % "|".join(PARAGRAPHS), re.MULTILINE)
    kept = {name: [m[0].strip() for m in pattern.finditer(value.__doc__)] for name, value in objects.items()
            if "._" not in name and isinstance(value.__doc__, str) and pattern.search(value.__doc__)}
    assert not kept, f"docstrings with placeholders left: {kept}"


PARTIAL_TILE_PRIMITIVES = [name for name, fn in PRIMITIVES.items()
                           if "valid_items" in inspect.signature(fn).parameters
                           and not name.endswith((".load", ".store", ".transform"))]


@pytest.mark.parametrize("name", PARTIAL_TILE_PRIMITIVES)
def test_valid_items_says_which_positions_count(name):
    """A partial tile counts blocked positions: items loaded striped must be exchanged
    first, which each primitive taking ``valid_items`` says."""
    parameters = _sections(_doc(name))["Parameters"]
    entry = parameters[parameters.index("valid_items :"):]
    entry = entry[: re.search(r"\n    \w+ :|\Z", entry[1:]).start() + 1]
    assert "blocked order" in entry and "exchanged to blocked" in " ".join(entry.split()), f"{name}: {entry}"


@pytest.mark.parametrize("namespace", sorted(DOCUMENTED_AS_A_MODULE))
def test_building_block_namespaces_describe_every_name(namespace):
    module = importlib.import_module(namespace)
    doc = module.__doc__ or ""
    assert namespace in NAMESPACES
    missing = [name for name in module.__all__ if f"``{name}" not in doc]
    assert not missing, f"{namespace}'s docstring does not describe {missing}"


def test_namespaces_show_their_primitives_and_no_module_passes_for_one():
    """``dir()`` of a namespace lists its ``__all__``; a module of coop's source under a
    namespace (``coop.device.histogram``) called like a function names what to call."""
    assert len(NAMESPACES) >= 9, NAMESPACES
    for name in ["coop", *NAMESPACES]:
        namespace = importlib.import_module(name)
        assert dir(namespace) == sorted(namespace.__all__), name
    with pytest.raises(TypeError, match=r"coop.device.histogram is a module of coop's source, not a function: "
                                        r"call coop.device.histogram_even$"):
        coop.device.histogram(None, None, 10, 0.0, 1.0)
    with pytest.raises(TypeError, match=r"call coop.block.inclusive_scan, coop.block.exclusive_scan"):
        coop.block.scan(None)
    assert "BlockRadixRank" in pydoc.render_doc(coop.block.radix)  # (a module still, for help())
