//! A flowlet table (Broadcom DLB's "flowset table", htsim's per-flow sticky choices): a fixed
//! number of entries, each the port the last packet of the flows hashed to it took and when.
//! Used by DLB in flowlet mode, by AR per flowlet and by CONGA with a flowlet timeout. Flows
//! are hashed (salted per switch) onto the entries, so distinct flows may share one, as in
//! the ASIC's table; the table is allocated once per switch, never per packet.

use super::ecmp::jenkins_hash;
use serde::{Deserialize, Serialize};

/// An entry no packet has used yet.
const UNUSED: u16 = u16::MAX;

/// A constant mixed into the slot hash so that the slot is independent of the ECMP choice
/// (which hashes the same flow key with the entropy value).
const SLOT_TWEAK: u32 = 0x0f10_e7a5;

#[derive(Clone, Debug, Serialize, Deserialize)]
pub(crate) struct FlowletTable {
    /// Per entry: the port of its last packet (`UNUSED`: none yet) and when it was sent.
    entries: Vec<(u16, u64)>,
}

impl FlowletTable {
    pub(crate) fn new(entries: u32) -> FlowletTable {
        assert!(entries > 0, "a flowlet table needs an entry");
        FlowletTable {
            entries: vec![(UNUSED, 0); entries as usize],
        }
    }

    /// The entry of a packet with flow key `key` at a switch with hash salt `salt`.
    #[inline]
    pub(crate) fn slot(&self, key: u32, salt: u32) -> usize {
        (jenkins_hash(key, SLOT_TWEAK, salt) % self.entries.len() as u32) as usize
    }

    /// The port entry `slot`'s last packet took and the time since then, if it has had one.
    #[inline]
    pub(crate) fn last(&self, slot: usize, now_ps: u64) -> Option<(u16, u64)> {
        let (port, at) = self.entries[slot];
        (port != UNUSED).then(|| (port, now_ps - at))
    }

    /// A packet of entry `slot` leaves through `port` at `now_ps`.
    #[inline]
    pub(crate) fn record(&mut self, slot: usize, port: u16, now_ps: u64) {
        self.entries[slot] = (port, now_ps);
    }

    /// Bytes of a table of `entries` entries.
    pub(crate) fn state_bytes(entries: u32) -> usize {
        entries as usize * std::mem::size_of::<(u16, u64)>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_remember_port_and_gap_and_start_unused() {
        let mut t = FlowletTable::new(8);
        let s = t.slot(42, 7);
        assert!(s < 8);
        assert_eq!(t.slot(42, 7), s, "one flow, one entry");
        assert_eq!(t.last(s, 100), None);
        t.record(s, 3, 1_000);
        assert_eq!(t.last(s, 1_500), Some((3, 500)));
        assert_eq!(FlowletTable::state_bytes(8), 8 * 16);
    }
}
