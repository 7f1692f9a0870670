//! What every workload generator answers ([`Generator`]), and the one list of generators
//! ([`Base`], written through `generators!`): a new workload is one file implementing the
//! trait, one line in that list and its build arm in `Workload::build_base`.
//!
//! Dispatch is a `match` per method that the macro writes over the list (static, no
//! `Box<dyn>`: `flow` is called for every data packet on some paths).

use super::{all_to_all, permutation, Flow, FlowId};
use super::{combined, continuous, matrix, moe, pairwise, poisson, ring, shuffle};

/// A workload's flows, computed on demand: host `h`'s `i`-th flow for `i < flows_of(h)`,
/// in order of start time (ties in generation order). The defaults describe a workload of
/// fixed-start flows without phases.
pub(crate) trait Generator {
    /// Number of flows host `h` sends.
    fn flows_of(&self, h: u32) -> u32;
    /// Flow `i` of host `h` (`i < flows_of(h)`).
    fn flow(&self, h: u32, i: u32) -> Flow;
    /// The name `results.workload` reports.
    fn kind_name(&self) -> &'static str;
    /// Payload bytes host `h` sends, over all its flows.
    fn bytes_of(&self, h: u32) -> u64 {
        (0..self.flows_of(h)).map(|i| self.flow(h, i).bytes).sum()
    }
    /// The names of the phases, in order (empty: no phases).
    fn phase_names(&self) -> &[String] {
        &[]
    }
    /// The phase (an index into `phase_names`) of flow `i` of host `h`.
    fn phase_of(&self, _h: u32, _i: u32) -> Option<u8> {
        None
    }
    /// The application's bulk tag of a flow on Opera (None: the size cutoff decides).
    fn bulk_tag(&self, _h: u32, _i: u32) -> Option<bool> {
        None
    }
    /// Whether any flow starts on a trigger (`Start::After`); then `for_each_dep` and
    /// `for_each_dependent` name the dependencies.
    fn has_triggers(&self) -> bool {
        false
    }
    /// Calls `f` with each dependency of flow `i` of host `h`: flows *to* `h`.
    fn for_each_dep(&self, _h: u32, _i: u32, _f: &mut dyn FnMut(FlowId)) {}
    /// Number of dependencies of flow `i` of host `h`.
    fn dep_count(&self, h: u32, i: u32) -> u32 {
        let mut n = 0;
        self.for_each_dep(h, i, &mut |_| n += 1);
        n
    }
    /// Calls `f` with the index, at flow `id`'s destination, of each flow depending on it.
    fn for_each_dependent(&self, _id: FlowId, _f: &mut dyn FnMut(u32)) {}
    /// The most flows whose per-flow state can be live at once: every flow, unless the
    /// generator creates dependent flows as their predecessors complete.
    fn in_flight_flows(&self, num_hosts: u32) -> u64 {
        (0..num_hosts).map(|h| self.flows_of(h) as u64).sum()
    }
    /// NVLink bytes that accompany the simulated traffic (reported, not simulated).
    fn nvlink_bytes(&self) -> u64 {
        0
    }
}

/// Writes [`Base`] with one variant per line and its `Generator` impl, each method a
/// `match` over the variants.
macro_rules! generators {
    ($($(#[$doc:meta])* $variant:ident($ty:ty),)*) => {
        /// The workload generators: one variant per kind of generated or tabulated traffic.
        pub(crate) enum Base {
            $($(#[$doc])* $variant($ty),)*
        }

        impl Generator for Base {
            #[inline]
            fn flows_of(&self, h: u32) -> u32 {
                match self { $(Base::$variant(g) => g.flows_of(h),)* }
            }
            #[inline]
            fn flow(&self, h: u32, i: u32) -> Flow {
                match self { $(Base::$variant(g) => g.flow(h, i),)* }
            }
            fn kind_name(&self) -> &'static str {
                match self { $(Base::$variant(g) => g.kind_name(),)* }
            }
            fn bytes_of(&self, h: u32) -> u64 {
                match self { $(Base::$variant(g) => g.bytes_of(h),)* }
            }
            fn phase_names(&self) -> &[String] {
                match self { $(Base::$variant(g) => g.phase_names(),)* }
            }
            #[inline]
            fn phase_of(&self, h: u32, i: u32) -> Option<u8> {
                match self { $(Base::$variant(g) => g.phase_of(h, i),)* }
            }
            #[inline]
            fn bulk_tag(&self, h: u32, i: u32) -> Option<bool> {
                match self { $(Base::$variant(g) => g.bulk_tag(h, i),)* }
            }
            fn has_triggers(&self) -> bool {
                match self { $(Base::$variant(g) => g.has_triggers(),)* }
            }
            fn for_each_dep(&self, h: u32, i: u32, f: &mut dyn FnMut(FlowId)) {
                match self { $(Base::$variant(g) => g.for_each_dep(h, i, f),)* }
            }
            fn dep_count(&self, h: u32, i: u32) -> u32 {
                match self { $(Base::$variant(g) => g.dep_count(h, i),)* }
            }
            fn for_each_dependent(&self, id: FlowId, f: &mut dyn FnMut(u32)) {
                match self { $(Base::$variant(g) => g.for_each_dependent(id, f),)* }
            }
            fn in_flight_flows(&self, num_hosts: u32) -> u64 {
                match self { $(Base::$variant(g) => g.in_flight_flows(num_hosts),)* }
            }
            fn nvlink_bytes(&self) -> u64 {
                match self { $(Base::$variant(g) => g.nvlink_bytes(),)* }
            }
        }
    };
}

generators! {
    /// Host h sends one message to `dst[h]` at time 0 (`permutation.rs`).
    Permutation(permutation::Permutation),
    /// Every host sends one message to every other host at time 0 (`all_to_all.rs`).
    AllToAll(all_to_all::AllToAll),
    /// Explicit flows, grouped by source host and sorted by start time (`matrix.rs`).
    Table(matrix::FlowTable),
    /// Back-to-back messages to random hosts of other groups at an offered load.
    Continuous(continuous::Continuous),
    /// Poisson arrivals of flows sized from a CDF, to hosts of other racks (`poisson.rs`).
    Poisson(poisson::Poisson),
    /// Every host to every host of other racks (`shuffle.rs`).
    Shuffle(shuffle::Shuffle),
    /// Poisson flows and a shuffle, merged per host by start time (`combined.rs`).
    Combined(Box<combined::Combined>),
    /// Ring collectives: every step waits for the previous step's chunk (`ring.rs`).
    Ring(ring::Ring),
    /// All-to-all(-v) over a host list (`pairwise.rs`).
    Pairwise(pairwise::Pairwise),
    /// MoE dispatch then combine within expert-parallel groups (`moe.rs`).
    Moe(moe::Moe),
}
