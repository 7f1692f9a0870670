//! What a host records when a flow sends its first packet (the phase's start) and when it
//! completes (the sender's last ACK, or RotorLB's receiver
//! for a bulk flow): its FCT overall, by size bin and by phase, and the completion counters.
//! One place, so the two transports that complete flows measure them alike.

use crate::metrics::flow_log::{FlowRecord, NO_PHASE};
use crate::metrics::{fct_bins, phases, record_indexed_ns, record_ns, Metrics};
use crate::model::Model;
use crate::time::PS_PER_NS;
use crate::workload::Flow;

/// Records flow `i` of host `src` (`flow`, started at `start_ps`) completed at `now_ps`.
pub(crate) fn record_completion(
    mx: &mut Metrics,
    m: &Model,
    (src, i): (u32, u32),
    flow: &Flow,
    start_ps: u64,
    now_ps: u64,
) {
    let fct_ns = (now_ps - start_ps) / PS_PER_NS;
    record_ns(&mut mx.fct_ns, fct_ns);
    if !m.fct_bins_bytes.is_empty() {
        let bin = fct_bins::bin_of(&m.fct_bins_bytes, flow.bytes);
        record_indexed_ns(&mut mx.fct_by_size_ns, bin, fct_ns);
    }
    if m.flow_log {
        mx.flow_log.push(FlowRecord {
            start_ps,
            src,
            index: i,
            dst: flow.dst,
            bytes: flow.bytes,
            fct_ps: now_ps - start_ps,
            phase: m.workload.phase_of(src, i).unwrap_or(NO_PHASE),
        });
    }
    let c = &mut mx.counters;
    c.flows_completed += 1;
    c.last_ack_ps = c.last_ack_ps.max(now_ps);
    if let Some(phase) = m.workload.phase_of(src, i) {
        let p = phases::entry(&mut mx.phases, phase);
        p.last_ack_ps = p.last_ack_ps.max(now_ps);
        p.bytes += flow.bytes;
        p.flows_completed += 1;
        record_indexed_ns(&mut mx.phase_fct_ns, phase as usize, fct_ns);
    }
}

/// Records that a data packet of flow `i` of host `src` starts on the wire at `begin_ps`
/// (the first of its phase's sends is the phase's start).
#[inline]
pub(crate) fn record_send(mx: &mut Metrics, m: &Model, (src, i): (u32, u32), begin_ps: u64) {
    mx.counters.first_send_ps = mx.counters.first_send_ps.min(begin_ps);
    if let Some(phase) = m.workload.phase_of(src, i) {
        let p = phases::entry(&mut mx.phases, phase);
        p.first_send_ps = p.first_send_ps.min(begin_ps);
    }
}
