//! The consumer-side rules of a Redis Streams consumer (Redis has no lease timer and no DLQ):
//! claim entries idle for `min_idle` before reading new ones, on a claimer's tick of
//! `claim_every` (0: at the instant an entry qualifies), and move an entry that has had
//! `max_deliveries` deliveries to `<stream>:dead` (and ack it) instead of claiming it again.
//!
//! Every consumer of a run applies them: the built-in targets' queue ([`super::queue`]) and a
//! worker process, which reads them from its environment in WALL milliseconds (the profile's
//! durations times `run.time_scale`), with the run's start as Unix milliseconds (claim ticks
//! are multiples of `claim_every` from it, as in the sim model).

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::profile::run_variables;

/// The rules, in wall time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClaimRule {
    pub min_idle_ms: u64,
    /// 0 = claim at the instant an entry reaches `min_idle`.
    pub claim_every_ms: u64,
    /// 0 = no limit.
    pub max_deliveries: u32,
    /// The run's start (profile time 0), Unix milliseconds.
    pub start_ms: u64,
}

impl ClaimRule {
    /// The environment a worker process reads them from.
    pub fn env(&self) -> Vec<(String, String)> {
        [
            (run_variables::MIN_IDLE_MS, self.min_idle_ms),
            (run_variables::CLAIM_EVERY_MS, self.claim_every_ms),
            (
                run_variables::MAX_DELIVERIES,
                u64::from(self.max_deliveries),
            ),
            (run_variables::RUN_START_MS, self.start_ms),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
    }

    /// The latest claim tick at or before `now_ms`.
    fn last_tick(&self, now_ms: u64) -> u64 {
        match self.claim_every_ms {
            0 => now_ms,
            every => {
                let since = now_ms.saturating_sub(self.start_ms);
                self.start_ms + since / every * every
            }
        }
    }

    /// The first claim tick at or after `at_ms`.
    fn next_tick(&self, at_ms: u64) -> u64 {
        match self.claim_every_ms {
            0 => at_ms,
            every => {
                let since = at_ms.saturating_sub(self.start_ms);
                self.start_ms + since.div_ceil(every) * every
            }
        }
    }

    /// The idle time an entry needs at `now_ms` to be claimable: it reached `min_idle` at or
    /// before the latest tick (XPENDING `IDLE` and XCLAIM's min-idle-time take this).
    pub fn claim_idle_ms(&self, now_ms: u64) -> u64 {
        self.min_idle_ms + (now_ms - self.last_tick(now_ms))
    }

    /// How long from `now_ms` until an entry idle for `idle_ms` becomes claimable.
    pub fn wait_ms(&self, now_ms: u64, idle_ms: u64) -> u64 {
        let since = now_ms.saturating_sub(idle_ms);
        self.next_tick(since + self.min_idle_ms)
            .saturating_sub(now_ms)
    }

    /// True when an entry with `deliveries` deliveries goes to the dead stream instead.
    pub fn is_dead(&self, deliveries: u64) -> bool {
        self.max_deliveries > 0 && deliveries >= u64::from(self.max_deliveries)
    }
}

/// Unix milliseconds now.
pub fn unix_ms() -> u64 {
    unix_ms_of(SystemTime::now())
}

pub fn unix_ms_of(t: SystemTime) -> u64 {
    t.duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// Whole wall milliseconds of `d`, rounded to the nearest (at least 1 for a non-zero `d`).
pub fn wall_ms(d: Duration) -> u64 {
    let ms = (d.as_secs_f64() * 1000.0).round() as u64;
    if ms == 0 && !d.is_zero() {
        1
    } else {
        ms
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn without_a_tick_an_entry_is_claimable_once_idle_for_min_idle() {
        let r = ClaimRule {
            min_idle_ms: 1500,
            claim_every_ms: 0,
            max_deliveries: 3,
            start_ms: 10_000,
        };
        assert_eq!(r.claim_idle_ms(12_345), 1500);
        // Idle for 1000 ms: claimable in 500 ms.
        assert_eq!(r.wait_ms(12_000, 1000), 500);
        assert_eq!(r.wait_ms(12_000, 2000), 0);
        // Deliveries 1 and 2 are claimed again; the third goes to the dead stream.
        assert!(!r.is_dead(2) && r.is_dead(3));
    }

    #[test]
    fn with_a_tick_an_entry_is_claimable_from_the_first_tick_after_min_idle() {
        // Ticks every 1000 ms from 10 000: 11 000, 12 000, ...
        let r = ClaimRule {
            min_idle_ms: 1500,
            claim_every_ms: 1000,
            max_deliveries: 0,
            start_ms: 10_000,
        };
        // At 12 300 the latest tick is 12 000: an entry must have been idle 1500 ms then, so
        // 1800 ms now.
        assert_eq!(r.claim_idle_ms(12_300), 1800);
        // Idle since 10 600 (700 ms at 11 300): reaches min_idle at 12 100, tick at 13 000.
        assert_eq!(r.wait_ms(11_300, 700), 1700);
        assert!(!r.is_dead(100));
    }
}
