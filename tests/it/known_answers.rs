//! Known-answer tests for the two formulas that decide where packets go, so that a change to
//! either shows up as a failed literal rather than as a subtle shift in simulation results.
//!
//! - ECMP: `lb::ecmp::jenkins_hash` must equal htsim's `freeBSDHash` (Bob Jenkins' 96-bit mix),
//!   and `lb::ecmp::choose` must be that hash modulo the number of uplinks.
//! - Ofan: `lb::ofan::PortOrder::port` must be π_id(i) = (xor_w(P[i], id1) + id2) mod w
//!   (the Ofan paper, appendix F.2), and `Ofan::choose` must walk those orders from its pointers.
//!
//! Every expected value is a literal worked out outside the code under test.

use rand::SeedableRng;
use rand_pcg::Pcg32;
use weft::lb::ecmp::{choose, jenkins_hash};
use weft::lb::ofan::{Ofan, PortOrder};

/// Values from a C transcription of htsim's `freeBSDHash(target1 = flow_id, target2 = pathid,
/// target3 = salt)` (csg-htsim sim/datacenter/fat_tree_switch.h), compiled with gcc 12.2.
/// Rows: (flow, entropy / pathid, salt, hash).
const FREEBSD_HASH: [(u32, u32, u32, u32); 13] = [
    (0, 0, 0, 3175731469),
    (1, 0, 0, 539485162),
    (0, 1, 0, 1843378377),
    (0, 0, 1, 1685583135),
    (0xffff_ffff, 0xffff_ffff, 0xffff_ffff, 3145065090),
    (0, 0, 12345, 3699640591),
    (1, 7, 12345, 983139413),
    (2, 1000, 12345, 608206391),
    (3, 65535, 12345, 3940991322),
    (0, 65535, 0xdead_beef, 2034127471),
    (3, 0, 0xdead_beef, 3994451652),
    (2, 42, 0xdead_beef, 4248590867),
    (123456, 300, 7, 1714902718),
];

#[test]
fn ecmp_hash_matches_htsim_freebsdhash() {
    for (flow, entropy, salt, want) in FREEBSD_HASH {
        assert_eq!(
            jenkins_hash(flow, entropy, salt),
            want,
            "({flow}, {entropy}, {salt:#x})"
        );
    }
}

#[test]
fn ecmp_choose_is_hash_mod_count() {
    // (flow, entropy, salt, count, port): port = the hash above mod count, from the C program.
    let cases: [(u32, u16, u32, u16, u16); 10] = [
        (0, 0, 0, 6, 1),                 // 3175731469 % 6
        (0, 0, 0, 32, 13),               // 3175731469 % 32
        (1, 7, 12345, 6, 5),             //  983139413 % 6
        (1, 7, 12345, 32, 21),           //  983139413 % 32
        (2, 1000, 12345, 6, 5),          //  608206391 % 6
        (3, 65535, 12345, 6, 0),         // 3940991322 % 6
        (3, 65535, 12345, 32, 26),       // 3940991322 % 32
        (0, 65535, 0xdead_beef, 32, 15), // 2034127471 % 32
        (2, 42, 0xdead_beef, 6, 5),      // 4248590867 % 6
        (2, 42, 0xdead_beef, 32, 19),    // 4248590867 % 32
    ];
    for (flow, ev, salt, count, want) in cases {
        assert_eq!(
            choose(flow, ev, salt, count),
            want,
            "({flow}, {ev}, {salt:#x}) % {count}"
        );
        assert_eq!(
            choose(flow, ev, salt, count) as u32,
            jenkins_hash(flow, ev as u32, salt) % count as u32
        );
    }
}

/// π_id(0..w) for w = 4, P = [2, 0, 3, 1]; b = 2, id1 = id mod 4, id2 = id / 4.
/// No XOR result can reach w = 4, so the xor_w fallback never applies.
const W4_ORDERS: [(u32, [u16; 4]); 5] = [
    (0, [2, 0, 3, 1]), // id1 0, id2 0: P itself
    (1, [3, 1, 2, 0]), // id1 1, id2 0: 2^1=3 0^1=1 3^1=2 1^1=0
    (3, [1, 3, 0, 2]), // id1 3, id2 0: 2^3=1 0^3=3 3^3=0 1^3=2
    (5, [0, 2, 3, 1]), // id1 1, id2 1: [3,1,2,0] + 1 mod 4
    (6, [1, 3, 2, 0]), // id1 2, id2 1: 2^2=0 0^2=2 3^2=1 1^2=3 -> [0,2,1,3] + 1 mod 4
];

/// π_id(0..w) for w = 6, P = [5, 1, 4, 0, 2, 3]; b = 3, id1 = id mod 8, id2 = id / 8.
/// An XOR result of 6 or 7 falls back to P[i] (marked "→v").
const W6_ORDERS: [(u32, [u16; 6]); 5] = [
    (0, [5, 1, 4, 0, 2, 3]), // id1 0, id2 0: P itself
    (2, [5, 3, 4, 2, 0, 1]), // id1 2, id2 0: 5^2=7→5 1^2=3 4^2=6→4 0^2=2 2^2=0 3^2=1
    (7, [2, 1, 3, 0, 5, 4]), // id1 7, id2 0: 5^7=2 1^7=6→1 4^7=3 0^7=7→0 2^7=5 3^7=4
    // id1 1, id2 1: 5^1=4 1^1=0 4^1=5 0^1=1 2^1=3 3^1=2 -> [4,0,5,1,3,2] + 1 mod 6
    (9, [5, 1, 0, 2, 4, 3]),
    // id1 5, id2 1: 5^5=0 1^5=4 4^5=1 0^5=5 2^5=7→2 3^5=6→3 -> [0,4,1,5,2,3] + 1 mod 6
    (13, [1, 5, 2, 0, 3, 4]),
];

fn check_orders<const W: usize>(perm: [u16; W], table: &[(u32, [u16; W])]) {
    let order = PortOrder::from_permutation(perm.to_vec());
    for (id, want) in table {
        let got: Vec<u16> = (0..W as u16).map(|i| order.port(*id, i)).collect();
        assert_eq!(got, want, "P = {perm:?}, id = {id}");
    }
}

#[test]
fn ofan_port_order_w4() {
    check_orders([2, 0, 3, 1], &W4_ORDERS);
}

#[test]
fn ofan_port_order_w6() {
    check_orders([5, 1, 4, 0, 2, 3], &W6_ORDERS);
}

/// With N_d = 7, destination d uses id d for data and id d + 7 for ACKs, so d = 0 walks the
/// id 0 / id 7 orders above and d = 2 the id 2 / id 9 orders. Pointers start at random, so the
/// first data port fixes the data pointer p; the ACK pointer must start at p + ⌊6/2⌋ mod 6, and
/// both must then advance by one position per packet.
#[test]
fn ofan_choose_walks_the_port_order() {
    let order = PortOrder::from_permutation(vec![5, 1, 4, 0, 2, 3]);
    let table = |id: u32| W6_ORDERS.iter().find(|(i, _)| *i == id).unwrap().1;
    for seed in 0..8 {
        let mut rng = Pcg32::seed_from_u64(seed);
        let mut ofan = Ofan::new(6, 12, 12, 7, &mut rng);
        for (d, data_id, ack_id) in [(0u32, 0u32, 7u32), (2, 2, 9)] {
            let (data, ack) = (table(data_id), table(ack_id));
            let first = ofan.choose(&order, 3, d, 0);
            let p = data.iter().position(|&x| x == first).unwrap();
            for k in 1..12 {
                assert_eq!(
                    ofan.choose(&order, 3, d, 0),
                    data[(p + k) % 6],
                    "seed {seed} d {d}"
                );
            }
            for k in 0..12 {
                // Any ingress port: plain Ofan has a single pipe.
                let got = ofan.choose(&order, (k % 12) as u16, d, 1);
                assert_eq!(got, ack[(p + 3 + k) % 6], "seed {seed} d {d} ack");
            }
        }
    }
}
