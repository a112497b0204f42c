"""Plot benchmarks/device.py's results: throughput against n, one panel per algorithm.

    python benchmarks/plot_device.py [RESULTS] [--out FILE] [--device NAME] [--date DATE]

RESULTS: a device.jsonl written by benchmarks/device.py (default
benchmarks/results_device_h100.jsonl). Writes FILE (default benchmarks/device.svg; the
format is the suffix's, so ``--out /tmp/d.png`` gives a PNG) with matplotlib: for each
algorithm in the file a panel of GB/s (the rows' ``gbytes``: the CUB side's nominal bytes
read and written per call / the median seconds per call) against log2 n, log scale, for
coop (blue), CUB (black) and CuPy (orange); int32 and uint32 solid, float32 dashed. For the
sorts, coop's rows time a copy of the input and the sort (benchmarks/device.py's docstring
says why): a dotted coop line is the sort alone, its time less the copy's (the "copy"
rows). A red cross marks a row whose check failed. The title names the device and the
date: ``--device`` / ``--date``, else the rows' "device" / "date" if they have them, else the
device from the file's name (results_device_h100.jsonl: H100) and the date of the file's
last commit (its modification time if it has none).
"""

import argparse
import collections
import datetime
import json
import math
import pathlib
import subprocess
import sys

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from device import ALGORITHMS, COPY, DTYPES  # noqa: E402  (names, order, byte counts; no GPU module imported)

IMPLS = {"coop": ("coop", "tab:blue"), "cub": ("CUB", "black"), "cupy": ("CuPy", "tab:orange")}
STYLES = {"int32": "-", "uint32": "-", "float32": "--"}


def title_of(path, rows, device, date):
    """The figure's title: the device and the date, from the arguments, the rows or the file."""
    device = device or next((r["device"] for r in rows if r.get("device")), None)
    if device is None:
        stem = path.stem.removeprefix("results_device").strip("_")
        device = stem.upper() if stem else "unnamed device"
    date = date or next((r["date"] for r in rows if r.get("date")), None)
    if date is None:
        try:
            date = subprocess.run(["git", "log", "-1", "--format=%cs", "--", path.name], cwd=path.parent,
                                  capture_output=True, text=True, check=True).stdout.strip()
        except (OSError, subprocess.CalledProcessError):
            date = ""
        date = date or datetime.date.fromtimestamp(path.stat().st_mtime).isoformat()
    return f"coop.device against CUB and CuPy: {device}, {date}"


def series(rows):
    """{(algorithm, impl, dtype): [(log2 n, GB/s, ok)]} sorted by n; coop's sorts also as
    impl "sort only" (their time less the copy's)."""
    lines = collections.defaultdict(list)
    by_key = {(r["impl"], r["algorithm"], r["dtype"], r["n"]): r for r in rows}
    for r in rows:
        if r["impl"] not in IMPLS or r["algorithm"] not in ALGORITHMS or not r.get("gbytes"):
            continue
        log2n = math.log2(r["n"])
        lines[r["algorithm"], r["impl"], r["dtype"]].append((log2n, r["gbytes"], r["check"] == "ok"))
        copy = by_key.get(("copy", r["algorithm"] + COPY, r["dtype"], r["n"]))
        if r["impl"] == "coop" and copy and copy.get("seconds") and r["seconds"] > copy["seconds"]:
            seconds = r["seconds"] - copy["seconds"]
            lines[r["algorithm"], "sort only", r["dtype"]].append(
                (log2n, ALGORITHMS[r["algorithm"]][1](r["n"], 0) / seconds * 1e-9,
                 r["check"] == copy["check"] == "ok"))
    return {key: sorted(points) for key, points in lines.items()}


def plot(rows, out, title):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D

    plt.rcParams["svg.hashsalt"] = "coop"  # (the same SVG for the same data)
    plt.rcParams["svg.fonttype"] = "none"  # (text as text: smaller, searchable)
    lines = series(rows)
    algorithms = [a for a in ALGORITHMS if any(key[0] == a for key in lines)]
    if not algorithms:
        raise SystemExit("no rows with a throughput in the file")
    columns = min(3, len(algorithms))
    rows_of_panels = -(-len(algorithms) // columns)
    figure, axes = plt.subplots(rows_of_panels, columns, figsize=(4.6 * columns, 3.6 * rows_of_panels + 0.9),
                                squeeze=False)
    for axis, algorithm in zip(axes.flat, algorithms):
        for (name, impl, dtype), points in lines.items():
            if name != algorithm:
                continue
            x, y, ok = zip(*points)
            color = IMPLS["coop" if impl == "sort only" else impl][1]
            style = ":" if impl == "sort only" else STYLES.get(dtype, "-.")
            axis.plot(x, y, style, color=color, marker="o", markersize=3.5, linewidth=1.5)
            bad = [(a, b) for a, b, good in points if not good]
            if bad:
                axis.plot(*zip(*bad), "x", color="red", markersize=9, markeredgewidth=2)
        dtypes = sorted({key[2] for key in lines if key[0] == algorithm}, key=DTYPES.index)
        axis.set_title(f"{algorithm} ({', '.join(dtypes)})", fontsize=10)
        axis.set_yscale("log")
        axis.set_xlabel("log2 n")
        axis.set_ylabel("GB/s")
        axis.grid(True, which="major", alpha=0.4)
        axis.grid(True, which="minor", alpha=0.15)
        axis.xaxis.set_major_locator(matplotlib.ticker.MaxNLocator(integer=True))
    for axis in axes.flat[len(algorithms):]:
        axis.set_visible(False)

    legend = [Line2D([], [], color=color, marker="o", markersize=3.5, label=label) for label, color in IMPLS.values()]
    legend += [Line2D([], [], color="gray", linestyle="-", label="int32 / uint32"),
               Line2D([], [], color="gray", linestyle="--", label="float32")]
    if any(key[1] == "sort only" for key in lines):
        legend.append(Line2D([], [], color=IMPLS["coop"][1], linestyle=":", label="coop sort only (less its copy)"))
    if any(not good for points in lines.values() for _, _, good in points):
        legend.append(Line2D([], [], color="red", marker="x", linestyle="", label="check failed"))
    figure.legend(handles=legend, loc="upper center", ncol=len(legend), fontsize=9, frameon=False,
                  bbox_to_anchor=(0.5, 1 - 0.55 / figure.get_figheight()))
    figure.suptitle(title, fontsize=12, y=1 - 0.12 / figure.get_figheight())
    figure.text(0.5, 0.01, "GB/s: the nominal bytes read and written per call (as benchmarks/cub_device.cu counts "
                "them) / the median of 20 calls, each timed whole", ha="center", fontsize=8, color="dimgray")
    figure.tight_layout(rect=(0, 0.03, 1, 1 - 0.7 / figure.get_figheight()))
    figure.savefig(out, metadata={"Date": None} if str(out).endswith(".svg") else None)
    plt.close(figure)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("results", nargs="?", default=str(HERE / "results_device_h100.jsonl"),
                        help="device.jsonl of benchmarks/device.py (default: benchmarks/results_device_h100.jsonl)")
    parser.add_argument("--out", default=str(HERE / "device.svg"), help="default: benchmarks/device.svg")
    parser.add_argument("--device", help="the device named in the title (default: from the rows or the file's name)")
    parser.add_argument("--date", help="the date in the title (default: from the rows or the file's last commit)")
    args = parser.parse_args(argv)

    path = pathlib.Path(args.results)
    with open(path) as f:
        rows = [json.loads(line) for line in f if line.strip()]
    plot(rows, args.out, title_of(path, rows, args.device, args.date))
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
