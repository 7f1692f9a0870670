//! The packets a RotorLB host committed to one rotor's slot, in send order (`net/rotorlb.rs`).
//!
//! A host's own packets are kept as runs (a flow's consecutive sequence numbers to one
//! receiver) and built when the NIC sends them; relayed packets, which already exist, are
//! kept whole. Why: a slot is planned at the start of a superslice and drained over the
//! whole of it, so a queue of built 40-byte packets was written once and read back cold:
//! reading each one was 5 % of the Opera shuffle's time. A run is one entry for up to a
//! slot's budget of packets.

use crate::model::Model;
use crate::packet::{Packet, PacketKind};
use crate::topology::NodeId;
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

/// Packets committed to a slot, front first.
#[derive(Default, Serialize, Deserialize)]
pub(super) struct Committed {
    items: VecDeque<Item>,
    len: u64,
}

#[derive(Clone, Copy, Serialize, Deserialize)]
enum Item {
    /// `count` packets of the host's own flow `flow` from `seq` on, for final receiver
    /// `fin`, addressed to `to` (`fin` or an intermediate), with path mark `via`.
    Run(Run),
    /// A relayed packet, ready to send.
    Whole(Packet),
}

#[derive(Clone, Copy, Serialize, Deserialize)]
struct Run {
    flow: u32,
    seq: u32,
    count: u32,
    fin: u32,
    to: u32,
    via: u32,
}

impl Run {
    fn packet(&self, m: &Model, me: NodeId, seq: u32) -> Packet {
        let bytes = m.workload.flow(me, self.flow).bytes;
        Packet {
            sent_ps: 0,
            flow_index: self.flow,
            src: me,
            dst: self.to,
            seq,
            ack: self.fin,
            size_bytes: m.data_size(bytes, seq),
            via: self.via,
            entropy: 0,
            kind: PacketKind::Data,
            flags: 0,
        }
    }
}

impl Committed {
    /// Packets committed and not sent.
    pub(super) fn len(&self) -> u64 {
        self.len
    }

    pub(super) fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Appends a relayed packet.
    pub(super) fn push_whole(&mut self, pkt: Packet) {
        self.items.push_back(Item::Whole(pkt));
        self.len += 1;
    }

    /// Appends packets `seq..seq + count` of own flow `flow` for `fin`, addressed to `to`;
    /// extends the last run when it is the same flow, path and address and ends at `seq`.
    pub(super) fn push_run(
        &mut self,
        flow: u32,
        seq: u32,
        count: u32,
        (fin, to, via): (u32, u32, u32),
    ) {
        if count == 0 {
            return;
        }
        self.len += count as u64;
        if let Some(Item::Run(r)) = self.items.back_mut() {
            if r.flow == flow
                && r.fin == fin
                && r.to == to
                && r.via == via
                && r.seq + r.count == seq
            {
                r.count += count;
                return;
            }
        }
        let run = Run {
            flow,
            seq,
            count,
            fin,
            to,
            via,
        };
        self.items.push_back(Item::Run(run));
    }

    /// Takes the first packet (built now if it is the host `me`'s own).
    pub(super) fn pop_front(&mut self, m: &Model, me: NodeId) -> Option<Packet> {
        let pkt = match self.items.front_mut()? {
            Item::Whole(p) => {
                let p = *p;
                self.items.pop_front();
                p
            }
            Item::Run(r) => {
                let p = r.packet(m, me, r.seq);
                r.seq += 1;
                r.count -= 1;
                if r.count == 0 {
                    self.items.pop_front();
                }
                p
            }
        };
        self.len -= 1;
        Some(pkt)
    }

    /// Takes the last packet (built now if it is the host `me`'s own).
    pub(super) fn pop_back(&mut self, m: &Model, me: NodeId) -> Option<Packet> {
        let pkt = match self.items.back_mut()? {
            Item::Whole(p) => {
                let p = *p;
                self.items.pop_back();
                p
            }
            Item::Run(r) => {
                let p = r.packet(m, me, r.seq + r.count - 1);
                r.count -= 1;
                if r.count == 0 {
                    self.items.pop_back();
                }
                p
            }
        };
        self.len -= 1;
        Some(pkt)
    }

    /// Every committed packet, front first (built for the look; tests).
    #[cfg(test)]
    pub(super) fn packets(&self, m: &Model, me: NodeId) -> Vec<Packet> {
        self.items
            .iter()
            .flat_map(|it| match *it {
                Item::Whole(p) => vec![p],
                Item::Run(r) => (r.seq..r.seq + r.count)
                    .map(|s| r.packet(m, me, s))
                    .collect(),
            })
            .collect()
    }
}
