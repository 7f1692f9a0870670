//! Pairwise collectives (`workload.kind = "pairwise"`): all-to-all and all-to-all-v over an
//! ordered list of hosts, every rank sending directly to every other rank (NCCL's and
//! DeepEP's all-to-all over point-to-point sends). One phase, named after the collective,
//! every flow starting at time 0: a building block that chained collectives (MoE dispatch
//! then combine) order with triggers.
//!
//! - `all_to_all`: each rank's buffer of `message_bytes` holds one chunk per rank, so a rank
//!   sends ⌈message_bytes / n⌉ bytes to each of the n − 1 others (as the ring's chunks; the
//!   chunk for itself stays local).
//! - `all_to_all_v`: the bytes rank r sends to rank c are row r, column c of a CSV matrix
//!   (`workload.file`: n lines of n comma-separated byte counts, blank lines and `#` comments
//!   skipped). The diagonal stays local (ignored) and a 0 sends nothing, so a rank's flows
//!   are the non-zero entries of its row off the diagonal.
//!
//! Rank r's flow i goes to the i-th destination in the order r + 1, r + 2, … (mod n),
//! skipping nothing (`all_to_all`) or the zeros (`all_to_all_v`), so the round-robin NIC does
//! not start every rank on the same destination. `all_to_all` is computed on demand;
//! `all_to_all_v` keeps its non-zero entries (the file's size).

use super::generator::Generator;
use super::ranks::{chunk_bytes, Ranks};
use super::{Flow, Start};
use crate::scenario::{Collective, Scenario};
use anyhow::{anyhow, bail, Result};
use std::path::Path;

pub(crate) struct Pairwise {
    ranks: Ranks,
    sizes: Sizes,
    /// The one phase: the collective's name.
    pub phases: Vec<String>,
}

enum Sizes {
    /// all_to_all: the same chunk to every other rank.
    Uniform { chunk_bytes: u64 },
    /// all_to_all_v: rank r's flows are `pairs[start[r]..start[r + 1]]`, each (destination
    /// rank, bytes), in send order.
    Matrix {
        start: Vec<usize>,
        pairs: Vec<(u32, u64)>,
    },
}

impl Pairwise {
    /// The collective of a validated scenario on `num_hosts` hosts; checks what needs the
    /// fabric (the hosts exist, a chunk fits in a flow) and reads all_to_all_v's matrix.
    pub(crate) fn build(s: &Scenario, num_hosts: u32) -> Result<Pairwise> {
        let w = &s.workload;
        let ranks = Ranks::of_scenario(s, num_hosts)?;
        let n = ranks.n();
        let max = super::max_flow_bytes(s);
        let sizes = match w.collective {
            Collective::AllToAllV => {
                let file = w.file.as_ref().expect("validated: all_to_all_v has a file");
                read_matrix(&s.base_dir.join(file), n, max)?
            }
            _ => Sizes::Uniform {
                chunk_bytes: chunk_bytes(s, n)?,
            },
        };
        Ok(Pairwise::new(ranks, sizes, w.collective))
    }

    fn new(ranks: Ranks, sizes: Sizes, c: Collective) -> Pairwise {
        let phases = vec![match c {
            Collective::AllToAllV => "all_to_all_v".to_string(),
            _ => "all_to_all".to_string(),
        }];
        Pairwise {
            ranks,
            sizes,
            phases,
        }
    }

    fn n(&self) -> u32 {
        self.ranks.n()
    }

    fn rank(&self, h: u32) -> Option<u32> {
        self.ranks.rank(h)
    }
}

impl Generator for Pairwise {
    #[inline]
    fn flows_of(&self, h: u32) -> u32 {
        match (self.rank(h), &self.sizes) {
            (None, _) => 0,
            (Some(_), Sizes::Uniform { .. }) => self.n() - 1,
            (Some(r), Sizes::Matrix { start, .. }) => {
                (start[r as usize + 1] - start[r as usize]) as u32
            }
        }
    }

    /// Flow `i` of host `h`'s rank.
    #[inline]
    fn flow(&self, h: u32, i: u32) -> Flow {
        let r = self.rank(h).expect("only ranks have flows");
        let (dst_rank, bytes) = match &self.sizes {
            Sizes::Uniform { chunk_bytes } => ((r + 1 + i) % self.n(), *chunk_bytes),
            Sizes::Matrix { start, pairs } => pairs[start[r as usize] + i as usize],
        };
        Flow {
            src: h,
            dst: self.ranks.host(dst_rank),
            bytes,
            start: Start::At(0),
        }
    }

    /// Payload bytes host `h` sends.
    fn bytes_of(&self, h: u32) -> u64 {
        match (self.rank(h), &self.sizes) {
            (None, _) => 0,
            (Some(_), Sizes::Uniform { chunk_bytes }) => (self.n() as u64 - 1) * chunk_bytes,
            (Some(r), Sizes::Matrix { start, pairs }) => pairs
                [start[r as usize]..start[r as usize + 1]]
                .iter()
                .map(|p| p.1)
                .sum(),
        }
    }

    fn kind_name(&self) -> &'static str {
        "pairwise"
    }
    fn phase_names(&self) -> &[String] {
        &self.phases
    }
    fn phase_of(&self, _h: u32, _i: u32) -> Option<u8> {
        Some(0)
    }
}

/// Reads all_to_all_v's matrix for `n` ranks; every error names the file and the line.
fn read_matrix(path: &Path, n: u32, max_bytes: u64) -> Result<Sizes> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| anyhow!("workload.file: {}: cannot read: {e}", path.display()))?;
    parse_matrix(&text, n, max_bytes).map_err(|e| anyhow!("workload.file: {}: {e}", path.display()))
}

/// Parses `n` rows of `n` byte counts (see the module comment).
fn parse_matrix(text: &str, n: u32, max_bytes: u64) -> Result<Sizes> {
    let rows = text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty() && !l.trim_start().starts_with('#'));
    let mut table: Vec<Vec<u64>> = Vec::with_capacity(n as usize);
    for (no, l) in rows {
        let line = no + 1;
        if table.len() == n as usize {
            bail!("line {line}: more than {n} rows (one per rank of workload.hosts)");
        }
        let cells: Vec<&str> = l.split(',').map(str::trim).collect();
        if cells.len() != n as usize {
            bail!(
                "line {line}: {} values, expected {n} (one per rank)",
                cells.len()
            );
        }
        let mut row = Vec::with_capacity(n as usize);
        for (c, cell) in cells.iter().enumerate() {
            let bytes = cell.parse::<u64>().map_err(|_| {
                anyhow!(
                    "line {line}: column {}: \"{cell}\" is not a byte count (a non-negative integer)",
                    c + 1
                )
            })?;
            if bytes > max_bytes {
                bail!(
                    "line {line}: column {}: {bytes} bytes is more than 2^32 - 1 packets of packet.payload_bytes",
                    c + 1
                );
            }
            row.push(bytes);
        }
        table.push(row);
    }
    if table.len() < n as usize {
        bail!(
            "{} rows, expected {n} (one per rank of workload.hosts)",
            table.len()
        );
    }
    let mut start = Vec::with_capacity(n as usize + 1);
    let mut pairs = Vec::new();
    for r in 0..n {
        start.push(pairs.len());
        for k in 1..n {
            let c = (r + k) % n;
            let bytes = table[r as usize][c as usize];
            if bytes > 0 {
                pairs.push((c, bytes));
            }
        }
    }
    start.push(pairs.len());
    if pairs.is_empty() {
        bail!("no rank sends anything to another (every entry off the diagonal is 0)");
    }
    Ok(Sizes::Matrix { start, pairs })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn matrix(text: &str, n: u32) -> Result<Sizes> {
        parse_matrix(text, n, 1 << 40)
    }

    #[test]
    fn all_to_all_sends_one_chunk_to_every_other_rank() {
        // Hosts 4, 1, 6 on an 8-host fabric; 10 bytes per rank: chunks of ⌈10 / 3⌉ = 4.
        let p = Pairwise::new(
            Ranks::new(vec![4, 1, 6], 8),
            Sizes::Uniform { chunk_bytes: 4 },
            Collective::AllToAll,
        );
        assert_eq!((p.flows_of(1), p.flows_of(0)), (2, 0));
        let dsts: Vec<u32> = (0..2).map(|i| p.flow(1, i).dst).collect();
        assert_eq!(dsts, [6, 4], "rank 1 sends to ranks 2, then 0");
        assert_eq!(
            p.flow(6, 0),
            Flow {
                src: 6,
                dst: 4,
                bytes: 4,
                start: Start::At(0)
            }
        );
        assert_eq!(p.bytes_of(4), 8);
        assert_eq!(p.phases, ["all_to_all"]);
    }

    #[test]
    fn all_to_all_v_skips_the_diagonal_and_zeros() {
        let text = "# bytes from row rank to column rank\n7, 10, 0\n\n 0 ,5,6\n1,2,3\n";
        let sizes = matrix(text, 3).unwrap();
        let p = Pairwise::new(Ranks::new(vec![0, 1, 2], 3), sizes, Collective::AllToAllV);
        let flows = |h: u32| -> Vec<(u32, u64)> {
            (0..p.flows_of(h))
                .map(|i| (p.flow(h, i).dst, p.flow(h, i).bytes))
                .collect()
        };
        assert_eq!(flows(0), [(1, 10)], "0 -> 2 is 0 bytes, 0 -> 0 local");
        assert_eq!(flows(1), [(2, 6)]);
        assert_eq!(flows(2), [(0, 1), (1, 2)], "from rank 2: ranks 0, then 1");
        assert_eq!((p.bytes_of(0), p.bytes_of(1), p.bytes_of(2)), (10, 6, 3));
        assert_eq!(p.phases, ["all_to_all_v"]);
    }

    #[test]
    fn a_bad_matrix_line_is_named() {
        for (text, want) in [
            ("1,2\n3,4,5\n", "line 2: 3 values, expected 2"),
            (
                "0,1\n# c\n1,x\n",
                "line 3: column 2: \"x\" is not a byte count",
            ),
            (
                "0,1\n-1,0\n",
                "line 2: column 1: \"-1\" is not a byte count",
            ),
            ("0,1\n1,0\n1,1\n", "line 3: more than 2 rows"),
            ("0,1\n", "1 rows, expected 2"),
            ("5,0\n0,5\n", "no rank sends anything"),
        ] {
            let e = matrix(text, 2).err().expect(text).to_string();
            assert!(e.starts_with(want), "{text:?}: {e}");
        }
        let e = parse_matrix("0,9\n1,0\n", 2, 8).err().unwrap().to_string();
        assert!(
            e.starts_with("line 1: column 2: 9 bytes is more than"),
            "{e}"
        );
    }
}
