//! The packet: a small `Copy` value that travels by value through queues and events (no
//! per-packet heap allocation).
//!
//! Flows are named by a 64-bit [`FlowId`]: the sending host and the flow's index among that
//! host's flows. A packet carries the index only; the sending host is `src` for packets that
//! travel with the data (data, trimmed headers) and `dst` for those that travel back (ACKs,
//! NACKs), so the id costs no bytes.
//!
//! Size matters: every event carries its packet by value, and the event queue copies each
//! event several times (a radix heap re-files it between buckets), so the hot loop's memory
//! traffic is proportional to `size_of::<Event>()`. A 40-byte packet keeps the event at 64
//! bytes. A 64-bit SACK field here made it 72 bytes and the k = 32 benchmark 9% slower and
//! 27 MB bigger. So an ACK carries its SACK bitmap in the field a data packet uses for its
//! send time ([`Packet::sack`]); senders take RTT samples from their own send records, as
//! htsim's do. The asserts below and in `net/event.rs` keep the sizes.

use serde::{Deserialize, Serialize};

/// A flow: (sending host) << 32 | (index among that host's flows).
pub type FlowId = u64;

/// Makes the [`FlowId`] of flow `index` of host `src`.
#[inline]
pub fn flow_id(src: u32, index: u32) -> FlowId {
    (src as u64) << 32 | index as u64
}

/// The sending host of a flow.
#[inline]
pub fn flow_src(id: FlowId) -> u32 {
    (id >> 32) as u32
}

/// The flow's index among its host's flows.
#[inline]
pub fn flow_index(id: FlowId) -> u32 {
    id as u32
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[repr(u8)]
pub enum PacketKind {
    /// Payload, from the flow's source to its destination.
    Data = 0,
    /// Acknowledgement, from the destination back to the source.
    Ack = 1,
    /// Negative acknowledgement of a trimmed data packet, from the destination back.
    Nack = 2,
}

/// Marks "no DRB path" in [`Packet::via`].
pub const NO_VIA: u32 = u32::MAX;

/// In [`Packet::via`] (other than [`NO_VIA`]): the code is a background flow's pinned path,
/// which every switch follows whatever its policy (`workload/background.rs`). Path codes
/// stay far below this bit (at most the product of two tiers' uplink counts).
pub const PINNED: u32 = 1 << 30;

/// Whether `via` is a pinned path code.
#[inline]
pub fn is_pinned(via: u32) -> bool {
    via != NO_VIA && via & PINNED != 0
}

/// Bits of [`Packet::flags`].
pub mod flags {
    /// Congestion experienced: set by a switch on a data packet.
    pub const ECN_CE: u8 = 1;
    /// On an ACK or NACK: the data packet it answers carried [`ECN_CE`].
    pub const ECN_ECHO: u8 = 2;
    /// A data packet cut to its header by a switch (payload gone; `size_bytes` is the
    /// header's).
    pub const TRIMMED: u8 = 4;
    /// On a trimmed header and its NACK: cut at the last hop (the receiver's downlink), i.e.
    /// incast rather than a congested path.
    pub const LAST_HOP: u8 = 8;
    /// On data: the sender asks for an immediate ACK (last packet, window full,
    /// retransmission), as UEC's AR flag.
    pub const ACK_REQ: u8 = 16;
    /// On data under `lb.policy = "valiant"`: still climbing to the random intermediate
    /// (top-tier switch) its path code names; switches below the top send it up whatever
    /// its destination, the top-tier switch clears it.
    pub const VALIANT_UP: u8 = 32;
    /// On data: which transmission of its sequence number this is, modulo 4 (bits 6-7); an
    /// ACK or NACK echoes the bits of the packet it answers, so the sender knows which
    /// transmission an RTT sample belongs to (as UEC's rtx-echo bit and TCP timestamps).
    pub const TX_SHIFT: u32 = 6;
    pub const TX_MASK: u8 = 0b1100_0000;
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Packet {
    /// Data: when the source started transmitting it, in ps (one-way latency = arrival −
    /// this). ACK: the SACK bitmap, read through [`Packet::sack`].
    pub sent_ps: u64,
    /// Index of the flow among its sending host's flows (see [`Packet::flow_id`]).
    pub flow_index: u32,
    pub src: u32,
    pub dst: u32,
    /// Data: packet sequence number within the flow. ACK: the sequence number acknowledged.
    pub seq: u32,
    /// ACK: cumulative acknowledgement (every packet below it was received).
    pub ack: u32,
    /// Bytes it occupies in a buffer (payload + header, or the ACK size); the inter-frame gap
    /// is added on the wire only.
    pub size_bytes: u32,
    /// DRB path code: which of the paths through the lowest common layer to take (up-port
    /// digits, the first hop's digit varying fastest), or [`NO_VIA`].
    pub via: u32,
    /// Host-chosen entropy value (ECMP/RPS hashing).
    pub entropy: u16,
    pub kind: PacketKind,
    /// [`flags`] bits.
    pub flags: u8,
}

impl Packet {
    #[inline]
    pub fn is_data(&self) -> bool {
        self.kind == PacketKind::Data
    }
    /// Size class for per-class LB state (Ofan pointers): 0 for data (trimmed headers
    /// included: they are the data packet's remains), 1 for ACKs and NACKs.
    #[inline]
    pub fn size_class(&self) -> u32 {
        !self.is_data() as u32
    }
    /// A packet for the strict-priority queue of trimming switches: ACKs, NACKs and trimmed
    /// headers.
    #[inline]
    pub fn is_control(&self) -> bool {
        !self.is_data() || self.is_trimmed()
    }
    #[inline]
    pub fn is_trimmed(&self) -> bool {
        self.flags & flags::TRIMMED != 0
    }
    /// The flow this packet belongs to (data and its ACKs share it).
    #[inline]
    pub fn flow_id(&self) -> FlowId {
        let owner = if self.is_data() { self.src } else { self.dst };
        flow_id(owner, self.flow_index)
    }
    /// An ACK's selective acknowledgement: bit i set = packet `base + i` was received, with
    /// base = max(seq − 63, ack + 1) (`transport::receiver::sack_base`).
    #[inline]
    pub fn sack(&self) -> u64 {
        debug_assert!(!self.is_data(), "only ACKs carry a SACK bitmap");
        self.sent_ps
    }

    #[inline]
    pub fn ecn(&self) -> bool {
        self.flags & flags::ECN_CE != 0
    }
    /// The 32-bit flow key switches hash (ECMP): a flow of another index at the same host gets
    /// a well-spread key, and index 0 keys as its host id, so a permutation's flows key as
    /// `src`. Data and ACKs are distinct keys (`2·flow + class`), as htsim's data and ACK
    /// flows have distinct ids.
    #[inline]
    pub fn hash_key(&self) -> u32 {
        let owner = if self.is_data() { self.src } else { self.dst };
        let flow = owner.wrapping_add(self.flow_index.wrapping_mul(0x9e37_79b9));
        flow.wrapping_mul(2) | self.size_class()
    }
}

// Keeps `Event` at 64 bytes (see the module comment).
/// A packet of `kind` and `size_bytes` from host 0 to host 1, everything else zero (tests).
#[cfg(test)]
pub(crate) fn test_packet(kind: PacketKind, size_bytes: u32) -> Packet {
    Packet {
        sent_ps: 0,
        flow_index: 0,
        src: 0,
        dst: 1,
        seq: 0,
        ack: 0,
        size_bytes,
        via: NO_VIA,
        entropy: 0,
        kind,
        flags: 0,
    }
}

const _: () = assert!(std::mem::size_of::<Packet>() <= 40);
