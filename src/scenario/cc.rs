//! Parameters of the congestion-control algorithms (`[host.dctcp]`, `[host.nscc]`,
//! `[host.swift]`, `[host.mswift]`), with htsim's defaults (UEC htsim and csg-htsim
//! values). Each is used only when `host.cc` names its algorithm.

use super::validate::{FieldError, Result};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// `[host.dctcp]` (Alizadeh et al., SIGCOMM 2010; csg-htsim's `dctcp.cpp`).
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct DctcpConfig {
    /// EWMA gain g of α.
    #[schemars(range(max = 1), extend("exclusiveMinimum" = 0))]
    pub g: f64,
    /// Initial window, in data packets (htsim's `TcpSrc` constructor: 10).
    #[schemars(range(min = 1))]
    pub init_cwnd_pkts: f64,
    /// Initial window in bandwidth-delay products of the network (host line rate × the base RTT of
    /// the fabric's longest path, rounded up to whole packets as UEC htsim's `calculate_bdp_pkt`);
    /// replaces `init_cwnd_pkts` when set. `scenarios/ofan/cc/dctcp_*.toml` use 1.5 (UEC htsim
    /// main's initial window).
    #[schemars(range(max = 1e6), extend("exclusiveMinimum" = 0))]
    pub init_cwnd_bdp: Option<f64>,
    /// Initial slow-start threshold, in data packets. Unset: unlimited (RFC 5681: slow
    /// start ends at the first ECN echo or loss). htsim's TCP uses 100, which at 800 Gb/s
    /// leaves a lone flow at 2/3 of line rate for hundreds of round trips.
    #[schemars(range(min = 1))]
    pub init_ssthresh_pkts: Option<f64>,
    /// Cut the window every window of ACKs while α > 0 (htsim), instead of only after a
    /// window that saw an ECN echo (the DCTCP paper and RFC 8257, the default: with the
    /// htsim rule an 8-to-1 incast at 800 Gb/s keeps its queue at a quarter of the threshold
    /// and loses a tenth of the link).
    pub cut_every_window: bool,
    /// Loss recovery's window rules. `sack` (the default): the window counts the bytes in
    /// flight (SACKed ones not), a fast retransmit halves it at most once per srtt, and growth
    /// credits every byte newly acknowledged. `newreno`: htsim's `TcpSrc` (UEC htsim,
    /// sim/tcp.cpp), the simulator of the Ofan paper's Fig. 12(a), with MSS = one full packet:
    /// new data goes while the cumulative point + cwnd covers it (SACKed bytes above a hole
    /// still count); the fast retransmit sets
    /// ssthresh = max(cwnd/2, 2 MSS) and cwnd = ssthresh + 3 MSS, each further duplicate adds
    /// 1 MSS, a partial ACK deflates cwnd by the bytes it acknowledged cumulatively (then adds
    /// 1 MSS) and resends the next hole regardless of the window, and the ACK that reaches the
    /// recovery point sets cwnd = min(ssthresh, flight + MSS); outside recovery only an ACK that
    /// moves the cumulative point grows the window, crediting the room left above the new
    /// point (cwnd − bytes sent above it; none if negative), at most 1 MSS. Needs
    /// `host.loss_detection = "dupack"`.
    pub recovery: DctcpRecovery,
}

/// `host.dctcp.recovery`: which loss-recovery window rules DCTCP follows.
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum DctcpRecovery {
    /// Window = bytes in flight; one halving per srtt; SACKed bytes credit growth.
    #[default]
    Sack,
    /// htsim `TcpSrc`'s NewReno: window from the cumulative point, inflation in recovery.
    Newreno,
}

impl Default for DctcpConfig {
    fn default() -> Self {
        DctcpConfig {
            g: 1.0 / 16.0,
            init_cwnd_pkts: 10.0,
            init_cwnd_bdp: None,
            init_ssthresh_pkts: None,
            cut_every_window: false,
            recovery: DctcpRecovery::Sack,
        }
    }
}

/// `[host.nscc]` (UEC htsim's `initNsccParams`). Gains are given in htsim's reference
/// units and scaled by a = network BDP / reference BDP and
/// b = target / reference RTT, as htsim does.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct NsccConfig {
    /// Target queuing delay in µs. Unset: 0.75 × network RTT with trimming, 1.0 × without.
    #[schemars(extend("exclusiveMinimum" = 0))]
    pub target_qdelay_us: Option<f64>,
    /// Reference BDP the gains are scaled from, in bytes (150 000 = 100 Gb/s × 12 µs): a = network
    /// BDP / reference BDP.
    #[schemars(extend("exclusiveMinimum" = 0))]
    pub reference_bdp_bytes: f64,
    /// Reference RTT the proportional gain is scaled from, in µs: b = target / reference RTT.
    #[schemars(extend("exclusiveMinimum" = 0))]
    pub reference_rtt_us: f64,
    /// Proportional increase gain α = this × MSS·a·b / target.
    #[schemars(range(min = 0))]
    pub prop_gain: f64,
    /// Fair increase fi = this × MSS·a.
    #[schemars(range(min = 0))]
    pub fair_increase_mss: f64,
    /// Additive increase η per adjust period = this × MSS·a.
    #[schemars(range(min = 0))]
    pub eta_mss: f64,
    /// Multiplicative-decrease gain γ.
    #[schemars(range(max = 1), extend("exclusiveMinimum" = 0))]
    pub gamma: f64,
    /// Fast increase: the window grows by this × a per byte acknowledged while the delay is below
    /// `fast_increase_delay_us`.
    #[schemars(range(min = 0))]
    pub fast_increase_scale: f64,
    /// Fast increase applies while the delay is below this, in µs.
    #[schemars(range(min = 0))]
    pub fast_increase_delay_us: f64,
    /// EWMA weight of the average queuing delay.
    #[schemars(range(max = 1), extend("exclusiveMinimum" = 0))]
    pub delay_ewma: f64,
    /// Apply accumulated increases after this many MTUs of ACKed data (or a network RTT).
    #[schemars(extend("exclusiveMinimum" = 0))]
    pub adjust_bytes_mtus: f64,
    /// Quick adapt only if the bytes achieved in the last epoch are below maxwnd / 2^gate.
    #[schemars(range(max = 30))]
    pub qa_gate: u32,
    /// Quick adapt on a delay above this × target.
    #[schemars(extend("exclusiveMinimum" = 0))]
    pub qa_threshold_factor: f64,
    /// Largest window (maxwnd), in BDPs of the flow's base RTT; also the initial window.
    #[schemars(extend("exclusiveMinimum" = 0))]
    pub max_window_bdp: f64,
    /// Start each flow's base RTT at its own path's unloaded RTT (htsim
    /// `-enable_accurate_base_rtt`) instead of the network RTT (htsim's default); samples
    /// lower it either way.
    pub accurate_base_rtt: bool,
}

impl Default for NsccConfig {
    fn default() -> Self {
        NsccConfig {
            target_qdelay_us: None,
            reference_bdp_bytes: 150_000.0,
            reference_rtt_us: 12.0,
            prop_gain: 4.0,
            fair_increase_mss: 5.0,
            eta_mss: 0.15,
            gamma: 0.8,
            fast_increase_scale: 0.25,
            fast_increase_delay_us: 1.0,
            delay_ewma: 0.0125,
            adjust_bytes_mtus: 8.0,
            qa_gate: 3,
            qa_threshold_factor: 4.0,
            max_window_bdp: 1.5,
            accurate_base_rtt: false,
        }
    }
}

/// `[host.swift]` (Kumar et al., SIGCOMM 2020; htsim values, the paper's production values are not
/// public). Also the base of `mswift`.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct SwiftConfig {
    /// Additive increase, packets per RTT.
    #[schemars(extend("exclusiveMinimum" = 0))]
    pub ai: f64,
    /// Multiplicative-decrease gain β.
    #[schemars(range(max = 1), extend("exclusiveMinimum" = 0))]
    pub beta: f64,
    /// Largest multiplicative decrease in one step.
    #[schemars(extend("exclusiveMinimum" = 0, "exclusiveMaximum" = 1))]
    pub max_mdf: f64,
    /// Base target delay (a full RTT, propagation included), in µs.
    #[schemars(extend("exclusiveMinimum" = 0))]
    pub base_target_us: f64,
    /// Target added per switch hop, in µs. Unset: base_target / 6.55.
    #[schemars(range(min = 0))]
    pub hop_scale_us: Option<f64>,
    /// Flow-based scaling range (the most target it adds), in µs. Unset: 5 × base_target.
    #[schemars(range(min = 0))]
    pub fs_range_us: Option<f64>,
    /// Flow-based scaling: window (packets) at which the full range applies.
    #[schemars(extend("exclusiveMinimum" = 0))]
    pub fs_min_cwnd_pkts: f64,
    /// Flow-based scaling: window (packets) at which no extra target applies; above
    /// `fs_min_cwnd_pkts`.
    pub fs_max_cwnd_pkts: f64,
    /// Smallest window, in bytes (below one packet the flow is paced: a gap of srtt·MTU/cwnd
    /// between packets).
    #[schemars(extend("exclusiveMinimum" = 0))]
    pub min_cwnd_bytes: f64,
    /// Largest window, in packets.
    #[schemars(range(min = 1))]
    pub max_cwnd_pkts: f64,
    /// Initial window, in BDPs of the flow's path (the Ofan reproduction sweeps use 1.5, where UEC
    /// htsim's data-centre main starts its senders and NSCC always starts).
    #[schemars(extend("exclusiveMinimum" = 0))]
    pub init_cwnd_bdp: f64,
    /// After this many consecutive timeouts the window drops to min_cwnd.
    #[schemars(range(min = 1))]
    pub retx_reset_threshold: u32,
}

impl Default for SwiftConfig {
    fn default() -> Self {
        SwiftConfig {
            ai: 1.0,
            beta: 0.8,
            max_mdf: 0.5,
            base_target_us: 20.0,
            hop_scale_us: None,
            fs_range_us: None,
            fs_min_cwnd_pkts: 0.1,
            fs_max_cwnd_pkts: 100.0,
            min_cwnd_bytes: 10.0,
            max_cwnd_pkts: 1000.0,
            init_cwnd_bdp: 1.0,
            retx_reset_threshold: 5,
        }
    }
}

/// `[host.mswift]` (Gerstein et al., arXiv 2509.07907): Swift fed the median of the last H
/// delay samples, H = max(⌊cwnd / MTU / 2⌋, 1), at most `history_max`. Swift's parameters
/// come from `[host.swift]`.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct MswiftConfig {
    /// Delay samples kept; Swift (`[host.swift]`) is fed the median of the last max(⌊cwnd/MTU/2⌋,
    /// 1) of them.
    #[schemars(range(min = 1, max = 1024))]
    pub history_max: u32,
}

impl Default for MswiftConfig {
    fn default() -> Self {
        MswiftConfig { history_max: 32 }
    }
}

fn check(field: &str, v: f64, ok: bool, what: &str) -> Result<()> {
    if !v.is_finite() || !ok {
        return Err(FieldError::new(field, format!("must be {what} (got {v})")));
    }
    Ok(())
}

fn positive(field: &str, v: f64) -> Result<()> {
    check(field, v, v > 0.0, "positive")
}

fn non_negative(field: &str, v: f64) -> Result<()> {
    check(field, v, v >= 0.0, "zero or positive")
}

fn fraction(field: &str, v: f64) -> Result<()> {
    check(field, v, v > 0.0 && v <= 1.0, "in (0, 1]")
}

impl DctcpConfig {
    /// `dupack_ok`: `host.loss_detection = "dupack"` (or DCTCP unused), which "newreno" needs.
    pub(crate) fn validate(&self, dupack_ok: bool) -> Result<()> {
        if self.recovery == DctcpRecovery::Newreno && !dupack_ok {
            return Err(FieldError::new(
                "host.dctcp.recovery",
                "\"newreno\" recovers from duplicate cumulative ACKs: needs \
                 host.loss_detection = \"dupack\"",
            ));
        }
        fraction("host.dctcp.g", self.g)?;
        check(
            "host.dctcp.init_cwnd_pkts",
            self.init_cwnd_pkts,
            self.init_cwnd_pkts >= 1.0,
            "at least 1 packet",
        )?;
        if let Some(b) = self.init_cwnd_bdp {
            check(
                "host.dctcp.init_cwnd_bdp",
                b,
                b > 0.0 && b <= 1e6,
                "in (0, 10^6]",
            )?;
        }
        match self.init_ssthresh_pkts {
            Some(v) => check(
                "host.dctcp.init_ssthresh_pkts",
                v,
                v >= 1.0,
                "at least 1 packet",
            ),
            None => Ok(()),
        }
    }
}

impl NsccConfig {
    pub(crate) fn validate(&self) -> Result<()> {
        if let Some(t) = self.target_qdelay_us {
            positive("host.nscc.target_qdelay_us", t)?;
        }
        positive("host.nscc.reference_bdp_bytes", self.reference_bdp_bytes)?;
        positive("host.nscc.reference_rtt_us", self.reference_rtt_us)?;
        non_negative("host.nscc.prop_gain", self.prop_gain)?;
        non_negative("host.nscc.fair_increase_mss", self.fair_increase_mss)?;
        non_negative("host.nscc.eta_mss", self.eta_mss)?;
        fraction("host.nscc.gamma", self.gamma)?;
        non_negative("host.nscc.fast_increase_scale", self.fast_increase_scale)?;
        non_negative(
            "host.nscc.fast_increase_delay_us",
            self.fast_increase_delay_us,
        )?;
        fraction("host.nscc.delay_ewma", self.delay_ewma)?;
        positive("host.nscc.adjust_bytes_mtus", self.adjust_bytes_mtus)?;
        if self.qa_gate > 30 {
            return Err(FieldError::new(
                "host.nscc.qa_gate",
                format!("must be at most 30 (got {})", self.qa_gate),
            ));
        }
        positive("host.nscc.qa_threshold_factor", self.qa_threshold_factor)?;
        positive("host.nscc.max_window_bdp", self.max_window_bdp)
    }
}

impl SwiftConfig {
    pub(crate) fn validate(&self) -> Result<()> {
        positive("host.swift.ai", self.ai)?;
        fraction("host.swift.beta", self.beta)?;
        check(
            "host.swift.max_mdf",
            self.max_mdf,
            self.max_mdf > 0.0 && self.max_mdf < 1.0,
            "in (0, 1)",
        )?;
        positive("host.swift.base_target_us", self.base_target_us)?;
        if let Some(h) = self.hop_scale_us {
            non_negative("host.swift.hop_scale_us", h)?;
        }
        if let Some(r) = self.fs_range_us {
            non_negative("host.swift.fs_range_us", r)?;
        }
        positive("host.swift.fs_min_cwnd_pkts", self.fs_min_cwnd_pkts)?;
        check(
            "host.swift.fs_max_cwnd_pkts",
            self.fs_max_cwnd_pkts,
            self.fs_max_cwnd_pkts > self.fs_min_cwnd_pkts,
            "above fs_min_cwnd_pkts",
        )?;
        positive("host.swift.min_cwnd_bytes", self.min_cwnd_bytes)?;
        check(
            "host.swift.max_cwnd_pkts",
            self.max_cwnd_pkts,
            self.max_cwnd_pkts >= 1.0,
            "at least 1 packet",
        )?;
        positive("host.swift.init_cwnd_bdp", self.init_cwnd_bdp)?;
        if self.retx_reset_threshold == 0 {
            return Err(FieldError::new(
                "host.swift.retx_reset_threshold",
                "must be at least 1",
            ));
        }
        Ok(())
    }
}

impl MswiftConfig {
    pub(crate) fn validate(&self) -> Result<()> {
        if !(1..=1024).contains(&self.history_max) {
            return Err(FieldError::new(
                "host.mswift.history_max",
                format!("must be from 1 to 1024 (got {})", self.history_max),
            ));
        }
        Ok(())
    }
}

/// `[host.ndp]` (NDP, Handley et al. SIGCOMM 2017, as Opera uses it: the Opera paper, §4.2.1;
/// opera-sim's `ndp.cpp`).
/// The smallest retransmission timeout is `host.rto_min_us`, whose default under NDP is
/// 1000 µs (opera-sim's `NdpSrc::setMinRTO(1000)`).
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct NdpConfig {
    /// Packets a flow sends at line rate before its first pull (Opera's `-cwnd 20`; the NDP paper's
    /// Clos and expander runs used 30 and 40). A flow then keeps this many packets in flight per
    /// round trip, so it reaches line rate alone only if this is at least the path's BDP in packets
    /// (at 800 Gb/s and a 6.5 µs round trip, about 156 packets of 4 KB).
    #[schemars(range(min = 1))]
    pub initial_window_pkts: u32,
    /// Each receiver paces its pulls at this fraction of its link rate: one pull per full data
    /// packet's wire time (payload, header and inter-frame gap) / `pull_rate` (opera-sim's
    /// `-pullrate 1`).
    #[schemars(range(max = 1), extend("exclusiveMinimum" = 0))]
    pub pull_rate: f64,
    /// Who paces pulls: `"host"` (one pacer per receiving host shared by the flows it receives,
    /// round-robin: the NDP paper's design) or `"flow"` (one pacer per flow, each pulling at
    /// `pull_rate` on its own, as opera-sim's `main_ndp_dynexpTopology.cpp` builds a new
    /// `NdpPullPacer` for every flow: k flows into one host pull k times its link rate).
    pub pacer: NdpPacer,
    /// The pull gap's packet: `"wire"` (payload + header + inter-frame gap) or `"payload"` (the
    /// payload alone at the link rate: opera-sim's `NdpPullPacer`, whose drain time is
    /// `Packet::data_packet_size()`, 1,436 B, so `-pullrate 1` pulls 1,500 B frames 4.5 % faster
    /// than they fit the link).
    pub pull_gap: NdpPullGap,
}

/// `host.ndp.pacer`.
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum NdpPacer {
    /// One pacer per receiving host, shared round-robin by its incoming flows.
    #[default]
    Host,
    /// One pacer per incoming flow (opera-sim).
    Flow,
}

/// `host.ndp.pull_gap`.
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum NdpPullGap {
    /// A full data packet's wire time: payload, header and inter-frame gap.
    #[default]
    Wire,
    /// The payload's time alone (opera-sim).
    Payload,
}

impl Default for NdpConfig {
    fn default() -> Self {
        NdpConfig {
            initial_window_pkts: 20,
            pull_rate: 1.0,
            pacer: NdpPacer::Host,
            pull_gap: NdpPullGap::Wire,
        }
    }
}

impl NdpConfig {
    pub(crate) fn validate(&self) -> Result<()> {
        if self.initial_window_pkts == 0 {
            return Err(FieldError::new(
                "host.ndp.initial_window_pkts",
                "must be at least 1 packet",
            ));
        }
        fraction("host.ndp.pull_rate", self.pull_rate)
    }
}
