"""``python -m codegen_cases [--debug-probe | --share K/M]`` (from ``tests/``): the codegen
cases compiled in this process, one JSON line each, as ``test_codegen.py`` runs them under
the simulator (in several processes side by side, each with its share)."""

import sys

from codegen_cases import main

sys.exit(main())
