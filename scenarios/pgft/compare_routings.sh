#!/bin/sh
# The seed's example: C_topo of every static routing on every pattern (`weft contention`), then
# the packet-level CCT of the compute → I/O matrix under each routing (and ECMP). Run from the
# repository root after `cargo build --release`; README.md "PGFT routing" holds the figures.
set -e
W=${WEFT:-target/release/weft}
S=scenarios/pgft/seed_example.toml
printf "%-8s" routing
for p in all-to-all compute-io io-compute permutation shift; do printf "%13s" $p; done
echo
for r in dmodk smodk gdmodk gsmodk random; do
    printf "%-8s" $r
    for p in all-to-all compute-io io-compute permutation shift; do
        c=$($W contention $S --routing $r --pattern $p | sed -n 's/^C_topo //p')
        printf "%13s" "$c"
    done
    echo
done
for r in dmodk smodk gdmodk gsmodk random ecmp; do
    printf "%-8s " $r
    $W run $S --set lb.policy=$r | grep '^CCT'
done
