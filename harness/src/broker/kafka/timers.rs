//! The group's timers, each due only when it will act (so `next_due` is exact):
//!
//! - auto-commit: a member's next tick (every `auto_commit_interval` from its join), while a
//!   poll stored offsets past the committed ones of its partitions;
//! - `max.poll.interval.ms`: a member at work (not blocked in a poll) that has not polled for
//!   that long leaves the group; a static member sends no LeaveGroup, so it is removed when its
//!   session then times out, `session_timeout` later;
//! - `session.timeout.ms`: a dead member's last heartbeat (every `heartbeat_interval` from its
//!   join) plus `session_timeout`;
//! - the first rebalance of an empty group, at the end of the broker's initial delay.
//!
//! At one instant: commits, then removals, then a rebalance's completion.

use super::Kafka;
use crate::record::{Event, Nanos, RebalanceWhy};

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Due {
    Commit(usize),
    Remove(usize, u8),
    Complete,
}

impl Kafka {
    fn next_timer(&self) -> Option<(Nanos, Due)> {
        let c = &self.config;
        let mut best: Option<(Nanos, Due)> = None;
        let mut consider = |t: Nanos, d: Due| {
            if best.is_none_or(|b| (t, d) < b) {
                best = Some((t, d));
            }
        };
        if let Some(p) = self.pending {
            if self
                .members
                .iter()
                .all(|m| !m.in_group || (m.alive && m.rejoined))
            {
                consider(p.not_before, Due::Complete);
            }
        }
        for (i, m) in self.members.iter().enumerate() {
            if !m.in_group {
                continue;
            }
            if !m.alive {
                let beats = (m.died_at - m.joined_at) / c.heartbeat_interval;
                let last = m.joined_at + beats * c.heartbeat_interval;
                consider(last + c.session_timeout, Due::Remove(i, 1));
                continue;
            }
            if !m.waiting {
                let extra = if c.static_membership {
                    c.session_timeout
                } else {
                    0
                };
                consider(m.last_poll + c.max_poll_interval + extra, Due::Remove(i, 0));
            }
            if let Some(t) = m.commit_due {
                let ahead = m
                    .owned
                    .iter()
                    .any(|o| o.stored > self.partitions[o.partition as usize].committed);
                if ahead {
                    consider(t, Due::Commit(i));
                }
            }
        }
        best
    }

    /// The next instant a timer of the group acts.
    pub fn next_due(&self) -> Option<Nanos> {
        self.next_timer().map(|(t, _)| t)
    }

    /// Acts on every timer due at or before `now`, in time order.
    pub fn advance(&mut self, now: Nanos, log: &mut Vec<Event>) {
        while let Some((t, due)) = self.next_timer().filter(|&(t, _)| t <= now) {
            match due {
                Due::Commit(i) => self.auto_commit(t, i, log),
                Due::Remove(i, 0) => self.remove(t, i, RebalanceWhy::MaxPollInterval, log),
                Due::Remove(i, _) => self.remove(t, i, RebalanceWhy::SessionTimeout, log),
                Due::Complete => self.try_complete(t, log),
            }
        }
    }

    /// Member `i`'s auto-commit tick: commits what its polls stored.
    fn auto_commit(&mut self, now: Nanos, i: usize, log: &mut Vec<Event>) {
        let m = &mut self.members[i];
        m.commit_due = None;
        let worker = m.worker;
        let owned = m.owned.clone();
        for o in owned {
            if o.stored > self.partitions[o.partition as usize].committed {
                self.commit(now, o.partition, o.stored, worker, None, log);
            }
        }
    }
}
