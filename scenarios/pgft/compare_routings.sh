#!/bin/sh
# The seed's example: C_topo of every static routing on every pattern (`weft contention`), at
# the PGFT routing paper's scope (the top-level switches' ports, `--scope top`) and at every
# port (`--scope all`, where a leaf's up ports carry its 7 sources), printed top/all; the
# per-route Random's distribution over 100 draws; then the packet-level CCT of the compute →
# I/O matrix under each routing (and ECMP; the simulator's `random` is the per-destination
# table). Run from the repository root after `cargo build --release`; docs/guide/src/fabrics.md
# "PGFT routing" holds the figures.
set -e
W=${WEFT:-target/release/weft}
S=scenarios/pgft/seed_example.toml
c_topo() { $W contention $S --routing $1 --pattern $2 --scope $3 | awk '/^C_topo [0-9]/{print $2}'; }
echo "C_topo, scope top/all"
printf "%-16s" routing
for p in all-to-all compute-io io-compute permutation shift; do printf "%13s" $p; done
echo
for r in dmodk smodk gdmodk gsmodk random random_per_dest; do
    printf "%-16s" $r
    for p in all-to-all compute-io io-compute permutation shift; do
        printf "%13s" "$(c_topo $r $p top)/$(c_topo $r $p all)"
    done
    echo
done
for r in random random_per_dest; do
    $W contention $S --routing $r --pattern compute-io --draws 100 | sed -n '1,5p'
done
for r in dmodk smodk gdmodk gsmodk random ecmp; do
    printf "%-8s " $r
    $W run $S --set lb.policy=$r | grep '^CCT'
done
