//! Congestion-control algorithms: one file per CCA implementing [`CongestionControl`], listed
//! once in `ccas!` (which writes the [`Cc`] enum and its dispatch). A CCA owns the
//! flow's window (and, for Swift below one packet, a pacing gap); the reliable transport
//! (`super::reliable`) owns everything else — sequence numbers, send records, the RTT
//! estimator, loss detection and retransmission — and tells the CCA what happened through
//! the signals below.
//!
//! Sizes are bytes as packets occupy buffers (payload + header, htsim's "MTU"),
//! times are picoseconds. The interface, per CCA file:
//! - `on_ack(&mut self, &AckSignal)`: an ACK acknowledged `newly_acked_bytes` for the first
//!   time (possibly 0: a duplicate still carries ECN and delay);
//! - `on_nack(&mut self, &NackSignal)`: a packet was trimmed and NACKed;
//! - `on_loss(&mut self, &LossSignal)`: a packet was declared lost by the retransmission
//!   timer or by the SACK reordering rule;
//! - `cwnd_bytes(&self)`: the window — the transport sends while
//!   `in_flight + packet ≤ cwnd`;
//! - `pacing_gap_ps(&self)`: the least gap between two packets of the flow, if the CCA paces;
//! - `on_recovery(&mut self, Recovery)` and `newreno(&self)` (default: nothing, false): the
//!   NewReno window rules of `host.dctcp.recovery = "newreno"`, which only DCTCP follows.

pub(crate) mod constant;
pub(crate) mod dctcp;
pub(crate) mod median;
pub(crate) mod nscc;
pub(crate) mod swift;

use serde::{Deserialize, Serialize};

/// What a CCA is built from: the fabric, the flow's path and the packet sizes, in the
/// simulator's units.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct CcEnv {
    /// A full data packet in buffers: payload + header (htsim's MTU).
    pub mtu_bytes: u64,
    /// Payload of a full data packet (MSS).
    pub mss_bytes: u64,
    /// The sending host's line rate.
    pub line_rate_bps: u64,
    /// Unloaded round trip of this flow's path (data out, ACK back).
    pub base_rtt_ps: u64,
    /// Largest unloaded round trip of the fabric (NSCC's `network_rtt`).
    pub network_rtt_ps: u64,
    /// line rate × `base_rtt_ps`.
    pub bdp_bytes: u64,
    /// line rate × `network_rtt_ps`.
    pub network_bdp_bytes: u64,
    /// Switches on the flow's path (Swift's per-hop target).
    pub hops: u32,
    /// Switches trim rather than drop (NSCC's default target depends on it).
    pub trimming: bool,
}

/// One acknowledgement, as the CCA sees it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct AckSignal {
    pub now_ps: u64,
    /// Bytes acknowledged for the first time by this ACK (cumulative and selective).
    pub newly_acked_bytes: u64,
    /// The acknowledged data packet was ECN-marked.
    pub ecn: bool,
    /// Round-trip sample of the acknowledged packet (none if the ACK answers an earlier
    /// transmission than its latest).
    pub rtt_ps: Option<u64>,
    /// The transport's smoothed RTT (its base RTT until the first sample).
    pub srtt_ps: u64,
    /// Bytes still unacknowledged after this ACK.
    pub in_flight_bytes: u64,
    /// Bytes the ACK moved the cumulative point past, SACKed before or not (htsim's
    /// `seqno - _last_acked`); 0 for a duplicate. Counted under `host.loss_detection =
    /// "dupack"` only (0 otherwise).
    pub cum_acked_bytes: u64,
    /// Bytes sent above the cumulative point after this ACK, SACKed or not (htsim's
    /// `_highest_sent - _last_acked`); counted as `cum_acked_bytes` is.
    pub above_point_bytes: u64,
}

/// A step of NewReno fast recovery, which the duplicate-ACK loss rule
/// (`host.loss_detection = "dupack"`) reports to a CCA that follows the NewReno window
/// rules ([`CongestionControl::newreno`]). Entry is the `LossKind::Reordering` loss.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Recovery {
    /// A duplicate ACK after the fast retransmit.
    Duplicate,
    /// A new cumulative point short of the recovery point; it moved `jump_bytes`.
    Partial { jump_bytes: u64 },
    /// The cumulative point reached the recovery point; `flight_bytes` are sent above it.
    Full { flight_bytes: u64 },
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct NackSignal {
    pub now_ps: u64,
    /// Bytes of the packet that was trimmed.
    pub bytes: u64,
    /// It was trimmed at the last hop (the receiver's downlink: incast, not a bad path).
    pub last_hop: bool,
    /// Round-trip sample of the trimmed packet's header (none if it was a retransmission).
    pub rtt_ps: Option<u64>,
    pub srtt_ps: u64,
    /// Bytes still unacknowledged after the packet was taken out of flight.
    pub in_flight_bytes: u64,
}

/// How a loss was found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum LossKind {
    /// The retransmission timer fired for the oldest outstanding packet.
    Timeout,
    /// Enough later packets were acknowledged (the SACK reordering rule).
    Reordering,
}

/// Packets declared lost: one packet found by the reordering rule, or every packet
/// overdue when the retransmission timer fired (one timeout).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct LossSignal {
    pub now_ps: u64,
    pub kind: LossKind,
    /// Bytes of the lost packets.
    pub bytes: u64,
    pub srtt_ps: u64,
    /// Bytes still unacknowledged after they were taken out of flight.
    pub in_flight_bytes: u64,
}

/// What a CCA answers (the interface above): one implementation per CCA file.
pub(crate) trait CongestionControl {
    fn on_ack(&mut self, s: &AckSignal);
    fn on_nack(&mut self, s: &NackSignal);
    fn on_loss(&mut self, s: &LossSignal);
    fn cwnd_bytes(&self) -> u64;
    fn pacing_gap_ps(&self) -> Option<u64>;
    /// A step of fast recovery (only sent to a CCA whose `newreno()` is true).
    fn on_recovery(&mut self, _r: Recovery) {}
    /// The NewReno window rules: new data goes while the bytes from the cumulative point to
    /// the highest sent, plus the packet, fit the window (SACKed bytes count), and fast and
    /// partial-ACK retransmissions go regardless of it.
    fn newreno(&self) -> bool {
        false
    }
}

/// Writes [`Cc`] with one variant per line and its `CongestionControl` impl, each method a
/// `match` over the variants (static dispatch: `on_ack` runs for every ACK).
macro_rules! ccas {
    ($($(#[$doc:meta])* $variant:ident($ty:ty),)*) => {
        /// A flow's congestion controller: one variant per CCA.
        // The CCAs that adapt carry a few hundred bytes of state each; only `Constant` is
        // small. Boxing them would add a pointer chase on every ACK for no saving.
        #[allow(clippy::large_enum_variant)]
        #[derive(Clone, Debug, Serialize, Deserialize)]
        pub(crate) enum Cc {
            $($(#[$doc])* $variant($ty),)*
        }

        impl CongestionControl for Cc {
            #[inline]
            fn on_ack(&mut self, s: &AckSignal) {
                match self { $(Cc::$variant(c) => c.on_ack(s),)* }
            }
            fn on_nack(&mut self, s: &NackSignal) {
                match self { $(Cc::$variant(c) => c.on_nack(s),)* }
            }
            fn on_loss(&mut self, s: &LossSignal) {
                match self { $(Cc::$variant(c) => c.on_loss(s),)* }
            }
            #[inline]
            fn cwnd_bytes(&self) -> u64 {
                match self { $(Cc::$variant(c) => c.cwnd_bytes(),)* }
            }
            #[inline]
            fn pacing_gap_ps(&self) -> Option<u64> {
                match self { $(Cc::$variant(c) => c.pacing_gap_ps(),)* }
            }
            fn on_recovery(&mut self, r: Recovery) {
                match self { $(Cc::$variant(c) => c.on_recovery(r),)* }
            }
            #[inline]
            fn newreno(&self) -> bool {
                match self { $(Cc::$variant(c) => c.newreno(),)* }
            }
        }
    };
}

ccas! {
    /// A fixed window (`host.cc = "constant"`, and NDP's unlimited one).
    Constant(constant::ConstantWindow),
    Dctcp(dctcp::Dctcp),
    /// Swift, or MSwift when it carries a delay history.
    Swift(swift::Swift),
    Nscc(nscc::Nscc),
}

/// Signals and the fabric the CCA tests share.
#[cfg(test)]
pub(crate) mod test_support {
    use super::{AckSignal, CcEnv, LossKind, LossSignal, NackSignal};
    use crate::time::PS_PER_US;

    pub(crate) const MTU_BYTES: u64 = 4158;
    pub(crate) const RTT_PS: u64 = 8 * PS_PER_US;

    /// 800 Gb/s, 4158-byte packets (4096 payload), 8 µs RTT, 5 switches, no trimming:
    /// BDP = 800e9 b/s × 8 µs / 8 = 800 000 bytes.
    pub(crate) fn env() -> CcEnv {
        let line_rate_bps = 800_000_000_000;
        let bdp_bytes = line_rate_bps / 8 * RTT_PS / 1_000_000_000_000;
        CcEnv {
            mtu_bytes: MTU_BYTES,
            mss_bytes: 4096,
            line_rate_bps,
            base_rtt_ps: RTT_PS,
            network_rtt_ps: RTT_PS,
            bdp_bytes,
            network_bdp_bytes: bdp_bytes,
            hops: 5,
            trimming: false,
        }
    }

    pub(crate) fn ack(
        now_ps: u64,
        newly_acked_bytes: u64,
        ecn: bool,
        rtt_ps: Option<u64>,
    ) -> AckSignal {
        AckSignal {
            now_ps,
            newly_acked_bytes,
            ecn,
            rtt_ps,
            srtt_ps: RTT_PS,
            in_flight_bytes: 0,
            cum_acked_bytes: 0,
            above_point_bytes: 0,
        }
    }

    pub(crate) fn nack(now_ps: u64) -> NackSignal {
        NackSignal {
            now_ps,
            bytes: MTU_BYTES,
            last_hop: false,
            rtt_ps: None,
            srtt_ps: RTT_PS,
            in_flight_bytes: 0,
        }
    }

    pub(crate) fn loss(now_ps: u64, kind: LossKind) -> LossSignal {
        LossSignal {
            now_ps,
            kind,
            bytes: MTU_BYTES,
            srtt_ps: RTT_PS,
            in_flight_bytes: 0,
        }
    }
}
