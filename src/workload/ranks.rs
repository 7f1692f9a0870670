//! The members of a collective: an ordered list of hosts (rank → host) and its inverse,
//! shared by the ring and pairwise collectives, and the chunk rule they share.

use crate::scenario::{FieldError, Scenario};

pub(super) struct Ranks {
    /// Rank → host.
    hosts: Vec<u32>,
    /// Host → rank, or [`NOT_A_RANK`].
    rank_of: Vec<u32>,
}

const NOT_A_RANK: u32 = u32::MAX;

impl Ranks {
    /// `workload.hosts` (unset: every host in order) of a validated scenario on `num_hosts`
    /// hosts; checks that the hosts exist.
    pub(super) fn of_scenario(s: &Scenario, num_hosts: u32) -> Result<Ranks, FieldError> {
        let hosts = (s.workload.hosts.clone()).unwrap_or_else(|| (0..num_hosts).collect());
        if let Some(h) = hosts.iter().find(|&&h| h >= num_hosts) {
            return Err(FieldError::new(
                "workload.hosts",
                format!("host {h} does not exist (the fabric has {num_hosts} hosts)"),
            ));
        }
        Ok(Ranks::new(hosts, num_hosts))
    }

    pub(super) fn new(hosts: Vec<u32>, num_hosts: u32) -> Ranks {
        assert!(
            hosts.len() >= 2,
            "validated: a collective has at least two hosts"
        );
        let mut rank_of = vec![NOT_A_RANK; num_hosts as usize];
        for (r, &h) in hosts.iter().enumerate() {
            rank_of[h as usize] = r as u32;
        }
        Ranks { hosts, rank_of }
    }

    /// Number of ranks.
    #[inline]
    pub(super) fn n(&self) -> u32 {
        self.hosts.len() as u32
    }

    /// The rank of host `h`, if it is a member.
    #[inline]
    pub(super) fn rank(&self, h: u32) -> Option<u32> {
        self.rank_of
            .get(h as usize)
            .copied()
            .filter(|&r| r != NOT_A_RANK)
    }

    /// The host of rank `r` (`r < n()`).
    #[inline]
    pub(super) fn host(&self, r: u32) -> u32 {
        self.hosts[r as usize]
    }
}

/// The bytes one step (ring) or pair (all-to-all) carries: ⌈message_bytes / ranks⌉, refused
/// when more than one flow can hold.
pub(super) fn chunk_bytes(s: &Scenario, ranks: u32) -> Result<u64, FieldError> {
    let chunk = s.workload.message_bytes.div_ceil(ranks as u64);
    if chunk > super::max_flow_bytes(s) {
        return Err(FieldError::new(
            "workload.message_bytes",
            format!(
                "a chunk of {chunk} bytes (message_bytes / ranks) is more than 2^32 - 1 packets of packet.payload_bytes"
            ),
        ));
    }
    Ok(chunk)
}
