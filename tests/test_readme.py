"""Every ```python block of README.md is a complete program that runs as a user would run it.

Each block runs in a subprocess of this interpreter, in an empty temporary folder, with
this checkout on ``PYTHONPATH`` and without ``NUMBA_ENABLE_CUDASIM`` and
``COOP_TEST_MODE`` (which conftest.py sets): on a machine without a GPU, only the
example's own ``import coop`` before ``numba.cuda`` puts it on the simulator, as on a
user's laptop. The blocks check their results with asserts; exit status 0 means they held.
"""

import ast
import importlib.util
import os
import pathlib
import re
import subprocess
import sys

import pytest


ROOT = pathlib.Path(__file__).resolve().parents[1]
README = ROOT / "README.md"


def python_blocks():
    """(first line number, source) of each ```python block of README.md."""
    text = README.read_text(encoding="utf-8")
    blocks = []
    for match in re.finditer(r"^```python[ \t]*\n(.*?)^```[ \t]*$", text, re.S | re.M):
        line = text.count("\n", 0, match.start(1)) + 1
        blocks.append((line, match.group(1)))
    return blocks


BLOCKS = python_blocks()
IDS = [f"README.md:{line}" for line, _ in BLOCKS]


def test_readme_has_python_examples():
    assert BLOCKS, "README.md has no ```python blocks"


def imports_in_order(source):
    """(line, module) of each import statement at any depth, in source order."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            # `from numba import cuda` imports numba.cuda: count the names as modules too
            found += [(node.lineno, f"{node.module}.{alias.name}") for alias in node.names]
    return sorted(found)


@pytest.mark.parametrize("block", BLOCKS, ids=IDS)
def test_coop_is_imported_before_numba(block):
    line, source = block
    modules = imports_in_order(source)
    coop_lines = [n for n, name in modules if name == "coop" or name.startswith("coop.")]
    numba_lines = [n for n, name in modules if name.partition(".")[0] in ("numba", "numba_cuda_mlir")]
    assert coop_lines, f"README.md:{line}: the example does not import coop"
    if numba_lines:
        assert min(coop_lines) < min(numba_lines), (
            f"README.md:{line}: `import coop` must come before any numba import "
            f"(line {min(numba_lines) + line - 1} imports numba first); without a GPU, "
            "coop can only choose the simulator before numba.cuda is imported"
        )


@pytest.mark.parametrize("block", BLOCKS, ids=IDS)
def test_example_runs(block, tmp_path):
    line, source = block
    if "from numba_cuda_mlir" in source and "except ImportError" not in source and not importlib.util.find_spec(
            "numba_cuda_mlir"):
        pytest.skip("a numba-cuda-mlir kernel: needs numba-cuda-mlir (pip install 'coop[mlir]')")
    script = tmp_path / f"readme_{line}.py"
    script.write_text(source, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k not in ("NUMBA_ENABLE_CUDASIM", "COOP_TEST_MODE")}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    run = subprocess.run(
        [sys.executable, str(script)], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600
    )
    assert run.returncode == 0, f"README.md:{line}: the example failed\n{run.stdout}\n{run.stderr[-6000:]}"
