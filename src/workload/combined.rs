//! The combined workload (`kind = "poisson"` with `[workload.with_shuffle]`, the Opera paper's
//! Fig. 10): Poisson flows and an all-to-all shuffle, sent by the same hosts.
//!
//! A host's flows must be in order of start time (the host starts them with one cursor), so
//! the two parts are merged per host at build time: `order` lists, for each host, which part
//! and which of that part's flows its `i`-th flow is (Poisson first on a tie). Both parts
//! keep their own flow numbering for their random draws, so the Poisson flows and the
//! shuffle are the same flows as in a run of either alone. The merge costs 4 bytes per flow
//! (1.7 MB for the 648-host shuffle), which is why it is not used for the plain shuffle.

use super::generator::Generator;
use super::poisson::Poisson;
use super::shuffle::Shuffle;
use super::Flow;

/// Bit of an `order` entry that marks a shuffle flow (the rest is its index in the part).
const SHUFFLE_BIT: u32 = 1 << 31;

/// Phase indices ([`super::Workload::phase_of`]).
pub(crate) const POISSON_PHASE: u8 = 0;
pub(crate) const SHUFFLE_PHASE: u8 = 1;

pub(crate) struct Combined {
    pub poisson: Poisson,
    pub shuffle: Shuffle,
    /// Host h's flows are `order[first[h]..first[h + 1]]`.
    first: Vec<usize>,
    order: Vec<u32>,
    pub phases: Vec<String>,
}

impl Combined {
    pub(crate) fn new(poisson: Poisson, shuffle: Shuffle, hosts: u32) -> Combined {
        let mut first = Vec::with_capacity(hosts as usize + 1);
        let mut order = Vec::new();
        for h in 0..hosts {
            first.push(order.len());
            let (np, ns) = (poisson.flows_of(h), shuffle.flows_of(h));
            assert!(
                ns < SHUFFLE_BIT && np < SHUFFLE_BIT,
                "too many flows at host {h}"
            );
            let (mut i, mut j) = (0, 0);
            while i < np || j < ns {
                let take_poisson = j == ns
                    || (i < np && start_ps(&poisson.flow(h, i)) <= start_ps(&shuffle.flow(h, j)));
                if take_poisson {
                    order.push(i);
                    i += 1;
                } else {
                    order.push(SHUFFLE_BIT | j);
                    j += 1;
                }
            }
        }
        first.push(order.len());
        Combined {
            poisson,
            shuffle,
            first,
            order,
            phases: vec!["poisson".into(), "shuffle".into()],
        }
    }

    /// Which part flow `i` of host `h` is (true: the shuffle) and its index there.
    #[inline]
    fn part(&self, h: u32, i: u32) -> (bool, u32) {
        let e = self.order[self.first[h as usize] + i as usize];
        (e & SHUFFLE_BIT != 0, e & !SHUFFLE_BIT)
    }
}

impl Generator for Combined {
    #[inline]
    fn flows_of(&self, h: u32) -> u32 {
        (self.first[h as usize + 1] - self.first[h as usize]) as u32
    }

    #[inline]
    fn flow(&self, h: u32, i: u32) -> Flow {
        match self.part(h, i) {
            (true, j) => self.shuffle.flow(h, j),
            (false, j) => self.poisson.flow(h, j),
        }
    }

    #[inline]
    fn phase_of(&self, h: u32, i: u32) -> Option<u8> {
        Some(match self.part(h, i).0 {
            true => SHUFFLE_PHASE,
            false => POISSON_PHASE,
        })
    }

    /// The application's bulk tag of flow `i` of host `h`: the shuffle's, none for Poisson.
    #[inline]
    fn bulk_tag(&self, h: u32, i: u32) -> Option<bool> {
        self.part(h, i).0.then_some(self.shuffle.bulk).flatten()
    }

    fn bytes_of(&self, h: u32) -> u64 {
        self.poisson.bytes_of(h) + self.shuffle.flows_of(h) as u64 * self.shuffle.bytes
    }
    fn kind_name(&self) -> &'static str {
        "poisson+shuffle"
    }
    fn phase_names(&self) -> &[String] {
        &self.phases
    }
}

fn start_ps(f: &Flow) -> u64 {
    f.start_at_ps()
        .expect("Poisson and shuffle flows start at fixed times")
}
