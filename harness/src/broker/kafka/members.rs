//! Finding the group's members: each worker's live consumer (at most one: a consumer's death
//! ends its entry's life), and the members in the group reading each partition, the lowest
//! position of which bounds what a forgetting partition may drop. Kept in a [`MemberIndex`]
//! rebuilt after the group changes (joins, removals, revokes, assignments: rare), read on every
//! receive, commit and hand-out; while a change is under way, lookups look at every entry.
//!
//! A consumer's death is here too: it ends the life of its worker's entries; and a consumer's
//! close, which (a dynamic member) leaves the group at once.

use super::Kafka;
use crate::record::WorkerId;

#[derive(Debug, Clone, Default)]
pub(super) struct MemberIndex {
    /// The group changed since the index was built: lookups scan the entries until
    /// [`Kafka::refresh`].
    pub(super) stale: bool,
    /// The entry of each worker's live consumer, by worker id.
    live: Vec<Option<usize>>,
    /// The entries of the members in the group owning each partition.
    readers: Vec<Vec<usize>>,
}

impl Kafka {
    /// The group changed (an entry made, revived, ended or removed, partitions revoked or
    /// assigned): the indexes are rebuilt by the next [`Kafka::refresh`].
    pub(super) fn group_changed(&mut self) {
        self.index.stale = true;
        self.timers.stale = true;
        self.forget_idle();
    }

    /// Rebuilds the indexes the group changed, once an operation is over.
    pub(super) fn refresh(&mut self) {
        if self.index.stale {
            let index = &mut self.index;
            index.live.iter_mut().for_each(|e| *e = None);
            index.readers.iter_mut().for_each(Vec::clear);
            index
                .readers
                .resize(self.config.partitions as usize, Vec::new());
            for (i, m) in self.members.iter().enumerate() {
                if m.alive {
                    let w = m.worker as usize;
                    if index.live.len() <= w {
                        index.live.resize(w + 1, None);
                    }
                    index.live[w] = Some(i);
                }
                if m.in_group {
                    for o in &m.owned {
                        index.readers[o.partition as usize].push(i);
                    }
                }
            }
            index.stale = false;
        }
        if self.timers.stale {
            self.rebuild_timers();
        }
        #[cfg(test)]
        for w in 0..self.index.live.len() as WorkerId {
            assert_eq!(self.live_entry(w), self.live_entry_by_scan(w));
        }
    }

    /// The member entry of `worker`'s consumer process while it lives (in the group or not).
    pub(super) fn live_entry(&self, worker: WorkerId) -> Option<usize> {
        if self.index.stale {
            return self.live_entry_by_scan(worker);
        }
        self.index.live.get(worker as usize).copied().flatten()
    }

    fn live_entry_by_scan(&self, worker: WorkerId) -> Option<usize> {
        self.members
            .iter()
            .position(|m| m.worker == worker && m.alive)
    }

    /// The entry of the member `worker` is in the group as now.
    pub(super) fn current(&self, worker: WorkerId) -> Option<usize> {
        self.live_entry(worker)
            .filter(|&i| self.members[i].in_group)
    }

    /// The lowest position a member in the group reads partition `p` from (`u64::MAX`: none).
    pub(super) fn keep_from(&self, p: u32) -> u64 {
        let position = |i: usize| {
            let owned = &self.members[i].owned;
            owned.iter().find(|o| o.partition == p).map(|o| o.position)
        };
        if self.index.stale {
            return (0..self.members.len())
                .filter(|&i| self.members[i].in_group)
                .filter_map(position)
                .min()
                .unwrap_or(u64::MAX);
        }
        self.index.readers[p as usize]
            .iter()
            .filter_map(|&i| position(i))
            .min()
            .unwrap_or(u64::MAX)
    }

    /// The members in the group reading partition `p` (none while the group changes, the
    /// timers then rebuilt anyway, or before anyone joined).
    pub(super) fn readers(&self, p: u32) -> &[usize] {
        if self.index.stale {
            return &[];
        }
        self.index
            .readers
            .get(p as usize)
            .map_or(&[], Vec::as_slice)
    }

    /// The consumer process died: it stops heartbeating (removed `session_timeout` after its
    /// last heartbeat) and its batch is gone.
    pub fn consumer_died(&mut self, now: crate::record::Nanos, worker: WorkerId) {
        self.group_changed();
        let mut k = 0;
        while k < self.members.len() {
            let m = &mut self.members[k];
            if m.worker != worker || !m.alive {
                k += 1;
                continue;
            }
            for (p, o) in std::mem::take(&mut m.batch) {
                self.leave_batch(p, o);
            }
            let m = &mut self.members[k];
            if m.in_group {
                m.alive = false;
                m.waiting = false;
                m.died_at = now;
                k += 1;
            } else {
                self.members.remove(k);
            }
        }
        self.refresh();
        for p in 0..self.config.partitions {
            self.trim(p);
        }
    }

    /// The consumer process stopped on its own and closed its consumer on the way out
    /// (librdkafka's `close()`): a dynamic member revokes its partitions (auto-commit commits
    /// what its polls stored, as any revoke does) and sends LeaveGroup, so the group
    /// rebalances at once. A static member (`group.instance.id`, KIP-345) sends no LeaveGroup on
    /// close: it is left to its session, as a dead one (or taken back by its restart).
    pub fn consumer_left(
        &mut self,
        now: crate::record::Nanos,
        worker: WorkerId,
        log: &mut Vec<crate::record::Event>,
    ) {
        let member = self.current(worker);
        let Some(i) = member.filter(|_| !self.config.static_membership) else {
            return self.consumer_died(now, worker);
        };
        self.group_changed();
        for (p, o) in std::mem::take(&mut self.members[i].batch) {
            self.leave_batch(p, o);
        }
        let parts: Vec<u32> = self.members[i].owned.iter().map(|o| o.partition).collect();
        self.revoke(now, i, &parts, true, log);
        let m = &mut self.members[i];
        m.alive = false;
        m.waiting = false;
        m.died_at = now;
        self.remove(now, i, crate::record::RebalanceWhy::Leave, log);
        self.refresh();
        for p in 0..self.config.partitions {
            self.trim(p);
        }
    }

    /// Records `worker`'s last poll returned that the application has not taken yet.
    pub fn held_from_poll(&self, worker: WorkerId) -> u32 {
        self.live_entry(worker)
            .map_or(0, |i| self.members[i].batch.len() as u32)
    }
}
