//! Per-phase measurements of a collective (`results.phases`): each phase's first data packet
//! sent, last ACK that completed one of its flows, and payload bytes of its completed flows.
//! Integers merged by min / max / sum, like [`super::Counters`], so merged results do not
//! depend on threads, partitions or ranks. A flow's phase comes from the workload
//! (`Workload::phase_of`, computed on demand); workloads without phases record nothing.

use serde::{Deserialize, Serialize};

/// One phase's measurements in one partition (or merged).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PhaseStats {
    /// First data packet sent by a flow of the phase (u64::MAX: none).
    pub first_send_ps: u64,
    /// Last ACK that completed a flow of the phase (0: none).
    pub last_ack_ps: u64,
    /// Payload bytes of the phase's completed flows.
    pub bytes: u64,
    /// The phase's completed flows.
    pub flows_completed: u64,
}

impl Default for PhaseStats {
    fn default() -> Self {
        PhaseStats {
            first_send_ps: u64::MAX,
            last_ack_ps: 0,
            bytes: 0,
            flows_completed: 0,
        }
    }
}

impl PhaseStats {
    /// Adds `o` into these (min of first sends, max of last ACKs, sums).
    pub fn merge(&mut self, o: &PhaseStats) {
        self.first_send_ps = self.first_send_ps.min(o.first_send_ps);
        self.last_ack_ps = self.last_ack_ps.max(o.last_ack_ps);
        self.bytes += o.bytes;
        self.flows_completed += o.flows_completed;
    }
}

/// The phase table of a partition: grown on first use (a partition that sends nothing of a
/// phase needs no entry for it), merged entry by entry.
pub(crate) fn entry(phases: &mut Vec<PhaseStats>, phase: u8) -> &mut PhaseStats {
    let i = phase as usize;
    if phases.len() <= i {
        phases.resize(i + 1, PhaseStats::default());
    }
    &mut phases[i]
}

/// Merges `o` into `acc` entry by entry.
pub(crate) fn merge(acc: &mut Vec<PhaseStats>, o: &[PhaseStats]) {
    for (i, p) in o.iter().enumerate() {
        entry(acc, i as u8).merge(p);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merging_takes_min_start_max_end_and_sums_in_any_order() {
        let a = vec![PhaseStats {
            first_send_ps: 5,
            last_ack_ps: 50,
            bytes: 100,
            flows_completed: 1,
        }];
        let b = vec![
            PhaseStats {
                first_send_ps: 3,
                last_ack_ps: 40,
                bytes: 10,
                flows_completed: 2,
            },
            PhaseStats {
                first_send_ps: 60,
                last_ack_ps: 90,
                bytes: 7,
                flows_completed: 1,
            },
        ];
        let (mut ab, mut ba) = (vec![], vec![]);
        merge(&mut ab, &a);
        merge(&mut ab, &b);
        merge(&mut ba, &b);
        merge(&mut ba, &a);
        assert_eq!(ab, ba);
        assert_eq!(
            ab[0],
            PhaseStats {
                first_send_ps: 3,
                last_ack_ps: 50,
                bytes: 110,
                flows_completed: 3
            }
        );
        assert_eq!(ab[1].bytes, 7);
    }
}
