"""The codegen cases' LLVM IR, to check that a change leaves the generated code alone.

    NUMBA_ENABLE_CUDASIM=0 python tests/codegen_ir.py dump DIR [CASE ...]   # before and after
    NUMBA_ENABLE_CUDASIM=0 python tests/codegen_ir.py ptx DIR [CASE ...]    # where the IR must change
    python tests/codegen_ir.py compare BEFORE AFTER [--name-blind]

``dump`` writes each case's IR (every linked module, as numba-cuda hands it to NVVM) as
a sorted set of units (function definitions, declarations, globals). Local names,
shared-array counters and addresses are renamed, because they change from one process
to another: numba-cuda links device functions in a set's order and numbers some names
from counters. For the same reason the PTX of a kernel is not a stable thing to compare
(NVVM's output follows the module order). ``compare`` lists the cases whose IR differs;
``--name-blind`` also ignores global symbol names, which hold the Python qualified names
of the functions (an implementation renamed, say). Where the IR must change (a function
added or removed), compare the PTX: ``ptx`` writes each case's PTX instructions (every
function is inlined into the kernel: one entry) with registers and labels numbered by
first use and symbols, comments and directives dropped; ``compare`` then compares the
``.ptx`` files.
"""

import json
import pathlib
import re
import sys
import time

HERE = pathlib.Path(__file__).resolve().parent
RENAMED = [(re.compile(r"0x[0-9a-f]+"), "ADDR"), (re.compile(r"B\d+v\d+B"), "BvB"),
           (re.compile(r"_coop_scratch_\d+|_cudapy_smem_\d+"), "SMEM"), (re.compile(r"\$\d+"), "$N")]
LOCAL = re.compile(r'%"[^"]*"|%[\w.$]+')
GLOBAL = re.compile(r'@"[^"]*"|@[\w.$]+')


def units(ir):
    """The IR's functions, declarations and globals, each one string, counters renamed."""
    found, current = [], None
    for line in ir.splitlines():
        if current is not None:
            current.append(line)
            if line.startswith("}"):
                found.append("\n".join(current))
                current = None
        elif line.startswith("define"):
            current = [line]
        elif line.strip() and not line.startswith(("; ModuleID", "target ", "source_filename")):
            found.append(line)
    for pattern, name in RENAMED:
        found = [pattern.sub(name, unit) for unit in found]
    return sorted(set(found))


def canonical(text, name_blind=False):
    """A dump's units with each unit's local names numbered by first use."""
    result = []
    for unit in text.split("\n\n"):
        names = {}
        unit = LOCAL.sub(lambda match: names.setdefault(match.group(0), f"%v{len(names)}"), unit)
        result.append(GLOBAL.sub("@SYM", unit) if name_blind else unit)
    return sorted(result)


def dump(directory, names):
    import coop  # noqa: F401  (before numba.cuda: the backend)
    import codegen_cases
    from numba.cuda import compiler

    directory = pathlib.Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    seconds = {}
    for name in names or codegen_cases.CASES:
        fn, sig = codegen_cases.CASES[name]
        start = time.perf_counter()
        try:
            args, return_type = compiler.sigutils.normalize_signature(sig)
            result = compiler.compile_cuda(getattr(fn, "py_func", fn), return_type, args, cc=(9, 0))
            text = "\n\n".join(units(result.library.get_llvm_str()))
        except Exception as error:  # (a case that fails to compile is a difference too)
            text = f"ERROR {type(error).__name__}: {error}"
        seconds[name] = time.perf_counter() - start
        (directory / f"{name}.ll").write_text(text)
    (directory / "seconds.json").write_text(json.dumps(seconds, indent=0))
    print(f"{len(seconds)} cases, {sum(seconds.values()):.1f} s")


PTX_REGISTER = re.compile(r"%[a-z]+\d+|\$L__\w+")
PTX_SYMBOL = re.compile(r"\b_Z\w+|\b_cudapy_\w+|\b_coop_\w+")


def ptx_instructions(ptx):
    """A kernel's PTX instructions, one a line, registers and labels numbered by first use,
    symbols renamed; directives and comments dropped."""
    names = {}
    lines = []
    for line in ptx.splitlines():
        line = line.split("//")[0].strip()
        if not line or line.startswith((".", "{", "}", ")", "(")):
            continue
        line = PTX_SYMBOL.sub("SYM", line)
        lines.append(PTX_REGISTER.sub(lambda m: names.setdefault(m.group(0), f"%{m.group(0)[1:2]}{len(names)}"), line))
    return "\n".join(lines)


def ptx(directory, names):
    import coop  # noqa: F401  (before numba.cuda: the backend)
    import codegen_cases
    from numba import cuda

    directory = pathlib.Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    for name in names or codegen_cases.CASES:
        fn, sig = codegen_cases.CASES[name]
        try:
            text = ptx_instructions(cuda.compile_ptx(getattr(fn, "py_func", fn), sig, cc=(9, 0))[0])
        except Exception as error:
            text = f"ERROR {type(error).__name__}: {error}"
        (directory / f"{name}.ptx").write_text(text)
    print(f"{len(names or codegen_cases.CASES)} cases")


def compare(before, after, name_blind):
    before, after = pathlib.Path(before), pathlib.Path(after)
    differ = []
    paths = sorted(before.glob("*.ll")) + sorted(before.glob("*.ptx"))
    for path in paths:
        other = after / path.name
        if not other.exists():
            differ.append(path.name)
        elif path.suffix == ".ptx":
            if path.read_text() != other.read_text():
                differ.append(path.name)
        elif canonical(path.read_text(), name_blind) != canonical(other.read_text(), name_blind):
            differ.append(path.name)
    print(f"{len(paths) - len(differ)} the same, {len(differ)} differ")
    for name in differ:
        print("differs:", name)
    return 1 if differ else 0


def main(argv):
    if len(argv) >= 2 and argv[0] == "dump":
        sys.path.insert(0, str(HERE))
        return dump(argv[1], argv[2:])
    if len(argv) >= 2 and argv[0] == "ptx":
        sys.path.insert(0, str(HERE))
        return ptx(argv[1], argv[2:])
    if len(argv) >= 3 and argv[0] == "compare":
        return compare(argv[1], argv[2], "--name-blind" in argv[3:])
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
