//! Simulated time and link-rate arithmetic.
//!
//! Time is an integer number of picoseconds (`u64`): 2^64 ps is about 213 days of simulated
//! time, far beyond any run. No floating point is used on the event path; rates are converted
//! to integer serialization times once, when the fabric is built.

/// Picoseconds per nanosecond.
pub const PS_PER_NS: u64 = 1_000;
/// Picoseconds per microsecond.
pub const PS_PER_US: u64 = 1_000_000;
/// "Never": the time of an empty event queue.
pub const NEVER_PS: u64 = u64::MAX;

/// A link rate in bits per second.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rate {
    /// Bits per second.
    pub bps: u64,
}

impl Rate {
    /// The rate of `gbps` Gb/s (10^9 bit/s), rounded to the bit per second.
    pub fn from_gbps(gbps: f64) -> Rate {
        Rate {
            bps: (gbps * 1e9).round() as u64,
        }
    }

    /// Time to serialize `bytes` bytes, rounded up to the next picosecond so that a link
    /// never carries more than its rate. 800 Gb/s is exactly 10 ps per byte.
    pub fn serialization_ps(&self, bytes: u64) -> u64 {
        debug_assert!(self.bps > 0);
        let bits = bytes as u128 * 8 * 1_000_000_000_000u128;
        bits.div_ceil(self.bps as u128) as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serialization_is_exact_at_800g_and_rounds_up_elsewhere() {
        let r = Rate::from_gbps(800.0);
        assert_eq!(r.serialization_ps(1), 10);
        assert_eq!(r.serialization_ps(4_178), 41_780);
        let r = Rate::from_gbps(3.0); // 8e12/3e9 = 2666.67 ps per byte
        assert_eq!(r.serialization_ps(1), 2_667);
        assert_eq!(r.serialization_ps(3), 8_000);
    }
}
