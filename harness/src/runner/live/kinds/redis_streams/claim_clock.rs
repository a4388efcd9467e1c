//! When a built-in target's Redis client scans the pending entries list for an entry to claim
//! ([`super::queue`]): not at every receive, but when an entry can have become claimable since
//! its last scan, and after an empty read.
//!
//! A scan started at `s` sees every entry delivered before it, and each one's due instant (the
//! claim rule's [`ClaimRule::wait_ms`]); an entry delivered after it has been idle for less than
//! `now - s`, so it cannot be claimable before `s`'s own first claim instant (`s + min_idle`,
//! on the next tick). The next scan is due at the earliest of those: the client claims at the
//! same instant as one that scanned at every receive. An entry handed back (its idle time set
//! so that it is claimable after the hand-back's delay) is the one thing that can become
//! claimable sooner: each hand-back of the run's built-in clients is noted in [`HandBacks`],
//! which they share, and a client whose last scan came before a noted instant that has passed
//! scans again. An XCLAIM by another consumer (a claim, a heartbeat) only makes an entry
//! claimable later, so a scan due earlier is harmless.

use std::sync::{Mutex, PoisonError};

use super::rule::ClaimRule;

/// The instants (Unix ms) at which entries handed back by the run's built-in clients become
/// claimable, until a scan after them found nothing left to claim.
#[derive(Debug, Default)]
pub struct HandBacks(Mutex<Vec<u64>>);

impl HandBacks {
    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<u64>> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// An entry handed back becomes claimable at `due_ms`.
    pub fn note(&self, due_ms: u64) {
        self.lock().push(due_ms);
    }

    /// The earliest noted instant after `after_ms`.
    fn next_after(&self, after_ms: u64) -> Option<u64> {
        self.lock().iter().copied().filter(|&d| d > after_ms).min()
    }

    /// A scan started at `ms` found nothing to claim: every entry claimable by then is taken.
    fn seen_until(&self, ms: u64) {
        self.lock().retain(|&d| d > ms);
    }
}

/// One client's schedule of scans.
#[derive(Debug, Clone, Copy, Default)]
pub struct ClaimClock {
    /// When the last scan started (Unix ms); `None`: never, or a scan is wanted at once.
    last_scan_ms: Option<u64>,
    /// When the next scan is due, from the last one.
    next_scan_ms: u64,
}

impl ClaimClock {
    /// Whether a scan is due at `now_ms`.
    pub fn due(&self, now_ms: u64, hand_backs: &HandBacks) -> bool {
        self.wait_ms(now_ms, hand_backs) == 0
    }

    /// How long from `now_ms` until the next scan is due (0: now).
    pub fn wait_ms(&self, now_ms: u64, hand_backs: &HandBacks) -> u64 {
        let Some(last) = self.last_scan_ms else {
            return 0;
        };
        let due = match hand_backs.next_after(last) {
            Some(h) => h.min(self.next_scan_ms),
            None => self.next_scan_ms,
        };
        due.saturating_sub(now_ms)
    }

    /// A scan started at `started_ms` claimed nothing; the earliest pending entry it saw
    /// becomes claimable in `pending_wait_ms` (`None`: none was pending).
    pub fn scanned(
        &mut self,
        started_ms: u64,
        pending_wait_ms: Option<u64>,
        rule: &ClaimRule,
        hand_backs: &HandBacks,
    ) {
        let newer = rule.wait_ms(started_ms, 0);
        let wait = pending_wait_ms.map_or(newer, |w| w.min(newer));
        self.last_scan_ms = Some(started_ms);
        self.next_scan_ms = started_ms + wait;
        hand_backs.seen_until(started_ms);
    }

    /// Scan at the next receive: a claim was made (more may be claimable), a read came back
    /// empty, or this client handed an entry back.
    pub fn scan_next(&mut self) {
        self.last_scan_ms = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const RULE: ClaimRule = ClaimRule {
        min_idle_ms: 1000,
        claim_every_ms: 0,
        max_deliveries: 0,
        start_ms: 0,
    };

    #[test]
    fn a_new_client_scans_at_once() {
        let h = HandBacks::default();
        assert!(ClaimClock::default().due(5_000, &h));
    }

    #[test]
    fn the_next_scan_is_the_earliest_pending_due_or_a_min_idle_after_the_scan() {
        let h = HandBacks::default();
        let mut c = ClaimClock::default();
        // Scanned at 10 000: the earliest pending entry is claimable in 300 ms, at 10 300.
        c.scanned(10_000, Some(300), &RULE, &h);
        assert!(!c.due(10_299, &h));
        assert_eq!(c.wait_ms(10_100, &h), 200);
        assert!(c.due(10_300, &h));
        // Nothing pending: an entry delivered after 10 000 is claimable at 11 000 at the
        // earliest (idle 1000 ms).
        c.scanned(10_000, None, &RULE, &h);
        assert_eq!(c.wait_ms(10_000, &h), 1000);
        // A pending entry due after that changes nothing: 11 000 still comes first.
        c.scanned(10_000, Some(4000), &RULE, &h);
        assert_eq!(c.wait_ms(10_000, &h), 1000);
    }

    #[test]
    fn with_a_tick_the_next_scan_waits_for_the_first_tick_after_min_idle() {
        let rule = ClaimRule {
            claim_every_ms: 1500,
            ..RULE
        };
        let h = HandBacks::default();
        let mut c = ClaimClock::default();
        // Scanned at 10 000 with nothing pending: an entry delivered now reaches min_idle at
        // 11 000; ticks are multiples of 1500 from 0, so the first at or after it is 12 000.
        c.scanned(10_000, None, &rule, &h);
        assert_eq!(c.wait_ms(10_000, &h), 2000);
    }

    #[test]
    fn a_hand_back_after_the_last_scan_brings_the_next_scan_forward() {
        let h = HandBacks::default();
        let mut c = ClaimClock::default();
        c.scanned(10_000, None, &RULE, &h);
        // Another client hands an entry back at 10 050, claimable 100 ms later (10 150).
        h.note(10_150);
        assert_eq!(c.wait_ms(10_050, &h), 100);
        assert!(c.due(10_150, &h));
        // A scan at 10 200 that finds nothing left forgets it: back to 10 200 + 1000.
        c.scanned(10_200, None, &RULE, &h);
        assert_eq!(c.wait_ms(10_200, &h), 1000);
    }

    #[test]
    fn after_a_claim_or_an_empty_read_the_client_scans_again() {
        let h = HandBacks::default();
        let mut c = ClaimClock::default();
        c.scanned(10_000, Some(500), &RULE, &h);
        c.scan_next();
        assert!(c.due(10_001, &h));
    }
}
