//! Effect accounting: per message, how many effects it had, when the first came and where the
//! broker left it; and the run's counts built from that (duplicates, lost, unfinished, late, DLQ
//! with and without effect, stale acks, kills, busy time, age of the oldest message).

use std::collections::HashMap;

use super::handlers::for_each_span;
use super::place::{index_of, Place, Places};
use crate::record::{AckOutcome, EventKind, Nanos, Republish, RunRecord, Seq};

/// What happened to one published message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct MessageAccount {
    /// Effects recorded for its key.
    pub effects: u32,
    /// When its first effect happened.
    pub first_effect: Option<Nanos>,
    /// Where the broker left it when the run stopped.
    pub place: Place,
    /// The last time it left the main queue (deleted or moved to the DLQ).
    pub left_queue_at: Option<Nanos>,
    /// The target refused it (`on_poison: dead_letter`) at least once.
    pub rejected: bool,
    /// The first time an ack deleted it (a current receipt, or a stale one under
    /// `stale_ack: delete`).
    pub acked_at: Option<Nanos>,
    /// A later message of a key the producer published more than once: its effects, place and
    /// acks are folded into the key's first message, which stands for the key; it is not
    /// counted itself.
    pub copy: bool,
    /// When its first provider call that failed (an error answer or a reset) started.
    pub first_failed_call: Option<Nanos>,
}

impl MessageAccount {
    /// Deleted from the queue without an effect, and not refused by the target: nothing will ever
    /// do this message's work.
    pub fn is_lost(&self) -> bool {
        self.place == Place::Deleted && self.effects == 0 && !self.rejected && !self.is_failed()
    }

    /// Deleted without an effect by a consumer that had tried the work and failed first (its
    /// framework's "task failed": out of retries, it acked): its failure is on record in the
    /// consumer's own log, not silent. An ack before any attempt failed (ack before the work,
    /// its call starting at the ack's instant or later) is a loss.
    pub fn is_failed(&self) -> bool {
        self.place == Place::Deleted
            && self.effects == 0
            && !self.rejected
            && self
                .first_failed_call
                .is_some_and(|f| self.acked_at.is_some_and(|a| f < a))
    }

    /// Still in the main queue (visible or leased) when the run stopped, or never published.
    pub fn is_unfinished(&self) -> bool {
        !matches!(self.place, Place::Deleted | Place::DeadLettered)
    }

    /// When the message was done: its first effect had happened and an ack had deleted it (the
    /// later of the two); `None` if either never happened.
    pub fn done_at(&self) -> Option<Nanos> {
        Some(self.first_effect?.max(self.acked_at?))
    }

    /// The longest this message waited in the main queue, measured from its publish: to the last
    /// time it left the main queue, or to `end` if it is still there.
    pub fn oldest_age(&self, published_at: Nanos, end: Nanos) -> Nanos {
        let until = if self.place.in_main_queue() {
            Some(end)
        } else {
            self.left_queue_at
        };
        until.map_or(0, |t| t.saturating_sub(published_at))
    }
}

/// The account of every message, indexed like [`RunRecord::messages`] (`seq - 1`).
///
/// Effects whose `seq` names no message are left out here (see [`Accounting::unknown_key_effects`]).
pub fn per_message(record: &RunRecord) -> Vec<MessageAccount> {
    let n = record.messages.len();
    let mut acc = vec![MessageAccount::default(); n];
    for e in &record.ledger.effects {
        if let Some(i) = e.seq.and_then(|q| index_of(q, n)) {
            acc[i].effect(e.at);
        }
    }
    let mut places = Places::new(n);
    for e in &record.events {
        if let Some(i) = event_seq(&e.kind).and_then(|q| index_of(q, n)) {
            acc[i].event(e.at, &e.kind);
        }
        if let Some(m) = places.apply(&e.kind) {
            acc[m.index].moved(e.at, m.from, m.to);
        }
    }
    for (a, p) in acc.iter_mut().zip(places.into_vec()) {
        a.place = p;
    }
    // A commit of offsets settles whatever it passes, tried or not: only a broker that takes
    // an ack per message hears the consumer give up on one.
    if !record.broker_kind.settles_by_offsets() {
        for c in &record.ledger.calls {
            if let Some(i) = c.seq.and_then(|q| index_of(q, n)) {
                if c.outcome.is_failure() {
                    acc[i].failed_call(c.started);
                }
            }
        }
    }
    if let Some(first) = super::copies::first_of_key(record) {
        fold_copies(&mut acc, &first);
    }
    acc
}

/// The message an event is about, for [`MessageAccount::event`] (refusals and deleting acks).
#[inline]
pub fn event_seq(kind: &EventKind) -> Option<Seq> {
    match *kind {
        EventKind::Rejected { seq, .. } => Some(seq),
        EventKind::Acked {
            seq,
            outcome: AckOutcome::Deleted | AckOutcome::StaleDeleted | AckOutcome::LateDeleted,
            ..
        } => Some(seq),
        _ => None,
    }
}

impl MessageAccount {
    /// An effect for the message's key at `at`.
    #[inline]
    pub fn effect(&mut self, at: Nanos) {
        self.effects = self.effects.saturating_add(1);
        self.first_effect = Some(self.first_effect.map_or(at, |f| f.min(at)));
    }

    /// A provider call for the message that started at `at` failed (an error answer or a reset).
    #[inline]
    pub fn failed_call(&mut self, at: Nanos) {
        self.first_failed_call = Some(self.first_failed_call.map_or(at, |f| f.min(at)));
    }

    /// An event about the message ([`event_seq`]): a refusal, or an ack that deleted it.
    pub fn event(&mut self, at: Nanos, kind: &EventKind) {
        match kind {
            EventKind::Rejected { .. } => self.rejected = true,
            EventKind::Acked { .. } => self.acked_at = self.acked_at.or(Some(at)),
            _ => {}
        }
    }

    /// The message moved from `from` to `to` at `at` ([`super::place::Places::apply`]).
    #[inline]
    pub fn moved(&mut self, at: Nanos, from: Place, to: Place) {
        if from.in_main_queue() && !to.in_main_queue() {
            self.left_queue_at = Some(at);
        }
        self.place = to;
    }
}

/// Folds every later message of a key into the key's first (`first[i]`): effects are the key's,
/// so are refusals; the first ack that deleted any of them; and the least settled place (one
/// still in the main queue keeps the key unfinished; else one in the DLQ puts the key there;
/// else all deleted), left when the last of them left the queue.
fn fold_copies(acc: &mut [MessageAccount], first: &[usize]) {
    fn min(a: Option<Nanos>, b: Option<Nanos>) -> Option<Nanos> {
        match (a, b) {
            (Some(x), Some(y)) => Some(x.min(y)),
            (x, y) => x.or(y),
        }
    }
    fn unsettled(p: Place) -> u8 {
        match p {
            Place::Unpublished => 0,
            Place::Deleted => 1,
            Place::DeadLettered => 2,
            Place::Visible => 3,
            Place::Delayed => 4,
            Place::InFlight => 5,
        }
    }
    for (i, &f) in first.iter().enumerate() {
        if f == i {
            continue;
        }
        let c = acc[i];
        acc[i].copy = true;
        let p = &mut acc[f];
        p.effects = p.effects.saturating_add(c.effects);
        p.first_effect = min(p.first_effect, c.first_effect);
        p.rejected |= c.rejected;
        p.first_failed_call = min(p.first_failed_call, c.first_failed_call);
        p.acked_at = min(p.acked_at, c.acked_at);
        if unsettled(c.place) > unsettled(p.place) {
            p.place = c.place;
        }
        p.left_queue_at = p.left_queue_at.max(c.left_queue_at);
    }
}

/// The run's counts. Definitions are the summary's (docs/summary.md).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Accounting {
    /// Published messages, by key: a key a retrying producer published twice is one message
    /// (its second broker message is in `duplicate_publishes`).
    pub messages: u64,
    /// Hand-outs to workers.
    pub deliveries: u64,
    /// Hand-outs with a receive count above 1 (a redrive starts the count again).
    pub redeliveries: u64,
    /// Effects for published keys.
    pub effects: u64,
    /// Effects for keys that were never published (counted, never dropped).
    pub unknown_key_effects: u64,
    /// The same effects, as the verdict names them: effects whose key names no published
    /// message. While there are any, the keys of the consumer's calls and of the published
    /// messages disagree (the run is misconfigured), and no message is counted lost.
    pub unmatched_effects: u64,
    /// Messages deleted with no effect matched to their key while some effects were unmatched:
    /// whether their work was done cannot be told (they are not counted in `lost`).
    pub unverifiable_keys: u64,
    pub messages_with_effect: u64,
    /// Effects beyond the first for each key.
    pub duplicate_effects: u64,
    /// `duplicate_effects / messages` (0 without messages).
    pub duplicate_rate: f64,
    /// Deleted, no effect, not refused by the target; 0 while effects are unmatched (those
    /// messages are `unverifiable_keys` then).
    pub lost: u64,
    /// Deleted without an effect by a consumer that tried the work, failed and gave up
    /// ([`MessageAccount::is_failed`]): not counted in `lost`.
    pub failed: u64,
    /// Still in the main queue when the run stopped.
    pub unfinished: u64,
    /// First effect more than `late_after` after publish.
    pub late: u64,
    pub late_after: Nanos,
    /// In the DLQ when the run stopped.
    pub dlq: u64,
    pub dlq_with_effect: u64,
    pub dlq_without_effect: u64,
    /// Acks whose receipt was no longer current, whatever the broker did with them.
    pub stale_acks: u64,
    /// Kafka: rebalances the group coordinator completed, and commits it fenced.
    pub rebalances: u64,
    pub fenced_commits: u64,
    pub worker_kills: u64,
    pub worker_crashes: u64,
    /// Messages the target refused (`on_poison: dead_letter`).
    pub rejected: u64,
    /// Retries of a message's work: provider calls beyond the first within one delivery, and
    /// the consumer's own retries ([`Accounting::consumer_retries`]).
    pub handler_retries: u64,
    /// Times a handler published its message again for another try (a framework's retry: a
    /// delay queue, Celery's `retry`), counted in `handler_retries` too.
    pub consumer_retries: u64,
    /// Unfinished messages that were waiting for a consumer's retry when the run stopped: in a
    /// delay queue, or held by the framework until the retry was due.
    pub unfinished_delayed: u64,
    /// Time spent handling, summed over workers (a handler still working when the run stopped
    /// counts until the end).
    pub worker_busy: Nanos,
    /// When the last handler ended (0 if none did).
    pub last_handler_end: Nanos,
    /// The largest age the oldest message in the main queue reached.
    pub max_oldest_age: Nanos,
    /// Sends the broker accepted beyond the first of their key (a retrying producer's second
    /// message for a key); `None` when the run did not model the producer's sends.
    pub duplicate_publishes: Option<u64>,
    /// Sends the broker dropped as duplicates (a FIFO queue's deduplication window); `None` as
    /// above.
    pub publishes_deduplicated: Option<u64>,
}

/// Counts the run from its record and the per-message accounts of [`per_message`].
///
/// The age of the oldest message: at an instant `t` it is `max(t - published_at)` over the
/// messages in the main queue at `t`. Its largest value over the run is therefore
/// `max over m, over t with m in the queue, of (t - published_at(m))`; for one message,
/// `t - published_at(m)` grows with `t`, so its largest value is reached at the end of the last
/// stretch the message spends in the main queue: its last removal (deletion or move to the DLQ)
/// or the run's end if it is still there. A redriven message is back in the main queue and its
/// age still counts from its publish (what its work has waited), so its last stretch is the one
/// after the redrive. Hence `max over m of (last removal or end) - published_at(m)`, with no
/// time series needed.
pub fn account(record: &RunRecord, accounts: &[MessageAccount], late_after: Nanos) -> Accounting {
    let publishes = super::copies::publish_counts(record);
    let mut a = Accounting {
        late_after,
        duplicate_publishes: publishes.map(|p| p.duplicate_publishes),
        publishes_deduplicated: publishes.map(|p| p.publishes_deduplicated),
        ..Accounting::default()
    };
    for (m, msg) in accounts.iter().zip(&record.messages) {
        if !m.copy {
            a.add_message(m, msg.published_at, record.end);
        }
    }
    for e in &record.events {
        a.count_event(e.at, &e.kind);
    }
    for_each_span(record, |s| a.worker_busy += s.duration());
    a.handler_retries = handler_retries(record);
    a.close(record.ledger.effects.len() as u64);
    a
}

impl Accounting {
    /// Counts one message (a key's first message, copies folded in) published at
    /// `published_at`, as it stands at the run's `end`.
    pub fn add_message(&mut self, m: &MessageAccount, published_at: Nanos, end: Nanos) {
        self.messages += 1;
        self.effects += u64::from(m.effects);
        if m.effects > 0 {
            self.messages_with_effect += 1;
            self.duplicate_effects += u64::from(m.effects - 1);
        }
        if let Some(first) = m.first_effect {
            self.late += u64::from(first.saturating_sub(published_at) > self.late_after);
        }
        self.lost += u64::from(m.is_lost());
        self.failed += u64::from(m.is_failed());
        self.unfinished += u64::from(m.is_unfinished());
        self.unfinished_delayed += u64::from(m.place == Place::Delayed);
        self.rejected += u64::from(m.rejected);
        if m.place == Place::DeadLettered {
            self.dlq += 1;
            if m.effects > 0 {
                self.dlq_with_effect += 1;
            } else {
                self.dlq_without_effect += 1;
            }
        }
        self.max_oldest_age = self.max_oldest_age.max(m.oldest_age(published_at, end));
    }

    /// Counts what one event says of the run as a whole: deliveries, stale acks, kills,
    /// crashes, the last handler's end.
    #[inline]
    pub fn count_event(&mut self, at: Nanos, kind: &EventKind) {
        match *kind {
            EventKind::Delivered { delivery, .. } => {
                self.deliveries += 1;
                self.redeliveries += u64::from(delivery > 1);
            }
            EventKind::Acked { outcome, .. } => self.stale_acks += u64::from(outcome.is_stale()),
            EventKind::WorkerKilled { .. } => self.worker_kills += 1,
            EventKind::Rebalanced { .. } => self.rebalances += 1,
            EventKind::CommitFenced { .. } => self.fenced_commits += 1,
            EventKind::WorkerCrashed { .. } => self.worker_crashes += 1,
            EventKind::HandlerEnded { .. } => self.last_handler_end = self.last_handler_end.max(at),
            EventKind::Republished { delivery, to, .. } => {
                self.consumer_retries += u64::from(delivery > 0 && to != Republish::DeadLetter);
            }
            _ => {}
        }
    }

    /// The counts that need every message counted: effects of unknown keys (of `all_effects`
    /// in the ledger), the duplicate rate, and, when some effects are unmatched, the messages
    /// that had no effect: unverifiable, not lost (an effect that names no message may be
    /// theirs under a key read wrongly).
    pub fn close(&mut self, all_effects: u64) {
        self.handler_retries += self.consumer_retries;
        self.unknown_key_effects = all_effects - self.effects;
        self.unmatched_effects = self.unknown_key_effects;
        if self.unmatched_effects > 0 {
            self.unverifiable_keys = std::mem::take(&mut self.lost);
        }
        self.duplicate_rate = if self.messages == 0 {
            0.0
        } else {
            self.duplicate_effects as f64 / self.messages as f64
        };
    }
}

/// Provider calls beyond the first within one delivery of a message (the target's own retries).
///
/// A delivery is (message, receive count); a redrive starts the receive count again, so calls
/// are also told apart by how many redrives of the message came before them. Calls made without
/// a delivery (receive count 0) or for an unknown key are not a delivery's retries.
pub fn handler_retries(record: &RunRecord) -> u64 {
    monotone_retries(record).unwrap_or_else(|| sorted_retries(record))
}

/// The common case in one pass: when each message's calls come in non-decreasing delivery order
/// (no redrive, no late call for an older delivery), a retry is a call for the same delivery as
/// the message's previous call. `None` when some call goes back to an older delivery.
fn monotone_retries(record: &RunRecord) -> Option<u64> {
    let n = record.messages.len();
    if record
        .events
        .iter()
        .any(|e| matches!(e.kind, EventKind::Redriven { .. }))
    {
        return None;
    }
    let mut last = vec![0u32; n];
    let mut retries = 0;
    for c in record.ledger.calls.iter().filter(|c| c.delivery > 0) {
        let Some(i) = c.seq.and_then(|q| index_of(q, n)) else {
            continue;
        };
        match c.delivery.cmp(&last[i]) {
            std::cmp::Ordering::Equal => retries += 1,
            std::cmp::Ordering::Greater => last[i] = c.delivery,
            std::cmp::Ordering::Less => return None,
        }
    }
    Some(retries)
}

/// Any order: distinct (message, redrives before, delivery) triples, counted by sorting.
fn sorted_retries(record: &RunRecord) -> u64 {
    let n = record.messages.len();
    let mut redrives: HashMap<usize, Vec<Nanos>> = HashMap::new();
    for e in &record.events {
        if let EventKind::Redriven { seq } = e.kind {
            if let Some(i) = index_of(seq, n) {
                redrives.entry(i).or_default().push(e.at);
            }
        }
    }
    let mut keys: Vec<(usize, usize, u32)> = record
        .ledger
        .calls
        .iter()
        .filter(|c| c.delivery > 0)
        .filter_map(|c| {
            let i = c.seq.and_then(|q| index_of(q, n))?;
            let epoch = redrives
                .get(&i)
                .map_or(0, |ts| ts.partition_point(|&t| t <= c.started));
            Some((i, epoch, c.delivery))
        })
        .collect();
    let calls = keys.len() as u64;
    keys.sort_unstable();
    keys.dedup();
    calls - keys.len() as u64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::testkit::{ack_before_work, mis_keyed, s, slow_handler, Rec};
    use crate::profile::StaleAck;
    use crate::record::{CallOutcome, HandlerEnd};

    fn counts(r: &RunRecord, late_after: Nanos) -> Accounting {
        account(r, &per_message(r), late_after)
    }

    #[test]
    fn a_lease_shorter_than_the_work_under_stale_ack_reject() {
        // Three deliveries (0, 30, 60 s), three emails, three stale acks (34, 64 s refused; 94 s
        // after the DLQ move at 90 s), the message in the DLQ with its effect done.
        let a = counts(&slow_handler(StaleAck::Reject), s(300.0));
        assert_eq!((a.messages, a.deliveries, a.redeliveries), (1, 3, 2));
        assert_eq!(
            (a.effects, a.messages_with_effect, a.duplicate_effects),
            (3, 1, 2)
        );
        assert_eq!(a.duplicate_rate, 2.0);
        assert_eq!(a.stale_acks, 3);
        assert_eq!((a.dlq, a.dlq_with_effect, a.dlq_without_effect), (1, 1, 0));
        assert_eq!((a.lost, a.unfinished, a.late), (0, 0, 0));
        // Three handlers of 34 s each; the last ends at 94 s.
        assert_eq!(a.worker_busy, s(102.0));
        assert_eq!(a.last_handler_end, s(94.0));
        // In the main queue from 0 s to the DLQ move at 90 s.
        assert_eq!(a.max_oldest_age, s(90.0));
        assert_eq!(a.handler_retries, 0);
    }

    #[test]
    fn a_lease_shorter_than_the_work_under_stale_ack_ignore() {
        // Same as reject: an ignored ack leaves the message, so it goes the same way.
        let a = counts(&slow_handler(StaleAck::Ignore), s(300.0));
        assert_eq!(
            (a.deliveries, a.redeliveries, a.effects, a.duplicate_effects),
            (3, 2, 3, 2)
        );
        assert_eq!(
            (a.stale_acks, a.dlq, a.dlq_with_effect, a.lost),
            (3, 1, 1, 0)
        );
    }

    #[test]
    fn a_lease_shorter_than_the_work_under_stale_ack_delete() {
        // Delivery 1's late ack at 34 s deletes the message worker 2 holds: two deliveries, two
        // emails, both acks stale (the second finds the message gone), nothing in the DLQ.
        let a = counts(&slow_handler(StaleAck::Delete), s(300.0));
        assert_eq!(
            (a.deliveries, a.redeliveries, a.effects, a.duplicate_effects),
            (2, 1, 2, 1)
        );
        assert_eq!(a.duplicate_rate, 1.0);
        assert_eq!((a.stale_acks, a.dlq, a.lost, a.unfinished), (2, 0, 0, 0));
        assert_eq!(a.max_oldest_age, s(34.0));
        assert_eq!(a.worker_busy, s(68.0));
        assert_eq!(a.last_handler_end, s(64.0));
    }

    #[test]
    fn effects_under_keys_no_message_has_make_no_message_lost() {
        // Both messages were sent once, under keys the run never published: 0 effects for the
        // published keys, 2 unmatched; both deleted without a matched effect, which is no proof
        // of loss while effects are unmatched: 2 unverifiable, 0 lost.
        let a = counts(&mis_keyed(), s(300.0));
        assert_eq!(
            (a.effects, a.unknown_key_effects, a.unmatched_effects),
            (0, 2, 2)
        );
        assert_eq!((a.lost, a.unverifiable_keys, a.unfinished), (0, 2, 0));
        // ack-before-work really lost message 1 (its worker died after the ack): 1 lost. One
        // more effect under an unknown key, and that loss can no longer be told from a keying
        // mistake: 1 unverifiable, 0 lost.
        assert_eq!(counts(&ack_before_work(), s(300.0)).lost, 1);
        let mut r = ack_before_work();
        r.ledger.effects[0].seq = None;
        let a = counts(&r, s(300.0));
        assert_eq!((a.effects, a.unmatched_effects), (0, 1));
        assert_eq!((a.lost, a.unverifiable_keys), (0, 2));
    }

    #[test]
    fn ack_before_work_loses_the_message_whose_worker_died() {
        let r = ack_before_work();
        let per = per_message(&r);
        assert!(per[0].is_lost());
        assert!(!per[1].is_lost());
        // The refused poison message is deleted without effect but counted as rejected.
        assert!(per[2].rejected && per[2].place == Place::Deleted && !per[2].is_lost());
        let a = account(&r, &per, s(300.0));
        assert_eq!((a.lost, a.rejected, a.unfinished, a.dlq), (1, 1, 0, 0));
        assert_eq!(
            (a.effects, a.messages_with_effect, a.duplicate_effects),
            (1, 1, 0)
        );
        assert_eq!((a.worker_kills, a.worker_crashes, a.stale_acks), (1, 0, 0));
        // Handlers: 0..0.5 s (killed), 1..1.25 s, 2..2 s.
        assert_eq!(a.worker_busy, s(0.75));
        assert_eq!(a.last_handler_end, s(2.0));
        // Each message leaves the queue the instant it is received.
        assert_eq!(a.max_oldest_age, 0);
    }

    #[test]
    fn dlq_entries_split_by_effect_and_a_stuck_message_is_unfinished() {
        // Delivery limit 1. Message 1 sends its email at 0 s and its lease ends at 30 s: DLQ with
        // effect. Message 2 is poison: the worker crashes at 1 s, the lease ends at 31 s: DLQ
        // without effect. Message 3 is received at 40 s by a wedged handler: unfinished at 100 s.
        let mut r = Rec::new(30.0, 2);
        let (m1, m2, m3) = (r.publish(0.0), r.publish(1.0), r.publish(2.0));
        r.deliver(0.0, m1, 1, 1).effect(0.0, Some(m1), 1, 1);
        r.deliver(1.0, m2, 2, 1)
            .crash(1.0, 2)
            .end_handler(1.0, m2, 2, 1, HandlerEnd::Crashed);
        r.dead_letter(30.0, m1, 1).dead_letter(31.0, m2, 1);
        r.end_handler(34.0, m1, 1, 1, HandlerEnd::Finished);
        r.ack(34.0, m1, 1, 1, AckOutcome::StaleGone);
        r.deliver(40.0, m3, 1, 1);
        let a = counts(&r.finish(100.0), s(300.0));
        assert_eq!((a.dlq, a.dlq_with_effect, a.dlq_without_effect), (2, 1, 1));
        assert_eq!(
            (a.unfinished, a.lost, a.worker_crashes, a.stale_acks),
            (1, 0, 1, 1)
        );
        // Message 3 waits from 2 s to the end at 100 s.
        assert_eq!(a.max_oldest_age, s(98.0));
        // 34 s + 0 s + the wedged handler's 60 s up to the end.
        assert_eq!(a.worker_busy, s(94.0));
        assert_eq!(a.last_handler_end, s(34.0));
    }

    #[test]
    fn late_counts_first_effects_strictly_after_the_bound() {
        // Bound 300 s. Message 1: first effect exactly 300 s after publish (on time), a duplicate
        // at 900 s does not matter. Message 2: 301 s (late). Message 3: no effect (not late).
        let mut r = Rec::new(30.0, 1);
        let (m1, m2, _m3) = (r.publish(0.0), r.publish(10.0), r.publish(20.0));
        r.effect(900.0, Some(m1), 1, 2)
            .effect(300.0, Some(m1), 1, 1)
            .effect(311.0, Some(m2), 1, 1);
        let r = r.finish(1000.0);
        assert_eq!(counts(&r, s(300.0)).late, 1);
        assert_eq!(counts(&r, s(299.0)).late, 2);
        assert_eq!(counts(&r, s(301.0)).late, 0);
    }

    #[test]
    fn effects_for_unknown_keys_are_counted_apart() {
        let mut r = Rec::new(30.0, 1);
        let m = r.publish(0.0);
        r.effect(1.0, Some(m), 1, 1)
            .effect(2.0, None, 1, 1)
            .effect(3.0, Some(7), 1, 1);
        let a = counts(&r.finish(5.0), s(300.0));
        assert_eq!(
            (a.effects, a.unknown_key_effects, a.duplicate_effects),
            (1, 2, 0)
        );
    }

    #[test]
    fn max_oldest_age_follows_a_redriven_message_back_into_the_queue() {
        // Message 1: published 0 s, DLQ at 90 s, redriven at 200 s, deleted at 210 s: its last
        // stretch in the queue ends 210 s after publish. Message 2: 100 s..105 s. Message 3:
        // published 150 s, still visible at the end (300 s): 150 s.
        let mut r = Rec::new(30.0, 1);
        let (m1, m2, _m3) = (r.publish(0.0), r.publish(100.0), r.publish(150.0));
        r.deliver(60.0, m1, 1, 1).dead_letter(90.0, m1, 1);
        r.deliver(100.0, m2, 1, 1)
            .ack(105.0, m2, 1, 1, AckOutcome::Deleted);
        r.redrive(200.0, m1)
            .deliver(200.0, m1, 1, 1)
            .ack(210.0, m1, 1, 1, AckOutcome::Deleted);
        let a = counts(&r.finish(300.0), s(300.0));
        assert_eq!(a.max_oldest_age, s(210.0));
        assert_eq!((a.dlq, a.unfinished, a.redeliveries, a.lost), (0, 1, 0, 2));
    }

    #[test]
    fn retries_are_calls_beyond_the_first_within_one_delivery() {
        use CallOutcome::*;
        let mut r = Rec::new(30.0, 2);
        let (m1, m2) = (r.publish(0.0), r.publish(0.0));
        // Message 1, delivery 1: three calls (2 retries); delivery 2: one call.
        r.call(0.0, Some(1.0), Some(m1), 1, 1, Error(503));
        r.call(2.0, Some(3.0), Some(m1), 1, 1, Error(503));
        r.call(7.0, Some(8.0), Some(m1), 1, 1, Accepted);
        r.call(31.0, Some(32.0), Some(m1), 2, 2, Accepted);
        // Message 2: two calls in delivery 1 (1 retry); after a redrive at 50 s its delivery 1
        // is a new delivery: one call, no retry.
        r.call(0.0, None, Some(m2), 2, 1, TimedOut).call(
            10.0,
            Some(11.0),
            Some(m2),
            2,
            1,
            Accepted,
        );
        r.redrive(50.0, m2)
            .call(60.0, Some(61.0), Some(m2), 1, 1, Accepted);
        // Calls for an unknown key, or outside a delivery, are nobody's retries.
        r.call(5.0, Some(6.0), None, 1, 1, Accepted)
            .call(6.0, Some(7.0), None, 1, 1, Accepted);
        r.call(5.0, Some(6.0), Some(m1), 1, 0, Accepted).call(
            6.0,
            Some(7.0),
            Some(m1),
            1,
            0,
            Accepted,
        );
        assert_eq!(handler_retries(&r.finish(100.0)), 3);
    }

    #[test]
    fn a_message_is_done_once_it_had_its_effect_and_an_ack_deleted_it() {
        // Slow handler under reject: three effects, every ack stale, the message in the DLQ:
        // never done. Under delete: delivery 1's stale ack at 34 s deletes it after the email
        // at 0 s: done at 34 s.
        let per = per_message(&slow_handler(StaleAck::Reject));
        assert_eq!((per[0].acked_at, per[0].done_at()), (None, None));
        let per = per_message(&slow_handler(StaleAck::Delete));
        assert_eq!(per[0].done_at(), Some(s(34.0)));
        // Ack before work: message 1 acked at 0 s but lost (no effect): not done; message 2
        // acked at 1 s, email at 1 s: done at 1 s; the refused poison message has no effect.
        let per = per_message(&ack_before_work());
        let done: Vec<_> = per.iter().map(MessageAccount::done_at).collect();
        assert_eq!(done, vec![None, Some(s(1.0)), None]);
        // An effect after the ack (ack first, email 5 s later): done at the effect.
        let mut r = Rec::new(30.0, 1);
        let m = r.publish(0.0);
        r.deliver(2.0, m, 1, 1)
            .ack(2.0, m, 1, 1, AckOutcome::Deleted)
            .effect(7.0, Some(m), 1, 1);
        assert_eq!(per_message(&r.finish(10.0))[0].done_at(), Some(s(7.0)));
    }

    #[test]
    fn an_empty_run_counts_nothing() {
        let a = counts(&RunRecord::default(), s(300.0));
        assert_eq!(
            a,
            Accounting {
                late_after: s(300.0),
                ..Accounting::default()
            }
        );
    }
}
