"""The README's tour (`python -m coop`) runs and its checks pass, here as for a user."""

import os
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]


def test_tour_runs_and_checks_pass():
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    run = subprocess.run(
        [sys.executable, "-m", "coop"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert "MISMATCH" not in run.stdout and "ERROR" not in run.stdout, run.stdout
    assert run.stdout.count("OK") >= 6, run.stdout
    assert "block" in run.stdout, run.stdout  # a block primitive is part of the tour
