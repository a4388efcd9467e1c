//! A capacity run (`workload.arrival: ramp`): per step of the ramp, the rate offered and the
//! rate completed, and the backlog age (the age of the oldest message still in the main queue,
//! published and not yet deleted or dead-lettered) at the step's start and end; from them the
//! consumer's sustainable rate.
//!
//! The rule. A step **fell behind** when the backlog age at its end exceeds the age at its
//! start by more than the slack: `max(hold / 50, 2 x handler p99)`. A consumer that keeps up
//! holds the age near one handler's time whatever the rate; one that serves `c` messages a
//! second of `r > c` offered lets the oldest message wait longer by `hold x (1 - c / r)` over
//! the step, so the rule sees a consumer completing less than 98% of what it is offered (once
//! the hold is at least 100 handler p99s). The consumer **fell behind for good** at the first
//! step from which every later step fell behind too: rates only climb, so once the consumer
//! cannot keep up it never catches up again, while a step that fell behind and was followed by
//! one that kept up was a passing burst (a live run's publisher catching up with its schedule
//! at the start, a pause of the machine). The **sustainable rate** is the rate of the step
//! before that one. Where the last step kept up, the consumer kept up with its rate (the ramp
//! should go higher); where every step fell behind, it kept up with none.
//!
//! The ages are read from the run's time series (`timeseries.csv`'s `oldest_age_s`): at a
//! step's boundary, or at the last sample before it when the series is coarser than the hold.

use serde::{Deserialize, Serialize};

use super::{seconds, Sample};
use crate::record::{HarnessCpu, Nanos, RampRecord};

/// The slack is at least this fraction of a step's hold.
pub const SLACK_OF_HOLD: u64 = 50;

/// One step of the ramp, as the run went.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CapacityStep {
    /// The step's planned rate, messages per second.
    pub rate_per_s: f64,
    /// When the step started, seconds.
    pub from_s: f64,
    /// Messages published in the step, per second of its hold.
    pub offered_per_s: f64,
    /// Messages whose first effect happened in the step, per second of its hold.
    pub completed_per_s: f64,
    /// The backlog age at the step's start and end, seconds.
    pub backlog_age_start_s: f64,
    pub backlog_age_end_s: f64,
    /// The backlog age grew by more than the slack over the step.
    pub behind: bool,
    /// A live run: ackbench's own CPU over the step, in cores ([`super::harness_cpu`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub harness_cpu_share: Option<f64>,
}

/// What a capacity run found.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Capacity {
    /// How long each step lasted, seconds.
    pub hold_s: f64,
    /// How much the backlog age may grow over a step that kept up, seconds.
    pub slack_s: f64,
    /// The rate of the last step before the consumer fell behind for good; `null` when every
    /// step fell behind.
    pub sustainable_per_s: Option<f64>,
    /// The rate of the first step from which every step fell behind; `null` when the last step
    /// kept up (the consumer's capacity is above the ramp).
    pub first_behind_per_s: Option<f64>,
    /// What the consumer completed per second in that step: its throughput when it is offered
    /// more than it can take.
    pub completed_when_behind_per_s: Option<f64>,
    /// Every step that ran to its end.
    pub steps: Vec<CapacityStep>,
}

/// The capacity of a ramp run from its time series `samples` (ascending, the first at 0), the
/// handler latency's p99 in milliseconds and, in a live run, ackbench's CPU readings. Steps
/// that did not end before the run did are left out.
pub fn capacity(
    ramp: &RampRecord,
    samples: &[Sample],
    handler_p99_ms: f64,
    cpu: Option<&HarnessCpu>,
) -> Capacity {
    let hold = ramp.hold.max(1);
    let p99 = (handler_p99_ms.max(0.0) * 1e6) as Nanos;
    let slack = (hold / SLACK_OF_HOLD).max(p99.saturating_mul(2));
    let end = samples.last().map_or(0, |s| s.t);
    let mut steps = Vec::new();
    for (k, &rate) in ramp.rates.iter().enumerate() {
        let (from, to) = (hold * k as Nanos, hold * (k as Nanos + 1));
        if to > end {
            break;
        }
        let (Some(a), Some(b)) = (at_or_before(samples, from), at_or_before(samples, to)) else {
            break;
        };
        let per_s = |n: u64| round3(n as f64 * 1e9 / hold as f64);
        let first_effects = |s: &Sample| s.effects - s.duplicate_effects;
        steps.push(CapacityStep {
            rate_per_s: rate,
            from_s: seconds(from),
            offered_per_s: per_s(b.published - a.published),
            completed_per_s: per_s(first_effects(b).saturating_sub(first_effects(a))),
            backlog_age_start_s: seconds(a.oldest_age),
            backlog_age_end_s: seconds(b.oldest_age),
            behind: b.oldest_age > a.oldest_age.saturating_add(slack),
            harness_cpu_share: cpu.and_then(|c| super::harness_cpu::share_between(c, from, to)),
        });
    }
    // The first step of the run of behind steps that ends the ramp.
    let kept_up = steps.iter().rposition(|s| !s.behind);
    let first = match kept_up {
        Some(k) if k + 1 == steps.len() => None,
        Some(k) => Some(k + 1),
        None if steps.is_empty() => None,
        None => Some(0),
    };
    let (sustainable, first_behind, completed) = match first {
        Some(0) => (None, Some(&steps[0]), Some(steps[0].completed_per_s)),
        Some(i) => (
            Some(steps[i - 1].rate_per_s),
            Some(&steps[i]),
            Some(steps[i].completed_per_s),
        ),
        None => (steps.last().map(|s| s.rate_per_s), None, None),
    };
    Capacity {
        hold_s: seconds(hold),
        slack_s: seconds(slack),
        sustainable_per_s: sustainable,
        first_behind_per_s: first_behind.map(|s| s.rate_per_s),
        completed_when_behind_per_s: completed,
        steps,
    }
}

/// The last sample at or before `t`.
fn at_or_before(samples: &[Sample], t: Nanos) -> Option<&Sample> {
    let i = samples.partition_point(|s| s.t <= t);
    i.checked_sub(1).map(|i| &samples[i])
}

fn round3(x: f64) -> f64 {
    (x * 1e3).round() / 1e3
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: Nanos = 1_000_000_000;

    fn sample(t_s: u64, published: u64, effects: u64, oldest_ms: u64) -> Sample {
        Sample {
            t: t_s * S,
            published,
            effects,
            oldest_age: oldest_ms * 1_000_000,
            ..Sample::default()
        }
    }

    /// Three steps of 10 s at 100, 110, 120/s against a consumer that completes 110/s.
    fn three_steps() -> (RampRecord, Vec<Sample>) {
        let ramp = RampRecord {
            hold: 10 * S,
            rates: vec![100.0, 110.0, 120.0],
        };
        let samples = vec![
            sample(0, 0, 0, 0),
            // Step 1: 1,000 published, 995 done, the oldest 50 ms old (one handler).
            sample(10, 1_000, 995, 50),
            // Step 2: 1,100 more, all of them done but 5; the oldest 60 ms old.
            sample(20, 2_100, 2_095, 60),
            // Step 3: 1,200 more, 1,100 done: 105 behind at 120/s, the oldest 870 ms old.
            sample(30, 3_300, 3_195, 870),
            // The drain.
            sample(35, 3_300, 3_300, 0),
        ];
        (ramp, samples)
    }

    #[test]
    fn the_sustainable_rate_is_the_step_before_it_fell_behind_for_good() {
        let (ramp, samples) = three_steps();
        // Handler p99 40 ms: slack max(10 s / 50 = 200 ms, 2 x 40 ms = 80 ms) = 200 ms.
        let c = capacity(&ramp, &samples, 40.0, None);
        assert_eq!(c.slack_s, 0.2);
        assert_eq!(c.hold_s, 10.0);
        // Step 1: 0 -> 50 ms (+50 ms); step 2: 50 -> 60 ms (+10 ms): within 200 ms.
        // Step 3: 60 -> 870 ms (+810 ms): behind.
        let behind: Vec<bool> = c.steps.iter().map(|s| s.behind).collect();
        assert_eq!(behind, [false, false, true]);
        assert_eq!(c.sustainable_per_s, Some(110.0));
        assert_eq!(c.first_behind_per_s, Some(120.0));
        // Step 3 completed 3,195 - 2,095 = 1,100 in 10 s: 110/s.
        assert_eq!(c.completed_when_behind_per_s, Some(110.0));
        let third = &c.steps[2];
        assert_eq!(
            (third.offered_per_s, third.from_s),
            (120.0, 20.0),
            "1,200 published in 10 s, from 20 s"
        );
        assert_eq!(
            (third.backlog_age_start_s, third.backlog_age_end_s),
            (0.06, 0.87)
        );
        // Step 1: 1,000 published and 995 done in 10 s.
        assert_eq!(
            (c.steps[0].offered_per_s, c.steps[0].completed_per_s),
            (100.0, 99.5)
        );
    }

    #[test]
    fn a_live_step_says_how_busy_ackbench_was() {
        let (ramp, samples) = three_steps();
        // Readings at 0, 10, 20, 30 s on the real clock: 2, 5 and 9 CPU seconds in the three
        // 10-second steps, 0.2, 0.5 and 0.9 of a core.
        let cpu = HarnessCpu {
            readings: vec![(0, 0.0), (10 * S, 2.0), (20 * S, 7.0), (30 * S, 16.0)],
            time_scale: 1.0,
        };
        let c = capacity(&ramp, &samples, 40.0, Some(&cpu));
        let shares: Vec<Option<f64>> = c.steps.iter().map(|s| s.harness_cpu_share).collect();
        assert_eq!(shares, [Some(0.2), Some(0.5), Some(0.9)]);
    }

    #[test]
    fn a_step_that_fell_behind_and_recovered_was_a_burst() {
        let ramp = RampRecord {
            hold: 10 * S,
            rates: vec![40.0, 50.0, 60.0, 70.0],
        };
        // Step 1 ends 1.3 s behind (a late start, caught up at once), step 2 drains it, step 3
        // keeps up, step 4 falls behind (slack 200 ms).
        let samples = vec![
            sample(0, 0, 0, 0),
            sample(10, 400, 270, 1_300),
            sample(20, 900, 880, 300),
            sample(30, 1_500, 1_490, 100),
            sample(40, 2_200, 2_130, 900),
        ];
        let c = capacity(&ramp, &samples, 50.0, None);
        let behind: Vec<bool> = c.steps.iter().map(|s| s.behind).collect();
        assert_eq!(behind, [true, false, false, true]);
        // Behind for good from step 4: 60/s sustained, 70/s fell behind completing 64/s.
        assert_eq!(c.sustainable_per_s, Some(60.0));
        assert_eq!(c.first_behind_per_s, Some(70.0));
        assert_eq!(c.completed_when_behind_per_s, Some(64.0));
    }

    #[test]
    fn a_long_handler_widens_the_slack() {
        let (ramp, samples) = three_steps();
        // Handler p99 500 ms: slack max(200 ms, 1 s) = 1 s; step 3's +810 ms is within it.
        let c = capacity(&ramp, &samples, 500.0, None);
        assert_eq!(c.slack_s, 1.0);
        assert!(c.steps.iter().all(|s| !s.behind));
        // None fell behind: it kept up with the last step, 120/s, and the ramp should go on.
        assert_eq!(
            (
                c.sustainable_per_s,
                c.first_behind_per_s,
                c.completed_when_behind_per_s
            ),
            (Some(120.0), None, None)
        );
    }

    #[test]
    fn behind_from_the_first_step() {
        let ramp = RampRecord {
            hold: 10 * S,
            rates: vec![100.0, 110.0],
        };
        // 1,000 published, 500 done: the oldest is 5 s old at 10 s (slack 200 ms).
        let samples = vec![
            sample(0, 0, 0, 0),
            sample(10, 1_000, 500, 5_000),
            sample(20, 2_100, 1_000, 10_000),
        ];
        let c = capacity(&ramp, &samples, 1.0, None);
        assert_eq!(c.sustainable_per_s, None);
        assert_eq!(c.first_behind_per_s, Some(100.0));
        assert_eq!(c.completed_when_behind_per_s, Some(50.0));
    }

    #[test]
    fn duplicates_are_not_completions_and_a_coarse_series_reads_the_sample_before() {
        let ramp = RampRecord {
            hold: 10 * S,
            rates: vec![100.0, 200.0],
        };
        // Samples every 15 s to the run's end at 30 s: the boundary at 10 s reads the sample at
        // 0 s, the one at 20 s the sample at 15 s.
        let mut at15 = sample(15, 1_500, 1_400, 30);
        at15.duplicate_effects = 100;
        let samples = vec![sample(0, 0, 0, 0), at15, sample(30, 3_000, 3_000, 0)];
        let c = capacity(&ramp, &samples, 1.0, None);
        assert_eq!(c.steps.len(), 2);
        // Step 1 reads 0 s and 0 s: nothing published, nothing done.
        assert_eq!(
            (c.steps[0].offered_per_s, c.steps[0].completed_per_s),
            (0.0, 0.0)
        );
        // Step 2 reads 0 s and 15 s: 1,500 published, 1,400 - 100 duplicates = 1,300 done.
        assert_eq!(
            (c.steps[1].offered_per_s, c.steps[1].completed_per_s),
            (150.0, 130.0)
        );
    }

    #[test]
    fn a_step_the_run_did_not_finish_is_left_out() {
        let (ramp, mut samples) = three_steps();
        // The run stopped at 25 s (interrupted): steps 1 and 2 only, none behind.
        samples.truncate(3);
        samples.push(sample(25, 2_700, 2_650, 70));
        let c = capacity(&ramp, &samples, 1.0, None);
        assert_eq!(c.steps.len(), 2);
        assert_eq!(
            (c.sustainable_per_s, c.first_behind_per_s),
            (Some(110.0), None)
        );
    }
}
