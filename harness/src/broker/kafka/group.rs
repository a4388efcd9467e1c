//! The consumer group's members and the assignors: which member owns which partition.
//!
//! - `range` (Kafka's `RangeAssignor`, one topic): the members sorted (here by worker id), the
//!   partitions cut into contiguous ranges, the first `partitions % members` members one more.
//! - `cooperative-sticky` (`CooperativeStickyAssignor`): as balanced as range, but each member
//!   keeps what it owns up to its share (the members owning most get the larger shares first),
//!   and only the partitions beyond a share move, to the members below theirs (lowest worker id
//!   first, lowest partition first).

use std::collections::VecDeque;

use super::timers::TimerKey;
use crate::record::{Nanos, WorkerId};

/// A partition a member owns, where it reads and what a poll stored for auto-commit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Owned {
    pub partition: u32,
    /// The next offset its polls fetch.
    pub position: u64,
    /// The offset auto-commit commits: a poll stores the end of what it returned to the
    /// application (librdkafka's `enable.auto.offset.store`).
    pub stored: u64,
}

/// One member of the group (one `JoinGroup` of one consumer), or a consumer that was removed
/// and still works through the batch its last poll returned.
#[derive(Debug, Clone)]
pub(super) struct Member {
    /// The member id the coordinator gave it (unique in the run).
    pub id: u32,
    /// Its entry's place among the entries, in the order they were made (a static member taken
    /// back keeps its entry's): what orders its timers against another's at one instant.
    pub seat: u64,
    /// Its timers as the group's timer index holds them ([`super::timers`]): auto-commit, then
    /// its removal.
    pub timer_keys: [Option<TimerKey>; 2],
    pub worker: WorkerId,
    /// The consumer process is alive (a dead one stops heartbeating).
    pub alive: bool,
    /// In the group: not removed (by its session or its poll interval).
    pub in_group: bool,
    pub joined_at: Nanos,
    /// When it died (its heartbeats stopped).
    pub died_at: Nanos,
    /// Its last poll: `max.poll.interval.ms` runs from here.
    pub last_poll: Nanos,
    /// Blocked in a poll that found nothing (polling, so its poll interval does not run).
    pub waiting: bool,
    /// It rejoined the rebalance in progress.
    pub rejoined: bool,
    /// Its partitions, ascending.
    pub owned: Vec<Owned>,
    /// Records its last poll returned that the application has not taken yet:
    /// (partition, offset).
    pub batch: VecDeque<(u32, u64)>,
    /// The partition its next poll fetches from first (round robin over `owned`).
    pub next_first: usize,
    /// The next auto-commit tick, once a poll stored offsets.
    pub commit_due: Option<Nanos>,
}

impl Member {
    pub fn new(id: u32, seat: u64, worker: WorkerId, now: Nanos) -> Member {
        Member {
            id,
            seat,
            timer_keys: [None; 2],
            worker,
            alive: true,
            in_group: true,
            joined_at: now,
            died_at: 0,
            last_poll: now,
            waiting: false,
            rejoined: true,
            owned: Vec::new(),
            batch: VecDeque::new(),
            next_first: 0,
            commit_due: None,
        }
    }

    pub fn owns(&self, partition: u32) -> bool {
        self.owned.iter().any(|o| o.partition == partition)
    }
}

/// The partitions each member gets, by `range`: `members` sorted, partitions `0..partitions`.
pub(super) fn range(members: usize, partitions: u32) -> Vec<Vec<u32>> {
    let mut out = vec![Vec::new(); members];
    if members == 0 {
        return out;
    }
    let (each, extra) = (partitions as usize / members, partitions as usize % members);
    let mut next = 0u32;
    for (i, parts) in out.iter_mut().enumerate() {
        let n = each + usize::from(i < extra);
        parts.extend(next..next + n as u32);
        next += n as u32;
    }
    out
}

/// The partitions each member gets, by `cooperative-sticky`, from what each owns now
/// (`owned[i]`, of members sorted by worker id).
pub(super) fn sticky(owned: &[Vec<u32>], partitions: u32) -> Vec<Vec<u32>> {
    let members = owned.len();
    let mut out = vec![Vec::new(); members];
    if members == 0 {
        return out;
    }
    let (each, extra) = (partitions as usize / members, partitions as usize % members);
    // The larger shares go to the members owning most (then the lowest worker id).
    let mut order: Vec<usize> = (0..members).collect();
    order.sort_by_key(|&i| (std::cmp::Reverse(owned[i].len()), i));
    let mut share = vec![each; members];
    for &i in order.iter().take(extra) {
        share[i] += 1;
    }
    let mut taken = vec![false; partitions as usize];
    for (i, parts) in owned.iter().enumerate() {
        let mut sorted = parts.clone();
        sorted.sort_unstable();
        for p in sorted.into_iter().take(share[i]) {
            taken[p as usize] = true;
            out[i].push(p);
        }
    }
    let mut free = (0..partitions).filter(|&p| !taken[p as usize]);
    for (i, parts) in out.iter_mut().enumerate() {
        while parts.len() < share[i] {
            let Some(p) = free.next() else { break };
            parts.push(p);
        }
        parts.sort_unstable();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn range_cuts_contiguous_ranges_the_first_members_one_more() {
        // 5 partitions over 2 members: 5 / 2 = 2 each, 5 % 2 = 1 extra for the first.
        assert_eq!(range(2, 5), vec![vec![0, 1, 2], vec![3, 4]]);
        // 1 partition over 3 members: two members idle.
        assert_eq!(range(3, 1), vec![vec![0], vec![], vec![]]);
    }

    #[test]
    fn sticky_keeps_shares_and_moves_only_the_rest() {
        // A owns 0,1 and B 2,3; C joins: shares 4 / 3 = 1 each, 1 extra to the member owning
        // most (A, before B by id): A keeps 0,1, B keeps 2, 3 goes to C.
        let got = sticky(&[vec![0, 1], vec![2, 3], vec![]], 4);
        assert_eq!(got, vec![vec![0, 1], vec![2], vec![3]]);
        // B leaves: A keeps 0,1 and takes 2,3 (nothing it owned moved).
        assert_eq!(sticky(&[vec![0, 1]], 4), vec![vec![0, 1, 2, 3]]);
    }
}
