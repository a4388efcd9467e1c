//! `workload.arrival: { ramp: ... }`: a rate that climbs in steps, each held for `hold`, to find
//! the rate a consumer can sustain (a capacity run, `metrics::capacity`).
//!
//! Step `k` (0-based) publishes at `from + k * step` messages per second, with uniform gaps,
//! from `k * hold` to `(k + 1) * hold`; its first message at the step's start. The instants are
//! made here, so the plan, the run and the capacity metric read one arithmetic.

use std::time::Duration;

/// A validated ramp: `steps` steps of `hold` each, the first at `from_per_s`.
#[derive(Debug, Clone, PartialEq)]
pub struct Ramp {
    /// The first step's rate, messages per second.
    pub from_per_s: f64,
    /// How much each step adds, messages per second.
    pub step_per_s: f64,
    /// The number of steps (at least 1): every rate `from + k * step` not above `to`.
    pub steps: u32,
    /// How long each step lasts.
    pub hold: Duration,
}

impl Ramp {
    /// The rate of step `k` (0-based), messages per second.
    pub fn rate(&self, k: u32) -> f64 {
        self.from_per_s + f64::from(k) * self.step_per_s
    }

    /// Every step's rate, in order.
    pub fn rates(&self) -> Vec<f64> {
        (0..self.steps).map(|k| self.rate(k)).collect()
    }

    /// How long the whole ramp lasts (`steps * hold`; saturating).
    pub fn length(&self) -> Duration {
        self.hold.checked_mul(self.steps).unwrap_or(Duration::MAX)
    }

    /// `hold` in nanoseconds (saturating).
    pub fn hold_nanos(&self) -> u64 {
        u64::try_from(self.hold.as_nanos()).unwrap_or(u64::MAX)
    }

    /// The gap between two publishes of step `k`, in nanoseconds.
    pub fn gap_nanos(&self, k: u32) -> f64 {
        1e9 / self.rate(k)
    }

    /// The offset of publish `j` of step `k` from the step's start, in nanoseconds (truncated,
    /// as every instant of the ramp is).
    pub fn offset(&self, k: u32, j: u64) -> u64 {
        (j as f64 * self.gap_nanos(k)) as u64
    }

    /// The publishes of step `k` whose offset is below `limit` nanoseconds: the `j` with
    /// [`Ramp::offset`]`(k, j) < limit`.
    pub fn publishes_below(&self, k: u32, limit: u64) -> u64 {
        if limit == 0 {
            return 0;
        }
        let gap = self.gap_nanos(k);
        // Close to ceil(limit / gap); moved by at most one either way to agree with `offset`.
        let mut n = (limit as f64 / gap).ceil().max(1.0) as u64;
        while n > 1 && self.offset(k, n - 1) >= limit {
            n -= 1;
        }
        while self.offset(k, n) < limit {
            n += 1;
        }
        n
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ramp(from: f64, step: f64, steps: u32, hold_s: u64) -> Ramp {
        Ramp {
            from_per_s: from,
            step_per_s: step,
            steps,
            hold: Duration::from_secs(hold_s),
        }
    }

    #[test]
    fn rates_climb_by_the_step() {
        // 100, 120, 140: three steps of 20 s, 60 s in all.
        let r = ramp(100.0, 20.0, 3, 20);
        assert_eq!(r.rates(), vec![100.0, 120.0, 140.0]);
        assert_eq!(r.length(), Duration::from_secs(60));
    }

    #[test]
    fn a_step_publishes_rate_times_hold() {
        // 100/s for 20 s: a gap of 10 ms, offsets 0 to 19.99 s: 2,000 publishes.
        let r = ramp(100.0, 20.0, 3, 20);
        assert_eq!(r.publishes_below(0, 20_000_000_000), 2_000);
        // 120/s: 2,400; 140/s: 2,800.
        assert_eq!(r.publishes_below(1, 20_000_000_000), 2_400);
        assert_eq!(r.publishes_below(2, 20_000_000_000), 2_800);
        // 3/s for 1 s (a gap of 333,333,333.3 ns): offsets 0, 333,333,333 and 666,666,666.
        let odd = ramp(3.0, 1.0, 1, 1);
        assert_eq!(odd.publishes_below(0, 1_000_000_000), 3);
        assert_eq!(odd.offset(0, 2), 666_666_666);
        // Below 333,333,334 ns: offsets 0 and 333,333,333; below 333,333,333: only 0.
        assert_eq!(odd.publishes_below(0, 333_333_334), 2);
        assert_eq!(odd.publishes_below(0, 333_333_333), 1);
        assert_eq!(odd.publishes_below(0, 0), 0);
    }
}
