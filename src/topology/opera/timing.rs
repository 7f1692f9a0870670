//! Opera's time structure (the Opera paper, §4.1; opera-sim's topology files): a cycle of
//! superslices, each split into three
//! sub-slices `[ε][δ][r]`. During ε and δ every rotor holds its matching (the one that will
//! reconfigure still holds its previous one); during r the reconfiguring rotor(s) are dark.
//! All arithmetic is in integer picoseconds, so every rank maps a time to the same slice.

use crate::scenario::FieldError;
use crate::time::Rate;

/// The paper's link rate (§5): 10 Gb/s.
pub(crate) const PAPER_LINK_GBPS: f64 = 10.0;
/// The paper's MTU (§5): 1,500 B.
pub(crate) const PAPER_MTU_BYTES: u64 = 1_500;
/// The paper's ToR-to-ToR propagation delay (§5, 100 m of fibre): 500 ns.
pub(crate) const PAPER_TOR_TO_TOR_PS: u64 = 500_000;
/// The paper's ε (§4.1): worst-case low-latency delay over 5 hops with 24 KB queues, 90 µs.
pub(crate) const PAPER_EPSILON_PS: u64 = 90_000_000;
/// The paper's circuit reconfiguration delay r (§4.1): 10 µs.
pub(crate) const PAPER_RECONFIG_PS: u64 = 10_000_000;

/// δ as the authors' generator defines it (`defineTopology_simple_1path.m`): one hop of
/// propagation plus one packet's serialization, so a packet that starts its last hop at the
/// end of ε is through before the rotor goes dark. With the paper's constants:
/// 500 ns + 1,500 B at 10 Gb/s = 1.7 µs.
pub(crate) fn delta_ps(rate: Rate, mtu_bytes: u64, hop_latency_ps: u64) -> u64 {
    hop_latency_ps + rate.serialization_ps(mtu_bytes)
}

/// The paper's δ: 1.7 µs.
pub(crate) fn paper_delta_ps() -> u64 {
    delta_ps(
        Rate::from_gbps(PAPER_LINK_GBPS),
        PAPER_MTU_BYTES,
        PAPER_TOR_TO_TOR_PS,
    )
}

/// Which part of a superslice a time falls in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum SubSlice {
    /// All rotors up; paths of this superslice may be used.
    Epsilon,
    /// All rotors still up; the last hop of a packet sent at the end of ε completes.
    Delta,
    /// The reconfiguring rotor(s) are dark.
    Reconfig,
}

/// Where a time falls: `cycle` counts whole cycles, `superslice` is within the cycle and
/// `offset_ps` within the superslice.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct SlicePos {
    pub cycle: u64,
    pub superslice: usize,
    pub sub: SubSlice,
    pub offset_ps: u64,
}

/// Slice constants and the number of superslices per cycle.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Timing {
    pub epsilon_ps: u64,
    pub delta_ps: u64,
    pub reconfig_ps: u64,
    pub superslices_per_cycle: usize,
}

impl Timing {
    /// Checks the constants (fields named as in the scenario, values in ns there) and that a
    /// cycle fits in `u64` picoseconds.
    pub(crate) fn new(
        epsilon_ps: u64,
        delta_ps: u64,
        reconfig_ps: u64,
        superslices_per_cycle: usize,
    ) -> Result<Timing, FieldError> {
        if superslices_per_cycle == 0 {
            return Err(FieldError::new(
                "topology.racks",
                "a cycle needs at least one superslice",
            ));
        }
        if epsilon_ps == 0 {
            return Err(FieldError::new(
                "topology.opera.epsilon_ns",
                "must be > 0: ε is the time low-latency packets may be sent in a slice",
            ));
        }
        let cycle = epsilon_ps
            .checked_add(delta_ps)
            .and_then(|s| s.checked_add(reconfig_ps))
            .and_then(|s| s.checked_mul(superslices_per_cycle as u64));
        if cycle.is_none() {
            return Err(FieldError::new(
                "topology.opera.epsilon_ns",
                format!(
                    "ε + δ + r = {} + {} + {} ps times {superslices_per_cycle} superslices \
                     overflows 2^64 ps",
                    epsilon_ps, delta_ps, reconfig_ps
                ),
            ));
        }
        Ok(Timing {
            epsilon_ps,
            delta_ps,
            reconfig_ps,
            superslices_per_cycle,
        })
    }

    /// Timing from a slice length (superslice = ε + δ + r) instead of ε: ε = slice − δ − r,
    /// which must leave time to send.
    pub(crate) fn from_slice(
        slice_ps: u64,
        delta_ps: u64,
        reconfig_ps: u64,
        superslices_per_cycle: usize,
    ) -> Result<Timing, FieldError> {
        if reconfig_ps >= slice_ps {
            return Err(FieldError::new(
                "topology.opera.reconfig_ns",
                format!(
                    "r = {reconfig_ps} ps is not shorter than the slice ({slice_ps} ps): \
                     no time left to send"
                ),
            ));
        }
        if delta_ps >= slice_ps - reconfig_ps {
            return Err(FieldError::new(
                "topology.opera.delta_ns",
                format!(
                    "δ = {delta_ps} ps leaves no ε in a slice of {slice_ps} ps with \
                     r = {reconfig_ps} ps"
                ),
            ));
        }
        Timing::new(
            slice_ps - reconfig_ps - delta_ps,
            delta_ps,
            reconfig_ps,
            superslices_per_cycle,
        )
    }

    pub(crate) fn superslice_ps(&self) -> u64 {
        self.epsilon_ps + self.delta_ps + self.reconfig_ps
    }

    pub(crate) fn cycle_ps(&self) -> u64 {
        self.superslice_ps() * self.superslices_per_cycle as u64
    }

    #[cfg(test)]
    /// The start of superslice `superslice` of cycle `cycle`.
    pub(crate) fn start_ps(&self, cycle: u64, superslice: usize) -> u64 {
        cycle * self.cycle_ps() + superslice as u64 * self.superslice_ps()
    }

    /// Where `time_ps` falls. Boundaries belong to what starts there: ε starts at offset 0,
    /// δ at ε, r at ε + δ.
    pub(crate) fn at(&self, time_ps: u64) -> SlicePos {
        let cycle = time_ps / self.cycle_ps();
        let in_cycle = time_ps % self.cycle_ps();
        let superslice = (in_cycle / self.superslice_ps()) as usize;
        let offset_ps = in_cycle % self.superslice_ps();
        let sub = if offset_ps < self.epsilon_ps {
            SubSlice::Epsilon
        } else if offset_ps < self.epsilon_ps + self.delta_ps {
            SubSlice::Delta
        } else {
            SubSlice::Reconfig
        };
        SlicePos {
            cycle,
            superslice,
            sub,
            offset_ps,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paper_constants() {
        assert_eq!(paper_delta_ps(), 1_700_000);
        let t = Timing::new(PAPER_EPSILON_PS, paper_delta_ps(), PAPER_RECONFIG_PS, 108).unwrap();
        // 90 + 1.7 + 10 µs per superslice, 108 superslices: 10.9836 ms (paper: ≈ 10.7 ms,
        // counting ε + r = 100 µs per slice without δ).
        assert_eq!(t.superslice_ps(), 101_700_000);
        assert_eq!(t.cycle_ps(), 10_983_600_000);
    }

    #[test]
    fn boundaries_are_exact() {
        // ε = 5, δ = 2, r = 3: superslice 10 ps, cycle of 4 superslices = 40 ps.
        let t = Timing::new(5, 2, 3, 4).unwrap();
        let pos = |x| {
            let p = t.at(x);
            (p.cycle, p.superslice, p.sub, p.offset_ps)
        };
        use SubSlice::*;
        assert_eq!(pos(0), (0, 0, Epsilon, 0));
        assert_eq!(pos(4), (0, 0, Epsilon, 4));
        assert_eq!(pos(5), (0, 0, Delta, 5));
        assert_eq!(pos(6), (0, 0, Delta, 6));
        assert_eq!(pos(7), (0, 0, Reconfig, 7));
        assert_eq!(pos(9), (0, 0, Reconfig, 9));
        assert_eq!(pos(10), (0, 1, Epsilon, 0));
        assert_eq!(pos(39), (0, 3, Reconfig, 9));
        assert_eq!(pos(40), (1, 0, Epsilon, 0));
        assert_eq!(pos(40 * 7 + 25), (7, 2, Delta, 5));
        assert_eq!(t.start_ps(7, 2), 300);
        // r = 0: no dark sub-slice at all.
        let t0 = Timing::new(5, 2, 0, 4).unwrap();
        assert_eq!(t0.at(6).sub, Delta);
        assert_eq!(t0.at(7).sub, Epsilon);
    }

    #[test]
    fn paper_boundaries_in_picoseconds() {
        let t = Timing::new(PAPER_EPSILON_PS, paper_delta_ps(), PAPER_RECONFIG_PS, 108).unwrap();
        let s5 = 5 * 101_700_000;
        assert_eq!(t.at(s5 + 89_999_999).sub, SubSlice::Epsilon);
        assert_eq!(t.at(s5 + 90_000_000).sub, SubSlice::Delta);
        assert_eq!(t.at(s5 + 91_699_999).sub, SubSlice::Delta);
        assert_eq!(t.at(s5 + 91_700_000).sub, SubSlice::Reconfig);
        assert_eq!(t.at(s5 + 101_699_999).superslice, 5);
        assert_eq!(t.at(s5 + 101_700_000).superslice, 6);
        assert_eq!(t.at(10_983_600_000).cycle, 1);
    }

    #[test]
    fn constants_that_leave_no_time_to_send_name_the_field() {
        assert_eq!(Timing::new(1, 1, 1, 0).unwrap_err().field, "topology.racks");
        let e = Timing::new(0, 1, 1, 4).unwrap_err();
        assert_eq!(e.field, "topology.opera.epsilon_ns");
        let e = Timing::from_slice(100, 0, 100, 4).unwrap_err();
        assert_eq!(e.field, "topology.opera.reconfig_ns");
        let e = Timing::from_slice(100, 0, 150, 4).unwrap_err();
        assert_eq!(e.field, "topology.opera.reconfig_ns");
        let e = Timing::from_slice(100, 30, 70, 4).unwrap_err();
        assert_eq!(e.field, "topology.opera.delta_ns");
        let e = Timing::new(u64::MAX / 2, 0, 0, 4).unwrap_err();
        assert_eq!(e.field, "topology.opera.epsilon_ns");
        assert!(!e.to_string().contains('\n'));
        let ok = Timing::from_slice(100, 30, 60, 4).unwrap();
        assert_eq!((ok.epsilon_ps, ok.superslice_ps()), (10, 100));
    }
}
