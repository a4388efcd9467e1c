//! A FIFO queue's deduplication: a send whose deduplication id was accepted less than `window`
//! ago is dropped (the sender is told it succeeded, nothing is enqueued).
//!
//! As SQS documents it: the interval counts from the first accepted send of an id, not from the
//! last repeat; repeats inside it do not extend it; and the id is remembered for the whole
//! interval even if its message was received and deleted meanwhile. A send at exactly
//! `first + window` is past the interval and accepted, and starts a new interval.

use std::collections::{HashMap, VecDeque};

use crate::record::{Nanos, Seq};

/// The deduplication ids seen within the window, and when each was first accepted.
#[derive(Debug, Clone)]
pub struct Deduplicator {
    window: Nanos,
    /// id -> the message its accepted send became (0 until [`Deduplicator::accepted`] says).
    accepted_at: HashMap<String, Seq>,
    /// (interval end, id) in acceptance order, so expired ids are forgotten from the front.
    expiries: VecDeque<(Nanos, String)>,
    dropped: u64,
}

impl Deduplicator {
    pub fn new(window: Nanos) -> Deduplicator {
        Deduplicator {
            window,
            accepted_at: HashMap::new(),
            expiries: VecDeque::new(),
            dropped: 0,
        }
    }

    /// Whether a send of `id` at `now` is enqueued (`true`) or dropped as a duplicate. Times
    /// must not go backwards between calls.
    pub fn admit(&mut self, now: Nanos, id: &str) -> bool {
        self.forget_expired(now);
        if self.accepted_at.contains_key(id) {
            self.dropped += 1;
            return false;
        }
        let end = now.saturating_add(self.window);
        self.accepted_at.insert(id.to_string(), 0);
        self.expiries.push_back((end, id.to_string()));
        true
    }

    /// The send of `id` that [`Deduplicator::admit`] let through became message `seq`.
    pub fn accepted(&mut self, id: &str, seq: Seq) {
        if let Some(s) = self.accepted_at.get_mut(id) {
            *s = seq;
        }
    }

    /// The message the accepted send of `id` became, while `id` is remembered.
    pub fn message_of(&self, id: &str) -> Option<Seq> {
        self.accepted_at.get(id).copied()
    }

    /// Sends dropped so far.
    #[cfg(test)]
    pub fn dropped(&self) -> u64 {
        self.dropped
    }

    /// Ids still within their interval at the last call.
    #[cfg(test)]
    pub fn remembered(&self) -> usize {
        self.accepted_at.len()
    }

    fn forget_expired(&mut self, now: Nanos) {
        // Every interval has the same length, so they end in acceptance order.
        while let Some((end, _)) = self.expiries.front() {
            if *end > now {
                break;
            }
            if let Some((_, id)) = self.expiries.pop_front() {
                self.accepted_at.remove(&id);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const M: Nanos = 60_000_000_000;

    #[test]
    fn the_window_counts_from_the_first_accepted_send() {
        // Window 5m. Sends of one id at 0, 1, 3, 7 and 11 minutes: 0 accepted (interval 0..5m);
        // 1 and 3 dropped (inside it, and they do not extend it); 7 accepted (past 5m; new
        // interval 7..12m); 11 dropped (inside 7..12m). Two accepted (0, 7), three dropped.
        let mut d = Deduplicator::new(5 * M);
        let admitted: Vec<bool> = [0, 1, 3, 7, 11]
            .iter()
            .map(|&t| d.admit(t * M, "k"))
            .collect();
        assert_eq!(admitted, vec![true, false, false, true, false]);
        assert_eq!(d.dropped(), 3);
    }

    #[test]
    fn a_send_at_the_end_of_the_window_is_accepted() {
        // Interval [0, 5m): a repeat at 5m - 1 ns is dropped, one at exactly 5m accepted.
        let mut d = Deduplicator::new(5 * M);
        assert!(d.admit(0, "k"));
        d.accepted("k", 7);
        assert!(!d.admit(5 * M - 1, "k"));
        assert_eq!(d.message_of("k"), Some(7));
        assert!(d.admit(5 * M, "k"));
    }

    #[test]
    fn ids_are_independent_and_forgotten_after_their_window() {
        // a at 0 (until 5m), b at 2m (until 7m). At 6m a is forgotten and accepted again, b is
        // still remembered and dropped; at 6m the table holds b and the new a.
        let mut d = Deduplicator::new(5 * M);
        assert!(d.admit(0, "a"));
        assert!(d.admit(2 * M, "b"));
        assert!(!d.admit(4 * M, "a"));
        assert!(d.admit(6 * M, "a"));
        assert!(!d.admit(6 * M, "b"));
        assert_eq!((d.remembered(), d.dropped()), (2, 2));
    }

    #[test]
    fn a_ten_minute_window_drops_every_retry_of_the_domain_example() {
        // Attempts at 0, 1, 3, 7 minutes against 10 minutes: only the first is accepted.
        let mut d = Deduplicator::new(10 * M);
        let admitted: Vec<bool> = [0, 1, 3, 7].iter().map(|&t| d.admit(t * M, "k")).collect();
        assert_eq!(admitted, vec![true, false, false, false]);
    }
}
