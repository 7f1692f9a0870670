//! Transports: per-flow sender and receiver state of the hosts, behind one enum so the NIC
//! and host code are the same for every congestion-control algorithm.
//!
//! The interface a CCA plugs into (one file per CCA, a variant of [`Sender`]):
//! - [`Sender::next_seq`]: which packet to send next (a retransmission before new data), or
//!   none while the window is closed;
//! - [`Sender::on_ack`] with [`AckInfo`] (cumulative and selective acknowledgement, ECN echo,
//!   the entropy value the ACK carries — the data packet's, for policies whose ACKs echo
//!   it); RTT samples come from the sender's own send records;
//! - [`Sender::on_nack`] and [`Sender::on_timeout`];
//! - [`Sender::pacing_rate`]: the rate the NIC paces this flow at, if the CCA paces.
//!
//! Late and unexpected acknowledgements are counted, never a panic (see `paced.rs` for what
//! a counting transport cannot detect).
//!
//! Today's member is [`paced::Paced`]: no window, no loss recovery, the NIC paces the host at
//! `host.load` × line rate (the Ofan paper's LB-isolation mode).

pub mod cc;
pub(crate) mod constant;
pub(crate) mod paced;
pub(crate) mod receiver;
pub(crate) mod seqset;

pub use receiver::Receiver;
use serde::{Deserialize, Serialize};

/// What an ACK tells the sender. RTT samples come from the sender's own record of when it
/// sent `seq` (the packet has no room to echo it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AckInfo {
    /// The sequence number this ACK was sent for.
    pub seq: u32,
    /// Every packet below this was received.
    pub cumulative: u32,
    /// Bit i: packet `cumulative + 1 + i` was received.
    pub sack: u64,
    /// The acknowledged data packet was ECN-marked.
    pub ecn_echo: bool,
    /// Entropy value the ACK carried: the acknowledged data packet's for policies whose ACKs
    /// echo it (ECMP), the ACK's own under RPS.
    pub entropy: u16,
}

/// What an acknowledgement changed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AckOutcome {
    /// Packets acknowledged for the first time.
    pub newly_acked: u32,
    /// Acknowledgements that acknowledged nothing new (late, out of range; duplicates where
    /// the transport keeps the acknowledged set).
    pub stale: u32,
    /// The flow has just completed (all packets acknowledged).
    pub completed: bool,
}

/// The scenario's transport, in the units senders use.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TransportParams {
    Paced,
    /// A fixed window of this many packets per flow.
    Constant {
        window_pkts: u32,
    },
}

/// Per-flow sender state: one variant per transport/CCA.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub enum Sender {
    Paced(paced::Paced),
    Constant(constant::Constant),
}

/// Calls the same method on whichever sender it is: the one place that lists them.
macro_rules! each {
    ($self:expr, $s:ident => $call:expr) => {
        match $self {
            Sender::Paced($s) => $call,
            Sender::Constant($s) => $call,
        }
    };
}

impl Sender {
    /// A sender for `packets` data packets under the scenario's transport.
    pub fn new(params: &TransportParams, packets: u32) -> Sender {
        match *params {
            TransportParams::Paced => Sender::Paced(paced::Paced::new(packets)),
            TransportParams::Constant { window_pkts } => {
                Sender::Constant(constant::Constant::new(packets, window_pkts))
            }
        }
    }

    /// The next packet to send, if the transport allows one now.
    #[inline]
    pub fn next_seq(&mut self, now_ps: u64) -> Option<u32> {
        each!(self, s => s.next_seq(now_ps))
    }

    /// Whether the flow still has packets it will send without hearing back first.
    #[inline]
    pub fn has_data(&self) -> bool {
        each!(self, s => s.has_data())
    }

    #[inline]
    pub fn on_ack(&mut self, ack: &AckInfo, now_ps: u64) -> AckOutcome {
        each!(self, s => s.on_ack(ack, now_ps))
    }

    /// The receiver reports packet `seq` lost (trimmed). Neither transport of today has
    /// loss recovery: they ignore it.
    pub fn on_nack(&mut self, _seq: u32, _now_ps: u64) {
        match self {
            Sender::Paced(_) | Sender::Constant(_) => {}
        }
    }

    /// The flow's retransmission timer fired. Not armed by today's transports.
    pub fn on_timeout(&mut self, _now_ps: u64) {
        match self {
            Sender::Paced(_) | Sender::Constant(_) => {}
        }
    }

    /// Pacing rate in bit/s if the CCA paces the flow itself (the NIC's host-level pacing
    /// applies either way).
    pub fn pacing_rate(&self) -> Option<u64> {
        match self {
            Sender::Paced(_) | Sender::Constant(_) => None,
        }
    }

    pub fn is_complete(&self) -> bool {
        each!(self, s => s.is_complete())
    }
}
