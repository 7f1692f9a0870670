//! The packet: a small `Copy` value that travels by value through queues and events.

use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[repr(u8)]
pub enum PacketKind {
    Data = 0,
    Ack = 1,
}

/// Marks "no DRB waypoint" in [`Packet::via`].
pub const NO_VIA: u32 = u32::MAX;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Packet {
    /// Global flow id (index into the workload's flow table).
    pub flow: u32,
    /// Data: packet index within the flow. ACK: index of the data packet it acknowledges.
    pub seq: u32,
    pub src: u32,
    pub dst: u32,
    /// When the source started transmitting it, in ps (one-way latency = arrival − this).
    pub sent_ps: u64,
    /// Bytes it occupies in a buffer (payload + header, or the ACK size); the inter-frame gap
    /// is added on the wire only.
    pub size_bytes: u32,
    /// DRB waypoint: the top-layer switch to bounce through, or [`NO_VIA`].
    pub via: u32,
    /// Host-chosen entropy value (ECMP/RPS hashing).
    pub entropy: u16,
    pub kind: PacketKind,
    pub ecn: bool,
}

impl Packet {
    #[inline]
    pub fn is_data(&self) -> bool {
        self.kind == PacketKind::Data
    }
    /// Ofan size class: 0 for data, 1 for ACKs.
    #[inline]
    pub fn size_class(&self) -> u32 {
        self.kind as u32
    }
}

const _: () = assert!(std::mem::size_of::<Packet>() <= 48);
