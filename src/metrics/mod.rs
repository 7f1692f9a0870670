//! What a run measures. Each partition accumulates its own [`Metrics`] in integers; they are
//! merged by addition (and min/max) at the end, so the merged result does not depend on how
//! the fabric was partitioned. Floats appear only in the report.

pub(crate) mod bound;
pub(crate) mod fct_bins;
pub mod flow_log;
pub mod histogram_wire;
pub(crate) mod phases;
mod port_stats;
pub(crate) mod process;
pub(crate) mod rho_max;
mod sample_histogram;
mod stages;
pub mod timeseries;
pub(crate) mod workload_bound;

pub use flow_log::FlowRecord;
pub use phases::PhaseStats;
pub use port_stats::PortStats;
pub use rho_max::RhoMax;
pub use sample_histogram::SampleHistogram;
pub use stages::StageStats;
pub use timeseries::{CwndPoint, FlowEvent, FlowEventKind, Timeseries};

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

/// Packet and flow counters of one partition.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Counters {
    /// Events processed.
    pub events: u64,
    /// Data packets hosts sent (retransmissions included).
    pub data_sent: u64,
    /// Whole (untrimmed) data packets that reached their destination.
    pub data_delivered: u64,
    /// Data packets switches dropped (full buffer, or Opera's `opera_clipped`).
    pub data_dropped: u64,
    /// Control packets sent: ACKs, NACKs and pulls.
    pub acks_sent: u64,
    /// Control packets (ACKs, NACKs, pulls) that reached their host.
    pub acks_delivered: u64,
    /// Control packets switches dropped.
    pub acks_dropped: u64,
    /// Congestion-experienced marks switches set on data packets.
    pub ecn_marked: u64,
    /// Flows that completed.
    pub flows_completed: u64,
    /// ACKs that acknowledged nothing new (duplicate, late, or for an unknown flow).
    pub stale_acks: u64,
    /// Data packets cut to a header by a switch.
    pub trims: u64,
    /// Trimmed headers that reached their destination.
    pub headers_delivered: u64,
    /// Trimmed headers a full header queue sent back to their sender as NACKs
    /// (`switch.return_to_sender`; the NACKs are counted in `nacks_sent` and `acks_sent`).
    pub headers_returned: u64,
    /// NACKs sent (also counted in `acks_sent`: ACKs and NACKs share the control counters).
    pub nacks_sent: u64,
    /// NDP pulls sent, delivered and dropped (also counted in `acks_sent`,
    /// `acks_delivered` and `acks_dropped`: pulls are control packets).
    pub pulls_sent: u64,
    /// NDP pulls delivered (see `pulls_sent`).
    pub pulls_delivered: u64,
    /// NDP pulls dropped (see `pulls_sent`).
    pub pulls_dropped: u64,
    /// Data packets sent again (after a NACK, a timeout or a loss found by reordering).
    pub retransmissions: u64,
    /// Retransmission timeouts that declared a packet lost.
    pub timeouts: u64,
    /// Packets declared lost by the SACK reordering rule.
    pub reorder_losses: u64,
    /// Whole data packets that reached a receiver already holding them.
    pub duplicates_delivered: u64,
    /// Payload bytes delivered to receivers for the first time (each byte once).
    pub payload_bytes_delivered: u64,
    /// LB advertisements switches sent (`PacketKind::Advert`: not payload, not ACKs).
    pub adverts_sent: u64,
    /// Their bytes (what they cost the links).
    pub advert_bytes_sent: u64,
    /// Advertisements consumed by the switch at the other end of their link.
    pub adverts_delivered: u64,
    /// Opera: packets lost because their uplink's rotor was dark when their last bit left.
    pub opera_clipped: u64,
    /// Opera: packets that left an uplink over another circuit than their label planned.
    pub opera_late: u64,
    /// Opera RotorLB (bulk): packets hosts sent into a rotor slot (also in `data_sent`).
    pub rlb_sent: u64,
    /// RotorLB packets delivered to their final receiver over one rotor link (direct).
    pub rlb_one_hop: u64,
    /// RotorLB packets delivered over two rotor links (Valiant, through a host of a third
    /// rack).
    pub rlb_two_hop: u64,
    /// RotorLB packets an intermediate host accepted for relaying (their frame ends there;
    /// the second leg is a new send).
    pub rlb_relayed: u64,
    /// RotorLB packets an intermediate host refused (its queue for their destination was
    /// full): returned to their sender by a control packet.
    pub rlb_rejected: u64,
    /// RotorLB packets bounced by a ToR whose uplink no longer led to their rack (stale),
    /// returned to the host that sent them.
    pub rlb_bounced: u64,
    /// Of those, bounced before their transmission began (their circuit was gone when their
    /// turn came: they waited behind low-latency traffic past their slot).
    pub rlb_stale: u64,
    /// RotorLB packets a host started sending while its rotor did not connect its rack to
    /// the packet's next rack (checked at the source ToR; the design keeps this 0).
    pub rlb_off_circuit: u64,
    /// First data packet sent by any host (u64::MAX: none).
    pub first_send_ps: u64,
    /// Last ACK that completed a flow.
    pub last_ack_ps: u64,
    /// Time of the last event processed.
    pub last_event_ps: u64,
}

impl Counters {
    /// All zero, with `first_send_ps` at u64::MAX (no send yet).
    pub fn new() -> Counters {
        Counters {
            first_send_ps: u64::MAX,
            ..Default::default()
        }
    }

    /// Adds `o` into these counters (the earliest first send, the latest times).
    pub fn merge(&mut self, o: &Counters) {
        self.events += o.events;
        self.data_sent += o.data_sent;
        self.data_delivered += o.data_delivered;
        self.data_dropped += o.data_dropped;
        self.acks_sent += o.acks_sent;
        self.acks_delivered += o.acks_delivered;
        self.acks_dropped += o.acks_dropped;
        self.ecn_marked += o.ecn_marked;
        self.flows_completed += o.flows_completed;
        self.stale_acks += o.stale_acks;
        self.trims += o.trims;
        self.headers_delivered += o.headers_delivered;
        self.headers_returned += o.headers_returned;
        self.nacks_sent += o.nacks_sent;
        self.pulls_sent += o.pulls_sent;
        self.pulls_delivered += o.pulls_delivered;
        self.pulls_dropped += o.pulls_dropped;
        self.retransmissions += o.retransmissions;
        self.timeouts += o.timeouts;
        self.reorder_losses += o.reorder_losses;
        self.duplicates_delivered += o.duplicates_delivered;
        self.payload_bytes_delivered += o.payload_bytes_delivered;
        self.adverts_sent += o.adverts_sent;
        self.advert_bytes_sent += o.advert_bytes_sent;
        self.adverts_delivered += o.adverts_delivered;
        self.opera_clipped += o.opera_clipped;
        self.opera_late += o.opera_late;
        self.rlb_sent += o.rlb_sent;
        self.rlb_one_hop += o.rlb_one_hop;
        self.rlb_two_hop += o.rlb_two_hop;
        self.rlb_relayed += o.rlb_relayed;
        self.rlb_rejected += o.rlb_rejected;
        self.rlb_bounced += o.rlb_bounced;
        self.rlb_stale += o.rlb_stale;
        self.rlb_off_circuit += o.rlb_off_circuit;
        self.first_send_ps = self.first_send_ps.min(o.first_send_ps);
        self.last_ack_ps = self.last_ack_ps.max(o.last_ack_ps);
        self.last_event_ps = self.last_event_ps.max(o.last_event_ps);
    }
}

/// Largest value a histogram tracks: one hour, in ns. Larger values are clamped to it.
pub const HISTOGRAM_MAX_NS: u64 = 3_600_000_000_000;

/// A histogram for merged results: nanoseconds, 3 significant digits, fixed bounds, so that
/// every rank's merged histogram has the same layout and serializes to the same bytes however
/// the run was partitioned (about 0.5 MB each).
pub fn new_histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, HISTOGRAM_MAX_NS, 3).expect("valid histogram bounds")
}

/// A histogram for recording in one partition: same precision, but it grows only as far as
/// the values recorded need (many partitions must not each hold a full-range histogram).
fn new_recording_histogram() -> Histogram<u64> {
    let mut h = Histogram::new(3).expect("3 significant digits is valid");
    h.auto(true);
    h
}

/// Records `ns`, clamped to [`HISTOGRAM_MAX_NS`], in a histogram that grows as needed.
/// (Not `saturating_record`: on a growing histogram it clamps to the current top instead of
/// growing.)
#[inline]
pub fn record_ns(h: &mut Histogram<u64>, ns: u64) {
    h.record(ns.min(HISTOGRAM_MAX_NS))
        .expect("a growing histogram records any clamped value");
}

/// Records `ns` in histogram `i` of a partition's list (FCT by size bin), growing the list
/// with growing histograms.
#[inline]
pub fn record_indexed_ns(hists: &mut Vec<Histogram<u64>>, i: usize, ns: u64) {
    if hists.len() <= i {
        hists.resize_with(i + 1, new_recording_histogram);
    }
    record_ns(&mut hists[i], ns);
}

/// Adds histograms `o` into the list `acc` entry by entry, growing it with fixed-bound
/// histograms (merged results).
pub fn merge_indexed(acc: &mut Vec<Histogram<u64>>, o: &[Histogram<u64>]) {
    if acc.len() < o.len() {
        acc.resize_with(o.len(), new_histogram);
    }
    for (a, h) in acc.iter_mut().zip(o) {
        a.add(h).expect("auto-resizing histograms always merge");
    }
}

/// Everything a partition measures; partitions' metrics merge into the run's.
#[derive(Serialize, Deserialize)]
pub struct Metrics {
    /// Packet and flow counters.
    pub counters: Counters,
    /// One-way latency of data packets, source NIC start of transmission to arrival, in ns.
    #[serde(with = "histogram_wire::serde_v2")]
    pub latency_ns: Histogram<u64>,
    /// Flow completion times (flow start to last ACK), in ns.
    #[serde(with = "histogram_wire::serde_v2")]
    pub fct_ns: Histogram<u64>,
    /// Queue, utilization and goodput over time (only when asked for).
    pub series: Option<Timeseries>,
    /// Window traces of the flows of `report.trace_hosts`.
    pub cwnd: Vec<CwndPoint>,
    /// Flow starts and arrivals at `report.trace_hosts` (workloads with triggers only).
    pub flow_events: Vec<FlowEvent>,
    /// Every completed flow (`report.flow_log`), in [`FlowRecord`] order once merged.
    pub flow_log: Vec<FlowRecord>,
    /// Per-phase measurements, indexed by `Workload::phase_of` (empty without phases).
    pub phases: Vec<PhaseStats>,
    /// One-way latency of the data packets of each phase's flows, in ns, indexed like
    /// `phases` (grown on first use).
    #[serde(with = "histogram_wire::serde_v2_vec")]
    pub phase_latency_ns: Vec<Histogram<u64>>,
    /// FCT of completed flows by size bin (`fct_bins.rs`), in ns, grown on first use.
    #[serde(with = "histogram_wire::serde_v2_vec")]
    pub fct_by_size_ns: Vec<Histogram<u64>>,
    /// FCT of each phase's completed flows, in ns, indexed like `phases`.
    #[serde(with = "histogram_wire::serde_v2_vec")]
    pub phase_fct_ns: Vec<Histogram<u64>>,
}

impl Default for Metrics {
    fn default() -> Self {
        Metrics {
            counters: Counters::new(),
            latency_ns: new_histogram(),
            fct_ns: new_histogram(),
            series: None,
            cwnd: Vec::new(),
            flow_events: Vec::new(),
            flow_log: Vec::new(),
            phases: Vec::new(),
            phase_latency_ns: Vec::new(),
            fct_by_size_ns: Vec::new(),
            phase_fct_ns: Vec::new(),
        }
    }
}

impl Metrics {
    /// Metrics of one partition (growing histograms; merge them into a `Metrics::default()`).
    pub fn recording() -> Metrics {
        Metrics {
            counters: Counters::new(),
            latency_ns: new_recording_histogram(),
            fct_ns: new_recording_histogram(),
            series: None,
            cwnd: Vec::new(),
            flow_events: Vec::new(),
            flow_log: Vec::new(),
            phases: Vec::new(),
            phase_latency_ns: Vec::new(),
            fct_by_size_ns: Vec::new(),
            phase_fct_ns: Vec::new(),
        }
    }

    /// Adds a partition's metrics `o` into these: counters, histograms, series and logs.
    pub fn merge(&mut self, o: &Metrics) {
        self.counters.merge(&o.counters);
        self.latency_ns
            .add(&o.latency_ns)
            .expect("auto-resizing histograms always merge");
        self.fct_ns
            .add(&o.fct_ns)
            .expect("auto-resizing histograms always merge");
        self.merge_series(o.series.as_ref(), &o.cwnd);
        self.merge_flow_events(&o.flow_events);
        self.merge_flow_log(&o.flow_log);
        phases::merge(&mut self.phases, &o.phases);
        self.merge_phase_latency(&o.phase_latency_ns);
        merge_indexed(&mut self.fct_by_size_ns, &o.fct_by_size_ns);
        merge_indexed(&mut self.phase_fct_ns, &o.phase_fct_ns);
    }

    /// Adds per-phase latency histograms into this (merged) `Metrics`, growing it with
    /// fixed-bound histograms.
    pub fn merge_phase_latency(&mut self, o: &[Histogram<u64>]) {
        merge_indexed(&mut self.phase_latency_ns, o);
    }

    /// Appends flow events; [`Metrics::sort_logs`] orders them once every part is in.
    pub fn merge_flow_events(&mut self, events: &[FlowEvent]) {
        self.flow_events.extend_from_slice(events);
    }

    /// Appends flow records; [`Metrics::sort_logs`] orders them once every part is in.
    pub fn merge_flow_log(&mut self, records: &[FlowRecord]) {
        self.flow_log.extend_from_slice(records);
    }

    /// Puts the flow events in time order and the flow log in [`FlowRecord`] order, which
    /// do not depend on the split (each event and each completion happens in exactly one
    /// partition). Called once after the last merge: sorting after each of P merges would
    /// cost P sorts of a growing log.
    pub fn sort_logs(&mut self) {
        self.flow_events.sort_unstable();
        self.flow_log.sort_unstable();
    }

    /// Merges time series and window traces (kept in time order).
    pub fn merge_series(&mut self, series: Option<&Timeseries>, cwnd: &[CwndPoint]) {
        if let Some(o) = series {
            match &mut self.series {
                Some(mine) => mine.merge(o),
                None => self.series = Some(o.clone()),
            }
        }
        if !cwnd.is_empty() {
            self.cwnd.extend_from_slice(cwnd);
            self.cwnd.sort_unstable();
        }
    }
}
