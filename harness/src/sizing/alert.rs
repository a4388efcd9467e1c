//! The age-of-oldest-message alert threshold.
//!
//! A healthy run (the profile without provider phases, chaos or poison) shows how old the oldest
//! message gets when nothing is wrong; the threshold is twice that, and never below the longest
//! a handler may hold a message (the lease, plus the maximum extension with a heartbeat: older
//! than that, a message has outlived a handler or waited for a worker), rounded up to a
//! readable value. It "would have fired" on a run whose oldest message got older than it.

use std::time::Duration;

use super::lease::SQS_MAX_LEASE;
use super::readable;

/// The threshold for a healthy run's largest oldest-message age and the longest a handler may
/// hold a message.
pub fn threshold(healthy_max_oldest_age: Duration, longest_hold: Duration) -> Duration {
    let want = (healthy_max_oldest_age * 2).max(longest_hold);
    readable::round_up(want).unwrap_or(SQS_MAX_LEASE)
}

/// Whether an alert at `threshold` fires on a run whose oldest message reached `max_oldest_age`.
pub fn would_fire(threshold: Duration, max_oldest_age: Duration) -> bool {
    max_oldest_age > threshold
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(x: u64) -> Duration {
        Duration::from_secs(x)
    }

    #[test]
    fn twice_the_healthy_age_and_at_least_the_lease() {
        assert_eq!(threshold(Duration::from_millis(2_100), s(60)), s(60));
        assert_eq!(threshold(s(40), s(30)), s(90));
        assert_eq!(threshold(s(10), s(5)), s(20));
    }

    #[test]
    fn it_fires_when_the_oldest_message_gets_older() {
        assert!(would_fire(s(60), s(90)));
        assert!(!would_fire(s(60), s(60)));
    }
}
