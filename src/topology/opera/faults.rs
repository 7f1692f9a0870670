//! Opera's fault tolerance (the Opera paper, §3.6.2 and §5.5, Fig. 11):
//! which rack pairs stay connected, superslice by superslice, when ToR uplinks (links), whole
//! ToRs or whole rotor switches fail. A failed uplink (rack r, rotor b) carries none of rotor
//! b's circuits at rack r; a failed rotor carries no circuit; a failed ToR's rack leaves the
//! pairs counted. Connectivity is over the low-latency graph of each superslice (the rotors
//! stable for the whole superslice, `Schedule::stable_rotors`), any number of hops: the paths
//! packets could take after the failures are learned (the paper: within two cycles).
//!
//! Failures are drawn as exact counts (round(fraction × total)) of uniformly random distinct
//! elements from `rng::stream(seed, draw, Purpose::OperaFaults)`.

use super::Opera;
use crate::rng::{stream, Purpose};
use rand::seq::index::sample;

/// Failed elements; index = rack · u + rotor for uplinks.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Faults {
    pub uplinks: Vec<bool>,
    pub tors: Vec<bool>,
    pub rotors: Vec<bool>,
}

/// Shares of uplinks, ToRs and rotors that fail, each in [0, 1].
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct FaultShares {
    pub links: f64,
    pub tors: f64,
    pub rotors: f64,
}

/// Connectivity of one failure draw: per superslice, the share of ordered pairs of live racks
/// joined by a path of live circuits.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Connectivity {
    pub per_superslice: Vec<f64>,
}

impl Connectivity {
    pub(crate) fn worst(&self) -> f64 {
        self.per_superslice.iter().copied().fold(1.0, f64::min)
    }
    pub(crate) fn mean(&self) -> f64 {
        self.per_superslice.iter().sum::<f64>() / self.per_superslice.len().max(1) as f64
    }
}

fn pick(total: usize, share: f64, rng: &mut rand_pcg::Pcg32) -> Vec<bool> {
    let count = ((share * total as f64).round() as usize).min(total);
    let mut failed = vec![false; total];
    for i in sample(rng, total, count) {
        failed[i] = true;
    }
    failed
}

impl Faults {
    /// Draw number `draw` of failures with these shares.
    pub(crate) fn draw(o: &Opera, shares: FaultShares, seed: u64, draw: u64) -> Faults {
        let (n, u) = (o.params().racks, o.params().uplinks);
        let rng = &mut stream(seed, draw, Purpose::OperaFaults);
        Faults {
            uplinks: pick(n * u, shares.links, rng),
            tors: pick(n, shares.tors, rng),
            rotors: pick(u, shares.rotors, rng),
        }
    }

    /// Whether rack `r`'s circuit over rotor `b` to rack `peer` can carry anything.
    fn circuit_up(&self, u: usize, r: usize, b: usize, peer: usize) -> bool {
        !self.rotors[b]
            && !self.tors[r]
            && !self.tors[peer]
            && !self.uplinks[r * u + b]
            && !self.uplinks[peer * u + b]
    }
}

/// Connectivity of every superslice of `o` under `f` (breadth-first search from every live
/// rack: O(S · N · N · u)).
pub(crate) fn connectivity(o: &Opera, f: &Faults) -> Connectivity {
    let (n, u) = (o.params().racks, o.params().uplinks);
    let sched = o.schedule();
    let live: Vec<usize> = (0..n).filter(|&r| !f.tors[r]).collect();
    let pairs = (live.len() * live.len().saturating_sub(1)).max(1) as f64;
    let mut seen = vec![usize::MAX; n];
    let mut queue = Vec::with_capacity(n);
    let per_superslice = (0..sched.superslices())
        .map(|s| {
            let rotors: Vec<usize> = sched.stable_rotors(s).filter(|&b| !f.rotors[b]).collect();
            let mut connected = 0usize;
            for (mark, &src) in live.iter().enumerate() {
                let mark = s * n + mark;
                queue.clear();
                queue.push(src);
                seen[src] = mark;
                let mut head = 0;
                while head < queue.len() {
                    let r = queue[head];
                    head += 1;
                    for &b in &rotors {
                        let peer = sched.matching(b, s)[r] as usize;
                        if peer != r && seen[peer] != mark && f.circuit_up(u, r, b, peer) {
                            seen[peer] = mark;
                            queue.push(peer);
                        }
                    }
                }
                connected += queue.len() - 1;
            }
            connected as f64 / pairs
        })
        .collect();
    Connectivity { per_superslice }
}

#[cfg(test)]
mod tests {
    use super::super::OperaParams;
    use super::*;

    fn small() -> Opera {
        Opera::build(&OperaParams {
            racks: 12,
            hosts_per_rack: 2,
            uplinks: 4,
            realizations: 20,
            seed: 1,
            ..OperaParams::default()
        })
        .unwrap()
    }

    fn none(o: &Opera) -> Faults {
        Faults::draw(
            o,
            FaultShares {
                links: 0.0,
                tors: 0.0,
                rotors: 0.0,
            },
            1,
            0,
        )
    }

    #[test]
    fn without_failures_every_superslice_is_connected() {
        let o = small();
        let c = connectivity(&o, &none(&o));
        assert_eq!(c.per_superslice.len(), 12);
        assert_eq!(c.worst(), 1.0);
    }

    /// A failed ToR leaves the others connected among themselves whenever they were through
    /// other racks; a failed rotor takes its circuits away: with 4 rotors, one reconfiguring
    /// and one failed, each superslice has 2 or 3 live rotors: hand-checkable bounds.
    #[test]
    fn failures_disconnect_what_they_should() {
        let o = small();
        let mut f = none(&o);
        f.rotors = vec![true, true, true, true];
        assert_eq!(connectivity(&o, &f).worst(), 0.0, "no rotor, no circuit");
        let mut f = none(&o);
        f.tors[3] = true;
        let c = connectivity(&o, &f);
        // Pairs are among the 11 live racks only; rack 3 may have been a relay.
        assert!(c.worst() <= 1.0 && c.mean() > 0.5, "{:?}", c.per_superslice);
        // All uplinks of rack 5 failed: rack 5 is cut off, everything else may stay.
        let mut f = none(&o);
        for b in 0..4 {
            f.uplinks[5 * 4 + b] = true;
        }
        let c = connectivity(&o, &f);
        let cut_off = 2.0 * 11.0 / (12.0 * 11.0);
        assert!(c.worst() <= 1.0 - cut_off + 1e-12, "{:?}", c.per_superslice);
    }

    #[test]
    fn draws_fail_exact_counts_and_depend_on_the_draw_number() {
        let o = small();
        let shares = FaultShares {
            links: 0.25,
            tors: 1.0 / 12.0,
            rotors: 0.25,
        };
        let a = Faults::draw(&o, shares, 1, 0);
        let count = |v: &[bool]| v.iter().filter(|&&x| x).count();
        assert_eq!(
            (count(&a.uplinks), count(&a.tors), count(&a.rotors)),
            (12, 1, 1)
        );
        assert_eq!(a, Faults::draw(&o, shares, 1, 0));
        assert_ne!(a, Faults::draw(&o, shares, 1, 1));
    }
}
