//! Offsets: `commitSync` of a record's offset + 1 (an ack), accepted or fenced by the
//! coordinator, settling every record before it; a seek back (a release); and what a forgetting
//! partition may then drop. A committed record a fetched batch still holds is said to a
//! folding run ([`crate::record::Batched`]).

use std::collections::VecDeque;

use super::queue::{AckRefused, Receipt, VisibilityError};
use super::Kafka;
use crate::broker::messages::log_ack;
use crate::record::{AckOutcome, Batched, Event, EventKind, Nanos, Seq, WorkerId};

impl Kafka {
    /// `commitSync` of the record's offset + 1, by `worker`.
    pub fn ack(
        &mut self,
        now: Nanos,
        receipt: Receipt,
        worker: WorkerId,
        log: &mut Vec<Event>,
    ) -> Result<AckOutcome, AckRefused> {
        if receipt.seq == 0 || u64::from(receipt.seq) > self.published {
            return Err(AckRefused(receipt));
        }
        let (p, off) = self.place(receipt.seq);
        // Kafka has no redrive: a receipt's delivery number is its nonce.
        if !self.may_commit(receipt, worker) {
            let outcome = AckOutcome::StaleRejected;
            log_ack(log, now, receipt, worker, receipt.nonce, outcome);
            log.push(Event {
                at: now,
                kind: EventKind::CommitFenced {
                    seq: receipt.seq,
                    worker,
                },
            });
            return Err(AckRefused(receipt));
        }
        if off < self.partitions[p as usize].committed {
            let covered = AckOutcome::Covered;
            log_ack(log, now, receipt, worker, receipt.nonce, covered);
            return Ok(covered);
        }
        Ok(self.commit(now, p, off + 1, worker, Some(receipt), log))
    }

    /// Whether the coordinator takes `worker`'s commit of `receipt`: its consumer is a member,
    /// and the record's current delivery (if this is it) was handed under that member.
    fn may_commit(&self, receipt: Receipt, worker: WorkerId) -> bool {
        let Some(i) = self.current(worker) else {
            return false;
        };
        let (p, off) = self.place(receipt.seq);
        match self.partitions[p as usize].rec(off) {
            Some(r) if r.nonce == receipt.nonce => {
                r.holder.is_none_or(|h| h.member == self.members[i].id)
            }
            _ => true,
        }
    }

    /// Moves partition `p`'s committed offset to `to` (past it), settling every record before
    /// it; the record of `receipt` is the committer's own.
    pub(super) fn commit(
        &mut self,
        now: Nanos,
        p: u32,
        to: u64,
        worker: WorkerId,
        receipt: Option<Receipt>,
        log: &mut Vec<Event>,
    ) -> AckOutcome {
        let from = self.partitions[p as usize].committed;
        let mut own = AckOutcome::Deleted;
        for off in from..to {
            let seq = self.seq_of(p, off);
            let r = self.partitions[p as usize].rec_mut(off);
            if let (Some(b), 1..) = (&mut self.batched, r.in_batches) {
                b.push(Batched {
                    seq,
                    change: r.in_batches as i32,
                });
            }
            let held = r.holder.take().is_some();
            self.leased -= u64::from(held);
            // The committer's own record: a plain delete when its delivery was the current one.
            let mine = receipt.filter(|rc| rc.seq == seq);
            let outcome = match mine {
                Some(rc) if rc.nonce != r.nonce || !held => AckOutcome::StaleDeleted,
                _ => AckOutcome::Deleted,
            };
            if mine.is_some() {
                own = outcome;
            }
            let delivery = mine.map_or(r.deliveries, |rc| rc.nonce);
            log.push(Event {
                at: now,
                kind: EventKind::Acked {
                    seq,
                    worker,
                    delivery,
                    outcome,
                },
            });
        }
        self.partitions[p as usize].committed = to;
        self.trim(p);
        if self.config.auto_commit.is_some() {
            // Its readers' auto-commit may have nothing left to commit.
            for k in 0..self.readers(p).len() {
                self.sync_timers(self.readers(p)[k]);
            }
        }
        own
    }

    /// Lets a forgetting partition drop what nobody can fetch again.
    pub(super) fn trim(&mut self, p: u32) {
        if self.partitions[p as usize].may_trim() {
            let keep_from = self.keep_from(p);
            self.partitions[p as usize].trim(keep_from);
        }
    }

    /// Record `off` of partition `p` leaves a fetched batch without being handed out.
    pub(super) fn leave_batch(&mut self, p: u32, off: u64) {
        let part = &mut self.partitions[p as usize];
        part.rec_mut(off).in_batches -= 1;
        if off < part.committed {
            self.left_batch(self.seq_of(p, off));
        }
    }

    /// Committed record `seq` left one of the fetched batches that held it.
    pub(super) fn left_batch(&mut self, seq: Seq) {
        if let Some(b) = &mut self.batched {
            b.push(Batched { seq, change: -1 });
        }
    }

    /// A seek back to the record: the member fetches it again at its next poll.
    pub fn release(
        &mut self,
        now: Nanos,
        receipt: Receipt,
        worker: WorkerId,
        log: &mut Vec<Event>,
    ) -> Result<(), VisibilityError> {
        let i = self.holder_entry(receipt, worker)?;
        self.forget_idle();
        let (p, off) = self.place(receipt.seq);
        let m = &mut self.members[i];
        let (dropped, kept): (VecDeque<_>, VecDeque<_>) = std::mem::take(&mut m.batch)
            .into_iter()
            .partition(|&(q, _)| q == p);
        m.batch = kept;
        if let Some(o) = m.owned.iter_mut().find(|o| o.partition == p) {
            // The position only: what a poll stored stays stored (auto-commit may still commit
            // past the record).
            o.position = off;
        }
        for (q, o) in dropped {
            self.leave_batch(q, o);
        }
        let r = self.partitions[p as usize].rec_mut(off);
        r.holder = None;
        self.leased -= 1;
        let delivery = r.deliveries;
        self.trim(p);
        log.push(Event {
            at: now,
            kind: EventKind::LeaseExpired {
                seq: receipt.seq,
                delivery,
            },
        });
        Ok(())
    }

    /// Nothing extends `max.poll.interval.ms` but a poll: accepted for the current holder,
    /// changing nothing.
    pub fn extend(&mut self, receipt: Receipt, worker: WorkerId) -> Result<(), VisibilityError> {
        self.holder_entry(receipt, worker).map(|_| ())
    }

    /// The member entry of `worker` when it is in the group and holds `receipt`'s record under
    /// its current member id, on a partition it owns.
    fn holder_entry(&self, receipt: Receipt, worker: WorkerId) -> Result<usize, VisibilityError> {
        if receipt.seq == 0 || u64::from(receipt.seq) > self.published {
            return Err(VisibilityError::StaleReceipt);
        }
        let (p, off) = self.place(receipt.seq);
        let i = self.current(worker).ok_or(VisibilityError::StaleReceipt)?;
        let m = &self.members[i];
        let held = self.partitions[p as usize].rec(off).is_some_and(|r| {
            r.nonce == receipt.nonce && r.holder.is_some_and(|h| h.member == m.id)
        });
        if held && m.owns(p) {
            Ok(i)
        } else {
            Err(VisibilityError::StaleReceipt)
        }
    }
}
