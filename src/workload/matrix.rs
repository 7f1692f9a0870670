//! htsim connection matrices, so the same traffic can run in weft and htsim:
//!
//! ```text
//! Nodes 16
//! Connections 2
//! 0->5 id 1 start 0 size 1048576
//! 3->2 id 2 start 1000000 size 65536
//! ```
//! `start` is in picoseconds and `size` in bytes. Every error names the file and line.

use super::generator::Generator;
use super::{Flow, Start};
use anyhow::{anyhow, bail, Result};
use serde::{Deserialize, Serialize};
use std::path::Path;

/// Latest start time a connection may have: about 13 days, far from overflowing event times.
pub(crate) const MAX_START_PS: u64 = 1 << 60;

/// Reads the matrix at `path`; flows may carry at most `max_bytes` each.
pub(crate) fn read(path: &Path, num_hosts: u32, max_bytes: u64) -> Result<Vec<Flow>> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| anyhow!("workload.file: {}: cannot read: {e}", path.display()))?;
    parse(&text, num_hosts, max_bytes)
        .map_err(|e| anyhow!("workload.file: {}: {e}", path.display()))
}

fn header(line: Option<(usize, &str)>, key: &str) -> Result<u64> {
    let (no, l) = line.ok_or_else(|| anyhow!("missing \"{key} N\" line"))?;
    let mut it = l.split_whitespace();
    match (it.next(), it.next().map(str::parse::<u64>), it.next()) {
        (Some(k), Some(Ok(v)), None) if k == key => Ok(v),
        _ => bail!("line {}: expected \"{key} N\", got \"{l}\"", no + 1),
    }
}

pub(crate) fn parse(text: &str, num_hosts: u32, max_bytes: u64) -> Result<Vec<Flow>> {
    let mut lines = text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty() && !l.trim_start().starts_with('#'));
    let nodes = header(lines.next(), "Nodes")?;
    if nodes > num_hosts as u64 {
        bail!("Nodes {nodes} exceeds the {num_hosts} hosts of the topology");
    }
    let conns = header(lines.next(), "Connections")?;
    // The header is a claim, not a promise: reserve at most a million entries up front.
    let mut flows = Vec::with_capacity(conns.min(1 << 20) as usize);
    for (no, l) in lines {
        let bad = |what: &str| anyhow!("line {}: {what}: \"{}\"", no + 1, l.trim());
        let toks: Vec<&str> = l.split_whitespace().collect();
        if toks.len() != 7 || toks[1] != "id" || toks[3] != "start" || toks[5] != "size" {
            return Err(bad("expected \"SRC->DST id I start T size B\""));
        }
        let (s, d) = toks[0]
            .split_once("->")
            .ok_or_else(|| bad("expected SRC->DST"))?;
        let num = |t: &str, what: &str| {
            t.parse::<u64>()
                .map_err(|_| bad(&format!("{what} is not a non-negative integer")))
        };
        let (src, dst) = (num(s, "source")?, num(d, "destination")?);
        num(toks[2], "id")?;
        let start_ps = num(toks[4], "start")?;
        let bytes = num(toks[6], "size")?;
        for (h, what) in [(src, "source"), (dst, "destination")] {
            if h >= nodes {
                return Err(bad(&format!(
                    "{what} host {h} does not exist (Nodes {nodes})"
                )));
            }
        }
        if src == dst {
            return Err(bad("source and destination are the same host"));
        }
        if bytes == 0 {
            return Err(bad("size must be at least 1 byte"));
        }
        if bytes > max_bytes {
            return Err(bad(&format!(
                "size above {max_bytes} bytes (2^32 - 1 packets of packet.payload_bytes)"
            )));
        }
        if start_ps > MAX_START_PS {
            return Err(bad(&format!(
                "start above {MAX_START_PS} ps (about 13 days)"
            )));
        }
        flows.push(Flow {
            src: src as u32,
            dst: dst as u32,
            bytes,
            start: Start::At(start_ps),
        });
    }
    if flows.len() as u64 != conns {
        bail!("Connections {conns} but {} connection lines", flows.len());
    }
    Ok(flows)
}

/// Explicit flows grouped by source host, each host's sorted by start time (ties in file
/// order): host h's flows are `flows[host_start[h]..host_start[h + 1]]`.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(crate) struct FlowTable {
    flows: Vec<Flow>,
    host_start: Vec<u64>,
}

impl FlowTable {
    pub(crate) fn new(mut flows: Vec<Flow>, num_hosts: u32) -> FlowTable {
        // Stable: equal (src, start) keep their order.
        // Table flows start at fixed times (dependencies are the generators' for now).
        flows.sort_by_key(|f| (f.src, f.start_at_ps().expect("table flows start at a time")));
        let mut host_start = vec![0u64; num_hosts as usize + 1];
        for f in &flows {
            assert!(f.src < num_hosts && f.dst < num_hosts && f.src != f.dst);
            host_start[f.src as usize + 1] += 1;
        }
        for h in 0..num_hosts as usize {
            assert!(
                host_start[h + 1] <= u32::MAX as u64,
                "host {h} has more than 2^32 flows"
            );
            host_start[h + 1] += host_start[h];
        }
        FlowTable { flows, host_start }
    }
}

impl Generator for FlowTable {
    #[inline]
    fn flows_of(&self, h: u32) -> u32 {
        (self.host_start[h as usize + 1] - self.host_start[h as usize]) as u32
    }
    #[inline]
    fn flow(&self, h: u32, i: u32) -> Flow {
        self.flows[(self.host_start[h as usize] + i as u64) as usize]
    }
    fn kind_name(&self) -> &'static str {
        "matrix"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_rejects() {
        let ok = "Nodes 4\nConnections 2\n0->3 id 1 start 0 size 100\n2->1 id 2 start 500 size 7\n";
        let f = parse(ok, 16, u64::MAX).unwrap();
        assert_eq!(
            f[1],
            Flow {
                src: 2,
                dst: 1,
                bytes: 7,
                start: Start::At(500)
            }
        );
        assert!(parse(
            "Nodes 4\nConnections 1\n0->4 id 1 start 0 size 1\n",
            16,
            u64::MAX
        )
        .unwrap_err()
        .to_string()
        .contains("does not exist"));
        assert!(parse("Nodes 40\nConnections 0\n", 16, u64::MAX).is_err());
        assert!(parse(
            "Nodes 4\nConnections 2\n0->1 id 1 start 0 size 1\n",
            16,
            u64::MAX
        )
        .is_err());
        assert!(parse(
            "Nodes 4\nConnections 1\n0-1 id 1 start 0 size 1\n",
            16,
            u64::MAX
        )
        .is_err());
    }
}
