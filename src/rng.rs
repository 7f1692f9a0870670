//! Deterministic random streams. Every consumer gets its own PCG stream derived from
//! (scenario seed, owner id, purpose), never a shared or thread-local generator, so draws do
//! not depend on which thread, rank or partition runs the owner.

use rand_pcg::Pcg32;

/// What a stream is used for; owners with several purposes get independent streams.
#[derive(Clone, Copy, Debug)]
#[repr(u64)]
pub enum Purpose {
    /// A switch's LB decisions and pointer initialisation.
    SwitchLb = 1,
    /// A host's entropy values and DRB pointers.
    HostLb = 2,
    /// Workload generation (permutation draws), owner = 0.
    Workload = 3,
    /// The global Ofan port-order permutation P, owner = 0.
    OfanPermutation = 4,
    /// Per-switch ECMP salt.
    EcmpSalt = 5,
    /// A switch's queue discipline (ECN ramp, trimming coin).
    Queue = 6,
    /// Choosing links for `topology.link_rates` (owner = the override's index).
    Topology = 7,
    /// Choosing switches for `lb.mixed` (owner = the entry's index).
    Mixed = 8,
    /// Drawing failed links for `failures.link_probability` (owner = 0).
    Failures = 9,
    /// The MoE routing-trace generator (`workload/moe_trace.rs`, owner = the EP group).
    Moe = 10,
    /// Placing GPU servers on host slots (`workload.placement = "random"`, owner = 0).
    Placement = 11,
    /// Opera's schedule: factorization, lifting and rotor assignment (owner =
    /// realization << 8 | step, `topology/opera/mod.rs`).
    Opera = 12,
    /// Poisson flow arrivals (`workload/poisson.rs`): a host's gaps, destinations and sizes
    /// (owner = the host).
    Poisson = 13,
    /// Start times of a staggered shuffle (`workload/shuffle.rs`, owner = the flow id).
    Shuffle = 14,
    /// Opera failure draws (`topology/opera/faults.rs`; owner = the draw's number).
    OperaFaults = 15,
    /// The static `random` routing's table: a port per (switch, destination) (owner =
    /// switch << 32 | destination, `topology/pgft/routing.rs`).
    StaticRandom = 16,
    /// The static expander's random regular graph (`topology/regular_graph.rs`, owner = the
    /// realization).
    Expander = 17,
    /// `weft contention`'s per-route random routing (the PGFT routing paper's Random): a port
    /// per (switch, source, destination) (owner = source << 32 | destination, the seed
    /// mixed with the switch, `topology/pgft/routing.rs`).
    StaticRandomRoute = 18,
}

pub(crate) fn splitmix64(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

/// The stream of `owner` for `purpose` in a run of seed `seed`: a PCG32 whose state and
/// increment are mixed from all three with SplitMix64.
pub fn stream(seed: u64, owner: u64, purpose: Purpose) -> Pcg32 {
    let state = splitmix64(seed ^ splitmix64(owner.wrapping_mul(0x100) ^ purpose as u64));
    let inc = splitmix64(state ^ owner.rotate_left(17) ^ (purpose as u64) << 56);
    Pcg32::new(state, inc)
}
