//! How the ranks of a distributed run talk. One process (the threads-only build, or
//! `mpirun -n 1`) uses [`LocalComm`], whose collectives are identities; with feature `mpi`,
//! [`super::mpi_comm::MpiComm`] maps them onto MPI. The engine has one code path for both.
//!
//! Every collective must be called by every rank in the same order: the window loop calls
//! them a fixed number of times per window, decided only by values all ranks agree on.

pub trait Comm {
    fn rank(&self) -> u32;
    fn ranks(&self) -> u32;
    /// Global minimum of `v` over ranks.
    fn min_u64(&self, v: u64) -> u64 {
        self.min_u64s(&[v])[0]
    }
    /// Element-wise global minimum over ranks (one allreduce).
    fn min_u64s(&self, v: &[u64]) -> Vec<u64>;
    /// Element-wise global sum over ranks.
    fn sum_u64(&self, v: &[u64]) -> Vec<u64>;
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
