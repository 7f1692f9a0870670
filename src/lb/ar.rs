//! AR: NVIDIA Spectrum-X-style adaptive routing (as htsim's
//! `adaptive_route` with `compare_queuesize`, per packet). Each egress queue is seen through
//! a quantized level — 0 below 5 % of the queue capacity, 1 below 10 %, 2 below 20 %, else
//! 3 — refreshed lazily: a port's level is recomputed when read more than `period` after its
//! last refresh (csg-htsim's `quantized_queuesize`, `_update_period` = 0.1 µs), so it is
//! deliberately stale. A packet goes to a port of the lowest level, uniform among ties;
//! packets smaller than 100 B (ACKs) follow the ECMP hash, so control packets neither
//! pollute nor follow the state.
//!
//! Per flowlet (`lb.ar.mode = "flowlet"`, htsim's `_ar_sticky = PER_FLOWLET`): a
//! flow's first packet takes a port of the lowest level; later packets keep the flow's port
//! unless the gap since the flow's previous packet exceeds the sticky delta
//! (`lb.ar.flowlet_us`, htsim's 10 µs) and a fair coin passes and a port of a strictly lower
//! level exists, then they move to one (uniform among the lowest). htsim keeps exact per-flow
//! state; here flows are hashed onto a table of `lb.ar.flowset_entries` entries
//! (`flowlet.rs`, default 4096, so that collisions are rare), allocated once per switch.

use super::flowlet::FlowletTable;
use super::switch_policy::QueueView;
use super::switch_policy::{BuildSwitch, SwitchCtx, SwitchPolicy};
use super::ties::uniform_among;
use super::LbShared;
use crate::scenario::LbPolicy;
use crate::topology::Candidates;
use crate::topology::{Fabric, NodeId};
use rand::Rng;
use rand_pcg::Pcg32;
use serde::{Deserialize, Serialize};

/// Parameters shared by every AR switch of a run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct ArParams {
    /// The queue capacity the levels are fractions of.
    pub capacity_bytes: u64,
    /// Level thresholds, in parts per million of the capacity (increasing).
    pub thresholds_ppm: [u64; 3],
    /// A level is recomputed when read more than this long after its last refresh.
    pub period_ps: u64,
    /// Packets below this size follow the ECMP hash.
    pub small_bytes: u32,
    /// Per flowlet (else per packet).
    pub flowlet: bool,
    /// Per flowlet: a flow may move after a gap longer than this.
    pub sticky_ps: u64,
    pub flowset_entries: u32,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub(crate) struct Ar {
    /// Per port: its level and when it was last computed (`None`: never).
    levels: Vec<(u8, Option<u64>)>,
    /// Per flowlet only.
    flowlets: Option<FlowletTable>,
}

impl ArParams {
    /// The level of a queue holding `bytes`.
    #[inline]
    pub(crate) fn level(&self, bytes: u64) -> u8 {
        let ppm = bytes as u128 * 1_000_000;
        self.thresholds_ppm
            .iter()
            .take_while(|&&t| ppm >= t as u128 * self.capacity_bytes as u128)
            .count() as u8
    }
}

impl Ar {
    pub(crate) fn new(ports: u16, params: &ArParams) -> Ar {
        Ar {
            levels: vec![(0, None); ports as usize],
            flowlets: params
                .flowlet
                .then(|| FlowletTable::new(params.flowset_entries)),
        }
    }

    /// Port `p`'s level at `now_ps`, refreshed from the live queue if it is older than the
    /// period.
    #[inline]
    pub(crate) fn level<Q: QueueView>(
        &mut self,
        p: u16,
        params: &ArParams,
        queues: &Q,
        now_ps: u64,
    ) -> u8 {
        let (level, at) = &mut self.levels[p as usize];
        let stale = at.is_none_or(|t| now_ps - t > params.period_ps);
        if stale {
            *level = params.level(queues.queued_bytes(p));
            *at = Some(now_ps);
        }
        *level
    }

    /// The index (among `c`) of a port of the lowest level, uniform among ties; per
    /// flowlet, of the port the flow `key` keeps (see the module comment). `salt`: the
    /// switch's hash salt.
    #[allow(clippy::too_many_arguments)]
    #[inline]
    pub(crate) fn choose<Q: QueueView>(
        &mut self,
        params: &ArParams,
        queues: &Q,
        c: Candidates<'_>,
        key: u32,
        salt: u32,
        now_ps: u64,
        rng: &mut Pcg32,
    ) -> u16 {
        let mut levels = [0u8; 64];
        let n = c.len() as usize;
        assert!(n <= levels.len(), "AR: more than 64 candidate ports");
        for (i, p) in c.iter().enumerate() {
            levels[i] = self.level(p, params, queues, now_ps);
        }
        let min = *levels[..n].iter().min().expect("candidates");
        let Some(table) = &mut self.flowlets else {
            return uniform_among(|| levels[..n].iter(), |&&l| l == min, rng) as u16;
        };
        let slot = table.slot(key, salt);
        let kept = table.last(slot, now_ps).and_then(|(port, gap)| {
            let i = c.iter().position(|q| q == port)?;
            // htsim's order: the gap, then the coin, then "strictly better".
            let moves = gap > params.sticky_ps && rng.gen::<bool>() && min < levels[i];
            (!moves).then_some(i)
        });
        let i = match kept {
            Some(i) => i,
            None => uniform_among(|| levels[..n].iter(), |&&l| l == min, rng),
        };
        table.record(slot, c.get(i as u16), now_ps);
        i as u16
    }

    /// Bytes of state for a switch with `ports` ports.
    pub(crate) fn state_bytes(ports: u16, params: &ArParams) -> usize {
        ports as usize * std::mem::size_of::<(u8, Option<u64>)>()
            + if params.flowlet {
                FlowletTable::state_bytes(params.flowset_entries)
            } else {
                0
            }
    }
}

/// AR at a switch; a switch without uplinks (a top switch) hashes.
#[derive(Serialize, Deserialize)]
pub(crate) struct ArSwitch(Option<Ar>);

impl SwitchPolicy for ArSwitch {
    #[inline]
    fn choose<Q: QueueView>(&mut self, ctx: &mut SwitchCtx<'_, Q>) -> u16 {
        let pkt = ctx.pkt;
        let params = &ctx.shared.ar;
        match &mut self.0 {
            Some(a) if pkt.size_bytes >= params.small_bytes => {
                let c = ctx.candidates;
                let (key, salt, now, rng) = (pkt.hash_key(), ctx.salt, ctx.now_ps, &mut *ctx.rng);
                c.get(a.choose(params, ctx.queues, c, key, salt, now, rng))
            }
            // Packets under `small_bytes` (ACKs) follow the hash, one port per flow.
            _ => ctx.hashed_port(),
        }
    }
}

impl BuildSwitch for ArSwitch {
    fn build(_: LbPolicy, shared: &LbShared, fabric: &Fabric, node: NodeId, _: &mut Pcg32) -> Self {
        ArSwitch(match fabric.uplinks(node) {
            0 => None,
            _ => Some(Ar::new(fabric.num_ports(node), &shared.ar)),
        })
    }

    fn state_bytes(_: LbPolicy, shared: &LbShared, fabric: &Fabric, node: NodeId) -> usize {
        match fabric.uplinks(node) {
            0 => 0,
            _ => Ar::state_bytes(fabric.num_ports(node), &shared.ar),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use std::cell::RefCell;

    struct Queues(RefCell<Vec<u64>>);
    impl QueueView for Queues {
        fn queued_bytes(&self, p: u16) -> u64 {
            self.0.borrow()[p as usize]
        }
        fn sent_bytes(&self, _: u16) -> u64 {
            0
        }
    }

    const PARAMS: ArParams = ArParams {
        capacity_bytes: 1_000_000,
        thresholds_ppm: [50_000, 100_000, 200_000],
        period_ps: 100_000,
        small_bytes: 100,
        flowlet: false,
        sticky_ps: 10_000_000,
        flowset_entries: 4096,
    };

    #[test]
    fn levels_are_monotone_at_five_ten_and_twenty_percent() {
        // As htsim's `quantized_queuesize`:
        // 0.049·max → 0; 0.05·max → 1; 0.1·max → 2; 0.2·max → 3.
        let at = |x: u64| PARAMS.level(x);
        assert_eq!(
            [
                at(0),
                at(49_000),
                at(50_000),
                at(99_999),
                at(100_000),
                at(200_000),
                at(900_000)
            ],
            [0, 0, 1, 1, 2, 3, 3]
        );
    }

    #[test]
    fn the_chosen_port_has_the_lowest_level_and_ties_are_uniform() {
        // Ports 0..4 at 60 KB (level 1), 3 KB (0), 4 KB (0), 300 KB (3).
        let q = Queues(RefCell::new(vec![60_000, 3_000, 4_000, 300_000]));
        let mut rng = Pcg32::seed_from_u64(5);
        let mut counts = [0u32; 4];
        for t in 0..10_000u64 {
            let mut ar = Ar::new(4, &PARAMS);
            counts[ar.choose(
                &PARAMS,
                &q,
                Candidates::Range { first: 0, count: 4 },
                1,
                0,
                t,
                &mut rng,
            ) as usize] += 1;
        }
        assert_eq!((counts[0], counts[3]), (0, 0));
        // 3 KB and 4 KB are both level 0: uniform (5 000 ± 3.3 σ).
        assert!((4_835..=5_165).contains(&counts[1]), "{counts:?}");
    }

    #[test]
    fn levels_are_refreshed_only_after_the_period() {
        let q = Queues(RefCell::new(vec![0, 30_000]));
        let mut ar = Ar::new(2, &PARAMS);
        let mut rng = Pcg32::seed_from_u64(1);
        let c = Candidates::Range { first: 0, count: 2 };
        // At t = 0 both are level 0 (ties).
        ar.choose(&PARAMS, &q, c, 1, 0, 0, &mut rng);
        // Port 0 fills up: within the period AR still sees level 0 for it.
        q.0.borrow_mut()[0] = 500_000;
        let early: Vec<u16> = (0..50)
            .map(|_| ar.choose(&PARAMS, &q, c, 1, 0, 100_000, &mut rng))
            .collect();
        assert!(early.contains(&0), "a stale level keeps port 0 in the ties");
        // More than a period later the level is 3: port 1 only.
        let late: Vec<u16> = (0..50)
            .map(|_| ar.choose(&PARAMS, &q, c, 1, 0, 100_001, &mut rng))
            .collect();
        assert!(late.iter().all(|&p| p == 1));
    }

    /// Per flowlet (htsim's `PER_FLOWLET`): within a flowlet (gaps up to the sticky delta) the
    /// port never changes, however much better another becomes; after longer gaps the flow
    /// moves to a strictly better port about half the time (the coin), never to a worse one.
    #[test]
    fn per_flowlet_the_port_changes_only_after_a_gap() {
        let params = ArParams {
            flowlet: true,
            ..PARAMS
        };
        let q = Queues(RefCell::new(vec![0; 4]));
        let c = Candidates::Range { first: 0, count: 4 };
        let mut ar = Ar::new(4, &params);
        let mut rng = Pcg32::seed_from_u64(8);
        let first = ar.choose(&params, &q, c, 33, 0, 0, &mut rng);
        // Its port is now level 3, every other level 0.
        q.0.borrow_mut()[first as usize] = 900_000;
        let mut now = 0;
        for _ in 0..200 {
            now += 10_000_000; // exactly the sticky delta
            assert_eq!(ar.choose(&params, &q, c, 33, 0, now, &mut rng), first);
        }
        // Longer gaps: the flow moves on the first passing coin (after n gaps: 1 − 2^−n).
        let mut moved = None;
        for _ in 0..40 {
            now += 10_000_001;
            let p = ar.choose(&params, &q, c, 33, 0, now, &mut rng);
            if p != first {
                moved = Some(p);
                break;
            }
        }
        let moved = moved.expect("40 coins all failed");
        // Now on a level-0 port: nothing is strictly better, it stays whatever the gaps.
        for _ in 0..50 {
            now += 20_000_000;
            assert_eq!(ar.choose(&params, &q, c, 33, 0, now, &mut rng), moved);
        }
    }
}
