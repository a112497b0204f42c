"""``python -m codegen_cases [--debug-probe]`` (from ``tests/``): the codegen cases compiled
in this process, one JSON line each, as ``test_codegen.py`` runs them under the simulator."""

import sys

from codegen_cases import main

sys.exit(main())
