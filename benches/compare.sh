#!/usr/bin/env bash
# Side-by-side speed check: builds a reference commit and HEAD's working tree, runs a fixed set
# of scenarios with both binaries, alternating (ref, head, ref, head, ...: this machine's speed
# drifts by up to 2x from one day to the next, so only ratios measured in one sitting count),
# and prints per scenario the ratios HEAD / REF of events per second, wall time and peak RSS
# (medians over the pairs), and whether the two binaries' `results` are byte-identical.
#
#   benches/compare.sh REF                    # e.g. b971803 (the foundation), main, HEAD~1
#   RUNS=5 benches/compare.sh REF             # pairs per scenario (default 3)
#   SCENARIOS="scenarios/quickstart.toml" benches/compare.sh REF
#   QUICK=1 benches/compare.sh REF            # small scenarios only (a minute here)
#
# Every run is one thread (`--threads 1`), so the ratios measure per-core speed. The reference
# is built in a detached worktree under ${COMPARE_DIR:-/tmp/weft-compare}/REF (kept, so a
# second comparison against the same commit does not rebuild it). A scenario the reference
# does not have (a file added since) is skipped with a note.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ $# -ne 1 ]; then
  sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
fi
ref=$1
runs=${RUNS:-3}
sha=$(git rev-parse --verify --quiet "$ref^{commit}") || { echo "error: $ref: not a commit" >&2; exit 1; }
short=${sha:0:10}
base=${COMPARE_DIR:-/tmp/weft-compare}
wt=$base/$short
if [ -n "${SCENARIOS:-}" ]; then
  scenarios=$SCENARIOS
elif [ -n "${QUICK:-}" ]; then
  scenarios="scenarios/quickstart.toml scenarios/ofan/cc/nscc_ofan.toml scenarios/ai/ring_allreduce_k8.toml"
else
  # The issue's set: k = 32 no-CC permutation, k = 32 NSCC permutation, the 256-GPU FSDP2 ring
  # (8B, ring mode, `--set workload.gpus=256`), the Opera shuffle on its 648 hosts.
  scenarios="scenarios/fat_tree_k32.toml scenarios/fat_tree_k32.toml@host.cc=nscc scenarios/ai/llama3_8b_fsdp2_1024_ring.toml@workload.gpus=256 scenarios/opera/shuffle_opera.toml"
fi

echo "== building HEAD (working tree)"
cargo build --release --quiet
head_bin=$base/head-weft
mkdir -p "$base"
cp target/release/weft "$head_bin"
if [ ! -x "$wt/target/release/weft" ]; then
  echo "== building $ref ($short) in $wt"
  [ -d "$wt" ] || git worktree add --detach --quiet "$wt" "$sha"
  (cd "$wt" && CARGO_TARGET_DIR="$wt/target" cargo build --release --quiet)
fi
ref_bin=$wt/target/release/weft
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

# One run: prints "events_per_s wall_s peak_rss_bytes" and leaves its summary.json in $4.
run() { # bin scenario-file set-or-empty outdir
  local sets=()
  [ -n "$3" ] && sets=(--set "$3")
  "$1" run "$2" --threads 1 "${sets[@]}" --out "$4" >/dev/null 2>"$4.err" ||
    { echo "error: $1 run $2 ${sets[*]} failed: $(head -1 "$4.err")" >&2; return 1; }
  python3 - "$4/summary.json" <<'EOF'
import json, sys
run = json.load(open(sys.argv[1]))["run"]
print(run["events_per_s"], run["wall_s"], run["peak_rss_bytes"])
EOF
}

printf '%-58s %9s %9s %9s %s\n' "scenario (HEAD / $short, medians of $runs pairs)" "events/s" "wall" "peak RSS" "results"
for item in $scenarios; do
  file=${item%%@*}
  set_arg=""
  [ "$item" != "$file" ] && set_arg=${item#*@}
  if ! git -C "$wt" cat-file -e "HEAD:$file" 2>/dev/null; then
    echo "$item: not in $short, skipped"
    continue
  fi
  : >"$tmp/pairs"
  for i in $(seq 1 "$runs"); do
    r=$(run "$ref_bin" "$wt/$file" "$set_arg" "$tmp/ref-$i")
    h=$(run "$head_bin" "$file" "$set_arg" "$tmp/head-$i")
    echo "$r $h" >>"$tmp/pairs"
  done
  same=identical
  python3 - "$tmp/ref-1/summary.json" "$tmp/head-1/summary.json" <<'EOF' || same=DIFFERENT
import json, sys
a, b = (json.load(open(p))["results"] for p in sys.argv[1:])
sys.exit(0 if a == b else 1)
EOF
  python3 - "$tmp/pairs" "$item" "$same" <<'EOF'
import statistics, sys
pairs = [list(map(float, l.split())) for l in open(sys.argv[1])]
ratio = lambda i: statistics.median(p[3 + i] / p[i] for p in pairs)
print(f"{sys.argv[2]:<58} {ratio(0):9.3f} {ratio(1):9.3f} {ratio(2):9.3f} {sys.argv[3]}")
EOF
done
echo "(events/s above 1: HEAD is faster; wall and peak RSS below 1: HEAD is faster / smaller)"
