//! Ofan and pOfan (the Ofan paper, §4.1 and §5.1): destination rotation in the switch.
//!
//! A switch keeps one pointer per (ingress pipe, destination key, size class). Keys are the
//! destination edge switch at an edge switch and the destination pod at an aggregation switch
//! (the destination leaf at a leaf). A northbound packet takes port π_id(p) of its pointer p,
//! then p advances by one, so every uplink carries exactly one packet per w packets of a key.
//! Data pointers start uniformly at random; the ACK pointer of a destination starts half a
//! rotation (+⌊w/2⌋) after the data pointer of the same destination and pipe.
//!
//! Ofan is the case of a single pipe holding all ports; pOfan with W ports per pipe keeps an
//! independent pointer set per pipe of W consecutive ingress ports (1Ofan: one per port).

use super::switch_policy::{all_candidates, candidates_mismatch, first_valid};
use super::switch_policy::{BuildSwitch, QueueView, SwitchCtx, SwitchPolicy};
use super::LbShared;
use crate::scenario::LbPolicy;
use crate::topology::{Fabric, NodeId};
use rand::seq::SliceRandom;
use rand::Rng;
use rand_pcg::Pcg32;
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;

/// One [`PortOrder`] per distinct uplink count in the fabric, so that every switch's order
/// has exactly its own width. Orders are drawn in increasing width from one stream (a fabric
/// with one uplink count draws exactly one permutation).
#[derive(Clone, Debug, Default)]
pub struct PortOrders {
    /// Indexed by width.
    by_width: Vec<Option<PortOrder>>,
}

impl PortOrders {
    /// Draws one random order for each distinct non-zero width in `widths`, in increasing
    /// width.
    pub fn random(widths: impl Iterator<Item = u16>, rng: &mut Pcg32) -> PortOrders {
        let widths: BTreeSet<u16> = widths.filter(|&w| w > 0).collect();
        let mut by_width = vec![None; widths.last().map_or(0, |&w| w as usize + 1)];
        for w in widths {
            by_width[w as usize] = Some(PortOrder::random(w, rng));
        }
        PortOrders { by_width }
    }
    /// The order of width `w`; every switch's uplink count has one.
    #[inline]
    pub fn for_width(&self, w: u16) -> &PortOrder {
        self.by_width[w as usize]
            .as_ref()
            .expect("a port order exists for every uplink count of the fabric")
    }
}

/// The global port-order permutation P and the per-pointer port order π_id built from it.
#[derive(Clone, Debug)]
pub struct PortOrder {
    perm: Vec<u16>,
    bits: u32,
}

impl PortOrder {
    /// Draws P uniformly at random. Any permutation of distinct elements has w distinct
    /// cyclic shifts, so the paper's condition holds for every draw.
    pub fn random(w: u16, rng: &mut Pcg32) -> PortOrder {
        let mut perm: Vec<u16> = (0..w).collect();
        perm.shuffle(rng);
        PortOrder::from_permutation(perm)
    }

    /// The order of a given permutation P of 0..w (w ≥ 1).
    pub fn from_permutation(perm: Vec<u16>) -> PortOrder {
        let w = perm.len() as u32;
        assert!(w >= 1);
        let bits = if w <= 1 {
            0
        } else {
            32 - (w - 1).leading_zeros()
        };
        PortOrder { perm, bits }
    }

    /// Its width w: the number of uplinks it orders.
    pub fn width(&self) -> u16 {
        self.perm.len() as u16
    }

    /// π_id(i) = (xor_w(P\[i\], id1) + id2) mod w with id1 = id mod 2^b, id2 = ⌊id / 2^b⌋,
    /// b = ⌈log2 w⌉, xor_w(v, x) = v ⊕ x if that is < w, else v.
    #[inline]
    pub fn port(&self, id: u32, i: u16) -> u16 {
        let w = self.perm.len() as u32;
        let id1 = id & ((1u32 << self.bits) - 1);
        let id2 = id >> self.bits;
        let v = self.perm[i as usize] as u32;
        let x = v ^ id1;
        let xw = if x < w { x } else { v };
        ((xw + id2 % w) % w) as u16
    }
}

#[cold]
#[inline(never)]
fn width_mismatch(order: u16, uplinks: u16) -> ! {
    panic!("Ofan port order of width {order} used at a switch with {uplinks} uplinks")
}

/// One switch's Ofan (or pOfan) pointers: a rotation pointer per (pipe, destination key,
/// class).
#[derive(Serialize, Deserialize)]
pub struct Ofan {
    /// Uplinks w.
    w: u16,
    /// Ingress ports per pipe (all ports for plain Ofan).
    pipe_ports: u16,
    /// Possible destinations N_d.
    n_dest: u32,
    /// pointers[((pipe * n_dest) + d) * 2 + class]
    pointers: Vec<u8>,
}

impl Ofan {
    /// Pointers (one byte each) a switch with these parameters holds.
    pub fn pointer_len(num_ports: u16, pipe_ports: u16, n_dest: u32) -> usize {
        let pipe_ports = pipe_ports.clamp(1, num_ports);
        num_ports.div_ceil(pipe_ports) as usize * n_dest as usize * 2
    }

    /// A switch with `w` uplinks (1..=255) and `num_ports` ingress ports in pipes of
    /// `pipe_ports`, for `n_dest` destination keys: each data pointer starts uniformly at
    /// random, each ACK pointer ⌊w/2⌋ after it.
    pub fn new(w: u16, num_ports: u16, pipe_ports: u16, n_dest: u32, rng: &mut Pcg32) -> Ofan {
        assert!((1..=255).contains(&w), "Ofan pointers are u8: w = {w}");
        let mut pointers = vec![0u8; Ofan::pointer_len(num_ports, pipe_ports, n_dest)];
        let pipe_ports = pipe_ports.clamp(1, num_ports);
        for slot in pointers.chunks_exact_mut(2) {
            let data = rng.gen_range(0..w);
            slot[0] = data as u8;
            slot[1] = ((data + w / 2) % w) as u8;
        }
        Ofan {
            w,
            pipe_ports,
            n_dest,
            pointers,
        }
    }

    /// Returns the uplink index (0..w) for a packet of `class` (0 data, 1 ACK) towards
    /// destination `d` that entered through `in_port`.
    #[inline]
    pub fn choose(&mut self, order: &PortOrder, in_port: u16, d: u32, class: u32) -> u16 {
        debug_assert!(d < self.n_dest && class < 2);
        // A wrong width would index outside the uplinks: checked cheaply, reported out of line.
        if order.width() != self.w {
            width_mismatch(order.width(), self.w);
        }
        let pipe = (in_port / self.pipe_ports) as usize;
        let slot = (pipe * self.n_dest as usize + d as usize) * 2 + class as usize;
        let p = self.pointers[slot];
        self.pointers[slot] = ((p as u16 + 1) % self.w) as u8;
        order.port(d + self.n_dest * class, p as u16)
    }

    /// Uplinks w this switch rotates over.
    pub fn width(&self) -> u16 {
        self.w
    }

    /// Pointers it holds (as [`Ofan::pointer_len`]).
    pub fn pointer_count(&self) -> usize {
        self.pointers.len()
    }
}

/// Ofan or pOfan at a switch: its pointers and the subtree level that keys them (the switch's
/// tier); a switch without uplinks (a top switch) hashes.
#[derive(Serialize, Deserialize)]
pub(crate) struct OfanSwitch(Option<(Ofan, u8)>);

impl SwitchPolicy for OfanSwitch {
    /// Ofan rotates over all w uplinks; under failures it keeps advancing the pointer until it
    /// yields a valid port (the Ofan paper, §4.1).
    #[inline]
    fn choose<Q: QueueView>(&mut self, ctx: &mut SwitchCtx<'_, Q>) -> u16 {
        let Some((state, level)) = &mut self.0 else {
            return ctx.hashed_port();
        };
        let (c, pkt) = (ctx.candidates, ctx.pkt);
        let (d, _) = ctx.fabric.subtree(pkt.dst, *level);
        let all = all_candidates(ctx.fabric, ctx.node, pkt.dst, c);
        if all.len() != state.width() {
            candidates_mismatch("ofan", all.len(), state.width());
        }
        let order = ctx.shared.orders.for_width(state.width());
        let (in_port, class) = (ctx.in_port, pkt.size_class());
        first_valid(all, c, || state.choose(order, in_port, d, class))
    }

    fn uplink_structured(&self) -> bool {
        self.0.is_some()
    }
}

impl BuildSwitch for OfanSwitch {
    fn build(
        policy: LbPolicy,
        shared: &LbShared,
        fabric: &Fabric,
        node: NodeId,
        rng: &mut Pcg32,
    ) -> Self {
        let uplinks = fabric.uplinks(node);
        if uplinks == 0 {
            return OfanSwitch(None);
        }
        let ports = fabric.num_ports(node);
        let level = fabric.tier(node);
        let (_, n_dest) = fabric.subtree(0, level);
        let pipes = pipe_ports(policy, shared, ports);
        OfanSwitch(Some((Ofan::new(uplinks, ports, pipes, n_dest, rng), level)))
    }

    fn state_bytes(policy: LbPolicy, shared: &LbShared, fabric: &Fabric, node: NodeId) -> usize {
        let ports = fabric.num_ports(node);
        match fabric.uplinks(node) {
            0 => 0,
            _ => Ofan::pointer_len(
                ports,
                pipe_ports(policy, shared, ports),
                fabric.subtree(0, fabric.tier(node)).1,
            ),
        }
    }
}

/// Ingress ports per pipe: all of them for Ofan, `lb.pipe_ports` for pOfan.
fn pipe_ports(policy: LbPolicy, shared: &LbShared, ports: u16) -> u16 {
    match policy {
        LbPolicy::Ofan => ports,
        _ => shared.cfg.pipe_ports as u16,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn port_order_is_a_permutation_for_every_id() {
        let mut rng = Pcg32::seed_from_u64(9);
        for w in 1..=32u16 {
            let order = PortOrder::random(w, &mut rng);
            for id in 0..4096u32 {
                let mut seen = vec![false; w as usize];
                for i in 0..w {
                    let p = order.port(id, i);
                    assert!(p < w);
                    assert!(!seen[p as usize], "w={w} id={id} repeats port {p}");
                    seen[p as usize] = true;
                }
            }
        }
    }

    #[test]
    fn every_uplink_gets_one_packet_per_w_packets_of_a_key() {
        let mut rng = Pcg32::seed_from_u64(5);
        for (w, ports, pipe) in [(6u16, 12u16, 12u16), (8, 16, 4), (4, 8, 1)] {
            let order = PortOrder::random(w, &mut rng);
            let mut o = Ofan::new(w, ports, pipe, 20, &mut rng);
            for in_port in [0u16, ports - 1] {
                for (d, class) in [(0, 0), (19, 1), (7, 0)] {
                    for _ in 0..10 {
                        let mut hits = vec![0; w as usize];
                        for _ in 0..w {
                            hits[o.choose(&order, in_port, d, class) as usize] += 1;
                        }
                        assert!(
                            hits.iter().all(|&h| h == 1),
                            "w={w} d={d} class={class}: {hits:?}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn ack_pointer_starts_half_a_rotation_after_data() {
        let mut rng = Pcg32::seed_from_u64(11);
        let o = Ofan::new(6, 12, 12, 3, &mut rng);
        for slot in o.pointers.chunks_exact(2) {
            assert_eq!(slot[1], (slot[0] + 3) % 6);
        }
    }

    #[test]
    fn pipes_have_independent_pointers() {
        let mut rng = Pcg32::seed_from_u64(2);
        let order = PortOrder::random(8, &mut rng);
        let mut o = Ofan::new(8, 16, 4, 1, &mut rng);
        assert_eq!(o.pointer_count(), 4 * 2);
        // Advancing pipe 0 must not move pipe 1's pointer.
        let before = o.pointers[2];
        for _ in 0..3 {
            o.choose(&order, 0, 0, 0);
        }
        assert_eq!(o.pointers[2], before);
    }
}
