#!/usr/bin/env bash
# FCT percentiles of one phase's flows up to a size, split by arrival time: for the combined
# workload (Fig. 10), the websearch flows that arrive before the shuffle against those that
# arrive while it runs.
#   scenarios/opera/fct_by_arrival.sh DIR [SPLIT_US] [MAX_BYTES] [PHASE]
# DIR: the --out folder of a run with `report.flow_log = true` (flows.csv), e.g.
#   weft run scenarios/opera/combined_opera.toml --set report.flow_log=true --out out/comb
# Defaults: SPLIT_US 100000 (the shuffle's start), MAX_BYTES 10000, PHASE poisson.
# Prints, for arrivals before and from SPLIT_US: the flows, and the 50th and 99th-percentile
# FCT in µs (nearest rank: the smallest FCT with at least that share of the flows at or
# below it, as the HDR histograms of summary.json, without their 3-digit rounding).
set -euo pipefail
dir=${1:?usage: fct_by_arrival.sh DIR [SPLIT_US] [MAX_BYTES] [PHASE]}
split_us=${2:-100000}
max_bytes=${3:-10000}
phase=${4:-poisson}
csv=$dir/flows.csv
[ -f "$csv" ] || { echo "$csv: no such file (run with --set report.flow_log=true --out $dir)" >&2; exit 1; }
head -1 "$csv" | grep -qx 'src,index,dst,bytes,start_ps,fct_ps,phase' \
  || { echo "$csv: not a weft flows.csv" >&2; exit 1; }
for side in before after; do
  awk -F, -v s="$side" -v split_ps="${split_us}000000" -v max="$max_bytes" -v ph="$phase" \
    'NR > 1 && $7 == ph && $4 <= max && ((s == "before") == ($5 < split_ps)) { print $6 }' "$csv" \
    | sort -n \
    | awk -v s="$side" -v us="$split_us" '{ v[NR] = $1 }
      END {
        label = (s == "before" ? "arrived before " : "arrived from   ") us " us"
        if (NR == 0) { printf "%s: no flows\n", label; exit }
        r50 = int((NR * 50 + 99) / 100); r99 = int((NR * 99 + 99) / 100)
        printf "%s: %d flows, FCT p50 %.1f us, p99 %.1f us\n", label, NR, v[r50] / 1e6, v[r99] / 1e6
      }'
done
