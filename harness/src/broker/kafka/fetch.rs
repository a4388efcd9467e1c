//! A consumer taking records: a receive hands the next record of the batch its last poll
//! returned, or polls (joining the group first if it is not a member); a poll rejoins a
//! rebalance in progress and fetches up to `max_poll_records` from the member's partitions.

use super::partition::Holder;
use super::queue::{Handout, Receipt};
use super::{Assignment, Kafka};
use crate::record::{Event, EventKind, Nanos, WorkerId};

impl Kafka {
    /// The application takes its next record: from its batch, or by a poll.
    pub fn receive(
        &mut self,
        now: Nanos,
        worker: WorkerId,
        log: &mut Vec<Event>,
    ) -> Option<Handout> {
        let i = match self.live_entry(worker) {
            Some(i) if !self.members[i].batch.is_empty() => return Some(self.hand(now, i, log)),
            Some(i) if self.poll_is_idle(i) => {
                self.check_idle_poll(now, i);
                self.mark_idle(worker);
                return None;
            }
            Some(i) if self.members[i].in_group => i,
            Some(i) => {
                // Removed, its batch done: its poll joins as a new member.
                self.group_changed();
                self.members.remove(i);
                self.join(now, worker, log)
            }
            None => self.join(now, worker, log),
        };
        let handout = self.poll(now, i, log);
        self.refresh();
        if handout.is_none() && self.poll_is_idle(i) {
            self.mark_idle(worker);
        }
        handout
    }

    /// A poll of member `i`: rejoins a rebalance in progress, then fetches.
    pub(super) fn poll(&mut self, now: Nanos, i: usize, log: &mut Vec<Event>) -> Option<Handout> {
        self.members[i].last_poll = now;
        self.members[i].waiting = true;
        if self.pending.is_some() && !self.members[i].rejoined {
            self.forget_idle();
            self.rejoin(now, i, log);
            self.try_complete(now, log);
        }
        let eager = self.config.assignment == Assignment::Range;
        let fetched = !(self.pending.is_some() && eager) && self.fetch(now, i);
        self.members[i].waiting = !fetched;
        self.sync_timers(i);
        fetched.then(|| self.hand(now, i, log))
    }

    /// Fetches up to `max_poll_records` into member `i`'s batch, the first partition in turn;
    /// stores their end offsets. False when there was nothing.
    fn fetch(&mut self, now: Nanos, i: usize) -> bool {
        let m = &mut self.members[i];
        let n = m.owned.len();
        let mut room = self.config.max_poll_records as u64;
        for k in 0..n {
            let o = &mut m.owned[(m.next_first + k) % n];
            let part = &mut self.partitions[o.partition as usize];
            let take = (part.end() - o.position).min(room);
            for off in o.position..o.position + take {
                part.rec_mut(off).in_batches += 1;
                m.batch.push_back((o.partition, off));
            }
            o.position += take;
            o.stored = o.position;
            room -= take;
        }
        if n > 1 {
            m.next_first = (m.next_first + 1) % n;
        }
        if m.batch.is_empty() {
            return false;
        }
        if let Some(every) = self.config.auto_commit {
            if m.commit_due.is_none_or(|t| t <= now) {
                let since = now - m.joined_at;
                m.commit_due = Some(m.joined_at + (since / every + 1) * every);
            }
        }
        true
    }

    /// Hands member `i`'s next batch record to the application.
    fn hand(&mut self, now: Nanos, i: usize, log: &mut Vec<Event>) -> Handout {
        let m = &mut self.members[i];
        let (p, off) = m.batch.pop_front().expect("a batch record");
        let holder = Holder {
            worker: m.worker,
            member: m.id,
            lease_end: m.last_poll + self.config.max_poll_interval,
        };
        let seq = self.seq_of(p, off);
        let part = &mut self.partitions[p as usize];
        let committed = off < part.committed;
        let r = part.rec_mut(off);
        r.in_batches -= 1;
        r.deliveries += 1;
        r.nonce += 1;
        let (delivery, nonce) = (r.deliveries, r.nonce);
        if committed {
            self.left_batch(seq);
        } else {
            self.leased += u64::from(r.holder.is_none());
            r.holder = Some(holder);
        }
        self.trim(p);
        log.push(Event {
            at: now,
            kind: EventKind::Delivered {
                seq,
                worker: holder.worker,
                delivery,
                lease_end: holder.lease_end,
            },
        });
        Handout {
            receipt: Receipt { seq, nonce },
            receive_count: delivery,
            lease_end: holder.lease_end,
        }
    }

    /// True when a poll could change something: nobody joined yet, a rebalance is in
    /// progress, a member works (it will poll), a dead member may be restarted, or a waiting
    /// member has records to take.
    pub fn can_hand_out(&self) -> bool {
        self.members.is_empty()
            || self.pending.is_some()
            || self.members.iter().any(|m| {
                !m.alive
                    || !m.waiting
                    || !m.batch.is_empty()
                    || m.owned
                        .iter()
                        .any(|o| o.position < self.partitions[o.partition as usize].end())
            })
    }
}
