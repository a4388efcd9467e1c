//! The group coordinator's rebalance: joins, rejoins, removals and the new generation.
//!
//! A rebalance starts when a consumer joins (or a member is removed) and completes once every
//! member of the group has rejoined, or was removed. A member blocked in a poll rejoins at once;
//! a member at work rejoins at its next poll (after its batch), so its commits until then are
//! accepted (the generation is still the old one); a member that never polls again is removed
//! by its `max.poll.interval.ms` (or, dead, by its session). The first rebalance of an empty
//! group waits the broker's `group.initial.rebalance.delay.ms` for more members.
//!
//! Eager (`range`): a rejoining member revokes every partition (auto-commit commits what its
//! polls stored first), and fetches nothing until the rebalance completes; every new owner
//! starts at the committed offset. Cooperative (`cooperative-sticky`): a rejoining member
//! revokes only the partitions the new assignment takes from it and keeps fetching the others.
//!
//! Static membership: a consumer restarted with the same `group.instance.id` before its
//! session expired takes its member's assignment back, with no rebalance, reading from the
//! committed offsets; its old member id is fenced.

use super::group::{range, sticky, Member, Owned};
use super::{Assignment, Kafka, Pending};
use crate::record::{Event, EventKind, Nanos, RebalanceWhy, WorkerId};

impl Kafka {
    /// `worker`'s consumer joins the group; returns its member entry.
    pub(super) fn join(&mut self, now: Nanos, worker: WorkerId, log: &mut Vec<Event>) -> usize {
        self.group_changed();
        self.next_member_id += 1;
        let id = self.next_member_id;
        if self.config.static_membership {
            let old = self
                .members
                .iter()
                .position(|m| m.worker == worker && m.in_group && !m.alive);
            if let Some(i) = old {
                self.take_back(now, i, id);
                return i;
            }
        }
        let empty = !self.members.iter().any(|m| m.in_group);
        self.next_seat += 1;
        self.members
            .push(Member::new(id, self.next_seat, worker, now));
        let i = self.members.len() - 1;
        if empty && self.pending.is_none() {
            self.pending = Some(Pending {
                why: RebalanceWhy::Join,
                not_before: now + self.config.initial_rebalance_delay,
            });
        } else {
            self.start(now, RebalanceWhy::Join, log);
        }
        self.try_complete(now, log);
        i
    }

    /// A static member's consumer is back before its session expired: same partitions, read
    /// from the committed offsets, under member id `id`.
    fn take_back(&mut self, now: Nanos, i: usize, id: u32) {
        let old = self.members[i].id;
        for owner in self.owners.iter_mut().filter(|o| **o == Some(old)) {
            *owner = Some(id);
        }
        let m = &mut self.members[i];
        m.id = id;
        m.alive = true;
        // A rebalance in progress: its poll rejoins it.
        m.rejoined = false;
        m.joined_at = now;
        m.last_poll = now;
        m.commit_due = None;
        m.next_first = 0;
        for o in &mut m.owned {
            let c = self.partitions[o.partition as usize].committed;
            o.position = c;
            o.stored = c;
        }
        self.repoll = true;
    }

    /// A rebalance starts (or goes on): every member blocked in a poll rejoins now.
    pub(super) fn start(&mut self, now: Nanos, why: RebalanceWhy, log: &mut Vec<Event>) {
        self.forget_idle();
        if self.pending.is_none() {
            self.pending = Some(Pending {
                why,
                not_before: now,
            });
        }
        for i in 0..self.members.len() {
            let m = &self.members[i];
            if m.in_group && m.alive && m.waiting && !m.rejoined {
                self.rejoin(now, i, log);
            }
        }
    }

    /// Member `i` rejoins: eager, it revokes everything; cooperative, what moves away.
    pub(super) fn rejoin(&mut self, now: Nanos, i: usize, log: &mut Vec<Event>) {
        self.members[i].rejoined = true;
        let revoked: Vec<u32> = match self.config.assignment {
            Assignment::Range => self.members[i].owned.iter().map(|o| o.partition).collect(),
            Assignment::CooperativeSticky => {
                let (idx, target) = self.target();
                let k = idx.iter().position(|&j| j == i).expect("a member");
                let keep = &target[k];
                self.members[i]
                    .owned
                    .iter()
                    .map(|o| o.partition)
                    .filter(|p| !keep.contains(p))
                    .collect()
            }
        };
        self.revoke(now, i, &revoked, true, log);
    }

    /// The members in the group (sorted by worker id, then member id) and the partitions the
    /// assignor gives each.
    fn target(&self) -> (Vec<usize>, Vec<Vec<u32>>) {
        let mut idx: Vec<usize> = (0..self.members.len())
            .filter(|&i| self.members[i].in_group)
            .collect();
        idx.sort_by_key(|&i| (self.members[i].worker, self.members[i].id));
        let n = self.config.partitions;
        let target = match self.config.assignment {
            Assignment::Range => range(idx.len(), n),
            Assignment::CooperativeSticky => {
                let owned: Vec<Vec<u32>> = idx
                    .iter()
                    .map(|&i| self.members[i].owned.iter().map(|o| o.partition).collect())
                    .collect();
                sticky(&owned, n)
            }
        };
        (idx, target)
    }

    /// Member `i` gives up `parts`: auto-commit first (`commit`, a living member's revoke), then
    /// its uncommitted records there are free again (a batch the application holds keeps them).
    pub(super) fn revoke(
        &mut self,
        now: Nanos,
        i: usize,
        parts: &[u32],
        commit: bool,
        log: &mut Vec<Event>,
    ) {
        self.group_changed();
        let auto = self.config.auto_commit.is_some() && commit;
        for &p in parts {
            let m = &self.members[i];
            let Some(o) = m.owned.iter().find(|o| o.partition == p).copied() else {
                continue;
            };
            let (worker, id) = (m.worker, m.id);
            if auto && o.stored > self.partitions[p as usize].committed {
                self.commit(now, p, o.stored, worker, None, log);
            }
            let part = &mut self.partitions[p as usize];
            for off in part.committed..part.end() {
                let r = part.rec_mut(off);
                if r.holder.is_some_and(|h| h.member == id) {
                    r.holder = None;
                    self.leased -= 1;
                    let delivery = r.deliveries;
                    log.push(Event {
                        at: now,
                        kind: EventKind::LeaseExpired {
                            seq: (off * u64::from(self.config.partitions) + u64::from(p) + 1)
                                as crate::record::Seq,
                            delivery,
                        },
                    });
                }
            }
            // What its polls returned stays the application's: it works through it.
            self.members[i].owned.retain(|o| o.partition != p);
        }
        let m = &mut self.members[i];
        if !m.owned.is_empty() {
            m.next_first %= m.owned.len();
        } else {
            m.next_first = 0;
        }
    }

    /// Member `i` leaves the group (`why`): its partitions are free, and a rebalance starts.
    pub(super) fn remove(&mut self, now: Nanos, i: usize, why: RebalanceWhy, log: &mut Vec<Event>) {
        self.group_changed();
        let parts: Vec<u32> = self.members[i].owned.iter().map(|o| o.partition).collect();
        self.revoke(now, i, &parts, false, log);
        self.members[i].in_group = false;
        self.members[i].commit_due = None;
        if !self.members[i].alive {
            self.members.remove(i);
        }
        self.start(now, why, log);
        self.try_complete(now, log);
    }

    /// Completes the rebalance in progress once every member rejoined (and the first one's
    /// delay is over): the new generation's assignment.
    pub(super) fn try_complete(&mut self, now: Nanos, log: &mut Vec<Event>) {
        self.forget_idle();
        let Some(pending) = self.pending else { return };
        let waiting_for = self
            .members
            .iter()
            .any(|m| m.in_group && !(m.alive && m.rejoined));
        if now < pending.not_before || waiting_for {
            return;
        }
        self.pending = None;
        self.group_changed();
        let (idx, target) = self.target();
        let mut owners = vec![None; self.config.partitions as usize];
        for (k, &i) in idx.iter().enumerate() {
            let want = &target[k];
            let drop: Vec<u32> = self.members[i]
                .owned
                .iter()
                .map(|o| o.partition)
                .filter(|p| !want.contains(p))
                .collect();
            self.revoke(now, i, &drop, true, log);
            for &p in want {
                owners[p as usize] = Some(self.members[i].id);
                if !self.members[i].owns(p) {
                    let c = self.partitions[p as usize].committed;
                    self.members[i].owned.push(Owned {
                        partition: p,
                        position: c,
                        stored: c,
                    });
                }
            }
            self.members[i].owned.sort_by_key(|o| o.partition);
        }
        let moved = owners
            .iter()
            .zip(&self.owners)
            .filter(|(new, old)| new != old)
            .count() as u32;
        self.owners = owners;
        self.generation += 1;
        for m in &mut self.members {
            m.rejoined = false;
        }
        if !idx.is_empty() {
            log.push(Event {
                at: now,
                kind: EventKind::Rebalanced {
                    generation: self.generation,
                    members: idx.len() as u32,
                    moved,
                    why: pending.why,
                },
            });
        }
        self.repoll = true;
    }
}
