//! Transports: per-flow sender and receiver state of the hosts, behind one enum so the NIC
//! and host code are the same for every congestion-control algorithm.
//!
//! - [`paced::Paced`] (`host.cc = "none"`): no window, no loss recovery; the NIC paces the
//!   host at `host.load` × line rate (the Ofan paper's LB-isolation mode).
//! - [`reliable::Reliable`] (every other `host.cc`): SACK, NACKs, a retransmission timer
//!   and a reordering rule, with the window of a CCA from [`cc`]; under `host.cc = "ndp"`
//!   with an unlimited window and NDP's pull credit instead ([`ndp`]), the receiver's pull
//!   queue being the host's (`net/pull_queue.rs`).
//!
//! Late and unexpected acknowledgements are counted, never a panic (see `paced.rs` for what
//! a counting transport cannot detect).

pub(crate) mod cc;
pub(crate) mod ndp;
pub(crate) mod paced;
pub(crate) mod receiver;
pub(crate) mod reliable;
pub(crate) mod rotor;
pub(crate) mod seqset;

use crate::scenario::cc::{DctcpConfig, MswiftConfig, NsccConfig, SwiftConfig};
use cc::CcEnv;
pub use ndp::NdpParams;
pub(crate) use receiver::Receiver;
pub use reliable::ReliableParams;
pub(crate) use reliable::{NackFrom, Send};
pub use rotor::RotorParams;

/// What an ACK tells the sender. RTT samples come from the sender's own record of when it
/// sent `seq` (the packet has no room to echo it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AckInfo {
    /// The sequence number this ACK was sent for.
    pub seq: u32,
    /// Every packet below this was received.
    pub cumulative: u32,
    /// Bit i: packet `sack_base + i` was received.
    pub sack: u64,
    /// First sequence number of the SACK bitmap (`receiver::sack_base`).
    pub sack_base: u32,
    /// The acknowledged data packet was ECN-marked.
    pub ecn_echo: bool,
    /// Entropy value the ACK carried: the acknowledged data packet's for policies whose ACKs
    /// echo it (ECMP, and every reliable transport), the ACK's own under RPS with `cc = none`.
    pub entropy: u16,
    /// Transmission number (modulo 4) of the data packet this ACK answers.
    pub tx_echo: u8,
}

/// Which CCA a reliable flow runs, with its parameters.
#[derive(Clone, Debug, PartialEq)]
pub enum CcChoice {
    /// A fixed window, in bytes.
    Constant {
        /// The window, in bytes.
        cwnd_bytes: u64,
    },
    /// DCTCP (`host.cc = "dctcp"`).
    Dctcp(DctcpConfig),
    /// UEC NSCC (`host.cc = "nscc"`).
    Nscc(NsccConfig),
    /// Swift (`host.cc = "swift"`).
    Swift(SwiftConfig),
    /// Swift fed the median of recent delays (`host.cc = "mswift"`).
    Mswift(SwiftConfig, MswiftConfig),
    /// NDP: no window (an unlimited constant one); pull credit gates the sender.
    Ndp(ndp::NdpParams),
}

/// The scenario's transport, in the units senders use.
#[derive(Clone, Debug, PartialEq)]
pub enum TransportParams {
    /// `host.cc = "none"`: paced, no window, no loss recovery.
    Paced,
    /// Every other `host.cc`: the reliable transport.
    Reliable {
        /// Its timer and loss-detection parameters.
        params: ReliableParams,
        /// Its window rule.
        cc: CcChoice,
        /// The receiver ACKs once this many bytes of data are unacknowledged (0: every
        /// packet), and at once in the cases of `transport::receiver`.
        ack_coalesce_bytes: u64,
    },
}

impl TransportParams {
    /// Whether flows run the reliable transport (any `host.cc` but `none`).
    pub fn is_reliable(&self) -> bool {
        matches!(self, TransportParams::Reliable { .. })
    }

    /// NDP's parameters, under `host.cc = "ndp"`.
    pub fn ndp(&self) -> Option<&ndp::NdpParams> {
        match self {
            TransportParams::Reliable {
                cc: CcChoice::Ndp(p),
                ..
            } => Some(p),
            _ => None,
        }
    }
}

/// Per-flow sender state: one variant per transport.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub(crate) enum Sender {
    /// `host.cc = "none"`.
    Paced(paced::Paced),
    /// Boxed: a paced all-to-all keeps thousands of flows per host, which should not pay for
    /// the reliable transport's size.
    Reliable(Box<reliable::Reliable>),
}

impl CcChoice {
    fn build(&self, env: &CcEnv) -> cc::Cc {
        match self {
            CcChoice::Constant { cwnd_bytes } => {
                cc::Cc::Constant(cc::constant::ConstantWindow::new(*cwnd_bytes))
            }
            CcChoice::Dctcp(cfg) => cc::Cc::Dctcp(cc::dctcp::Dctcp::new(cfg, env)),
            CcChoice::Swift(cfg) => cc::Cc::Swift(cc::swift::Swift::new(cfg, env, None)),
            CcChoice::Mswift(cfg, m) => cc::Cc::Swift(cc::swift::Swift::new(cfg, env, Some(m))),
            CcChoice::Nscc(cfg) => cc::Cc::Nscc(cc::nscc::Nscc::new(cfg, env)),
            // Half the range: `in_flight + size ≤ cwnd` cannot overflow.
            CcChoice::Ndp(_) => cc::Cc::Constant(cc::constant::ConstantWindow::new(u64::MAX / 2)),
        }
    }
}

impl Sender {
    /// A sender for a flow of `packets` packets (full ones of `full_bytes` in buffers, the
    /// last of `last_bytes`) under the scenario's transport; `env` describes its path and
    /// `flow_paths` counts its shortest paths (`Model::flow_paths`).
    pub(crate) fn new(
        params: &TransportParams,
        packets: u32,
        full_bytes: u32,
        last_bytes: u32,
        env: &CcEnv,
        flow_paths: u32,
    ) -> Sender {
        match params {
            TransportParams::Paced => Sender::Paced(paced::Paced::new(packets)),
            TransportParams::Reliable { params, cc, .. } => {
                let mut r = reliable::Reliable::new(
                    packets,
                    full_bytes,
                    last_bytes,
                    env.base_rtt_ps,
                    params,
                    flow_paths,
                    cc.build(env),
                );
                if let CcChoice::Ndp(ndp) = cc {
                    r = r.with_pull_credit(ndp.initial_window_pkts);
                }
                Sender::Reliable(Box::new(r))
            }
        }
    }

    /// The next packet to send at `now_ps`, if the transport allows one now.
    #[inline]
    pub(crate) fn next_seq(&mut self, now_ps: u64) -> Option<Send> {
        match self {
            Sender::Paced(s) => s.next_seq(now_ps).map(|seq| Send {
                seq,
                retransmission: false,
                ack_req: false,
                tx: 1,
            }),
            Sender::Reliable(s) => s.next_seq(now_ps),
        }
    }

    /// Whether the flow still has packets it will send without hearing back first.
    #[inline]
    pub(crate) fn has_data(&self) -> bool {
        match self {
            Sender::Paced(s) => s.has_data(),
            Sender::Reliable(s) => s.has_data(),
        }
    }

    /// Whether every packet of the flow has been acknowledged.
    pub(crate) fn is_complete(&self) -> bool {
        match self {
            Sender::Paced(s) => s.is_complete(),
            Sender::Reliable(s) => s.is_complete(),
        }
    }
}
