//! The first line of every rank file of a checkpoint: what the state belongs to (weft
//! version, scenario, plan, rank, simulated time) and the payload's length and checksum. A
//! text line, so that `head -1 rank-0.bin` shows it and a test can edit a field.

use anyhow::{bail, Context, Result};

/// The line's first word, and the layout's version (a new layout gets a new number).
pub(crate) const MAGIC: &str = "weft-checkpoint";
pub(crate) const LAYOUT: u32 = 1;

#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Header {
    /// `weft::checkpoint::version()` of the binary that wrote it.
    pub weft: String,
    /// `scenario_hash` of the scenario as run (after `--set`).
    pub scenario: u64,
    pub partitions: u32,
    pub ranks: u32,
    /// `plan_hash` of the partition plan (node → partition → rank, lookahead).
    pub plan: u64,
    pub rank: u32,
    /// The window boundary the state is at (`Engine::boundary_ps`).
    pub sim_ps: u64,
    pub payload_bytes: u64,
    /// CRC-32 of the payload.
    pub crc32: u32,
}

impl Header {
    /// The header line, newline included.
    pub(crate) fn to_line(&self) -> String {
        format!(
            "{MAGIC} layout={LAYOUT} weft={} scenario={:016x} partitions={} ranks={} plan={:016x} rank={} sim_ps={} payload_bytes={} crc32={:08x}\n",
            self.weft, self.scenario, self.partitions, self.ranks, self.plan, self.rank,
            self.sim_ps, self.payload_bytes, self.crc32
        )
    }

    /// Parses the line (without its newline).
    pub(crate) fn parse(line: &str) -> Result<Header> {
        let mut words = line.split(' ');
        if words.next() != Some(MAGIC) {
            bail!("not a weft checkpoint (no {MAGIC:?} header)");
        }
        let mut fields = std::collections::HashMap::new();
        for w in words {
            let (k, v) = w.split_once('=').context("malformed header")?;
            fields.insert(k, v);
        }
        let get = |k: &str| {
            fields
                .get(k)
                .copied()
                .with_context(|| format!("header lacks {k}"))
        };
        let dec = |k: &str| -> Result<u64> {
            get(k)?.parse().with_context(|| format!("header field {k}"))
        };
        let hex = |k: &str| -> Result<u64> {
            u64::from_str_radix(get(k)?, 16).with_context(|| format!("header field {k}"))
        };
        let layout = dec("layout")?;
        if layout != LAYOUT as u64 {
            bail!("checkpoint layout {layout}, this weft reads layout {LAYOUT}");
        }
        let small = |k: &str| -> Result<u32> {
            u32::try_from(dec(k)?).with_context(|| format!("header field {k}"))
        };
        Ok(Header {
            weft: get("weft")?.to_string(),
            scenario: hex("scenario")?,
            partitions: small("partitions")?,
            ranks: small("ranks")?,
            plan: hex("plan")?,
            rank: small("rank")?,
            sim_ps: dec("sim_ps")?,
            payload_bytes: dec("payload_bytes")?,
            crc32: u32::try_from(hex("crc32")?).context("header field crc32")?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_header_reads_back_and_a_bad_one_is_refused() {
        let h = Header {
            weft: "0.1.0+abc".into(),
            scenario: 0xdead_beef,
            partitions: 6,
            ranks: 2,
            plan: 7,
            rank: 1,
            sim_ps: 123_000_000,
            payload_bytes: 99,
            crc32: 0xffff_0000,
        };
        let line = h.to_line();
        assert!(line.ends_with('\n'));
        assert_eq!(Header::parse(line.trim_end()).unwrap(), h);
        assert!(Header::parse("something else").is_err());
        let no_crc = line.trim_end().replace(" crc32=ffff0000", "");
        assert!(Header::parse(&no_crc)
            .unwrap_err()
            .to_string()
            .contains("crc32"));
        let layout2 = line.trim_end().replace("layout=1", "layout=2");
        assert!(Header::parse(&layout2).is_err());
    }
}
