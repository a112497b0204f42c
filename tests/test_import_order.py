"""``import coop`` on a machine without a GPU, as a user's first script runs it: in a fresh
interpreter, without the test suite's NUMBA_ENABLE_CUDASIM. What coop's warning says is
what then happens, whatever was imported before coop, and the warning points at the
user's ``import coop`` line. (On a machine with a GPU coop chooses nothing: skipped.)"""

import os
import pathlib
import subprocess
import sys
import textwrap

import pytest

from coop._core.device import gpu_available

ROOT = pathlib.Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.skipif(gpu_available(), reason="coop switches to the simulator only without a GPU")

KERNEL = textwrap.dedent(
    """
    import numpy as np
    from numba import cuda

    @cuda.jit
    def block_sum(x, out):
        total = coop.block.sum(x[cuda.threadIdx.x], threads=32)
        if cuda.threadIdx.x == 0:
            out[0] = total

    out = cuda.device_array(1, np.int64)
    block_sum[1, 32](cuda.to_device(np.arange(32)), out)
    print("sum", out.copy_to_host()[0])
    """
)


def _as_a_user(tmp_path, *arguments):
    """``python *arguments`` in ``tmp_path``, in the environment a user's shell would have."""
    env = {k: v for k, v in os.environ.items() if k not in ("NUMBA_ENABLE_CUDASIM", "COOP_TEST_MODE")}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    return subprocess.run([sys.executable, *arguments], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=300)


def _run_script(tmp_path, text):
    script = tmp_path / "first_script.py"
    script.write_text(text)
    return _as_a_user(tmp_path, str(script))


@pytest.mark.parametrize("before", ["", "import numba\n", "import numba.core.config\nimport numba\n"])
def test_the_simulator_the_warning_names_is_the_one_used(tmp_path, before):
    run = _run_script(tmp_path, before + "import coop\n" + KERNEL)
    assert run.returncode == 0, run.stderr[-3000:]
    assert "sum 496" in run.stdout, run.stdout
    assert "kernels run on Numba's CUDA simulator" in run.stderr, run.stderr
    # attributed to the script's import line, not to coop or Python's machinery
    line = before.count("\n") + 1
    assert f"first_script.py:{line}: UserWarning: coop: no CUDA GPU found" in run.stderr, run.stderr


def test_numba_cuda_first_fails_as_the_warning_says(tmp_path):
    run = _run_script(tmp_path, "from numba import cuda\nimport coop\n" + KERNEL)
    assert "first_script.py:2: UserWarning: coop: numba.cuda was imported before coop" in run.stderr, run.stderr
    assert run.returncode != 0 and "CUDA driver library cannot be found" in run.stderr, run.stderr[-3000:]


def test_python_m_coop_warns_at_no_frozen_frame(tmp_path):
    """``python -m coop``: runpy imports the package, and the tour says where it runs."""
    run = _as_a_user(tmp_path, "-m", "coop")
    assert run.returncode == 0, run.stderr[-3000:]
    assert "<frozen" not in run.stderr, run.stderr
    assert "simulator" in run.stdout, run.stdout
