//! Packets, output ports, and the per-node behaviour of switches and hosts.

pub mod host;
pub mod link;
pub mod packet;
pub mod port;
pub mod switch;

pub use packet::{Packet, PacketKind};
pub use port::Port;
