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
//! At one instant: commits, then removals (each kind in the order the members' entries were
//! made), then a rebalance's completion.
//!
//! The members' timers are kept in an ordered set ([`TimerIndex`]), each member's entries
//! replaced when what they depend on changes (its poll, its fetch, its tick) and the whole set
//! rebuilt after the group changed; so the next timer is the set's first, not a scan of the
//! members. An auto-commit entry whose offsets another commit caught up with is passed over (a
//! commit of the member's own partitions replaces it).

use std::collections::BTreeSet;

use super::group::Member;
use super::Kafka;
use crate::record::{Event, Nanos, RebalanceWhy};

/// A member's timer in the index: when, which (auto-commit before removal) and whose (the
/// member's seat).
pub(super) type TimerKey = (Nanos, u8, u64);

const COMMIT: u8 = 0;
const REMOVE: u8 = 1;

/// The members' timers, in the order they act.
#[derive(Debug, Clone, Default)]
pub(super) struct TimerIndex {
    set: BTreeSet<TimerKey>,
    /// The group changed since the set was built: [`Kafka::refresh`] rebuilds it.
    pub stale: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Due {
    Commit(usize),
    Remove(usize),
    Complete,
}

impl Kafka {
    /// Member `m`'s timers as of now: its auto-commit tick, its removal.
    fn timers_of(&self, m: &Member) -> [Option<TimerKey>; 2] {
        let c = &self.config;
        if !m.in_group {
            return [None; 2];
        }
        if !m.alive {
            let beats = (m.died_at - m.joined_at) / c.heartbeat_interval;
            let last = m.joined_at + beats * c.heartbeat_interval;
            return [None, Some((last + c.session_timeout, REMOVE, m.seat))];
        }
        let remove = (!m.waiting).then(|| {
            let extra = if c.static_membership {
                c.session_timeout
            } else {
                0
            };
            (m.last_poll + c.max_poll_interval + extra, REMOVE, m.seat)
        });
        let commit = m
            .commit_due
            .filter(|_| self.ahead(m))
            .map(|t| (t, COMMIT, m.seat));
        [commit, remove]
    }

    /// A poll of member `m` stored offsets past the committed ones of its partitions.
    fn ahead(&self, m: &Member) -> bool {
        m.owned
            .iter()
            .any(|o| o.stored > self.partitions[o.partition as usize].committed)
    }

    /// Puts member `i`'s timers in the index as they are now.
    pub(super) fn sync_timers(&mut self, i: usize) {
        let keys = self.timers_of(&self.members[i]);
        let m = &mut self.members[i];
        for (old, new) in m.timer_keys.iter_mut().zip(keys) {
            if *old != new {
                if let Some(k) = old.take() {
                    self.timers.set.remove(&k);
                }
                if let Some(k) = new {
                    self.timers.set.insert(k);
                }
                *old = new;
            }
        }
    }

    /// Builds the index again from every member (after the group changed).
    pub(super) fn rebuild_timers(&mut self) {
        self.timers.set.clear();
        for m in &mut self.members {
            m.timer_keys = [None; 2];
        }
        for i in 0..self.members.len() {
            self.sync_timers(i);
        }
        self.timers.stale = false;
    }

    /// The entry of the member in seat `seat` (entries are in seat order).
    fn seated(&self, seat: u64) -> usize {
        self.members
            .binary_search_by_key(&seat, |m| m.seat)
            .expect("a timer's member has an entry")
    }

    fn next_timer(&self) -> Option<(Nanos, Due)> {
        debug_assert!(
            !self.timers.stale,
            "the timer index is rebuilt after a change"
        );
        let first = self.timers.set.iter().find_map(|&(t, which, seat)| {
            let i = self.seated(seat);
            match which {
                COMMIT if !self.ahead(&self.members[i]) => None,
                COMMIT => Some((t, Due::Commit(i))),
                _ => Some((t, Due::Remove(i))),
            }
        });
        let complete = self.pending.filter(|_| {
            self.members
                .iter()
                .all(|m| !m.in_group || (m.alive && m.rejoined))
        });
        let next = match (first, complete) {
            (Some(f), Some(p)) if p.not_before < f.0 => Some((p.not_before, Due::Complete)),
            (None, Some(p)) => Some((p.not_before, Due::Complete)),
            (f, _) => f,
        };
        #[cfg(test)]
        assert_eq!(
            next,
            self.next_timer_by_scan(),
            "the index agrees with a scan"
        );
        next
    }

    /// The next instant a timer of the group acts.
    pub fn next_due(&self) -> Option<Nanos> {
        self.next_timer().map(|(t, _)| t)
    }

    /// Acts on every timer due at or before `now`, in time order.
    pub fn advance(&mut self, now: Nanos, log: &mut Vec<Event>) {
        self.refresh();
        while let Some((t, due)) = self.next_timer().filter(|&(t, _)| t <= now) {
            self.forget_idle();
            match due {
                Due::Commit(i) => self.auto_commit(t, i, log),
                Due::Remove(i) if self.members[i].alive => {
                    self.remove(t, i, RebalanceWhy::MaxPollInterval, log)
                }
                Due::Remove(i) => self.remove(t, i, RebalanceWhy::SessionTimeout, log),
                Due::Complete => self.try_complete(t, log),
            }
            self.refresh();
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
        self.sync_timers(i);
    }

    /// The next timer found by looking at every member, as the index must find it.
    #[cfg(test)]
    fn next_timer_by_scan(&self) -> Option<(Nanos, Due)> {
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
            for (t, which, _) in self.timers_of(m).into_iter().flatten() {
                consider(
                    t,
                    if which == COMMIT {
                        Due::Commit(i)
                    } else {
                        Due::Remove(i)
                    },
                );
            }
        }
        best
    }
}
