//! Restart back-off: a worker that crashes soon after it started is restarted later and later,
//! so a consumer that cannot run (a wrong command, a missing module, `/bin/true`) does not
//! restart thousands of times a second.
//!
//! The rule, in wall time (the cost of a restart storm is the machine's, whatever the run's
//! time scale): a crash less than [`QUICK_EXIT`] after the worker started is a quick exit. After
//! the n-th quick exit in a row the worker waits `max(restart_after, min(FIRST_DELAY x 2^(n-1),
//! MAX_DELAY))` before it starts again: 100 ms, 200 ms, 400 ms, ... 6.4 s, then 10 s each time.
//! A worker that ran for at least [`QUICK_EXIT`], or that a chaos rule killed, is restarted after
//! `restart_after` as before, and its count of quick exits starts again from 0.

use std::time::Duration;

/// A crash sooner than this after the worker started is a quick exit.
pub const QUICK_EXIT: Duration = Duration::from_secs(1);
/// The wait after the first quick exit.
pub const FIRST_DELAY: Duration = Duration::from_millis(100);
/// The longest wait.
pub const MAX_DELAY: Duration = Duration::from_secs(10);

/// One worker's quick exits in a row.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Backoff {
    quick_exits: u32,
}

impl Backoff {
    /// The wait before the next start of a worker whose incarnation ran for `ran` and then
    /// crashed (`crashed`) or was killed, with the profile's `restart_after` (wall time).
    pub fn next_delay(
        &mut self,
        ran: Duration,
        crashed: bool,
        restart_after: Duration,
    ) -> Duration {
        if !crashed || ran >= QUICK_EXIT {
            self.quick_exits = 0;
            return restart_after;
        }
        self.quick_exits = self.quick_exits.saturating_add(1);
        let doubled = FIRST_DELAY.saturating_mul(1u32 << (self.quick_exits - 1).min(16));
        restart_after.max(doubled.min(MAX_DELAY))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn quick_crashes_double_the_wait_up_to_the_cap() {
        let mut b = Backoff::default();
        // 100 ms x 2^(n-1): 100, 200, 400, 800, 1600, 3200, 6400, then capped at 10 s.
        let waits: Vec<u64> = (0..10)
            .map(|_| b.next_delay(ms(5), true, Duration::ZERO).as_millis() as u64)
            .collect();
        assert_eq!(
            waits,
            [100, 200, 400, 800, 1600, 3200, 6400, 10_000, 10_000, 10_000]
        );
        // Many more stay at the cap (no overflow).
        for _ in 0..100 {
            assert_eq!(b.next_delay(ms(5), true, Duration::ZERO), MAX_DELAY);
        }
    }

    #[test]
    fn a_long_run_or_a_kill_resets_the_count() {
        let mut b = Backoff::default();
        let after = ms(50);
        assert_eq!(b.next_delay(ms(10), true, after), ms(100));
        assert_eq!(b.next_delay(ms(10), true, after), ms(200));
        // Ran 1 s: not a quick exit, restart_after, and the count starts again.
        assert_eq!(b.next_delay(QUICK_EXIT, true, after), after);
        assert_eq!(b.next_delay(ms(10), true, after), ms(100));
        // Killed by a chaos rule, however soon: restart_after.
        assert_eq!(b.next_delay(ms(1), false, after), after);
        assert_eq!(b.next_delay(ms(10), true, after), ms(100));
    }

    #[test]
    fn restart_after_is_the_least_wait() {
        let mut b = Backoff::default();
        // restart_after 30 s is above every back-off step: it wins.
        assert_eq!(b.next_delay(ms(1), true, ms(30_000)), ms(30_000));
        assert_eq!(b.next_delay(ms(1), true, ms(300)), ms(300)); // 200 ms < 300 ms
        assert_eq!(b.next_delay(ms(1), true, ms(300)), ms(400));
    }
}
