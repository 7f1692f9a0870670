#!/usr/bin/env bash
# Scaling benchmark: strong scaling (fixed scenario: 1 MB permutation on a k = 32 fat tree) and
# weak scaling (hosts grow with ranks × threads) over ranks and threads. Writes a CSV of wall
# time, events/s and parallel efficiency.
#
#   benches/scaling.sh [OUT.csv]
#   RANKS="1 2 4" THREADS="1 2 4" STRONG=scenarios/fat_tree_k32.toml benches/scaling.sh out.csv
#
# Ranks > 1 need the MPI build (cargo build --release --features mpi) and mpirun; set
# MPIRUN="srun" inside a Slurm allocation (see slurm/README.md). WEFT_BIN selects the binary.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-scaling.csv}
bin=${WEFT_BIN:-target/release/weft}
ranks_list=${RANKS:-"1 2 4"}
threads_list=${THREADS:-"1 2 4"}
strong=${STRONG:-scenarios/fat_tree_k32.toml}
mpirun=${MPIRUN:-"mpirun --oversubscribe"}
[ -x "$bin" ] || { echo "build first: cargo build --release --features mpi (or set WEFT_BIN)" >&2; exit 1; }
if [ "$(id -u)" = 0 ]; then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi

# Weak scaling: fat-tree k for a given number of cores (hosts = k^3/4 ≈ 1024 per core).
weak_k() { case $1 in 1) echo 16;; 2) echo 20;; 4) echo 26;; 8) echo 32;; 16) echo 40;; 32) echo 50;; *) echo 64;; esac; }

tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
if [ -n "${JSON_DIR:-}" ]; then mkdir -p "$JSON_DIR"; tmp_keep=$JSON_DIR; else tmp_keep=$tmp; fi
echo "mode,ranks,threads,k,hosts,partitions,wall_s,events,events_per_s,speedup,efficiency,windows,windows_per_sim_us,process_wall_s,sync_wall_s,remote_bytes,peak_rss_bytes" > "$out"

run_one() { # mode ranks threads k scenario
  local mode=$1 r=$2 t=$3 k=$4 scen=$5 json=$tmp_keep/$1-$2-$3.json
  local cmd=("$bin" run "$scen" --set "topology.k=$k" --threads "$t" --json)
  if [ "$r" -gt 1 ]; then cmd=($mpirun -n "$r" "${cmd[@]}"); fi
  echo "== $mode: ranks $r, threads $t, k $k: ${cmd[*]}" >&2
  "${cmd[@]}" > "$json"
  python3 - "$json" "$mode" "$r" "$t" "$k" "$out" <<'PY'
import json, sys, csv
path, mode, r, t, k, out = sys.argv[1:]
d = json.load(open(path)); res, run = d["results"], d["run"]
base_file = path.rsplit("/", 1)[0] + f"/{mode}-1-1.json"
b = json.load(open(base_file))["run"]
cores = int(r) * int(t)
if mode == "strong":
    speedup = b["wall_s"] / run["wall_s"]
    eff = speedup / cores
else:  # weak: events/s per core relative to one core
    speedup = run["events_per_s"] / b["events_per_s"]
    eff = speedup / cores
csv.writer(open(out, "a")).writerow([mode, r, t, k, res["hosts"], run["partitions"], f'{run["wall_s"]:.3f}',
    res["events"], f'{run["events_per_s"]:.0f}', f"{speedup:.3f}", f"{eff:.3f}", run["windows"],
    f'{run["windows_per_sim_us"]:.3f}', f'{run["process_wall_s"]:.3f}', f'{run["sync_wall_s"]:.3f}',
    run["remote_bytes"], run["peak_rss_bytes"]])
PY
}

strong_k=$(sed -n 's/^k *= *\([0-9]*\).*/\1/p' "$strong" | head -1)
for r in $ranks_list; do for t in $threads_list; do
  run_one strong "$r" "$t" "${strong_k:-32}" "$strong"
done; done
for r in $ranks_list; do for t in $threads_list; do
  run_one weak "$r" "$t" "$(weak_k $((r * t)))" "$strong"
done; done
column -s, -t < "$out" >&2 || cat "$out" >&2
echo "wrote $out" >&2
plot_args=("$out" "${out%.csv}.svg")
if [ "${MODEL:-0}" = 1 ]; then
  model_json=()
  for r in $ranks_list; do [ -f "$tmp_keep/strong-$r-1.json" ] && model_json+=("$tmp_keep/strong-$r-1.json"); done
  python3 benches/scaling_model.py "${model_json[@]}" --ranks "${MODEL_RANKS:-1,2,4,8,16,64,256,1024}" \
    --out "${out%.csv}-model.csv"
  plot_args+=("${out%.csv}-model.csv")
  echo "wrote ${out%.csv}-model.csv" >&2
fi
python3 benches/scaling_plot.py "${plot_args[@]}"
echo "wrote ${out%.csv}.svg" >&2
