#!/bin/bash
# Runs UEC htsim and weft on perm_128_2mb.cm with the same set-up (uec_nscc.toml) for a
# range of seeds and prints, per seed, the collective completion time (last flow finished,
# from t = 0) and the median flow completion time of each.
#
#   scenarios/htsim/compare.sh PATH/TO/htsim_uec [SEEDS]      (default seeds: 1..10)
#
# htsim_uec is UEC htsim's `htsim/sim/datacenter` binary (github.com/ultraethernet/uet-htsim,
# built with CMake); weft is built here with cargo. The seeds of the two simulators drive
# different random streams, so compare distributions over seeds, not single runs.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
htsim=${1:?usage: compare.sh PATH/TO/htsim_uec [SEEDS]}
seeds=${2:-$(seq 1 10)}
out=$(mktemp -d)
cd "$here/../.."
cargo build --release --quiet
for s in $seeds; do
  "$htsim" -nodes 128 -tm "$here/perm_128_2mb.cm" -sender_cc_only -sender_cc_algo nscc \
    -load_balancing_algo oblivious -seed "$s" -end 100000 -o "$out/h$s.dat" > "$out/h$s.out" 2>&1
  target/release/weft run "$here/uec_nscc.toml" --set seed="$s" --json > "$out/w$s.json"
done
python3 - "$out" $seeds <<'PY'
import json, math, statistics as st, sys, re
out, seeds = sys.argv[1], sys.argv[2:]
hc, wc = [], []
print("seed  htsim CCT us  p50 FCT us  |  weft CCT us  p50 FCT us")
for s in seeds:
    f = sorted(float(m.group(1)) for m in re.finditer(r"finished at ([0-9.]+)", open(f"{out}/h{s}.out").read()))
    w = json.load(open(f"{out}/w{s}.json"))["results"]
    p50 = f[max(1, math.ceil(len(f) / 2)) - 1]
    hc.append(f[-1]); wc.append(w["cct_ns"] / 1000)
    print(f"{s:>4}  {f[-1]:>12.1f}  {p50:>10.1f}  |  {w['cct_ns']/1000:>11.1f}  {w['fct_ns']['p50']/1000:>10.1f}  ({len(f)} htsim flows)")
print(f"mean  {st.mean(hc):>12.1f}              |  {st.mean(wc):>11.1f}")
PY
rm -rf "$out"
