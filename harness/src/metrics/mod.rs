//! Metrics: pure functions of a [`RunRecord`].
//!
//! - [`accounting`]: effects per message key against what was published: duplicate, lost,
//!   unfinished and late messages, DLQ entries with and without effect, stale acks, busy time,
//!   age of the oldest message.
//! - [`latency`]: HDR histograms of handler and end-to-end latency.
//! - [`mod@timeseries`]: the run sampled on a fixed virtual interval.
//! - [`place`]: where each message is, replayed from the broker's events.
//! - [`handlers`]: handler spans, from a delivery to the end of its handler.
//! - [`ingress`]: an HTTP ingress load's requests joined with the published messages by key.

pub mod accounting;
pub mod crashes;
pub mod handlers;
pub mod ingress;
pub mod latency;
pub mod place;
pub mod redrive;
pub mod timeseries;

#[cfg(test)]
pub(crate) mod testkit;

pub use accounting::{Accounting, MessageAccount};
pub use crashes::Crash;
pub use ingress::IngressSummary;
pub use latency::{Latencies, LatencyHistogram, LatencySummary};
pub use timeseries::{default_interval, timeseries, Sample};

use crate::record::{Nanos, RunRecord};

/// Everything the verdict and the report need from a run. Times are exact virtual nanoseconds;
/// latencies are in milliseconds (microsecond resolution). The counts are the run's
/// [`Accounting`], read through this value (`m.lost`, `m.dlq`, ...).
#[derive(Debug, Clone)]
pub struct Metrics {
    /// Messages, deliveries, effects, duplicates, lost, DLQ, stale acks, kills, busy time...
    pub counts: Accounting,
    /// DLQ entries an operator's redrive moved back to the main queue.
    pub redriven: u64,
    /// Duplicate effects the redrive itself caused.
    pub redrive_duplicate_effects: u64,
    pub visibility_timeout: Nanos,
    pub workers: u32,
    /// When the run stopped.
    pub end: Nanos,
    /// Handler latency (delivery to end of handler), ms.
    pub handler: LatencySummary,
    /// Publish to first effect, ms.
    pub end_to_end: LatencySummary,
    /// Handler p99 over the visibility timeout.
    pub p99_over_visibility: f64,
    /// The raw histograms behind `handler` and `end_to_end`.
    pub latencies: Latencies,
    /// The HTTP ingress load against what reached the queue, if the run had one.
    pub ingress: Option<IngressSummary>,
    /// Every worker crash, named (`worker_crashes` counts them).
    pub crashes: Vec<Crash>,
    /// Why the run stopped before its end, if it did ([`RunRecord::incomplete`]).
    pub incomplete: Option<String>,
}

impl std::ops::Deref for Metrics {
    type Target = Accounting;

    fn deref(&self) -> &Accounting {
        &self.counts
    }
}

impl Metrics {
    /// Share of the workers' time spent handling: busy time / (workers x run length); 0 for a
    /// run without workers or length.
    pub fn worker_busy_fraction(&self) -> f64 {
        let capacity = f64::from(self.workers) * self.end as f64;
        if capacity > 0.0 {
            self.worker_busy as f64 / capacity
        } else {
            0.0
        }
    }
}

/// Nanoseconds to seconds at microsecond resolution (rounded to the nearest microsecond), the
/// precision every report shows times in.
pub fn seconds(n: Nanos) -> f64 {
    (n.saturating_add(500) / 1000) as f64 / 1e6
}

/// Analyses a run: accounting and latency. `late_after` is the bound past which a first effect is
/// late (`budgets.late.after`).
pub fn analyse(record: &RunRecord, late_after: Nanos) -> Metrics {
    let accounts = accounting::per_message(record);
    // Counting and the latency histograms read the same record independently: side by side.
    let (a, latencies) = std::thread::scope(|s| {
        let latencies = s.spawn(|| Latencies::of(record, &accounts));
        let a = accounting::account(record, &accounts, late_after);
        (
            a,
            latencies.join().expect("latency histograms do not panic"),
        )
    });
    let handler = latencies.handler.summary();
    let redrive = redrive::account(record);
    Metrics {
        redriven: redrive.redriven,
        redrive_duplicate_effects: redrive.duplicate_effects,
        visibility_timeout: record.visibility_timeout,
        workers: record.workers,
        end: record.end,
        handler,
        end_to_end: latencies.end_to_end.summary(),
        p99_over_visibility: latency::p99_over_visibility(&handler, record.visibility_timeout),
        latencies,
        counts: a,
        ingress: ingress::account(record),
        crashes: crashes::crashes(record),
        incomplete: record.incomplete.clone(),
    }
}

#[cfg(test)]
mod tests;
