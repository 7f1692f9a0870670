//! How the ranks of a distributed run talk. One process (the threads-only build, or
//! `mpirun -n 1`) uses [`LocalComm`], whose collectives are identities; with feature `mpi`,
//! `MpiComm` (`engine/mpi_comm.rs`, with `--features mpi`) maps them onto MPI. The engine has one code path for both.
//!
//! Every collective must be called by every rank in the same order: the window loop calls
//! them a fixed number of times per window, decided only by values all ranks agree on.

/// An error already reported by another rank: exit non-zero without printing it again.
#[derive(Debug)]
pub struct ReportedElsewhere;

impl std::fmt::Display for ReportedElsewhere {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("failed on another rank")
    }
}
impl std::error::Error for ReportedElsewhere {}

/// Makes every rank fail if one does, so that none is left waiting in a collective: rank 0
/// reports its error; another rank reports only errors rank 0 did not have; the others return
/// [`ReportedElsewhere`]. A collective: every rank calls it.
pub fn agree<T>(r: anyhow::Result<T>, comm: &dyn Comm) -> anyhow::Result<T> {
    let root = comm.rank() == 0;
    let failed = comm.sum_u64(&[r.is_err() as u64, (r.is_err() && root) as u64]);
    match r {
        Ok(ok) if failed[0] == 0 => Ok(ok),
        Ok(_) => Err(ReportedElsewhere.into()),
        Err(e) if root || failed[1] == 0 => Err(e),
        Err(_) => Err(ReportedElsewhere.into()),
    }
}

/// What the engine needs of the ranks it runs with: collectives and the exchange of
/// events with neighbour ranks (MPI in `mpi_comm`, one process in [`LocalComm`]).
pub trait Comm {
    /// This process's rank, `0..ranks()`.
    fn rank(&self) -> u32;
    /// How many ranks run the simulation.
    fn ranks(&self) -> u32;
    /// Global minimum of `v` over ranks.
    fn min_u64(&self, v: u64) -> u64 {
        self.min_u64s(&[v])[0]
    }
    /// Element-wise global minimum over ranks (one allreduce).
    fn min_u64s(&self, v: &[u64]) -> Vec<u64>;
    /// Element-wise global sum over ranks.
    fn sum_u64(&self, v: &[u64]) -> Vec<u64>;
    /// The element-wise global minimum of `mins` and sum of `sums`, in one allreduce: the
    /// window loop's only per-window collective. Values of `mins` at or above 2⁶³ − 1 (e.g.
    /// [`crate::time::NEVER_PS`]) compare as equal and come back as `u64::MAX`; sums must
    /// stay below 2⁶³.
    fn min_sum_u64s(&self, mins: &[u64], sums: &[u64]) -> (Vec<u64>, Vec<u64>);
    /// Sends `send[r]` to rank r and returns what every rank sent to this one, by source rank.
    fn all_to_all_bytes(&self, send: &[Vec<u8>]) -> Vec<Vec<u8>>;
    /// Sends `send[i]` to rank `neighbors[i]` and returns what each of them sent to this one
    /// (same order). Every rank calls it with its own neighbour list, which must be
    /// symmetric (r lists s exactly when s lists r): ranks exchange with neighbours only.
    /// Takes the buffers by value so an implementation can frame them in place.
    fn neighbor_exchange_bytes(&self, neighbors: &[u32], send: Vec<Vec<u8>>) -> Vec<Vec<u8>>;
    /// Gathers every rank's bytes at rank 0 (by rank); other ranks get `None`.
    fn gather_bytes(&self, mine: &[u8]) -> Option<Vec<Vec<u8>>>;
    /// Rank 0's bytes, on every rank.
    fn broadcast_bytes(&self, root_bytes: &[u8]) -> Vec<u8>;
}

/// A single process: rank 0 of 1.
pub struct LocalComm;

impl Comm for LocalComm {
    fn rank(&self) -> u32 {
        0
    }
    fn ranks(&self) -> u32 {
        1
    }
    fn min_u64s(&self, v: &[u64]) -> Vec<u64> {
        v.to_vec()
    }
    fn sum_u64(&self, v: &[u64]) -> Vec<u64> {
        v.to_vec()
    }
    fn min_sum_u64s(&self, mins: &[u64], sums: &[u64]) -> (Vec<u64>, Vec<u64>) {
        let packed = tagged::pack(mins, sums);
        tagged::unpack(&packed, mins.len())
    }
    fn all_to_all_bytes(&self, send: &[Vec<u8>]) -> Vec<Vec<u8>> {
        send.to_vec()
    }
    fn neighbor_exchange_bytes(&self, neighbors: &[u32], _send: Vec<Vec<u8>>) -> Vec<Vec<u8>> {
        assert!(
            neighbors.is_empty(),
            "a single process has no neighbour ranks"
        );
        Vec::new()
    }
    fn gather_bytes(&self, mine: &[u8]) -> Option<Vec<Vec<u8>>> {
        Some(vec![mine.to_vec()])
    }
    fn broadcast_bytes(&self, root_bytes: &[u8]) -> Vec<u8> {
        root_bytes.to_vec()
    }
}

/// The encoding [`Comm::min_sum_u64s`] reduces: one u64 per value, its top bit saying which
/// operation applies (0: minimum, 1: sum of the low 63 bits). Each element describes itself,
/// so the reduction is element-wise and stays correct however MPI splits the vector.
pub(crate) mod tagged {
    const SUM: u64 = 1 << 63;
    const LOW: u64 = SUM - 1;

    pub(crate) fn pack(mins: &[u64], sums: &[u64]) -> Vec<u64> {
        let min = mins.iter().map(|&v| v.min(LOW));
        let sum = sums.iter().map(|&v| {
            assert!(v < SUM, "a summed counter reached 2^63: {v}");
            SUM | v
        });
        min.chain(sum).collect()
    }

    /// `acc[i] = combine(x[i], acc[i])`.
    #[cfg_attr(not(any(feature = "mpi", test)), allow(dead_code))] // used by MPI's reduce only
    pub(crate) fn combine(x: &[u64], acc: &mut [u64]) {
        assert_eq!(x.len(), acc.len());
        for (a, &v) in acc.iter_mut().zip(x) {
            assert_eq!(
                *a & SUM,
                v & SUM,
                "ranks disagree on the layout of the window reduce"
            );
            *a = if v & SUM == 0 {
                (*a).min(v)
            } else {
                let total = (*a & LOW) + (v & LOW);
                assert!(total < SUM, "a summed counter reached 2^63");
                SUM | total
            };
        }
    }

    pub(crate) fn unpack(packed: &[u64], n_mins: usize) -> (Vec<u64>, Vec<u64>) {
        let (m, s) = packed.split_at(n_mins);
        let mins = m
            .iter()
            .map(|&v| if v == LOW { u64::MAX } else { v })
            .collect();
        (mins, s.iter().map(|&v| v & LOW).collect())
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        #[test]
        fn minimums_and_sums_reduce_element_wise_in_any_order() {
            let ranks = [
                pack(&[7, u64::MAX, 1], &[10, 0]),
                pack(&[3, u64::MAX, 1], &[5, 1 << 40]),
                pack(&[9, 12, 0], &[0, 1]),
            ];
            for order in [[0, 1, 2], [2, 1, 0], [1, 2, 0]] {
                let mut acc = ranks[order[0]].clone();
                combine(&ranks[order[1]], &mut acc);
                combine(&ranks[order[2]], &mut acc);
                assert_eq!(unpack(&acc, 3), (vec![3, 12, 0], vec![15, (1 << 40) + 1]));
            }
            let mut never = pack(&[u64::MAX], &[]);
            combine(&pack(&[u64::MAX], &[]), &mut never);
            assert_eq!(unpack(&never, 1).0, vec![u64::MAX]);
        }

        #[test]
        #[should_panic(expected = "disagree on the layout")]
        fn a_layout_mismatch_is_caught() {
            combine(&pack(&[1], &[2]), &mut pack(&[1, 2], &[]));
        }
    }
}
