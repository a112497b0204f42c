"""Every tutorial notebook in notebooks/ runs from top to bottom without an error.

Each notebook is executed with nbclient in a fresh ``python3`` Jupyter kernel, in the
notebooks folder, with this process's environment (so ``NUMBA_ENABLE_CUDASIM`` and
``COOP_TEST_MODE``, set by conftest.py, reach the kernel) and the repository root on
``PYTHONPATH`` (so the kernel imports this checkout's coop). The notebooks check their
own results with asserts; a failing assert fails the test.

Plots are drawn headless by matplotlib's inline backend, which renders each figure to a
PNG output of its cell (ipykernel's default; set here so that a GUI ``MPLBACKEND`` in the
caller's environment cannot take its place). ``FIGURES`` lists how many figures a
notebook draws on the simulator, which the test checks.
"""

import os
import pathlib
import re

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")

ROOT = pathlib.Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))

# Figures drawn from kernel results, on the simulator as on a GPU (timing plots: GPU only).
FIGURES = {"01_block_reduce_and_scan.ipynb": 1, "04_tile_analytics.ipynb": 1, "05_device_algorithms.ipynb": 1}


def test_there_are_notebooks():
    assert NOTEBOOKS, "no notebooks/*.ipynb found"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_runs(path, monkeypatch):
    # The kernel is started with os.environ: put this checkout first on its path.
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    monkeypatch.setenv("PYTHONUNBUFFERED", "1")
    monkeypatch.setenv("MPLBACKEND", "module://matplotlib_inline.backend_inline")
    notebook = nbformat.read(path, as_version=4)
    client = nbclient.NotebookClient(
        notebook,
        kernel_name="python3",
        timeout=600,  # seconds per cell
        resources={"metadata": {"path": str(path.parent)}},
    )
    try:
        client.execute()
    except nbclient.exceptions.CellExecutionError as error:
        message = re.sub(r"\x1b\[[0-9;]*m", "", str(error))  # the traceback's colours
        pytest.fail(f"{path.name}: a cell raised\n{message}", pytrace=False)
    if os.environ.get("NUMBA_ENABLE_CUDASIM") == "1" and path.name in FIGURES:
        figures = sum(
            "image/png" in output.get("data", {}) for cell in notebook.cells for output in cell.get("outputs", [])
        )
        expected = FIGURES[path.name]
        assert figures == expected, f"{path.name}: drew {figures} figures, not {expected} (is matplotlib installed?)"


# a private module or name of coop (coop.device._lookback, coop._core...), as code uses it
PRIVATE_NAME = re.compile(r"\bcoop(\.\w+)*\._\w+|\bfrom coop(\.\w+)* import [^\n]*\b_\w+")


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_code_uses_public_names(path):
    """The tutorials teach coop through its public names: their code cells import and
    call nothing private (a private module can change under a user's feet)."""
    notebook = nbformat.read(path, as_version=4)
    code = "\n".join(cell.source for cell in notebook.cells if cell.cell_type == "code")
    private = sorted({match[0] for match in PRIVATE_NAME.finditer(code)})
    assert not private, f"{path.name} uses private names of coop: {private}"
