//! Opera's schedule (Mellette et al., NSDI 2020, §3-§4; its authors' simulator opera-sim):
//! N racks (ToRs) with d hosts and
//! u uplinks each, uplink b of every rack wired to rotor (circuit) switch b. Rotors cycle
//! through matchings of the racks so that, over a cycle, every ordered rack pair is directly
//! connected exactly once. Everything here is a pure function of [`OperaParams`] (seed and
//! slice constants included): every rank builds the same schedule without messages.
//! `fabric.rs` makes it a weft fabric (`topology.kind = "opera"`).
//!
//! One file per concept:
//! - `factorize.rs`: N random involutions summing to J_N (all ones, diagonal included: each
//!   rack's self-loop is an idle uplink): a random edge colouring of K_N, or with `lifting`
//!   (N > 64) one of ≤ 64 racks lifted as the authors' generator (opera-sim's MATLAB code);
//! - `schedule.rs`: matchings assigned to rotors (N/u each, random cycle order) and the staggered
//!   rotation: one rotor per group reconfigures per superslice (opera-sim's `pick_topo.m`);
//! - `timing.rs`: ε, δ, r in ps; time → (cycle, superslice, sub-slice) in integers;
//! - `paths.rs`: per superslice, shortest ToR paths over the rotors stable for the whole
//!   superslice, stored as one hop-count byte per (superslice, src, dst).
//!
//! API: [`Opera::build`] validates the parameters ([`OperaParams::validate`], a
//! [`FieldError`] naming the scenario field: `topology.racks`, `topology.hosts_per_rack`,
//! `topology.uplinks`, `topology.opera.groups`, `topology.opera.epsilon_ns`,
//! `topology.opera.realizations`, `topology.opera.max_paths`), draws `realizations`
//! candidate schedules and keeps the best by (worst-case hops over all superslices, then total
//! = mean hops); candidates with a disconnected superslice are discarded and an error names
//! `topology.uplinks` if none is left. Then [`Opera::matching`] (rack → peer rack, the rack
//! itself for its self-loop), `Opera::reconfiguring`, [`Opera::peer_rack`] (None while the
//! rotor is dark), `Opera::paths` (shortest paths as rotor sequences, at most `max_paths`),
//! `Opera::hops`, [`Opera::next_hops`] (`reconfiguring`, `paths` and `hops` are built for tests
//! only: the simulator reads `next_hops`). Superslice arguments are taken modulo the cycle;
//! rotors are uplink indices (the simulator's ToR port for rotor b will be d + b).
//! `Schedule::build` (tests) gives the schedule of realization 0 without paths (any u, even when no
//! superslice is connected). A scenario that gives the slice length instead of ε goes through
//! [`Timing::from_slice`], whose errors name `topology.opera.reconfig_ns` (r ≥ slice) or
//! `topology.opera.delta_ns`.
//!
//! Random streams: `rng::stream(seed, realization << 8 | part, Purpose::Opera)` with part 0
//! for the base factorization, 1 for lifting and 2 for the assignment to rotors, so changing
//! one step does not shift the draws of the others.

mod fabric;
mod factorize;
pub(crate) mod faults;
pub(crate) mod kpaths;
mod paths;
mod schedule;
mod timing;

#[cfg(test)]
mod tests;

pub use fabric::OperaFacts;
pub(crate) use fabric::{OperaFabric, DARK, MAX_UPLINKS, STAGES};
pub(crate) use paths::Paths;
pub(crate) use schedule::Schedule;
pub(crate) use timing::{delta_ps, paper_delta_ps, Timing, PAPER_EPSILON_PS, PAPER_RECONFIG_PS};

use crate::rng::{stream, Purpose};
use crate::scenario::FieldError;

/// Largest hop table accepted (S · N² bytes): 4 GiB, enough for the k = 64 Opera of 3,072
/// racks in 8 rotor groups (384 superslices: 3.6 GB per rank). Beyond it paths should be
/// computed per superslice on demand instead (not done yet).
const MAX_HOP_TABLE_BYTES: u128 = 1 << 32;

/// Everything Opera's schedule depends on. Times in picoseconds (scenario fields in ns).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct OperaParams {
    /// N, the number of racks (ToRs).
    pub racks: usize,
    /// d, hosts per rack (not used by the schedule; validated for the fabric).
    pub hosts_per_rack: usize,
    /// u, uplinks per rack = rotor switches.
    pub uplinks: usize,
    /// G, rotor groups: one rotor per group reconfigures per superslice (1: the paper's k = 12).
    pub groups: usize,
    pub epsilon_ps: u64,
    pub delta_ps: u64,
    pub reconfig_ps: u64,
    /// Candidate schedules drawn; the best by (worst-case hops, mean hops) is kept.
    pub realizations: usize,
    /// Most shortest paths listed per (superslice, src, dst) (NSDI's "5paths" file: 5).
    pub max_paths: usize,
    /// Build J_N's factorization by lifting a ≤ 64-rack one when N > 64 (the authors'
    /// `MAIN.m`) instead of colouring J_N directly (the default; `factorize.rs` says why).
    pub lifting: bool,
    /// Low-latency packets follow one of the `max_paths` shortest loopless paths (Yen's, any
    /// length), drawn per packet, instead of any shortest next hop (`kpaths.rs`).
    pub k_shortest: bool,
    pub seed: u64,
}

impl Default for OperaParams {
    /// The paper's 648-host configuration (k = 12): 108 racks × 6 hosts, 6 rotors, ε = 90 µs,
    /// δ = 1.7 µs (500 ns + 1,500 B at 10 Gb/s), r = 10 µs.
    fn default() -> OperaParams {
        OperaParams {
            racks: 108,
            hosts_per_rack: 6,
            uplinks: 6,
            groups: 1,
            epsilon_ps: PAPER_EPSILON_PS,
            delta_ps: paper_delta_ps(),
            reconfig_ps: PAPER_RECONFIG_PS,
            realizations: 1,
            max_paths: 5,
            lifting: false,
            k_shortest: false,
            seed: 0,
        }
    }
}

impl OperaParams {
    /// The timing these constants give (validated).
    pub(crate) fn timing(&self) -> Result<Timing, FieldError> {
        Timing::new(
            self.epsilon_ps,
            self.delta_ps,
            self.reconfig_ps,
            self.racks / self.groups.max(1),
        )
    }

    /// Checks every field; the error names the first wrong one.
    pub(crate) fn validate(&self) -> Result<(), FieldError> {
        let bad = |field: &str, msg: String| Err(FieldError::new(field, msg));
        if self.racks < 2 {
            return bad(
                "topology.racks",
                format!("must be ≥ 2 (got {})", self.racks),
            );
        }
        if self.racks > u32::MAX as usize {
            return bad(
                "topology.racks",
                format!("must be < 2^32 (got {})", self.racks),
            );
        }
        if self.hosts_per_rack == 0 {
            return bad("topology.hosts_per_rack", "must be ≥ 1 (got 0)".into());
        }
        if self.uplinks < 2 || self.uplinks > u16::MAX as usize {
            return bad(
                "topology.uplinks",
                format!(
                    "must be in 2..=65535: one rotor reconfigures per slice, the others carry \
                     low-latency paths (got {})",
                    self.uplinks
                ),
            );
        }
        if self.racks % self.uplinks != 0 {
            return bad(
                "topology.racks",
                format!(
                    "{} racks cannot be factored over {} uplinks: each rotor needs N/u \
                     matchings, so racks must be a multiple of topology.uplinks",
                    self.racks, self.uplinks
                ),
            );
        }
        if self.groups == 0 || self.uplinks % self.groups != 0 || self.uplinks / self.groups < 2 {
            return bad(
                "topology.opera.groups",
                format!(
                    "must divide topology.uplinks = {} into groups of at least 2 rotors (one \
                     reconfigures, one stays up; got {})",
                    self.uplinks, self.groups
                ),
            );
        }
        self.timing()?;
        if self.realizations == 0 {
            return bad("topology.opera.realizations", "must be ≥ 1 (got 0)".into());
        }
        if self.max_paths == 0 {
            return bad("topology.opera.max_paths", "must be ≥ 1 (got 0)".into());
        }
        let table = (self.racks / self.groups) as u128 * (self.racks as u128).pow(2);
        if self.k_shortest && table > kpaths::MAX_SLOTS {
            return bad(
                "topology.opera.ll_paths",
                format!(
                    "\"k_shortest\" keeps a path slot per (superslice, rack pair): {table} for \
                     {} racks in {} groups, more than the {} this version allows",
                    self.racks,
                    self.groups,
                    kpaths::MAX_SLOTS
                ),
            );
        }
        if table > MAX_HOP_TABLE_BYTES {
            return bad(
                "topology.racks",
                format!(
                    "{} racks in {} groups need a {table}-byte hop table (S·N²), more than \
                     the 4 GiB this version stores",
                    self.racks, self.groups
                ),
            );
        }
        Ok(())
    }
}

impl Schedule {
    #[cfg(test)]
    /// The schedule of realization 0, without paths.
    pub(crate) fn build(p: &OperaParams) -> Result<Schedule, FieldError> {
        p.validate()?;
        realization(p, 0)
    }
}

/// Candidate schedule number `index` (parameters validated).
fn realization(p: &OperaParams, index: usize) -> Result<Schedule, FieldError> {
    let owner = (index as u64) << 8;
    let f = factorize::factorize(
        p.racks,
        p.lifting,
        &mut stream(p.seed, owner, Purpose::Opera),
        &mut stream(p.seed, owner | 1, Purpose::Opera),
    );
    // Cheap (N² bytes) and guards the invariant the rest relies on.
    if let Err(e) = f.check() {
        return Err(FieldError::new(
            "topology.racks",
            format!(
                "internal error, please report: factorization of J_{} failed: {e}",
                p.racks
            ),
        ));
    }
    Ok(Schedule::assign(
        &f,
        p.uplinks,
        p.groups,
        p.timing()?,
        &mut stream(p.seed, owner | 2, Purpose::Opera),
    ))
}

/// A built Opera schedule with its low-latency paths.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Opera {
    params: OperaParams,
    schedule: Schedule,
    paths: Paths,
    realization: usize,
    /// With `k_shortest`: the k-shortest loopless path sets, filled on demand.
    kpaths: Option<kpaths::KPaths>,
}

impl Opera {
    /// Validates `p`, draws its realizations and keeps the best (see the module doc).
    pub(crate) fn build(p: &OperaParams) -> Result<Opera, FieldError> {
        p.validate()?;
        let mut best: Option<(Schedule, Paths, usize)> = None;
        let mut first_error = None;
        for r in 0..p.realizations {
            let sched = realization(p, r)?;
            match Paths::compute(&sched) {
                Err(e) => {
                    first_error.get_or_insert(e);
                }
                Ok(paths) => {
                    let key = (paths.worst(), paths.total_hops());
                    let better = match &best {
                        None => true,
                        Some((_, b, _)) => key < (b.worst(), b.total_hops()),
                    };
                    if better {
                        best = Some((sched, paths, r));
                    }
                }
            }
        }
        match best {
            Some((schedule, paths, realization)) => Ok(Opera {
                params: p.clone(),
                kpaths: p
                    .k_shortest
                    .then(|| kpaths::KPaths::new(p.racks, schedule.superslices(), p.max_paths)),
                schedule,
                paths,
                realization,
            }),
            None => Err(FieldError::new(
                "topology.uplinks",
                format!(
                    "none of {} realization(s) has connected low-latency paths in every \
                     superslice ({}); use more uplinks (or fewer groups)",
                    p.realizations,
                    first_error.map_or_else(String::new, |e| e.to_string())
                ),
            )),
        }
    }

    pub(crate) fn params(&self) -> &OperaParams {
        &self.params
    }

    pub(crate) fn schedule(&self) -> &Schedule {
        &self.schedule
    }

    pub(crate) fn hop_table(&self) -> &Paths {
        &self.paths
    }

    /// Which candidate was kept (0-based).
    pub(crate) fn realization(&self) -> usize {
        self.realization
    }

    pub(crate) fn timing(&self) -> &Timing {
        self.schedule.timing()
    }

    /// See [`Schedule::matching`].
    pub(crate) fn matching(&self, rotor: usize, superslice: usize) -> &[u32] {
        self.schedule.matching(rotor, superslice)
    }

    #[cfg(test)]
    /// See [`Schedule::reconfiguring`].
    pub(crate) fn reconfiguring(&self, superslice: usize) -> impl Iterator<Item = usize> + '_ {
        self.schedule.reconfiguring(superslice)
    }

    /// See [`Schedule::peer_rack`].
    pub(crate) fn peer_rack(&self, rack: usize, rotor: usize, time_ps: u64) -> Option<u32> {
        self.schedule.peer_rack(rack, rotor, time_ps)
    }

    #[cfg(test)]
    /// Shortest ToR-to-ToR hop count in `superslice`.
    pub(crate) fn hops(&self, superslice: usize, src: usize, dst: usize) -> u8 {
        self.paths.hops(superslice, src, dst)
    }

    #[cfg(test)]
    /// Up to `max_paths` shortest paths (rotor sequences) in `superslice`; see
    /// [`Paths::paths`].
    pub(crate) fn paths(&self, superslice: usize, src: usize, dst: usize) -> Vec<Vec<u16>> {
        self.paths
            .paths(&self.schedule, superslice, src, dst, self.params.max_paths)
    }

    /// Next hops (rotor, rack) toward `dst` on shortest paths of `superslice`.
    pub(crate) fn next_hops(
        &self,
        superslice: usize,
        rack: usize,
        dst: usize,
    ) -> impl Iterator<Item = (usize, usize)> + '_ {
        self.paths.next_hops(&self.schedule, superslice, rack, dst)
    }

    /// With `k_shortest`, the up to `max_paths` shortest loopless paths (rotor sequences,
    /// shortest first) from rack `src` to rack `dst` in `superslice`; None without it.
    pub(crate) fn ll_paths(
        &self,
        superslice: usize,
        src: usize,
        dst: usize,
    ) -> Option<&[Box<[u16]>]> {
        let k = self.kpaths.as_ref()?;
        Some(k.get(&self.schedule, superslice, src, dst))
    }

    /// Bytes held on the heap (matchings, hop table, empty k-shortest slots).
    pub(crate) fn heap_bytes(&self) -> usize {
        self.schedule.heap_bytes()
            + self.paths.heap_bytes()
            + self.kpaths.as_ref().map_or(0, |k| k.heap_bytes())
    }
}
