import sys, pathlib, time
ROOT = pathlib.Path(__file__).resolve().parents[2]; sys.path[:0] = [str(ROOT / "benchmarks"), str(ROOT), str(pathlib.Path(__file__).parent)]
import nvvm130
import coop_tiles as ct
try:
    nvvm130.patch_mlir()
except Exception as e: print("mlir patch", e)
out = pathlib.Path(sys.argv.pop(1))
mods = str(out / "mods")
ct.generate(mods)
specs = sys.argv[2:]
compiler = sys.argv[1]
for spec in specs:
    key = ct.parse_spec(spec)
    module = ct.load_module(mods, compiler, key)
    t = time.time()
    ptx = ct.COMPILERS[compiler].ptx(ct.python_function(module, key), module.SIGNATURE)
    name = spec.replace(":", "_") + ("_nc" if compiler == "numba-cuda" else "_mlir") + ".ptx"
    (out / name).write_text(ptx)
    print(name, len(ptx), f"{time.time()-t:.1f}s", flush=True)
