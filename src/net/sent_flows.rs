//! A host's sender records by flow index, releasing the completed prefix.
//!
//! ACKs, NACKs and timers name a flow by its index at the host, so records are indexed
//! directly. Completed flows at the front are dropped (`release_front_while`), so a host
//! running a long chain of dependent steps (a ring of thousands of ranks over many layers)
//! keeps the records of its running flows only, not of every flow it ever started. Indices
//! below `base` were released: a late ACK or timer for one finds nothing, as it would find
//! a completed flow that ignores it.

use serde::{Deserialize, Serialize};

/// Records live in a plain `Vec` (indexing on every packet stays a subtraction and a bounds
/// check); released records are dropped from its front in batches, once they are at least
/// half of it, so each record is moved at most once on average.
#[derive(Serialize, Deserialize)]
pub(crate) struct SentFlows<T> {
    /// Flow index of `live[0]`.
    base: u32,
    /// Records `live[..dead]` were released (kept until the next compaction).
    dead: u32,
    live: Vec<T>,
}

impl<T> Default for SentFlows<T> {
    fn default() -> Self {
        SentFlows {
            base: 0,
            dead: 0,
            live: Vec::new(),
        }
    }
}

impl<T> SentFlows<T> {
    /// The record of flow `i`, if kept (started or a placeholder, and not released).
    #[inline]
    pub(crate) fn get_mut(&mut self, i: u32) -> Option<&mut T> {
        let at = i.checked_sub(self.base + self.dead)?;
        self.live.get_mut((at + self.dead) as usize)
    }

    /// Whether flow `i`'s record was released (it completed).
    #[inline]
    pub(crate) fn released(&self, i: u32) -> bool {
        i < self.base + self.dead
    }

    /// One past the highest index with a record (placeholders included).
    #[cfg(test)]
    pub(crate) fn end(&self) -> u32 {
        self.base + self.live.len() as u32
    }

    /// Records held in memory: live ones, placeholders, and released ones awaiting the next
    /// compaction.
    #[inline]
    pub(crate) fn held(&self) -> usize {
        self.live.len()
    }

    /// Records not released: running flows and placeholders (completed flows above a
    /// running one included).
    #[inline]
    pub(crate) fn unreleased(&self) -> usize {
        self.live.len() - self.dead as usize
    }

    /// Stores the record of flow `i`; indices between the end and `i` get `placeholder()`.
    pub(crate) fn insert(&mut self, i: u32, record: T, mut placeholder: impl FnMut() -> T) {
        assert!(!self.released(i), "flow {i} started after it was released");
        let at = (i - self.base) as usize;
        while self.live.len() < at {
            self.live.push(placeholder());
        }
        if at == self.live.len() {
            self.live.push(record);
        } else {
            self.live[at] = record;
        }
    }

    /// Drops records from the front while `done` holds for them.
    pub(crate) fn release_front_while(&mut self, mut done: impl FnMut(&T) -> bool) {
        while self.live.get(self.dead as usize).is_some_and(&mut done) {
            self.dead += 1;
        }
        if self.dead as usize * 2 >= self.live.len() && self.dead > 0 {
            self.live.drain(..self.dead as usize);
            self.base += self.dead;
            self.dead = 0;
        }
    }
}

impl<T> std::ops::Index<u32> for SentFlows<T> {
    type Output = T;
    #[inline]
    fn index(&self, i: u32) -> &T {
        assert!(!self.released(i), "flow {i} was released");
        &self.live[(i - self.base) as usize]
    }
}

impl<T> std::ops::IndexMut<u32> for SentFlows<T> {
    #[inline]
    fn index_mut(&mut self, i: u32) -> &mut T {
        assert!(!self.released(i), "flow {i} was released");
        &mut self.live[(i - self.base) as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_fill_gaps_and_only_the_done_prefix_is_released() {
        let mut t: SentFlows<i32> = SentFlows::default();
        t.insert(2, 20, || -1);
        assert_eq!((t.end(), *t.get_mut(0).unwrap()), (3, -1));
        t.insert(0, 0, || -1);
        t.release_front_while(|&v| v >= 0);
        // Flow 1 is a placeholder: the release stops there.
        assert!(t.released(0) && !t.released(1));
        assert_eq!(t.get_mut(0), None);
        assert_eq!(t[2], 20);
        t.insert(1, 10, || -1);
        t.release_front_while(|&v| v >= 0);
        assert_eq!((t.end(), t.get_mut(2)), (3, None));
        t.insert(3, 30, || -1);
        assert_eq!(t[3], 30);
    }
}
