//! The per-partition event queue (a radix heap, chosen by measurement) and the binary heap
//! it is tested against.
//!
//! Invariant (asserted): nothing is pushed before the time of the last event popped. A
//! discrete-event simulation guarantees it (an event only schedules later or simultaneous
//! events; events from other partitions fall at or after the window's end), and the radix
//! heap relies on it.

use crate::net::event::{Event, What};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::cmp::Ordering;
use std::collections::BinaryHeap;

/// Min-ordered wrapper for the max-heap.
struct Entry(Event);

impl PartialEq for Entry {
    fn eq(&self, o: &Self) -> bool {
        self.0.key() == o.0.key()
    }
}
impl Eq for Entry {}
impl PartialOrd for Entry {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Entry {
    #[inline]
    fn cmp(&self, o: &Self) -> Ordering {
        o.0.key().cmp(&self.0.key())
    }
}

/// The per-partition event queue: [`RadixQueue`], chosen by measurement (the hold model in
/// benches/event_queue.rs, and whole runs). On the quickstart at k = 16 (6.2 M events, over
/// 130 k pending at the peak, 56 on average at each distinct time) one thread ran 5.4 M
/// events/s with it against 1.6 M with `std`'s binary heap, at the same peak memory and with
/// identical results. Also measured and dropped (hold model, ns per pop + push at 1e3 / 1e4 /
/// 1e5 pending; radix 147 / 138 / 154, binary heap 123 / 203 / 395): a 4-ary heap of whole
/// events (115 / 144 / 254; 2.1 M events/s end to end), a 4-ary heap of 24-byte entries over
/// a slab (115 / 139 / 339; 1.5 M events/s), and the radix heap with one `Vec` per bucket
/// (107 / 115 / 131; 4.9 M events/s but 3.5x the peak memory). Its digits (2026-12-07, k = 32
/// no-CC permutation, one thread, 4 alternating pairs, results identical): binary digits
/// (65 buckets, 256-event blocks) 5.73 s of user time and 196 MB; 16-way digits (4-bit, 16
/// levels of 16 buckets, 64-event blocks) 5.42 s (0.946x) at the same 196 MB; 256-way digits
/// (8-bit) cut the instructions of a k = 16 run by 14 % and its simulated L1 misses by 29 %
/// (cachegrind) for 0.96x the time, but peaked at 214 MB with 64-event blocks (286 MB with
/// 256): more buckets hold more partly filled blocks.
pub type EventQueue = RadixQueue;

/// `std`'s binary max-heap of whole events, min-ordered on `(time_ps, tie)`: the reference
/// implementation the others are tested against.
#[derive(Default)]
pub struct BinaryHeapQueue {
    heap: BinaryHeap<Entry>,
}

impl BinaryHeapQueue {
    /// Adds `e`, which must not be before the last event popped.
    #[inline]
    pub fn push(&mut self, e: Event) {
        self.heap.push(Entry(e));
    }
    /// Time of the earliest pending event, in ps; `NEVER_PS` if none.
    #[inline]
    pub fn next_time_ps(&self) -> u64 {
        self.heap
            .peek()
            .map_or(crate::time::NEVER_PS, |e| e.0.time_ps)
    }
    /// Pops the earliest event if it is before `end_ps`.
    #[inline]
    pub fn pop_before(&mut self, end_ps: u64) -> Option<Event> {
        match self.heap.peek() {
            Some(e) if e.0.time_ps < end_ps => self.heap.pop().map(|e| e.0),
            _ => None,
        }
    }
    /// Pending events.
    pub fn len(&self) -> usize {
        self.heap.len()
    }
    /// Whether no event is pending.
    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }
    /// The pending events, in no particular order.
    pub fn iter(&self) -> impl Iterator<Item = &Event> {
        self.heap.iter().map(|e| &e.0)
    }
}

/// A radix queue's digits: 4 bits, so `LEVELS` levels of `DIGITS` buckets. Bucket
/// `level × DIGITS + d` holds the events whose time differs from `last` first in digit
/// `level` and has digit `d` there (the events at `last` itself are [`Now`]).
const DIGIT_BITS: u32 = 4;
const DIGITS: usize = 1 << DIGIT_BITS;
const LEVELS: usize = 64 / DIGIT_BITS as usize;
const RADIX_BUCKETS: usize = LEVELS * DIGITS;
// One word of digit bits per level, one bit per level.
const _: () = assert!(DIGITS <= 64 && LEVELS <= 32);

/// The bucket of an event at `time_ps` when the queue is at `last`; `None`: at `last`.
#[inline]
fn radix_bucket(time_ps: u64, last: u64) -> Option<usize> {
    let differ = time_ps ^ last;
    if differ == 0 {
        return None;
    }
    let level = (63 - differ.leading_zeros()) / DIGIT_BITS;
    let digit = (time_ps >> (level * DIGIT_BITS)) as usize & (DIGITS - 1);
    Some(level as usize * DIGITS + digit)
}

/// Which buckets hold events: per level a bit per digit, and a bit per level whose word is
/// not zero (so the lowest occupied bucket takes two bit scans).
#[derive(Clone, Copy, Default)]
struct Occupied {
    levels: u32,
    digits: [u64; LEVELS],
}

impl Occupied {
    #[inline]
    fn set(&mut self, b: usize) {
        let (level, digit) = (b / DIGITS, b % DIGITS);
        self.levels |= 1 << level;
        self.digits[level] |= 1 << digit;
    }
    #[inline]
    fn clear(&mut self, b: usize) {
        let (level, digit) = (b / DIGITS, b % DIGITS);
        self.digits[level] &= !(1 << digit);
        if self.digits[level] == 0 {
            self.levels &= !(1 << level);
        }
    }
    #[inline]
    fn is_empty(&self) -> bool {
        self.levels == 0
    }
    /// The occupied bucket of lowest level and, within it, lowest digit: the one holding the
    /// earliest pending event (every event of a lower level is earlier than every event of a
    /// higher one, and within a level the digit orders them).
    #[inline]
    fn lowest(&self) -> usize {
        let level = self.levels.trailing_zeros() as usize;
        level * DIGITS + self.digits[level].trailing_zeros() as usize
    }
}

/// The pending events at the current time `last` of a radix queue, in `tie` order. Those that
/// a refill brings are sorted once (descending, so they pop from the back); the few pushed at
/// `last` afterwards wait in a small heap.
#[derive(Default)]
struct Now {
    sorted: Vec<Event>,
    late: BinaryHeap<Entry>,
}

impl Now {
    #[inline]
    fn is_empty(&self) -> bool {
        self.sorted.is_empty() && self.late.is_empty()
    }
    /// Orders what a refill pushed onto `sorted`.
    #[inline]
    fn seal(&mut self) {
        if self.sorted.len() > 1 {
            self.sorted
                .sort_unstable_by_key(|e| std::cmp::Reverse(e.tie));
        }
    }
    #[inline]
    fn pop(&mut self) -> Option<Event> {
        match (self.sorted.last(), self.late.peek()) {
            (Some(s), Some(l)) if l.0.tie < s.tie => self.late.pop().map(|e| e.0),
            (Some(_), _) => self.sorted.pop(),
            (None, _) => self.late.pop().map(|e| e.0),
        }
    }
    fn iter(&self) -> impl Iterator<Item = &Event> {
        self.sorted.iter().chain(self.late.iter().map(|e| &e.0))
    }
}

/// A radix heap on `time_ps` (Ahuja, Mehlhorn, Orlin and Tarjan 1990) of whole events; the
/// events at the current time are ordered by `tie` in [`Now`].
///
/// A radix heap needs monotone keys: nothing is pushed before the last popped time (asserted
/// in [`RadixQueue::push`]). `last` only advances when an event at that time is actually
/// popped, so a refused `pop_before` never raises it.
///
/// Digits are 4 bits: bucket (level, d) holds the events whose time first differs from
/// `last` in digit `level` and has digit `d` there. Push is O(1). An event moves to a lower
/// level each time its bucket becomes the lowest: at most 16 times, in practice two or three
/// (times spread over about 2^20 ps), against about five with binary digits.
///
/// Buckets are lists of fixed-size blocks of a shared arena ([`Chain`]), so that memory
/// follows the number of pending events rather than the largest size each bucket ever had
/// (with a `Vec` per bucket, measured and dropped, the k = 16 quickstart peaked at 69 MB
/// instead of 19 MB, for the same speed).
pub struct RadixQueue {
    /// Time of the last pop (or of the last re-bucketing); every pending event is at or after it.
    last: u64,
    len: usize,
    now: Now,
    buckets: Vec<Chain>,
    /// The earliest time in each bucket (exact: a bucket only ever empties all at once).
    bmin: Vec<u64>,
    /// Which buckets are not empty.
    occupied: Occupied,
    /// The buckets' blocks, and those free.
    arena: Vec<Block>,
    free: Vec<u32>,
}

/// Events per block of a [`Chain`] (4 KiB: with 256 buckets, larger blocks leave more memory
/// in partly filled ones; 128-event blocks peaked 3 MB higher on the k = 32 permutation for
/// no speed the noise could show, and 32-event blocks of the binary-digit queue were slower).
const BLOCK: usize = 64;
type Block = [Event; BLOCK];
const FILLER: Event = Event {
    time_ps: 0,
    tie: 0,
    what: What::TxDone { node: 0, port: 0 },
};

/// A bucket of a [`RadixQueue`]: a list of blocks of its arena.
struct Chain {
    blocks: Vec<u32>,
    /// The last block.
    cur: u32,
    /// Events in the last block (`BLOCK` when there is none, so a push takes a new one).
    tail: usize,
}

impl Default for Chain {
    fn default() -> Self {
        Chain {
            blocks: Vec::new(),
            cur: 0,
            tail: BLOCK,
        }
    }
}

impl Default for RadixQueue {
    fn default() -> Self {
        RadixQueue {
            last: 0,
            len: 0,
            now: Now::default(),
            buckets: (0..RADIX_BUCKETS).map(|_| Chain::default()).collect(),
            bmin: vec![u64::MAX; RADIX_BUCKETS],
            occupied: Occupied::default(),
            arena: Vec::new(),
            free: Vec::new(),
        }
    }
}

impl RadixQueue {
    /// Files `e` (after `last`) in bucket `b`.
    #[inline]
    fn file(&mut self, b: usize, e: Event) {
        let c = &mut self.buckets[b];
        if c.tail == BLOCK {
            let k = self.free.pop().unwrap_or_else(|| {
                self.arena.push([FILLER; BLOCK]);
                (self.arena.len() - 1) as u32
            });
            c.blocks.push(k);
            c.cur = k;
            c.tail = 0;
        }
        self.arena[c.cur as usize][c.tail % BLOCK] = e;
        c.tail += 1;
        if e.time_ps < self.bmin[b] {
            self.bmin[b] = e.time_ps;
        }
        self.occupied.set(b);
    }

    /// Empties bucket `i` (freeing its blocks as they are read), calling `f` on each event.
    #[inline]
    fn drain_bucket(&mut self, i: usize, mut f: impl FnMut(&mut Self, Event)) {
        let mut chain = std::mem::take(&mut self.buckets[i]);
        self.bmin[i] = u64::MAX;
        self.occupied.clear(i);
        let n = chain.blocks.len();
        for (j, k) in chain.blocks.drain(..).enumerate() {
            for x in 0..if j + 1 == n { chain.tail } else { BLOCK } {
                let e = self.arena[k as usize][x];
                f(self, e);
            }
            self.free.push(k);
        }
        chain.tail = BLOCK;
        self.buckets[i] = chain;
    }

    /// Adds `e`, which must not be before the last event popped.
    #[inline]
    pub fn push(&mut self, e: Event) {
        if e.time_ps < self.last {
            pushed_into_the_past(e.time_ps, self.last);
        }
        self.len += 1;
        match radix_bucket(e.time_ps, self.last) {
            None => self.now.late.push(Entry(e)),
            Some(b) => self.file(b, e),
        }
    }

    /// Time of the earliest pending event, in ps; `NEVER_PS` if none.
    #[inline]
    pub fn next_time_ps(&self) -> u64 {
        if !self.now.is_empty() {
            self.last
        } else if !self.occupied.is_empty() {
            self.bmin[self.occupied.lowest()]
        } else {
            crate::time::NEVER_PS
        }
    }

    /// Pops the earliest event if it is before `end_ps`.
    #[inline]
    pub fn pop_before(&mut self, end_ps: u64) -> Option<Event> {
        if self.now.is_empty() {
            if self.occupied.is_empty() {
                return None;
            }
            let i = self.occupied.lowest();
            let t = self.bmin[i];
            if t >= end_ps {
                return None;
            }
            // Advance to the earliest time; spread bucket `i` over the lower ones.
            self.last = t;
            self.drain_bucket(i, |q, e| match radix_bucket(e.time_ps, t) {
                None => q.now.sorted.push(e),
                Some(b) => q.file(b, e),
            });
            self.now.seal();
        } else if self.last >= end_ps {
            return None;
        }
        self.len -= 1;
        self.now.pop()
    }

    /// Pending events.
    pub fn len(&self) -> usize {
        self.len
    }
    /// Whether no event is pending.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    /// The pending events, in no particular order.
    pub fn iter(&self) -> impl Iterator<Item = &Event> {
        let arena = &self.arena;
        self.now
            .iter()
            .chain(self.buckets.iter().flat_map(move |c| {
                let n = c.blocks.len();
                c.blocks.iter().enumerate().flat_map(move |(j, &k)| {
                    &arena[k as usize][..if j + 1 == n { c.tail } else { BLOCK }]
                })
            }))
    }
}

/// The failure path of [`RadixQueue::push`], out of line so that the check costs only a
/// comparison on the hot path.
#[cold]
#[inline(never)]
fn pushed_into_the_past(time_ps: u64, last_ps: u64) -> ! {
    panic!("event at {time_ps} ps pushed after the queue reached {last_ps} ps")
}

/// Checkpoints store a queue as its events in pop order; restoring pushes them back.
impl Serialize for RadixQueue {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut events: Vec<Event> = self.iter().copied().collect();
        events.sort_unstable_by_key(Event::key);
        events.serialize(s)
    }
}

impl<'de> Deserialize<'de> for RadixQueue {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let mut q = RadixQueue::default();
        for e in Vec::<Event>::deserialize(d)? {
            q.push(e);
        }
        Ok(q)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pops_in_time_then_tie_order() {
        let mut q = EventQueue::default();
        q.push(timer(5, 1));
        q.push(Event::tx_done(5, 3, 0, 0));
        q.push(timer(2, 9));
        q.push(timer(5, 0));
        let order: Vec<_> = std::iter::from_fn(|| q.pop_before(u64::MAX))
            .map(|e| (e.time_ps, e.node()))
            .collect();
        assert_eq!(order, vec![(2, 9), (5, 0), (5, 0), (5, 1)]);
    }

    fn timer(time_ps: u64, node: u32) -> Event {
        Event::timer(
            time_ps,
            node,
            0,
            crate::net::event::TimerKind::NicWake,
            0,
            0,
        )
    }

    fn packet(id: u32) -> crate::packet::Packet {
        crate::packet::Packet {
            sent_ps: id as u64 * 3,
            flow_index: id,
            src: id,
            dst: id + 1,
            seq: id.wrapping_mul(7),
            ack: 0,
            size_bytes: 4160,
            via: crate::packet::NO_VIA,
            entropy: id as u16,
            kind: crate::packet::PacketKind::Data,
            flags: 0,
        }
    }

    #[test]
    #[should_panic(expected = "pushed after the queue reached")]
    fn a_push_into_the_past_is_fatal() {
        let mut q = EventQueue::default();
        q.push(timer(10, 0));
        q.pop_before(u64::MAX);
        q.push(timer(9, 0));
    }

    #[test]
    fn serializes_in_pop_order_and_restores_the_same_queue() {
        let mut q = EventQueue::default();
        for (t, n) in [(7, 1), (3, 2), (7, 0), (1_000_000, 5)] {
            q.push(timer(t, n));
        }
        let bytes = bincode::serde::encode_to_vec(&q, bincode::config::standard()).unwrap();
        let (mut r, _): (EventQueue, usize) =
            bincode::serde::decode_from_slice(&bytes, bincode::config::standard()).unwrap();
        while let Some(e) = q.pop_before(u64::MAX) {
            assert_eq!(r.pop_before(u64::MAX), Some(e));
        }
        assert!(r.is_empty());
    }

    /// An event that is a function of its key, so that equal keys mean identical events (as
    /// in the model) and every correct queue must pop exactly the same sequence.
    fn event(time_ps: u64, class: u32, id: u32) -> Event {
        match class {
            0 => Event::arrive(time_ps, id, id / 2, (id % 3) as u16, packet(id)),
            1 => Event::tx_done(time_ps, id, id / 4, (id % 4) as u16),
            _ => timer(time_ps, id),
        }
    }

    /// Drives `q` and the reference `BinaryHeapQueue` with the same 100k random operations
    /// (pushes with many equal times and equal keys, pops bounded by a window end) and checks
    /// every answer is the same.
    macro_rules! same_as_binary_heap {
        ($name:ident, $ty:ty) => {
            #[test]
            fn $name() {
                use rand::{Rng, SeedableRng};
                for seed in 0..4u64 {
                    let mut rng = rand_pcg::Pcg32::seed_from_u64(seed);
                    let mut q = <$ty>::default();
                    let mut r = BinaryHeapQueue::default();
                    let mut now = 0u64;
                    let (mut pops, mut refused, mut max_len) = (0u64, 0u64, 0usize);
                    for step in 0..100_000u32 {
                        // Alternately grow the queue to a few thousand events and drain it.
                        let push_pct = if (step / 10_000) % 2 == 0 { 60 } else { 42 };
                        if rng.gen_range(0..100) < push_pct {
                            let delta = match rng.gen_range(0..10) {
                                0..=2 => 0,
                                3..=6 => rng.gen_range(1..64),
                                7 | 8 => rng.gen_range(640..41_580),
                                // Far timers: the high digits of the radix queue.
                                _ if rng.gen_range(0..20) == 0 => rng.gen_range(1 << 32..1 << 60),
                                _ => 500_000 + rng.gen_range(640..41_580),
                            };
                            let t = now + delta;
                            let e = event(t, rng.gen_range(0..3), rng.gen_range(0..6));
                            q.push(e);
                            r.push(e);
                        } else {
                            let end = match rng.gen_range(0..4) {
                                0 => u64::MAX,
                                _ => now + rng.gen_range(0..2_000),
                            };
                            let (a, b) = (q.pop_before(end), r.pop_before(end));
                            assert_eq!(a, b, "seed {seed} step {step}");
                            match a {
                                Some(e) => {
                                    now = e.time_ps;
                                    pops += 1;
                                }
                                None => refused += 1,
                            }
                        }
                        assert_eq!(q.len(), r.len());
                        max_len = max_len.max(r.len());
                        assert_eq!(q.is_empty(), r.is_empty());
                        assert_eq!(
                            q.next_time_ps(),
                            r.next_time_ps(),
                            "seed {seed} step {step}"
                        );
                        if step % 9_973 == 0 {
                            let mut x: Vec<_> = q.iter().map(|e| e.key()).collect();
                            let mut y: Vec<_> = r.iter().map(|e| e.key()).collect();
                            x.sort_unstable();
                            y.sort_unstable();
                            assert_eq!(x, y);
                        }
                    }
                    assert!(
                        pops > 40_000 && refused > 300 && max_len > 1_000,
                        "{pops} {refused} {max_len}"
                    );
                    while let Some(b) = r.pop_before(u64::MAX) {
                        assert_eq!(q.pop_before(u64::MAX), Some(b));
                    }
                    assert_eq!(q.pop_before(u64::MAX), None);
                    assert_eq!(q.next_time_ps(), crate::time::NEVER_PS);
                }
            }
        };
    }

    same_as_binary_heap!(radix_queue_pops_like_binary_heap, RadixQueue);
}
