#!/usr/bin/env bash
# Load sweeps of Opera's evaluation (NSDI'20 Fig. 7 and 9) on Opera and its static baselines.
#   scenarios/opera/sweep.sh websearch|datamining [LOADS...]   (default loads: 0.01 0.05 0.1 0.2 0.25)
# Runs WORKLOAD_{opera,expander,clos}.toml at each load (`--set workload.load=L`), writes
# out/opera-sweep/<scenario>-<load>/ and prints, per run, the 50th and 99th-percentile FCT of
# each flow-size decade, the bandwidth tax and the wall time.
# WEFT_BIN selects the binary (default: target/release/weft).
set -euo pipefail
cd "$(dirname "$0")/../.."
workload=${1:?usage: sweep.sh websearch|datamining [LOADS...]}
shift
loads=${*:-0.01 0.05 0.1 0.2 0.25}
bin=${WEFT_BIN:-target/release/weft}
out=out/opera-sweep
mkdir -p "$out"
for fabric in opera expander clos; do
  scenario=scenarios/opera/${workload}_${fabric}.toml
  [ -f "$scenario" ] || { echo "no $scenario" >&2; exit 1; }
  for load in $loads; do
    dir=$out/${workload}_${fabric}-$load
    "$bin" run "$scenario" --set workload.load="$load" --out "$dir" > "$dir.log"
    python3 - "$dir/summary.json" "$fabric" "$load" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
r, run = s["results"], s["run"]
bins = " ".join(
    f"<={b['max_bytes'] or 'inf'}:{b['count']}/{b['p50']/1e3:.0f}/{b['p99']/1e3:.0f}us"
    for b in r["fct_by_size"] if b["count"])
print(f"{sys.argv[2]:9} load {sys.argv[3]:5} flows {r['flows']['completed']}/{r['flows']['total']} "
      f"tax {r['bandwidth_tax'] or 0:.2f} wall {run['wall_s']:.1f}s  [size:count/p50/p99] {bins}")
PY
  done
done
