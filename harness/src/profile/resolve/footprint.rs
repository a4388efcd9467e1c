//! How big a run may be: a bound on the time series a run keeps, and an estimate of the memory a
//! run holds, both checked before it starts, so that a profile that cannot run is refused by
//! `check` instead of aborting mid-run.
//!
//! The per-item sizes were measured on sim runs of the debug and release builds (peak RSS,
//! `/usr/bin/time -f %M`), with a 10 ms provider and one delivery per message:
//!
//! - a planned message of a run that keeps its full record (live runs, a modelled producer,
//!   `--record full`): 1M messages 413 MiB, 100k 69 MiB, so about 400 B each (the plan, the
//!   broker's state, the record's events, the analysis); redeliveries add to it, so the estimate
//!   is a floor;
//! - a planned message of a sim run that streams its accounting (`--record auto` or `stream`):
//!   what stays per message is a bit of the ledger's progress count and what the run holds in
//!   flight, so [`STREAMED_BYTES_PER_MESSAGE`] bounds it from above (measured:
//!   `cargo bench -p ackbench --bench sim_throughput`, docs/benchmarks.md);
//! - a worker: its task and state, about 1.3 KB: a sim run of 3 messages with 1k, 100k and 1M
//!   workers peaked at 52 MiB, 162 MiB and 1291 MiB (debug build), so
//!   (1291 - 52) MiB / 999k = 1300 B each; [`BYTES_PER_WORKER`] is 1.5 KiB, above it, so a run
//!   `check` passes holds no more than estimated (the measurement:
//!   `/usr/bin/time -f %M ackbench run small.yaml --set consumer.workers=1000000 -q`);
//! - a time-series sample: 1M samples 425 MiB, 10k 40 MiB, so about 400 B each (the sample, its
//!   CSV row and its points in every chart).

use std::time::Duration;

use crate::profile::duration::format_duration;
use crate::profile::path::FieldPath;
use crate::profile::problem::Problem;
use crate::profile::scenario::{Arrival, ConsumerSpec, RunSpec, WorkloadSpec};

/// Memory one planned message takes in a run that keeps its full record (measured, see the
/// module documentation).
pub const BYTES_PER_MESSAGE: u64 = 400;
/// Memory one planned message takes in a sim run that streams its accounting.
pub const STREAMED_BYTES_PER_MESSAGE: u64 = 16;
/// Memory one worker takes (measured 1300 B, see the module documentation).
pub const BYTES_PER_WORKER: u64 = 1536;
/// Memory one time-series sample takes.
pub const BYTES_PER_SAMPLE: u64 = 400;
/// The most a run may hold by this estimate.
pub const MAX_RUN_BYTES: u64 = 16 << 30;
/// The most time-series samples `run.sample_every` may ask for over `run.duration + run.drain`.
pub const MAX_SAMPLES: u64 = 100_000;
/// The samples a run keeps when `run.sample_every` is left out (a round interval is picked
/// from the run's length to keep under a thousand).
const DEFAULT_SAMPLES: u64 = 1000;

/// `run.sample_every` must not ask for more than [`MAX_SAMPLES`] samples over the longest run.
pub fn check_samples(
    every: Duration,
    duration: Duration,
    drain: Duration,
    path: &FieldPath,
) -> Result<(), Problem> {
    let length = duration.saturating_add(drain);
    let samples = samples_over(length, every);
    if samples <= MAX_SAMPLES {
        return Ok(());
    }
    let finest = Duration::from_nanos(
        u64::try_from(length.as_nanos().div_ceil(u128::from(MAX_SAMPLES))).unwrap_or(u64::MAX),
    );
    Err(Problem::new(
        path.clone(),
        format!(
            "{} gives {samples} samples over run.duration + run.drain ({}), more than the \
             {MAX_SAMPLES} a run keeps: sample every {} or more, or leave sample_every out",
            format_duration(every),
            format_duration(length),
            format_duration(round_up_to_ms(finest)),
        ),
    ))
}

/// Samples at 0, `every`, 2 `every`, ... up to `length`, and one at `length`.
fn samples_over(length: Duration, every: Duration) -> u64 {
    let every = every.as_nanos().max(1);
    u64::try_from(length.as_nanos().div_ceil(every))
        .unwrap_or(u64::MAX)
        .saturating_add(1)
}

fn round_up_to_ms(d: Duration) -> Duration {
    Duration::from_millis(u64::try_from(d.as_nanos().div_ceil(1_000_000)).unwrap_or(u64::MAX))
}

/// What a run of the profile will hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Footprint {
    pub messages: u64,
    /// Bytes per planned message: [`BYTES_PER_MESSAGE`] or [`STREAMED_BYTES_PER_MESSAGE`].
    pub per_message: u64,
    pub workers: u64,
    pub samples: u64,
}

impl Footprint {
    /// `streams`: the run streams its accounting (a sim run without a modelled producer).
    pub fn of(
        run: &RunSpec,
        workload: &WorkloadSpec,
        consumer: &ConsumerSpec,
        streams: bool,
    ) -> Footprint {
        // A retrying producer may publish each message up to its attempts, all unacknowledged.
        let attempts = workload
            .producer
            .as_ref()
            .map_or(1, |p| u64::from(p.backoff.max_attempts()));
        Footprint {
            messages: planned_messages(workload, run.duration).saturating_mul(attempts),
            per_message: if streams {
                STREAMED_BYTES_PER_MESSAGE
            } else {
                BYTES_PER_MESSAGE
            },
            workers: u64::from(consumer.workers),
            samples: match run.sample_every {
                Some(every) => samples_over(run.duration.saturating_add(run.drain), every),
                None => DEFAULT_SAMPLES,
            },
        }
    }

    /// The estimate, in bytes.
    pub fn bytes(&self) -> u128 {
        u128::from(self.messages) * u128::from(self.per_message)
            + u128::from(self.workers) * u128::from(BYTES_PER_WORKER)
            + u128::from(self.samples) * u128::from(BYTES_PER_SAMPLE)
    }

    /// A problem unless the estimate is within [`MAX_RUN_BYTES`]; it names the field of the
    /// largest part (`workload` is the workload section's path, `consumer` the consumer's).
    pub fn check(
        &self,
        workload: &WorkloadSpec,
        workload_path: &FieldPath,
        consumer_path: &FieldPath,
    ) -> Result<(), Problem> {
        let bytes = self.bytes();
        if bytes <= u128::from(MAX_RUN_BYTES) {
            return Ok(());
        }
        let message_bytes = u128::from(self.messages) * u128::from(self.per_message);
        let worker_bytes = u128::from(self.workers) * u128::from(BYTES_PER_WORKER);
        let (path, advice) = if worker_bytes > message_bytes {
            (consumer_path.key("workers"), "run fewer workers")
        } else if workload.count == Some(self.messages) {
            (
                workload_path.key("count"),
                "publish fewer messages (workload.count) or split the run",
            )
        } else {
            (
                workload_path.key("arrival"),
                "publish fewer messages (a slower workload.arrival, a shorter run.duration or a \
                 workload.count) or split the run",
            )
        };
        Err(Problem::new(
            path,
            format!(
                "a run of this profile would hold about {} in memory ({} planned messages x {} \
                 B + {} workers x {} B + {} samples x {} B), more than the {} a run may hold: \
                 {advice}",
                bytes_text(bytes),
                self.messages,
                self.per_message,
                self.workers,
                BYTES_PER_WORKER,
                self.samples,
                BYTES_PER_SAMPLE,
                bytes_text(u128::from(MAX_RUN_BYTES)),
            ),
        ))
    }
}

/// The messages the workload publishes: the arrivals within `duration`, capped by `count` and
/// by the number of explicit keys (what `workload::plan` makes; a Poisson rate by its mean).
pub fn planned_messages(workload: &WorkloadSpec, duration: Duration) -> u64 {
    let arrivals = match &workload.arrival {
        Arrival::Every(period) => {
            let period = period.as_nanos().max(1);
            u64::try_from(duration.as_nanos().div_ceil(period)).unwrap_or(u64::MAX)
        }
        Arrival::Rate { rate_per_s, .. } => {
            let n = (rate_per_s * duration.as_secs_f64()).ceil();
            if n.is_finite() && n < u64::MAX as f64 {
                n as u64
            } else {
                u64::MAX
            }
        }
        Arrival::At(at) => at.iter().filter(|t| **t < duration).count() as u64,
        // Each step's publishes (the ramp fits in `duration`).
        Arrival::Ramp(r) => (0..r.steps)
            .map(|k| r.publishes_below(k, r.hold_nanos()))
            .fold(0u64, u64::saturating_add),
        Arrival::Closed => u64::MAX,
    };
    let keys = workload.keys.as_ref().map_or(u64::MAX, |k| k.len() as u64);
    arrivals.min(workload.count.unwrap_or(u64::MAX)).min(keys)
}

/// `1.5 GiB`, `400 B`.
fn bytes_text(bytes: u128) -> String {
    const UNITS: [&str; 6] = ["KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
    if bytes < 1024 {
        return format!("{bytes} B");
    }
    let mut value = bytes as f64 / 1024.0;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    format!("{value:.1} {}", UNITS[unit])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profile::testutil::{error, error_with, scenario, BASE};

    #[test]
    fn planned_messages_follow_the_plan() {
        let s = scenario(BASE);
        // every 50s over 10m: 0s, 50s, ..., 550s = 12 messages.
        assert_eq!(planned_messages(&s.workload, s.run.duration), 12);
        let mut w = s.workload.clone();
        w.count = Some(5);
        assert_eq!(planned_messages(&w, s.run.duration), 5);
        w.count = None;
        w.keys = Some(vec!["a".into(), "b".into()]);
        assert_eq!(planned_messages(&w, s.run.duration), 2);
        // 2.5 per second over 600 s: 1500.
        let w = WorkloadSpec {
            arrival: Arrival::Rate {
                rate_per_s: 2.5,
                process: crate::profile::RateProcess::Poisson,
            },
            keys: None,
            ..s.workload.clone()
        };
        assert_eq!(planned_messages(&w, s.run.duration), 1500);
    }

    #[test]
    fn the_estimate_adds_the_parts() {
        let f = Footprint {
            messages: 1_000_000,
            per_message: BYTES_PER_MESSAGE,
            workers: 64,
            samples: 1000,
        };
        // 1M x 400 + 64 x 1536 + 1000 x 400 = 400,000,000 + 98,304 + 400,000.
        assert_eq!(f.bytes(), 400_498_304);
        assert_eq!(bytes_text(f.bytes()), "381.9 MiB");
        assert_eq!(bytes_text(400), "400 B");
    }

    #[test]
    fn a_run_too_big_to_hold_is_refused_naming_its_largest_part() {
        // BASE is a sim run that streams its accounting: 16 B a planned message.
        // One message per 100 ns for 10 minutes: 6e9 messages (fewer than the count of 1e10, so
        // the arrival is what to change); 6e9 x 16 B + 1.5 KiB + 1000 x 400 B =
        // 96,000,401,536 B = 89.4 GiB.
        let e = error_with(
            BASE,
            &[
                "workload.count=10000000000",
                "workload.arrival={every: 100ns}",
            ],
        );
        assert_eq!(
            e,
            "--set workload.arrival={every: 100ns}: workload.arrival: a run of this profile would \
             hold about 89.4 GiB in memory (6000000000 planned messages x 16 B + 1 workers x \
             1536 B + 1000 samples x 400 B), more than the 16.0 GiB a run may hold: publish \
             fewer messages (a slower workload.arrival, a shorter run.duration or a \
             workload.count) or split the run"
        );
        // A count below the arrivals is what to change: 2e9 x 16 B = 29.8 GiB.
        let e = error_with(
            BASE,
            &[
                "workload.count=2000000000",
                "workload.arrival={every: 100ns}",
            ],
        );
        assert!(
            e.starts_with(
                "--set workload.count=2000000000: workload.count: a run of this profile \
                           would hold about 29.8 GiB"
            ),
            "{e}"
        );
        // The same run keeping its full record (live mode here) holds 400 B a message: 5e7
        // messages x 400 B = 18.6 GiB.
        let live = BASE.replace("name: t", "name: t\nmode: live");
        let e = error_with(
            &live,
            &["workload.count=50000000", "workload.arrival={every: 1us}"],
        );
        assert!(
            e.contains("would hold about 18.6 GiB in memory (50000000 planned messages x 400 B"),
            "{e}"
        );
        // A large count the arrival never reaches is fine: every 50s over 10m is 12 messages.
        scenario(&BASE.replace("every: 50s }", "every: 50s }\n  count: 10000000000"));
        // 10^8 workers x 1.5 KiB = 143.1 GiB.
        let e = error_with(BASE, &["consumer.workers=100000000"]);
        assert!(
            e.starts_with(
                "--set consumer.workers=100000000: consumer.workers: a run of this profile \
                 would hold about 143.1 GiB in memory (12 planned messages x 16 B + 100000000 \
                 workers x 1536 B"
            ),
            "{e}"
        );
        // Without a count, the arrival is named: one per 100 ns for 10 minutes.
        let e = error(&BASE.replace("every: 50s", "every: 100ns"));
        assert!(
            e.starts_with("p.yaml:4:3: workload.arrival: a run of this profile would hold"),
            "{e}"
        );
        assert!(e.contains("(6000000000 planned messages x 16 B"), "{e}");
    }

    #[test]
    fn sample_every_is_bounded() {
        // 10m + 30m drain at 1ns: 2.4e12 samples (+1 for the last instant).
        assert_eq!(
            error(&BASE.replace("duration: 10m", "duration: 10m, sample_every: 1ns")),
            "p.yaml:2:37: run.sample_every: 1ns gives 2400000000001 samples over run.duration + \
             run.drain (40m), more than the 100000 a run keeps: sample every 24ms or more, or \
             leave sample_every out"
        );
        // 40m / 24ms = 100,000 intervals: 100,001 samples is one too many; 25ms is fine.
        assert!(
            error(&BASE.replace("duration: 10m", "duration: 10m, sample_every: 24ms"))
                .contains("100001 samples")
        );
        let s = scenario(&BASE.replace("duration: 10m", "duration: 10m, sample_every: 25ms"));
        assert_eq!(s.run.sample_every, Some(Duration::from_millis(25)));
    }
}
