//! Consumers whose receive would change nothing: a member blocked in a poll that found nothing,
//! with nothing new to fetch. A round of hand-outs passes them over
//! ([`crate::broker::BrokerModel::idle_receivers`]) instead of making each of them poll again
//! whenever some other member is at work, which at 64 members was about 44 empty polls per
//! record handed out.
//!
//! A consumer is marked when its receive finds it so, and unmarked by whatever could give its
//! poll something to do: a record published to a partition it reads, and anything that
//! changes the group or a position (a join, a removal, a rebalance, a death, a seek, a timer
//! acting), which unmarks every consumer. In test builds each consumer passed over is checked:
//! its poll would have returned nothing, logged nothing and left its timers as they were.

use super::Kafka;
use crate::record::{Nanos, WorkerId};

impl Kafka {
    /// A poll of member `i` would find it as it is and change nothing: it is blocked in a poll
    /// already (its `max.poll.interval.ms` not running, so the `last_poll` it would set is read
    /// only after a poll that fetches), no rebalance is in progress, and its one partition (or
    /// none) has nothing past its position. With two or more, a poll turns which is fetched
    /// first, so it is made.
    pub(super) fn poll_is_idle(&self, i: usize) -> bool {
        let m = &self.members[i];
        m.in_group
            && m.alive
            && m.batch.is_empty()
            && m.waiting
            && self.pending.is_none()
            && m.owned.len() <= 1
            && m.owned
                .iter()
                .all(|o| o.position >= self.partitions[o.partition as usize].end())
    }

    /// The consumers to pass over, one bit per worker slot (worker id - 1).
    pub fn idle_receivers(&self) -> &[u64] {
        &self.idle
    }

    /// In test builds: `worker` is passed over; its receive would have changed nothing.
    #[cfg(test)]
    pub fn check_passed_over(&self, now: Nanos, worker: WorkerId) {
        let i = self
            .live_entry(worker)
            .expect("a consumer passed over is a member");
        assert!(self.poll_is_idle(i), "worker {worker} passed over");
        self.check_idle_poll(now, i);
    }

    /// In test builds: the poll an idle member is spared would have returned nothing, logged
    /// nothing and left its timers as they are.
    #[cfg(test)]
    pub(super) fn check_idle_poll(&self, now: Nanos, i: usize) {
        let mut made = self.clone();
        let mut log = Vec::new();
        assert!(made.poll(now, i, &mut log).is_none() && log.is_empty());
        made.refresh();
        let m = &made.members[i];
        assert!(m.waiting && m.batch.is_empty() && m.timer_keys == self.members[i].timer_keys);
        assert_eq!(made.repoll, self.repoll);
    }

    #[cfg(not(test))]
    pub(super) fn check_idle_poll(&self, _now: Nanos, _i: usize) {}

    pub(super) fn mark_idle(&mut self, worker: WorkerId) {
        let slot = (worker - 1) as usize;
        if self.idle.len() <= slot / 64 {
            self.idle.resize(slot / 64 + 1, 0);
        }
        self.idle[slot / 64] |= 1 << (slot % 64);
    }

    fn unmark_idle(&mut self, worker: WorkerId) {
        let slot = (worker - 1) as usize;
        if let Some(word) = self.idle.get_mut(slot / 64) {
            *word &= !(1 << (slot % 64));
        }
    }

    /// Partition `p` has a new record: its readers may fetch it.
    pub(super) fn wake_readers(&mut self, p: u32) {
        if self.idle.iter().all(|&w| w == 0) {
            return;
        }
        if self.index.stale {
            return self.forget_idle();
        }
        for k in 0..self.readers(p).len() {
            let worker = self.members[self.readers(p)[k]].worker;
            self.unmark_idle(worker);
        }
    }

    /// The group or a position changed: every consumer polls again.
    pub(super) fn forget_idle(&mut self) {
        self.idle.iter_mut().for_each(|w| *w = 0);
    }
}
