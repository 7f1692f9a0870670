//! Time series of a run (`timeseries.csv` with `--out`) and its sampled buffer occupancy:
//! every `interval` the queue of every port is sampled, recorded in its stage's occupancy
//! histogram (the PSP paper's time-sampled p99 and average buffer) and summed per stage, the stage's cumulative transmission time is read
//! (its difference between two samples is the utilization over the interval), and payload
//! bytes delivered are added to the interval they arrived in. At the same instants each
//! switch's total queued bytes (the sum over its ports) is recorded in its tier's switch
//! occupancy histogram (the PSP paper's switch-level buffer occupancy, in MB). Partitions
//! sample their own nodes at the same instants (before any event at that instant), so sums
//! and histograms merged across partitions and ranks do not depend on the partitioning.
//!
//! Also the congestion-window traces of chosen hosts' flows (`cwnd.csv`).

use super::SampleHistogram;
use serde::{Deserialize, Serialize};

/// Samples of one partition (or merged), by sample index and stage.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Timeseries {
    /// Time between two samples, in ps.
    pub interval_ps: u64,
    /// Stages of the fabric (entries per sample).
    pub stages: usize,
    /// Indexed by `sample × stages + stage`: Σ queued bytes over the stage's ports at the
    /// sample.
    pub queue_bytes: Vec<u64>,
    /// Largest port queue of the stage at the sample.
    pub queue_max_bytes: Vec<u64>,
    /// Σ transmission time of the stage's ports up to the sample (cumulative).
    pub busy_ps: Vec<u128>,
    /// Indexed by `interval`: payload bytes delivered (first copies) in
    /// (i·interval, (i+1)·interval].
    pub goodput_bytes: Vec<u64>,
    /// Indexed by `stage`: every sampled port queue, in bytes.
    pub occupancy: Vec<SampleHistogram>,
    /// Indexed by `switch tier − 1`: every sampled switch's queued bytes (all its ports), in
    /// bytes.
    pub switch_occupancy: Vec<SampleHistogram>,
}

impl Timeseries {
    /// A series of `stages` stages and `switch_tiers` tiers of switches (tiers 1 to
    /// `switch_tiers`).
    pub fn new(interval_ps: u64, stages: usize, switch_tiers: usize) -> Timeseries {
        assert!(interval_ps > 0, "a sampling interval is positive");
        Timeseries {
            switch_occupancy: vec![SampleHistogram::default(); switch_tiers],
            interval_ps,
            stages,
            queue_bytes: Vec::new(),
            queue_max_bytes: Vec::new(),
            busy_ps: Vec::new(),
            goodput_bytes: Vec::new(),
            occupancy: vec![SampleHistogram::default(); stages],
        }
    }

    fn grow(&mut self, samples: usize) {
        let n = samples * self.stages;
        if self.queue_bytes.len() < n {
            self.queue_bytes.resize(n, 0);
            self.queue_max_bytes.resize(n, 0);
            self.busy_ps.resize(n, 0);
        }
    }

    /// Adds one port of `stage` to sample `i`.
    pub fn add_port(&mut self, i: usize, stage: usize, queued_bytes: u64, busy_ps: u64) {
        self.grow(i + 1);
        let at = i * self.stages + stage;
        self.queue_bytes[at] += queued_bytes;
        self.queue_max_bytes[at] = self.queue_max_bytes[at].max(queued_bytes);
        self.busy_ps[at] += busy_ps as u128;
        self.occupancy[stage].record(queued_bytes);
    }

    /// Adds `count` ports of `stage` with empty queues, `busy_ps` their summed busy time, to
    /// sample `i`: the same as `count` calls of [`Timeseries::add_port`] with 0 queued bytes
    /// (most ports of a large fabric are idle at most instants; one histogram record for all).
    pub fn add_idle_ports(&mut self, i: usize, stage: usize, count: u64, busy_ps: u128) {
        if count == 0 {
            return;
        }
        self.grow(i + 1);
        self.busy_ps[i * self.stages + stage] += busy_ps;
        self.occupancy[stage].record_zeros(count);
    }

    /// Records one sample of a switch of tier `tier` (1 = edge/leaf) holding `queued_bytes`
    /// in all its ports.
    pub fn add_switch(&mut self, tier: u8, queued_bytes: u64) {
        self.switch_occupancy[tier as usize - 1].record(queued_bytes);
    }

    /// Records `count` samples of switches of tier `tier` holding nothing: the same as
    /// `count` calls of [`Timeseries::add_switch`] with 0 bytes.
    pub fn add_idle_switches(&mut self, tier: u8, count: u64) {
        if count > 0 {
            self.switch_occupancy[tier as usize - 1].record_zeros(count);
        }
    }

    /// Records payload delivered at `now_ps`.
    #[inline]
    pub fn delivered(&mut self, now_ps: u64, bytes: u64) {
        let i = (now_ps.saturating_sub(1) / self.interval_ps) as usize;
        if self.goodput_bytes.len() <= i {
            self.goodput_bytes.resize(i + 1, 0);
        }
        self.goodput_bytes[i] += bytes;
    }

    /// Adds another partition's samples `o` (same interval and stages) into these.
    pub fn merge(&mut self, o: &Timeseries) {
        assert_eq!((self.interval_ps, self.stages), (o.interval_ps, o.stages));
        self.grow(o.queue_bytes.len() / self.stages.max(1));
        for (i, &v) in o.queue_bytes.iter().enumerate() {
            self.queue_bytes[i] += v;
            self.queue_max_bytes[i] = self.queue_max_bytes[i].max(o.queue_max_bytes[i]);
            self.busy_ps[i] += o.busy_ps[i];
        }
        if self.goodput_bytes.len() < o.goodput_bytes.len() {
            self.goodput_bytes.resize(o.goodput_bytes.len(), 0);
        }
        for (a, b) in self.goodput_bytes.iter_mut().zip(&o.goodput_bytes) {
            *a += b;
        }
        assert_eq!(self.switch_occupancy.len(), o.switch_occupancy.len());
        for (a, b) in self
            .occupancy
            .iter_mut()
            .zip(&o.occupancy)
            .chain(self.switch_occupancy.iter_mut().zip(&o.switch_occupancy))
        {
            a.add(b);
        }
    }

    /// Samples taken (rows of the per-sample vectors).
    fn samples(&self) -> usize {
        self.queue_bytes.len() / self.stages.max(1)
    }

    /// Stage `s`'s utilization over the interval ending at sample `i` (≥ 1): its ports' wire
    /// time in the interval over their capacity. The ports report their wire time up to each
    /// sample instant exactly (`Port::busy_through_ps`), so this is within [0, 1] but for a
    /// picosecond of rounding per frame (hence the saturating difference).
    fn utilization(&self, i: usize, s: usize, stage_ports: u64) -> f64 {
        let (now, before) = (i * self.stages + s, (i - 1) * self.stages + s);
        let busy_ps = self.busy_ps[now].saturating_sub(self.busy_ps[before]);
        busy_ps as f64 / (stage_ports.max(1) as f64 * self.interval_ps as f64)
    }

    /// Per stage, the largest utilization over one interval (the CSV's `_util` columns'
    /// maximum): the Ofan paper's "max utilization" (Fig. 1(a)) when the interval is short
    /// against the collective. `ports[s]`: ports of stage s.
    pub fn peak_utilization(&self, ports: &[u64]) -> Vec<f64> {
        (0..self.stages)
            .map(|s| {
                let stage_ports = ports.get(s).copied().unwrap_or(0);
                (1..self.samples())
                    .map(|i| self.utilization(i, s, stage_ports))
                    .fold(0.0, f64::max)
            })
            .collect()
    }

    /// The CSV: one row per sample after the first (time of the sample in µs, then per stage
    /// utilization over the interval ending there, mean and max port queue in bytes, then the
    /// goodput over the interval in Gb/s). `ports[s]`: ports of stage s.
    pub fn to_csv(&self, names: &[&str], ports: &[u64]) -> String {
        let mut out = String::from("time_us");
        for n in names {
            out += &format!(",{n}_util,{n}_queue_avg_bytes,{n}_queue_max_bytes");
        }
        out += ",goodput_gbps\n";
        let dt = self.interval_ps as f64;
        for i in 1..self.samples() {
            out += &format!("{}", i as f64 * dt / 1e6);
            for (s, &stage_ports) in ports.iter().enumerate().take(self.stages) {
                let now = i * self.stages + s;
                let p = stage_ports.max(1) as f64;
                let util = self.utilization(i, s, stage_ports);
                let avg = self.queue_bytes[now] as f64 / p;
                out += &format!(",{util:.4},{avg:.1},{}", self.queue_max_bytes[now]);
            }
            let bytes = self.goodput_bytes.get(i - 1).copied().unwrap_or(0);
            out += &format!(",{:.3}\n", bytes as f64 * 8.0 / (dt * 1e-12) / 1e9);
        }
        out
    }
}

/// One point of a flow's window trace, taken after each ACK.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct CwndPoint {
    /// When the ACK was processed, in ps.
    pub time_ps: u64,
    /// The sending host.
    pub host: u32,
    /// The flow's index among the host's flows.
    pub flow: u32,
    /// Congestion window after the ACK, in bytes.
    pub cwnd_bytes: u64,
    /// Bytes in flight after the ACK.
    pub in_flight_bytes: u64,
    /// Smoothed RTT, in ps.
    pub srtt_ps: u64,
}

/// The CSV of window traces, in time order.
pub fn cwnd_csv(points: &[CwndPoint]) -> String {
    let mut out = String::from("time_ns,host,flow,cwnd_bytes,in_flight_bytes,srtt_ns\n");
    for p in points {
        out += &format!(
            "{:.3},{},{},{},{},{:.3}\n",
            p.time_ps as f64 / 1e3,
            p.host,
            p.flow,
            p.cwnd_bytes,
            p.in_flight_bytes,
            p.srtt_ps as f64 / 1e3
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merged_partial_series_equal_one_series_of_everything() {
        let mut whole = Timeseries::new(1000, 2, 2);
        let (mut a, mut b) = (Timeseries::new(1000, 2, 2), Timeseries::new(1000, 2, 2));
        for (i, stage, q, busy) in [
            (0, 0, 10, 0),
            (1, 1, 5, 700),
            (2, 0, 7, 1500),
            (2, 1, 1, 900),
        ] {
            whole.add_port(i, stage, q, busy);
            if stage == 0 { &mut a } else { &mut b }.add_port(i, stage, q, busy);
        }
        for (tier, q, part) in [(1, 3000, 0), (2, 0, 0), (1, 12_345, 1), (2, 999_999, 1)] {
            whole.add_switch(tier, q);
            if part == 0 { &mut a } else { &mut b }.add_switch(tier, q);
        }
        whole.delivered(1500, 4096);
        b.delivered(1500, 4096);
        a.merge(&b);
        assert_eq!(a, whole);
        assert_eq!(a.switch_occupancy[0].len(), 2);
        assert_eq!(
            a.switch_occupancy[1].histogram().max(),
            whole.switch_occupancy[1].histogram().max()
        );
        let csv = a.to_csv(&["x", "y"], &[1, 1]);
        let rows: Vec<&str> = csv.lines().collect();
        assert_eq!(rows.len(), 3, "header + samples 1 and 2");
        // Sample 2: stage x busy 1500 - 0 over 1000 ps = 1.5 (the arithmetic only: a port's
        // real busy time grows at most 1 ps per ps), queue 7; goodput of (1000, 2000]: 4096 B
        // in 1 ns = 32.768 Tb/s.
        assert_eq!(rows[2], "0.002,1.5000,7.0,7,0.2000,1.0,1,32768.000");
        // Peaks: stage x 0.0 then 1.5; stage y 0.7 then 0.2.
        assert_eq!(a.peak_utilization(&[1, 1]), [1.5, 0.7]);
    }
}

/// What happened to a flow at a traced host of a workload with triggers (`flow_events.csv`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub enum FlowEventKind {
    /// The flow started at its source (its start time: fixed, or trigger + delay).
    Started,
    /// The flow's last packet arrived at its destination.
    Received,
}

/// One flow event at a traced host (`report.trace_hosts`), for workloads with triggers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct FlowEvent {
    /// When it happened, in ps.
    pub time_ps: u64,
    /// The host it happened at.
    pub host: u32,
    /// What happened.
    pub kind: FlowEventKind,
    /// The flow it happened to.
    pub flow: crate::packet::FlowId,
}

impl FlowEvent {
    /// The flow `flow` started at its source `host` at `time_ps`.
    pub fn started(time_ps: u64, host: u32, flow: crate::packet::FlowId) -> FlowEvent {
        FlowEvent {
            time_ps,
            host,
            kind: FlowEventKind::Started,
            flow,
        }
    }
    /// The last packet of flow `flow` arrived at its destination `host` at `time_ps`.
    pub fn received(time_ps: u64, host: u32, flow: crate::packet::FlowId) -> FlowEvent {
        FlowEvent {
            time_ps,
            host,
            kind: FlowEventKind::Received,
            flow,
        }
    }
}

/// The CSV of flow events, in time order: `src` and `index` name the flow.
pub fn flow_events_csv(events: &[FlowEvent]) -> String {
    let mut out = String::from("time_ps,host,event,src,index\n");
    for e in events {
        let kind = match e.kind {
            FlowEventKind::Started => "started",
            FlowEventKind::Received => "received",
        };
        out += &format!(
            "{},{},{kind},{},{}\n",
            e.time_ps,
            e.host,
            crate::packet::flow_src(e.flow),
            crate::packet::flow_index(e.flow)
        );
    }
    out
}
