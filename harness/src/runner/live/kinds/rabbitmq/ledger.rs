//! What the run knows of its messages on RabbitMQ, from its own publishing, the proxies and the
//! dead-letter queue's consumer: deliveries per message (RabbitMQ tells a classic queue's
//! consumer only `redelivered`, so the proxies count them), the messages whose ack the broker
//! took, the messages that reached the dead-letter queue, the deliveries workers hold now, and
//! the copies a consumer published again itself (a retry) that no worker has taken from the
//! run's queue yet: in a delay queue, held by the framework, or waiting in the queue.

use std::collections::{HashMap, HashSet};
use std::sync::Mutex;
use std::time::Instant;

use crate::record::{AckOutcome, Nanos, Seq};

#[derive(Debug, Default)]
pub struct Ledger {
    inner: Mutex<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    published: u64,
    deliveries: HashMap<Seq, u32>,
    acked: HashSet<Seq>,
    dead: HashSet<Seq>,
    /// Deliveries on an open channel not yet acked, nacked or returned.
    held: u64,
    /// When each message last went back to the queue (profile time).
    returned_at: HashMap<Seq, Nanos>,
    /// Copies of a message its consumer published again (to the queue or a delay queue) not yet
    /// delivered from the run's queue, by seq.
    elsewhere: HashMap<Seq, u32>,
    /// When the latest return happened (wall time): the server requeues a moment later.
    last_return: Option<Instant>,
    /// When the server confirmed the latest publish (wall time): a count of the queue read
    /// before then does not show that message.
    last_publish: Option<Instant>,
}

impl Ledger {
    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The server confirmed a publish (it is in the queue now).
    pub fn published(&self) {
        let mut g = self.lock();
        g.published += 1;
        g.last_publish = Some(Instant::now());
    }

    /// When the server confirmed the latest publish, if any.
    pub fn last_publish(&self) -> Option<Instant> {
        self.lock().last_publish
    }

    /// Published messages no proxy has seen delivered yet. Such a message is in the queue or on
    /// its way to a worker (sent by the server, its frames not read yet): never dropped, since
    /// the server drops only a message coming back from a delivery.
    pub fn never_delivered(&self) -> u64 {
        let g = self.lock();
        g.published.saturating_sub(g.deliveries.len() as u64)
    }

    /// A delivery of `seq` left the broker for a worker: its delivery number (1 = first).
    pub fn delivered(&self, seq: Seq) -> u32 {
        let mut g = self.lock();
        g.held += 1;
        let n = g.deliveries.entry(seq).or_insert(0);
        *n += 1;
        *n
    }

    /// Deliveries of `seq` so far.
    pub fn deliveries(&self, seq: Seq) -> u32 {
        self.lock().deliveries.get(&seq).copied().unwrap_or(0)
    }

    /// A held delivery ended: acked on its open channel, nacked, or returned by a close.
    pub fn settled(&self, seq: Seq, acked: bool) {
        let mut g = self.lock();
        g.held = g.held.saturating_sub(1);
        if acked {
            g.acked.insert(seq);
        }
    }

    /// What the broker does with an ack of `seq` whose channel is closed: nothing, and the
    /// client is told (its channel is gone): refused, or a no-op when the message is gone.
    pub fn stale_outcome(&self, seq: Seq) -> AckOutcome {
        let g = self.lock();
        if g.acked.contains(&seq) || g.dead.contains(&seq) {
            AckOutcome::StaleGone
        } else {
            AckOutcome::StaleRejected
        }
    }

    /// A consumer published `seq` again, to the run's queue or a delay queue: the message is
    /// not settled until that copy is.
    pub fn republished(&self, seq: Seq) {
        let mut g = self.lock();
        g.acked.remove(&seq);
        *g.elsewhere.entry(seq).or_insert(0) += 1;
    }

    /// A copy a consumer published is gone from where it waited: delivered from the run's
    /// queue, or acked where the framework held it (a delay queue's copy moved on).
    pub fn copy_taken(&self, seq: Seq) {
        let mut g = self.lock();
        if let Some(n) = g.elsewhere.get_mut(&seq) {
            *n -= 1;
            if *n == 0 {
                g.elsewhere.remove(&seq);
            }
        }
    }

    /// Copies consumers published that are still waiting somewhere (a delay queue, a
    /// framework's hold, the run's queue).
    pub fn copies_waiting(&self) -> u64 {
        self.lock().elsewhere.values().map(|&n| u64::from(n)).sum()
    }

    /// `seq` reached the dead-letter queue: true the first time.
    pub fn dead_lettered(&self, seq: Seq) -> bool {
        self.lock().dead.insert(seq)
    }

    /// Messages published and neither acked nor dead-lettered.
    pub fn unsettled(&self) -> u64 {
        let g = self.lock();
        let done = g.acked.union(&g.dead).count() as u64;
        g.published.saturating_sub(done)
    }

    /// `seq` went back to the queue at `at` (a nack with requeue, its channel or connection
    /// closed).
    pub fn returned(&self, seq: Seq, at: Nanos) {
        let mut g = self.lock();
        g.returned_at.insert(seq, at);
        g.last_return = Some(Instant::now());
    }

    /// When the latest return happened (wall time), if any did.
    pub fn last_return(&self) -> Option<Instant> {
        self.lock().last_return
    }

    /// The published messages neither acked nor dead-lettered, with the delivery number they
    /// reached and when they last went back to the queue, in that order.
    pub fn unsettled_messages(&self) -> Vec<(Nanos, Seq, u32)> {
        let g = self.lock();
        let mut v: Vec<_> = (1..=g.published as Seq)
            .filter(|s| !g.acked.contains(s) && !g.dead.contains(s))
            .map(|s| {
                let at = g.returned_at.get(&s).copied().unwrap_or(0);
                (at, s, g.deliveries.get(&s).copied().unwrap_or(0))
            })
            .collect();
        v.sort_unstable();
        v
    }

    pub fn dead_count(&self) -> u64 {
        self.lock().dead.len() as u64
    }

    pub fn held(&self) -> u64 {
        self.lock().held
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_message_is_unsettled_until_acked_or_dead_lettered() {
        let l = Ledger::default();
        for _ in 0..3 {
            l.published();
        }
        // seq 1: delivered twice (a return between), then acked; seq 2 dead-lettered after one
        // delivery; seq 3 never delivered: 3 - 2 = 1 unsettled.
        assert_eq!(l.delivered(1), 1);
        l.settled(1, false);
        assert_eq!(l.delivered(1), 2);
        l.settled(1, true);
        assert_eq!(l.delivered(2), 1);
        l.settled(2, false);
        assert!(l.dead_lettered(2));
        assert!(!l.dead_lettered(2));
        assert_eq!((l.unsettled(), l.dead_count(), l.held()), (1, 1, 0));
        assert_eq!(l.never_delivered(), 1);
        assert_eq!(l.stale_outcome(1), AckOutcome::StaleGone);
        assert_eq!(l.stale_outcome(3), AckOutcome::StaleRejected);
    }

    #[test]
    fn a_return_is_remembered_with_when_it_happened() {
        // No return yet: nothing for the server to requeue. Then seq 1 returns at profile
        // time 5: it is unsettled (published once, never acked), with its return time, and the
        // wall time of that return is kept for the grace before the server's count shows it.
        let l = Ledger::default();
        assert!(l.last_publish().is_none());
        l.published();
        assert!(l.last_return().is_none());
        assert!(l.last_publish().is_some());
        assert_eq!(l.never_delivered(), 1);
        let before = Instant::now();
        assert_eq!(l.delivered(1), 1);
        assert_eq!(l.never_delivered(), 0);
        l.settled(1, false);
        l.returned(1, 5);
        assert!(l.last_return().is_some_and(|r| r >= before));
        assert_eq!(l.unsettled_messages(), [(5, 1, 1)]);
    }
}
