//! [`Comm`] over MPI (rsmpi). Only the main thread calls MPI (`MPI_THREAD_FUNNELED`): rayon
//! workers process partitions between collectives and never communicate.

use super::comm::{tagged, Comm};
use mpi::collective::{SystemOperation, UserOperation};
use mpi::datatype::{Partition, PartitionMut};
use mpi::topology::{Communicator, Rank, SimpleCommunicator};
use mpi::traits::*;
use mpi::Count;

/// The ranks of an MPI job as the engine's [`Comm`].
pub struct MpiComm {
    world: SimpleCommunicator,
}

impl MpiComm {
    /// The job of communicator `world` (`MPI_COMM_WORLD`, initialized `MPI_THREAD_FUNNELED`).
    pub fn new(world: SimpleCommunicator) -> MpiComm {
        MpiComm { world }
    }

    /// Ends every rank of the job at once (a failure on one rank must not leave the others
    /// waiting in a collective).
    pub fn abort(&self, code: i32) -> ! {
        self.world.abort(code)
    }
}

fn displacements(counts: &[Count]) -> Vec<Count> {
    counts
        .iter()
        .scan(0, |acc, &c| {
            let d = *acc;
            *acc += c;
            Some(d)
        })
        .collect()
}

fn count(n: usize) -> Count {
    Count::try_from(n).expect("an MPI message above 2 GiB: use more partitions or ranks")
}

impl Comm for MpiComm {
    fn rank(&self) -> u32 {
        self.world.rank() as u32
    }
    fn ranks(&self) -> u32 {
        self.world.size() as u32
    }
    fn min_u64s(&self, v: &[u64]) -> Vec<u64> {
        let mut out = vec![0u64; v.len()];
        self.world
            .all_reduce_into(v, &mut out[..], SystemOperation::min());
        out
    }
    fn sum_u64(&self, v: &[u64]) -> Vec<u64> {
        let mut out = vec![0u64; v.len()];
        self.world
            .all_reduce_into(v, &mut out[..], SystemOperation::sum());
        out
    }
    fn min_sum_u64s(&self, mins: &[u64], sums: &[u64]) -> (Vec<u64>, Vec<u64>) {
        let packed = tagged::pack(mins, sums);
        let mut out = vec![0u64; packed.len()];
        let op = UserOperation::commutative(|x, acc| {
            let x: &[u64] = x.downcast().expect("the window reduce carries u64s");
            let acc: &mut [u64] = acc.downcast().expect("the window reduce carries u64s");
            tagged::combine(x, acc);
        });
        self.world.all_reduce_into(&packed[..], &mut out[..], &op);
        tagged::unpack(&out, mins.len())
    }
    fn all_to_all_bytes(&self, send: &[Vec<u8>]) -> Vec<Vec<u8>> {
        let n = self.world.size() as usize;
        assert_eq!(send.len(), n);
        let send_counts: Vec<Count> = send.iter().map(|b| count(b.len())).collect();
        let mut recv_counts = vec![0 as Count; n];
        self.world
            .all_to_all_into(&send_counts[..], &mut recv_counts[..]);
        let send_displs = displacements(&send_counts);
        let recv_displs = displacements(&recv_counts);
        // One spare byte in each buffer: empty Vecs share a dangling address, and MPI rejects
        // send and receive buffers that alias.
        let mut flat: Vec<u8> = send.concat();
        flat.push(0);
        let total: usize = recv_counts.iter().map(|&c| c as usize).sum();
        let mut recv = vec![0u8; total + 1];
        {
            let sp = Partition::new(&flat[..], &send_counts[..], &send_displs[..]);
            let mut rp = PartitionMut::new(&mut recv[..], &recv_counts[..], &recv_displs[..]);
            self.world.all_to_all_varcount_into(&sp, &mut rp);
        }
        recv_displs
            .iter()
            .zip(&recv_counts)
            .map(|(&d, &c)| recv[d as usize..(d + c) as usize].to_vec())
            .collect()
    }
    fn neighbor_exchange_bytes(&self, neighbors: &[u32], send: Vec<Vec<u8>>) -> Vec<Vec<u8>> {
        assert_eq!(neighbors.len(), send.len());
        // One message per neighbour and window, even an empty one, so each receive below is
        // matched by exactly one send; MPI keeps messages between two ranks in order. A
        // trailing byte keeps every buffer non-empty (and distinct); it is appended and
        // removed in place, never by shifting the batch.
        let framed: Vec<Vec<u8>> = send
            .into_iter()
            .map(|mut b| {
                b.push(0u8);
                b
            })
            .collect();
        mpi::request::scope(|scope| {
            let requests: Vec<_> = neighbors
                .iter()
                .zip(&framed)
                .map(|(&r, f)| {
                    self.world
                        .process_at_rank(r as Rank)
                        .immediate_send(scope, &f[..])
                })
                .collect();
            let received = neighbors
                .iter()
                .map(|&r| {
                    let (mut b, _) = self.world.process_at_rank(r as Rank).receive_vec::<u8>();
                    assert_eq!(
                        b.pop(),
                        Some(0),
                        "a neighbour's batch ends in its frame byte"
                    );
                    b
                })
                .collect();
            for r in requests {
                r.wait();
            }
            received
        })
    }
    fn gather_bytes(&self, mine: &[u8]) -> Option<Vec<Vec<u8>>> {
        let root = self.world.process_at_rank(0 as Rank);
        let len = count(mine.len());
        if self.world.rank() == 0 {
            let n = self.world.size() as usize;
            let mut counts = vec![0 as Count; n];
            root.gather_into_root(&len, &mut counts[..]);
            let displs = displacements(&counts);
            let mut all = vec![0u8; counts.iter().map(|&c| c as usize).sum::<usize>() + 1];
            {
                let mut rp = PartitionMut::new(&mut all[..], &counts[..], &displs[..]);
                root.gather_varcount_into_root(mine, &mut rp);
            }
            Some(
                displs
                    .iter()
                    .zip(&counts)
                    .map(|(&d, &c)| all[d as usize..(d + c) as usize].to_vec())
                    .collect(),
            )
        } else {
            root.gather_into(&len);
            root.gather_varcount_into(mine);
            None
        }
    }
    fn broadcast_bytes(&self, root_bytes: &[u8]) -> Vec<u8> {
        let root = self.world.process_at_rank(0 as Rank);
        let mut len = root_bytes.len() as u64;
        root.broadcast_into(&mut len);
        let mut buf = if self.world.rank() == 0 {
            root_bytes.to_vec()
        } else {
            vec![0u8; len as usize]
        };
        root.broadcast_into(&mut buf[..]);
        buf
    }
}
