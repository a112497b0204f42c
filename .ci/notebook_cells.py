"""Run each notebook's code cells in order with plain Python: how the GPU run checks the
notebooks, since the GPU machine has no Jupyter kernel.

    python3 .ci/notebook_cells.py [NOTEBOOK ...]   (default: every notebook)
"""

import json
import pathlib
import sys
import time

for path in [pathlib.Path(p) for p in sys.argv[1:]] or sorted(pathlib.Path("notebooks").glob("*.ipynb")):
    cells = ["".join(cell["source"]) for cell in json.load(open(path))["cells"] if cell["cell_type"] == "code"]
    namespace = {"__name__": "__main__"}
    start = time.time()
    for k, code in enumerate(cells):
        code = "\n".join(line for line in code.splitlines() if not line.lstrip().startswith(("%", "!")))
        exec(compile(code, f"{path.name}[{k}]", "exec"), namespace)
    print(f"{path.name}: {len(cells)} code cells ran ({time.time() - start:.1f} s)", flush=True)
