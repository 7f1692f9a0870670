//! The per-flow log (`report.flow_log`, `flows.csv`): one record per completed flow, for
//! what the merged histograms cannot answer (FCTs split by arrival time, by pair, or by
//! exact size; htsim's `FCT` lines). Records are integers in ps, sorted by start time and
//! then by flow id, so the file does not depend on threads, partitions or ranks.

use serde::{Deserialize, Serialize};

/// One completed flow. Field order is the sort order: start, then the flow's id.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct FlowRecord {
    /// When the flow started (its first packet could go), in ps.
    pub start_ps: u64,
    /// Sending host and the flow's index among its flows: the flow's id.
    pub src: u32,
    /// The flow's index among `src`'s flows.
    pub index: u32,
    /// Receiving host.
    pub dst: u32,
    /// Payload bytes.
    pub bytes: u64,
    /// Flow completion time (start to the sender's last ACK, or RotorLB's last arrival).
    pub fct_ps: u64,
    /// Its phase (an index into the workload's phase names), or [`NO_PHASE`].
    pub phase: u8,
}

/// [`FlowRecord::phase`] of a flow of a workload without phases.
pub const NO_PHASE: u8 = u8::MAX;

/// The CSV of the log: `phase` names the flow's phase (empty for workloads without phases).
pub fn to_csv(records: &[FlowRecord], phase_names: &[String]) -> String {
    let mut out = String::from("src,index,dst,bytes,start_ps,fct_ps,phase\n");
    for r in records {
        let phase = phase_names.get(r.phase as usize).map_or("", |s| s.as_str());
        out += &format!(
            "{},{},{},{},{},{},{phase}\n",
            r.src, r.index, r.dst, r.bytes, r.start_ps, r.fct_ps
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_takes_the_40_bytes_the_docs_state() {
        assert_eq!(std::mem::size_of::<FlowRecord>(), 40);
    }

    #[test]
    fn records_sort_by_start_then_flow_and_print_one_line_each() {
        let r = |start_ps, src, index| FlowRecord {
            start_ps,
            src,
            index,
            dst: 9,
            bytes: 1000,
            fct_ps: 5,
            phase: if src == 3 { 1 } else { NO_PHASE },
        };
        let mut v = vec![r(20, 0, 0), r(10, 3, 1), r(10, 1, 7)];
        v.sort_unstable();
        assert_eq!(v, [r(10, 1, 7), r(10, 3, 1), r(20, 0, 0)]);
        let csv = to_csv(&v, &["poisson".into(), "shuffle".into()]);
        assert_eq!(
            csv,
            "src,index,dst,bytes,start_ps,fct_ps,phase\n1,7,9,1000,10,5,\n\
             3,1,9,1000,10,5,shuffle\n0,0,9,1000,20,5,\n"
        );
    }
}
