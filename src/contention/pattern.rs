//! Communication patterns of the contention analysis: which (source, destination) routes
//! count. Dense patterns (every node of one set to every node of another) are kept as two
//! host masks; sparse ones (permutation, shift, matrix file) as a list of pairs.

use crate::rng::{stream, Purpose};
use crate::scenario::HostTypes;
use anyhow::{bail, Context, Result};
use std::path::Path;

/// Which (source, destination) routes a contention analysis counts.
#[derive(Clone, Debug)]
pub enum Pattern {
    /// Every source to every destination other than itself.
    Dense {
        /// Per host: whether it is a source.
        src: Vec<bool>,
        /// Per host: whether it is a destination.
        dst: Vec<bool>,
    },
    /// Explicit (source, destination) pairs, source ≠ destination, no duplicates.
    Pairs(Vec<(u32, u32)>),
}

impl Pattern {
    /// Parses `--pattern`: `all-to-all`, `TYPE-TYPE` (e.g. `compute-io`: every node of the
    /// first type to every node of the second), `permutation` (the random derangement the
    /// simulator's permutation workload draws from the seed), `shift` or `shift:K` (s → s + K
    /// mod N, K = 1 by default), `matrix:FILE` (an htsim connection matrix; relative to the
    /// current folder).
    pub fn parse(text: &str, types: &HostTypes, seed: u64) -> Result<Pattern> {
        let n = types.type_of.len() as u32;
        if text == "all-to-all" {
            return Ok(Pattern::Dense {
                src: vec![true; n as usize],
                dst: vec![true; n as usize],
            });
        }
        if text == "permutation" {
            let dst = crate::workload::permutation::derangement(
                n,
                &mut stream(seed, 0, Purpose::Workload),
            );
            return Ok(Pattern::Pairs(
                (0..n).map(|s| (s, dst[s as usize])).collect(),
            ));
        }
        if let Some(k) = text.strip_prefix("shift") {
            let k: u32 = match k.strip_prefix(':') {
                Some(k) => k.parse().context("--pattern: shift:K needs a number K")?,
                None if k.is_empty() => 1,
                None => bail!("--pattern: unknown pattern {text:?}"),
            };
            if k % n == 0 {
                bail!("--pattern: shift:{k} sends every node to itself ({n} nodes)");
            }
            return Ok(Pattern::Pairs((0..n).map(|s| (s, (s + k) % n)).collect()));
        }
        if let Some(file) = text.strip_prefix("matrix:") {
            return Pattern::from_matrix(Path::new(file), n);
        }
        if let Some((a, b)) = text.split_once('-') {
            let (Some(ta), Some(tb)) = (types.index(a), types.index(b)) else {
                bail!(
                    "--pattern: {text:?}: node types are {} (e.g. {}-{})",
                    types.names.join(", "),
                    types.names[0],
                    types.names.last().expect("a type")
                );
            };
            let of = |t: u16| types.type_of.iter().map(|&x| x == t).collect();
            return Ok(Pattern::Dense {
                src: of(ta),
                dst: of(tb),
            });
        }
        bail!("--pattern: unknown pattern {text:?} (all-to-all, TYPE-TYPE, permutation, shift[:K], matrix:FILE)")
    }

    fn from_matrix(path: &Path, n: u32) -> Result<Pattern> {
        let flows = crate::workload::matrix::read(path, n, u64::MAX)
            .map_err(|e| anyhow::anyhow!("--pattern: {e}"))?;
        let mut pairs: Vec<(u32, u32)> = flows
            .iter()
            .map(|f| (f.src, f.dst))
            .filter(|(s, d)| s != d)
            .collect();
        pairs.sort_unstable();
        pairs.dedup();
        Ok(Pattern::Pairs(pairs))
    }

    /// Number of routes (source, destination) of the pattern.
    pub fn routes(&self) -> u64 {
        match self {
            Pattern::Pairs(p) => p.len() as u64,
            Pattern::Dense { src, dst } => {
                let both = src.iter().zip(dst).filter(|(a, b)| **a && **b).count() as u64;
                let count = |v: &[bool]| v.iter().filter(|&&x| x).count() as u64;
                count(src) * count(dst) - both
            }
        }
    }
}
