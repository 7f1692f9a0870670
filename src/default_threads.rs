//! `weft run`'s default `--threads`: every CPU the run may use. One process takes the CPUs
//! `std::thread::available_parallelism` reports (its affinity mask and cgroup quota). Ranks
//! on one node share its CPUs, and every rank must use the same count (the automatic
//! partition count depends on it), so with several ranks rank 0 takes, over all ranks, the
//! smallest of a rank's own CPUs and its node's online CPUs divided by the ranks on that
//! node, and sends it to all.

use crate::MAX_THREADS;
use weft::engine::comm::Comm;

/// What one rank knows of its CPUs: those it may use, those its node has online, its node.
#[derive(Debug, Clone, PartialEq)]
struct View {
    usable: u64,
    online: u64,
    host: Vec<u8>,
}

impl View {
    fn here() -> View {
        let usable = std::thread::available_parallelism().map_or(1, |n| n.get() as u64);
        // SAFETY: sysconf has no preconditions.
        let online = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_ONLN) };
        View {
            usable,
            online: if online > 0 { online as u64 } else { usable },
            host: hostname(),
        }
    }

    fn encode(&self) -> Vec<u8> {
        let mut b = Vec::with_capacity(16 + self.host.len());
        b.extend_from_slice(&self.usable.to_le_bytes());
        b.extend_from_slice(&self.online.to_le_bytes());
        b.extend_from_slice(&self.host);
        b
    }

    fn decode(b: &[u8]) -> View {
        let word = |i: usize| u64::from_le_bytes(b[i..i + 8].try_into().expect("8 bytes"));
        View {
            usable: word(0),
            online: word(8),
            host: b[16..].to_vec(),
        }
    }
}

fn hostname() -> Vec<u8> {
    let mut buf = [0u8; 256];
    // SAFETY: the buffer is valid for its length; gethostname writes at most that much.
    let rc = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) };
    if rc != 0 {
        return Vec::new();
    }
    let end = buf.iter().position(|&c| c == 0).unwrap_or(buf.len());
    buf[..end].to_vec()
}

/// The threads every rank uses, from every rank's view: for each rank the smaller of its
/// usable CPUs and its node's online CPUs over the ranks on that node; the least of those;
/// from 1 to [`MAX_THREADS`].
fn shared(views: &[View]) -> usize {
    let threads = views
        .iter()
        .map(|v| {
            let on_node = views.iter().filter(|w| w.host == v.host).count() as u64;
            v.usable.min(v.online / on_node)
        })
        .min()
        .unwrap_or(1);
    (threads as usize).clamp(1, MAX_THREADS)
}

/// The default `--threads` (a collective when there are several ranks: every rank calls it).
pub fn default_threads(comm: &dyn Comm) -> usize {
    let here = View::here();
    if comm.ranks() == 1 {
        return (here.usable as usize).clamp(1, MAX_THREADS);
    }
    let chosen = comm
        .gather_bytes(&here.encode())
        .map(|all| shared(&all.iter().map(|b| View::decode(b)).collect::<Vec<_>>()))
        .unwrap_or(0);
    let bytes = comm.broadcast_bytes(&(chosen as u64).to_le_bytes());
    u64::from_le_bytes(bytes[..8].try_into().expect("8 bytes")) as usize
}

#[cfg(test)]
mod tests {
    use super::*;

    fn view(usable: u64, online: u64, host: &str) -> View {
        View {
            usable,
            online,
            host: host.as_bytes().to_vec(),
        }
    }

    #[test]
    fn ranks_on_one_node_share_its_cpus() {
        // 4 unbound ranks on a 16-CPU node: 4 each.
        let v = vec![view(16, 16, "a"); 4];
        assert_eq!(shared(&v), 4);
        // Bound to a socket of 8 each: still 16 / 4.
        let v = vec![view(8, 16, "a"); 4];
        assert_eq!(shared(&v), 4);
        // Bound to one core each: 1.
        let v = vec![view(1, 16, "a"); 4];
        assert_eq!(shared(&v), 1);
    }

    #[test]
    fn the_most_crowded_node_sets_the_count_for_all() {
        let v = vec![
            view(16, 16, "a"),
            view(16, 16, "a"),
            view(16, 16, "b"),
            view(12, 16, "c"),
        ];
        assert_eq!(shared(&v), 8);
        // More ranks than CPUs on a node: at least one thread.
        let v = vec![view(2, 2, "a"); 3];
        assert_eq!(shared(&v), 1);
    }

    #[test]
    fn a_view_reads_back() {
        let v = view(7, 64, "node-17.cluster");
        assert_eq!(View::decode(&v.encode()), v);
        let here = View::here();
        assert!(here.usable >= 1 && here.online >= 1);
        assert_eq!(View::decode(&here.encode()), here);
    }

    #[test]
    fn one_process_takes_every_usable_cpu() {
        let n = std::thread::available_parallelism().map_or(1, |n| n.get());
        assert_eq!(
            default_threads(&weft::engine::comm::LocalComm),
            n.min(MAX_THREADS)
        );
    }
}
