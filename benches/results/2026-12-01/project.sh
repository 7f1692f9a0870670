#!/bin/bash
# Regenerates this folder's model outputs from runs/ (measured 2026-12-01, see docs/guide/src/performance.md
# "Scaling"). Needs a release build of weft (WEFT_BIN, default target/release/weft) for
# `weft partition` and `weft validate` on the target scenarios.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd); repo=$(cd "$here/../../.." && pwd)
cd "$here/runs"
M=$repo/benches/scaling_model.py; export WEFT_BIN=${WEFT_BIN:-$repo/target/release/weft}
S=$repo/scenarios; O=$here
trap 'rm -f k64-r1-node_events.csv' EXIT
gunzip -c k64-r1-node_events.csv.gz > k64-r1-node_events.csv
CL="--alpha-us 1 --beta-us 2 --gamma-us 2 --delta-ns 0.1"
K32="k32-r1.json k32-r1-b.json k32-r1-c.json k32-r1-d.json k32-r2.json k32-r2-b.json k32-r2-c.json k32-r2-d.json k32-r3.json k32-r4.json"
T64="--process-fit one-rank --target-scenario $S/fat_tree_k64.toml --weights k64-r1-node_events.csv --calib-ports 49152 --target-events 400586752 --target-windows 37 --target-setup-s 0.19"
python3 $M $K32 --cores 2 $T64 --out $O/k64-model-here.csv 2> $O/k64-model-here.txt
python3 $M $K32 --cores 2 $T64 $CL --out $O/k64-model-cluster.csv 2> $O/k64-model-cluster.txt
RING="ring-r1.json ring512-r1.json ring-r2.json ring-r4.json"
TR="--process-fit one-rank --target-scenario $S/ai/llama3_405b_fsdp2_65k_ring.toml --calib-ports 6144 --target-events 3.07e11 --target-windows 70800"
python3 $M $RING --cores 2 $TR --out $O/ring65k-model-here.csv 2> $O/ring65k-model-here.txt
python3 $M $RING --cores 2 $TR $CL --out $O/ring65k-model-cluster.csv 2> $O/ring65k-model-cluster.txt
python3 $M $K32 --cores 2 --process-fit one-rank --ranks 1,2,4,8,16 $CL --out $O/k32-model-cluster.csv 2> $O/k32-model-cluster.txt
python3 $repo/benches/scaling_plot.py $O/scaling-k32.csv $O/scaling-k32.svg $O/k32-model-cluster.csv
