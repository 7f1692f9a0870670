//! The byte form of an event that crosses ranks: fixed-size records of explicit
//! little-endian fields, written and read in one pass with no allocation per event.
//!
//! Why not bincode (as the checkpoints use): the k = 32 permutation sends 2 M events per rank
//! and direction, and bincode through serde cost 180 ns per event (encode plus decode), 10 % of
//! a two-rank run; its native derive with fixed-size integers still cost 32 ns. These
//! records cost a few ns. Only arrivals cross partitions (a node sets timers and ends
//! transmissions only for itself), so the record is an arrival's fields; the destructuring
//! below names every field of [`Packet`], so adding one fails to compile until it is carried.

use crate::net::event::{Event, What};
use crate::packet::{Packet, PacketKind};

/// Bytes of one record.
pub(super) const RECORD_BYTES: usize = 62;

/// Appends `ev` to `buf`.
#[inline]
pub(super) fn put(buf: &mut Vec<u8>, ev: &Event) {
    let What::Arrive { node, in_port, pkt } = ev.what else {
        panic!("only arrivals cross partitions, found {ev:?}");
    };
    let Packet {
        sent_ps,
        flow_index,
        src,
        dst,
        seq,
        ack,
        size_bytes,
        via,
        entropy,
        kind,
        flags,
    } = pkt;
    let mut r = [0u8; RECORD_BYTES];
    let mut w = Writer { r: &mut r, at: 0 };
    w.put(&ev.time_ps.to_le_bytes());
    w.put(&ev.tie.to_le_bytes());
    w.put(&node.to_le_bytes());
    w.put(&in_port.to_le_bytes());
    w.put(&sent_ps.to_le_bytes());
    for v in [flow_index, src, dst, seq, ack, size_bytes, via] {
        w.put(&v.to_le_bytes());
    }
    w.put(&entropy.to_le_bytes());
    w.put(&[kind as u8, flags]);
    debug_assert_eq!(w.at, RECORD_BYTES);
    buf.extend_from_slice(&r);
}

/// The event of one record.
#[inline]
pub(super) fn get(r: &[u8]) -> Event {
    assert_eq!(
        r.len(),
        RECORD_BYTES,
        "an event record has {RECORD_BYTES} bytes"
    );
    let mut c = Reader { r, at: 0 };
    let time_ps = c.u64();
    let tie = c.u64();
    let node = c.u32();
    let in_port = c.u16();
    let sent_ps = c.u64();
    let [flow_index, src, dst, seq, ack, size_bytes, via] = std::array::from_fn(|_| c.u32());
    let entropy = c.u16();
    let kind = packet_kind(c.u8());
    let flags = c.u8();
    let pkt = Packet {
        sent_ps,
        flow_index,
        src,
        dst,
        seq,
        ack,
        size_bytes,
        via,
        entropy,
        kind,
        flags,
    };
    Event {
        time_ps,
        tie,
        what: What::Arrive { node, in_port, pkt },
    }
}

/// Every event of `bytes`, a concatenation of records.
pub(super) fn records(bytes: &[u8]) -> impl Iterator<Item = Event> + '_ {
    assert!(
        bytes.len() % RECORD_BYTES == 0,
        "a rank sent {} bytes, not a whole number of event records",
        bytes.len()
    );
    bytes.chunks_exact(RECORD_BYTES).map(get)
}

fn packet_kind(b: u8) -> PacketKind {
    const KINDS: [PacketKind; 5] = [
        PacketKind::Data,
        PacketKind::Ack,
        PacketKind::Nack,
        PacketKind::Advert,
        PacketKind::Pull,
    ];
    let k = KINDS
        .get(b as usize)
        .copied()
        .unwrap_or_else(|| panic!("packet kind {b} in an event record from another rank"));
    assert_eq!(k as u8, b, "PacketKind discriminants follow their order");
    k
}

struct Writer<'a> {
    r: &'a mut [u8; RECORD_BYTES],
    at: usize,
}

impl Writer<'_> {
    #[inline]
    fn put(&mut self, b: &[u8]) {
        self.r[self.at..self.at + b.len()].copy_from_slice(b);
        self.at += b.len();
    }
}

struct Reader<'a> {
    r: &'a [u8],
    at: usize,
}

impl Reader<'_> {
    #[inline]
    fn take<const N: usize>(&mut self) -> [u8; N] {
        let b: [u8; N] = self.r[self.at..self.at + N].try_into().expect("in bounds");
        self.at += N;
        b
    }
    fn u64(&mut self) -> u64 {
        u64::from_le_bytes(self.take())
    }
    fn u32(&mut self) -> u32 {
        u32::from_le_bytes(self.take())
    }
    fn u16(&mut self) -> u16 {
        u16::from_le_bytes(self.take())
    }
    fn u8(&mut self) -> u8 {
        self.take::<1>()[0]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn packet(kind: PacketKind, salt: u64) -> Packet {
        Packet {
            sent_ps: 0x0102_0304_0506_0708 ^ salt,
            flow_index: 0xA1B2_C3D4,
            src: 7,
            dst: u32::MAX - 1,
            seq: 0x8000_0001,
            ack: 12,
            size_bytes: 4160,
            via: crate::packet::NO_VIA,
            entropy: 0xBEEF,
            kind,
            flags: 0b1010_0101,
        }
    }

    #[test]
    fn an_arrival_survives_the_round_trip_bit_for_bit() {
        let kinds = [
            PacketKind::Data,
            PacketKind::Ack,
            PacketKind::Nack,
            PacketKind::Advert,
            PacketKind::Pull,
        ];
        let evs: Vec<Event> = kinds
            .iter()
            .enumerate()
            .map(|(i, &k)| {
                Event::arrive(
                    u64::MAX - i as u64,
                    0xFFFF_0000 + i as u32,
                    3 + i as u32,
                    0xFFFE,
                    packet(k, i as u64),
                )
            })
            .collect();
        let mut buf = Vec::new();
        evs.iter().for_each(|e| put(&mut buf, e));
        assert_eq!(buf.len(), evs.len() * RECORD_BYTES);
        assert_eq!(records(&buf).collect::<Vec<_>>(), evs);
    }

    #[test]
    #[should_panic(expected = "only arrivals cross partitions")]
    fn a_timer_is_never_sent_to_another_rank() {
        let ev = Event::timer(5, 1, 0, crate::net::event::TimerKind::Rto, 0, 0);
        put(&mut Vec::new(), &ev);
    }

    #[test]
    #[should_panic(expected = "not a whole number of event records")]
    fn a_torn_buffer_is_refused() {
        let _ = records(&[0u8; RECORD_BYTES + 1]).count();
    }
}
