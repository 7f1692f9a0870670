//! Poisson flow arrivals (the Opera paper, §5, `kind = "poisson"`): every host starts flows as a
//! Poisson process of rate λ_host = load · line rate (bytes/s) / mean size, each to a
//! uniformly random host of another rack (edge switch or leaf), its size a step sample of
//! the flow-size CDF, for `duration_us`. Per-host processes of equal rate with uniform
//! other-rack destinations superpose to network-wide Poisson arrivals over the
//! H · (H − hosts_per_rack) ordered inter-rack pairs when racks are equal.
//!
//! A host's i-th arrival time is the sum of i exponential gaps, so it cannot be computed
//! from (seed, host, i) alone, and its flow count must be known up front: each host's flows
//! are drawn once, when the workload is built, from its own stream
//! `rng::stream(seed, host, Purpose::Poisson)` (gap, destination, size in that order) into a
//! per-host table: O(flows of the run) memory, independent of threads, partitions and ranks.

use super::generator::Generator;
use super::size_cdf::SizeCdf;
use super::{Flow, Start};
use crate::rng::{stream, Purpose};
use rand::Rng;
use rayon::prelude::*;

pub(crate) struct Poisson {
    /// Flows of host h are `start_ps[first[h]..first[h + 1]]` (and `dst`, `bytes`).
    first: Vec<u64>,
    start_ps: Vec<u64>,
    dst: Vec<u32>,
    bytes: Vec<u64>,
}

/// What the generator needs: the rack of every host, the CDF, the rate and the duration.
pub(crate) struct PoissonParams<'a> {
    pub rack: &'a [u32],
    pub cdf: &'a SizeCdf,
    pub rate_per_host_per_s: f64,
    pub duration_ps: u64,
    pub seed: u64,
}

/// At most this many flows per host (flow indices are u32).
pub(crate) const MAX_FLOWS_PER_HOST: u64 = u32::MAX as u64;

impl Poisson {
    /// Draws every host's arrivals. Needs at least two racks (checked by the caller).
    pub(crate) fn generate(p: &PoissonParams) -> Result<Poisson, String> {
        let hosts = p.rack.len() as u32;
        let per_host: Vec<Vec<(u64, u32, u64)>> = (0..hosts)
            .into_par_iter()
            .map(|h| host_arrivals(p, h))
            .collect::<Result<_, String>>()?;
        let total: usize = per_host.iter().map(Vec::len).sum();
        let mut w = Poisson {
            first: Vec::with_capacity(hosts as usize + 1),
            start_ps: Vec::with_capacity(total),
            dst: Vec::with_capacity(total),
            bytes: Vec::with_capacity(total),
        };
        w.first.push(0);
        for flows in per_host {
            for (t, d, b) in flows {
                w.start_ps.push(t);
                w.dst.push(d);
                w.bytes.push(b);
            }
            w.first.push(w.start_ps.len() as u64);
        }
        Ok(w)
    }
}

impl Generator for Poisson {
    #[inline]
    fn flows_of(&self, h: u32) -> u32 {
        (self.first[h as usize + 1] - self.first[h as usize]) as u32
    }

    #[inline]
    fn flow(&self, h: u32, i: u32) -> Flow {
        let k = (self.first[h as usize] + i as u64) as usize;
        Flow {
            src: h,
            dst: self.dst[k],
            bytes: self.bytes[k],
            start: Start::At(self.start_ps[k]),
        }
    }

    fn bytes_of(&self, h: u32) -> u64 {
        let (a, b) = (self.first[h as usize], self.first[h as usize + 1]);
        self.bytes[a as usize..b as usize].iter().sum()
    }
    fn kind_name(&self) -> &'static str {
        "poisson"
    }
}

/// Host `h`'s flows: (start, destination, bytes), in start order.
fn host_arrivals(p: &PoissonParams, h: u32) -> Result<Vec<(u64, u32, u64)>, String> {
    let mut rng = stream(p.seed, h as u64, Purpose::Poisson);
    let n = p.rack.len() as u32;
    let mean_gap_ps = 1e12 / p.rate_per_host_per_s;
    let mut out = Vec::new();
    let mut t_ps = 0.0f64;
    loop {
        // Exponential gap: −ln(1 − U) · mean, U in [0, 1).
        let u: f64 = rng.gen();
        t_ps += -(1.0 - u).ln() * mean_gap_ps;
        if t_ps >= p.duration_ps as f64 {
            return Ok(out);
        }
        let dst = loop {
            let d = rng.gen_range(0..n);
            if p.rack[d as usize] != p.rack[h as usize] {
                break d;
            }
        };
        let bytes = p.cdf.sample(rng.gen::<f64>());
        out.push((t_ps as u64, dst, bytes));
        if out.len() as u64 >= MAX_FLOWS_PER_HOST {
            return Err(format!(
                "host {h} would start more than 2^32 - 1 flows: lower workload.load or workload.duration_us"
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cdf() -> SizeCdf {
        SizeCdf::parse("1000,0.5\n3000,1\n", "t").unwrap()
    }

    fn gen(rate: f64, duration_ps: u64, rack: &[u32], seed: u64) -> Poisson {
        Poisson::generate(&PoissonParams {
            rack,
            cdf: &cdf(),
            rate_per_host_per_s: rate,
            duration_ps,
            seed,
        })
        .unwrap()
    }

    #[test]
    fn arrival_rate_and_sizes_match_within_five_sigma_and_flows_are_inter_rack() {
        // 16 hosts in 4 racks; 10^6 flows/s per host for 10 ms: 10^4 expected per host,
        // 1.6 × 10^5 in all (σ = 400): within 5σ = 2 000.
        let rack: Vec<u32> = (0..16).map(|h| h / 4).collect();
        let w = gen(1e6, 10_000_000_000, &rack, 3);
        let total: u64 = (0..16).map(|h| w.flows_of(h) as u64).sum();
        assert!((total as i64 - 160_000).abs() < 2_000, "{total}");
        let mut small = 0u64;
        let mut dst_hits = [0u64; 16];
        for h in 0..16 {
            let mut prev = 0;
            for i in 0..w.flows_of(h) {
                let f = w.flow(h, i);
                let t = f.start_at_ps().unwrap();
                assert!(t >= prev && t < 10_000_000_000, "in order, in the run");
                prev = t;
                assert_ne!(rack[f.dst as usize], rack[h as usize], "inter-rack only");
                assert!(f.bytes == 1000 || f.bytes == 3000);
                small += (f.bytes == 1000) as u64;
                dst_hits[f.dst as usize] += 1;
            }
        }
        // Half the flows are 1 000 B: σ = √(total/4) ≈ 200, 5σ = 1 000.
        assert!(
            (small as i64 - total as i64 / 2).abs() < 1_000,
            "{small} of {total}"
        );
        // Destinations uniform: 10^4 each, σ = 100, 5σ = 500.
        for (d, &x) in dst_hits.iter().enumerate() {
            assert!((x as i64 - total as i64 / 16).abs() < 500, "host {d}: {x}");
        }
    }

    #[test]
    fn doubling_the_rate_doubles_the_flows_and_the_seed_fixes_them() {
        let rack: Vec<u32> = (0..8).map(|h| h / 2).collect();
        let a = gen(1e6, 5_000_000_000, &rack, 9);
        let b = gen(2e6, 5_000_000_000, &rack, 9);
        let na: u64 = (0..8).map(|h| a.flows_of(h) as u64).sum();
        let nb: u64 = (0..8).map(|h| b.flows_of(h) as u64).sum();
        // 40 000 and 80 000 expected (σ 200 and 283).
        assert!((na as i64 - 40_000).abs() < 1_000, "{na}");
        assert!((nb as i64 - 80_000).abs() < 1_500, "{nb}");
        let again = gen(1e6, 5_000_000_000, &rack, 9);
        for h in 0..8 {
            assert_eq!(a.flows_of(h), again.flows_of(h));
            for i in 0..a.flows_of(h) {
                assert_eq!(a.flow(h, i), again.flow(h, i));
            }
        }
        let other = gen(1e6, 5_000_000_000, &rack, 10);
        assert_ne!(a.flow(0, 0), other.flow(0, 0), "another seed, other flows");
    }
}
