#!/bin/bash
# Speed of UEC htsim against weft on the same traffic: a 1 MB (1 048 576 B) random
# permutation (every host sends to one other host, no host to itself, all at t = 0) at
# k = 16 (1 024 hosts) and k = 32 (8 192 hosts), every sender with a constant window.
# Prints, per k and simulator, the wall and user time, the peak RSS, the collective
# completion time (last flow finished, from t = 0) and the median flow completion time,
# then the ratios htsim / weft of wall time and peak RSS. One run of each.
#
#   scenarios/htsim/speed.sh PATH/TO/htsim_uec [KS]            (default KS: "16 32")
#
# KEEP=1 keeps the temporary folder (matrices, htsim's stdout, weft's summary.json, times).
# htsim_uec is UEC htsim's datacenter binary (main_uec.cpp; github.com/ultraethernet/uet-htsim,
# built with CMake in Release: cmake -S htsim/sim -B build -DCMAKE_BUILD_TYPE=Release &&
# make -C build htsim_uec). weft is built here with cargo. Both run on one thread.
#
# Set-up: uec_nscc.toml (htsim_uec's defaults, matched field by field; see its header) with
# the CC replaced by a constant window:
#   htsim_uec -nodes N -tm perm_N_1mb.cm -sender_cc_only -sender_cc_algo constant \
#             -load_balancing_algo oblivious -seed 13 -end 100000 -o FILE
#   weft run uec_nscc.toml --threads 1 --json --set topology.k=K \
#             --set workload.file="ABS/perm_N_1mb.cm" --set host.cc="constant" \
#             --set host.window_bdp=1.5
# htsim's `constant` keeps the window NSCC starts from (initNscc with -cwnd unset:
# cwnd = maxwnd = 1.5 x BDP, BDP = the 14.02 us network RTT x 100 Gb/s = 175 284 B, so
# 262 926 B) and never moves it on ACKs or NACKs (only a retransmission timeout takes a
# packet off it, uec.cpp mark_packet_for_retransmission); weft's window_bdp = 1.5 is 1.5 x the same
# BDP (line rate x base RTT of the longest path, data out and an ACK back). The matrices
# are generated here (python3, fixed seed 1) into a temporary folder, and the scenario's
# other fields stay those of uec_nscc.toml (the 3-tier RTT and so the queue sizes, ECN
# thresholds and RTO do not change with k).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
htsim=$(realpath "${1:?usage: speed.sh PATH/TO/htsim_uec [KS]}")
ks=${2:-16 32}
out=$(mktemp -d)
if [ -n "${KEEP:-}" ]; then echo "raw outputs kept in $out" >&2; else trap 'rm -rf "$out"' EXIT; fi
cd "$here/../.."
cargo build --release --quiet
weft=$PWD/target/release/weft

# The permutations: a uniformly random derangement of the N hosts (rejection sampling over
# shuffles, Python's Mersenne Twister seeded with 1), htsim's connection-matrix format.
for k in $ks; do
  n=$((k * k * k / 4))
  python3 - "$n" "$out/perm_${n}_1mb.cm" <<'PY'
import random, sys
n, path = int(sys.argv[1]), sys.argv[2]
rng = random.Random(1)
dst = list(range(n))
while True:
    rng.shuffle(dst)
    if all(d != s for s, d in enumerate(dst)):
        break
with open(path, "w") as f:
    f.write(f"Nodes {n}\nConnections {n}\n")
    for s, d in enumerate(dst):
        f.write(f"{s}->{d} id {s + 1} start 0 size 1048576\n")
PY
done

for k in $ks; do
  n=$((k * k * k / 4))
  cm=$out/perm_${n}_1mb.cm
  hcmd=("$htsim" -nodes "$n" -tm "$cm" -sender_cc_only -sender_cc_algo constant
        -load_balancing_algo oblivious -seed 13 -end 100000 -o "$out/h$k.dat")
  wcmd=("$weft" run "$here/uec_nscc.toml" --threads 1 --json --set topology.k="$k"
        --set workload.file="\"$cm\"" --set host.cc='"constant"' --set host.window_bdp=1.5)
  echo "k=$k htsim: ${hcmd[*]}" >&2
  /usr/bin/time -f "%e %U %M" -o "$out/h$k.time" "${hcmd[@]}" > "$out/h$k.out" 2>&1 ||
    echo "k=$k: htsim exited with status $?" >&2
  echo "k=$k weft:  ${wcmd[*]}" >&2
  /usr/bin/time -f "%e %U %M" -o "$out/w$k.time" "${wcmd[@]}" > "$out/w$k.json" 2> "$out/w$k.err" ||
    { echo "k=$k: weft exited with status $?" >&2; cat "$out/w$k.err" >&2; exit 1; }
done

python3 - "$out" $ks <<'PY'
import json, math, re, sys
out, ks = sys.argv[1], sys.argv[2:]
def tm(p):  # the last line: GNU time's "%e %U %M" (an error above it is kept in the file)
    e, u, m = open(p).read().split("\n")[-2].split()
    return float(e), float(u), int(m) / 1024
print(f"{'k':>3} {'hosts':>6}  {'sim':<6}{'wall s':>9}{'user s':>9}{'RSS MB':>9}"
      f"{'CCT us':>10}{'p50 FCT us':>12}{'flows':>7}")
rows, work = [], []
for k in ks:
    n = int(k) ** 3 // 4
    f = sorted(float(m.group(1)) for m in
               re.finditer(r"finished at ([0-9.e+]+)", open(f"{out}/h{k}.out").read()))
    h = tm(f"{out}/h{k}.time")
    hp50 = f[max(1, math.ceil(len(f) / 2)) - 1] if f else float("nan")
    print(f"{k:>3} {n:>6}  {'htsim':<6}{h[0]:>9.2f}{h[1]:>9.2f}{h[2]:>9.1f}"
          f"{(f[-1] if f else float('nan')):>10.1f}{hp50:>12.1f}{len(f):>7}")
    r = json.load(open(f"{out}/w{k}.json"))["results"]
    w = tm(f"{out}/w{k}.time")
    print(f"{k:>3} {n:>6}  {'weft':<6}{w[0]:>9.2f}{w[1]:>9.2f}{w[2]:>9.1f}"
          f"{r['cct_ns'] / 1000:>10.1f}{r['fct_ns']['p50'] / 1000:>12.1f}"
          f"{r['flows']['completed']:>7}")
    rows.append((k, h[0] / w[0], h[2] / w[2]))
    m = re.search(r"New: (\d+) Rtx: (\d+) RTS: (\d+) Bounced: (\d+) ACKs: (\d+) NACKs: (\d+)",
                  open(f"{out}/h{k}.out").read())
    pk, run = r["packets"], json.load(open(f"{out}/w{k}.json"))["run"]
    work.append(f"k={k} htsim: " + (f"new {m[1]}, rtx {m[2]}, RTS {m[3]}, bounced {m[4]}, "
                f"ACKs {m[5]}, NACKs {m[6]}" if m else "no stats line (run cut short?)"))
    work.append(f"k={k} weft:  data sent {pk['data_sent']} (rtx {pk['retransmissions']}), "
                f"trimmed {pk['trimmed']}, NACKs {pk['nacks_sent']}, ACKs {pk['acks_sent']}, "
                f"timeouts {pk['timeouts']}, events {r['events']}, partitions {run['partitions']}, "
                f"ended {r['ended']}")
print()
print("\n".join(work))
print()
for k, wall, rss in rows:
    print(f"k={k}: htsim/weft wall time {wall:.2f}x, peak RSS {rss:.2f}x")
PY
