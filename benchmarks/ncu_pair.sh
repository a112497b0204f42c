#!/usr/bin/env bash
# Profile one benchmark kernel, coop's and CUB's, with Nsight Compute, side by side: the
# evidence for a throughput gap (BENCHMARKS.md, "Where targets are missed, and why").
#
#   bash benchmarks/ncu_pair.sh SPEC [OUTDIR]
#
# SPEC is a kernel spec of benchmarks/coop_tiles.py (exclusive_sum:int32:256:4,
# copy:int32:512:8:warp_transpose_timesliced). Runs on a GPU machine with nvcc and ncu
# ($CCCL_INCLUDE: the CUB headers); builds the CUB side for that kernel alone; writes
# OUTDIR/{coop,cub}.csv (ncu --csv --page details) and prints the metrics that differ.
set -euo pipefail
spec=$1
out=${2:-ncu-$(echo "$spec" | tr ':' '-')}
mkdir -p "$out"
cd "$(dirname "$0")/.."
IFS=: read -r kernel dtype threads items algorithm <<<"$spec"
work=$(mktemp -d)
python3 benchmarks/coop_tiles.py generate "$work/modules" >/dev/null
nvcc -O3 -std=c++17 -arch=sm_90 -I"${CCCL_INCLUDE:?}" benchmarks/cub_tiles.cu -o "$work/cub_tiles"
section=collectives
[ -n "${algorithm:-}" ] && section=data-movement
sections=(--section SpeedOfLight --section MemoryWorkloadAnalysis --section MemoryWorkloadAnalysis_Tables
          --section ComputeWorkloadAnalysis --section LaunchStats --section Occupancy
          --section SchedulerStats --section WarpStateStats --section InstructionStats)
# the timed launches come after warm-ups: profile one launch past them
common=(--kernel-name regex:tile_ --launch-skip 5 --launch-count 1 --csv --page details "${sections[@]}")
ncu "${common[@]}" python3 benchmarks/coop_tiles.py time "$work/modules" --log2n 26 \
    --section "$section" --kernels "$spec" > "$out/coop.csv"
ncu "${common[@]}" "$work/cub_tiles" 26 "${threads}x${items}" --section "$section" \
    --kernels "$spec" > "$out/cub.csv"
python3 - "$out/coop.csv" "$out/cub.csv" <<'PY'
import csv, sys

def metrics(path):
    rows = [line for line in open(path) if line.startswith('"')]
    table = {}
    for row in csv.DictReader(rows):
        table[(row["Section Name"], row["Metric Name"], row["Metric Unit"])] = row["Metric Value"]
    return table

coop, cub = metrics(sys.argv[1]), metrics(sys.argv[2])
print(f"{'section':28} {'metric':48} {'unit':10} {'coop':>14} {'CUB':>14}")
for key in coop:
    if key in cub and coop[key] != cub[key]:
        section, name, unit = key
        print(f"{section[:28]:28} {name[:48]:48} {unit[:10]:10} {coop[key]:>14} {cub[key]:>14}")
PY
rm -rf "$work"
