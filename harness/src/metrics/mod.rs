//! Metrics: pure functions of a [`RunRecord`].
//!
//! - [`accounting`]: effects per message key against what was published: duplicate, lost,
//!   unfinished and late messages, DLQ entries with and without effect, stale acks, busy time,
//!   age of the oldest message.
//! - [`latency`]: HDR histograms of handler and end-to-end latency.
//! - [`mod@timeseries`]: the run sampled on a fixed virtual interval.
//! - [`place`]: where each message is, replayed from the broker's events.
//! - [`handlers`]: handler spans, from a delivery to the end of its handler.

pub mod accounting;
pub mod handlers;
pub mod latency;
pub mod place;
pub mod redrive;
pub mod timeseries;

#[cfg(test)]
pub(crate) mod testkit;

pub use accounting::{Accounting, MessageAccount};
pub use latency::{Latencies, LatencyHistogram, LatencySummary};
pub use timeseries::{default_interval, timeseries, Sample};

use crate::record::{Nanos, RunRecord};

/// Everything the verdict and the report need from a run. Times are exact virtual nanoseconds;
/// latencies are in milliseconds (microsecond resolution).
#[derive(Debug, Clone)]
pub struct Metrics {
    /// Published messages.
    pub messages: u64,
    /// Hand-outs to workers.
    pub deliveries: u64,
    /// Hand-outs with a receive count above 1.
    pub redeliveries: u64,
    /// Effects for published keys.
    pub effects: u64,
    /// Effects for keys that were never published.
    pub unknown_key_effects: u64,
    pub messages_with_effect: u64,
    /// Effects beyond the first for each key.
    pub duplicate_effects: u64,
    /// `duplicate_effects / messages` (0 without messages).
    pub duplicate_rate: f64,
    /// Deleted from the queue with no effect, not refused by the target.
    pub lost: u64,
    /// Still in the main queue when the run stopped.
    pub unfinished: u64,
    /// First effect more than `late_after` after publish.
    pub late: u64,
    pub late_after: Nanos,
    /// In the DLQ when the run stopped, with and without an effect for their key.
    pub dlq: u64,
    pub dlq_with_effect: u64,
    pub dlq_without_effect: u64,
    /// Acks whose receipt was no longer current, whatever the broker did with them.
    pub stale_acks: u64,
    pub worker_kills: u64,
    pub worker_crashes: u64,
    /// Messages the target refused (`on_poison: dead_letter`).
    pub rejected: u64,
    /// Provider calls beyond the first within one delivery.
    pub handler_retries: u64,
    /// DLQ entries an operator's redrive moved back to the main queue.
    pub redriven: u64,
    /// Duplicate effects the redrive itself caused.
    pub redrive_duplicate_effects: u64,
    /// Time spent handling, summed over workers.
    pub worker_busy: Nanos,
    /// When the last handler ended (0 if none did).
    pub last_handler_end: Nanos,
    /// The largest age the oldest message in the main queue reached.
    pub max_oldest_age: Nanos,
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
    /// For every message with an effect, first effect minus publish, in publish order.
    pub first_effect_delays: Vec<Nanos>,
}

impl Metrics {
    /// Messages whose first effect came more than `after` after their publish.
    pub fn late_count(&self, after: Nanos) -> u64 {
        self.first_effect_delays
            .iter()
            .filter(|&&d| d > after)
            .count() as u64
    }

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
        messages: a.messages,
        deliveries: a.deliveries,
        redeliveries: a.redeliveries,
        effects: a.effects,
        unknown_key_effects: a.unknown_key_effects,
        messages_with_effect: a.messages_with_effect,
        duplicate_effects: a.duplicate_effects,
        duplicate_rate: a.duplicate_rate,
        lost: a.lost,
        unfinished: a.unfinished,
        late: a.late,
        late_after: a.late_after,
        dlq: a.dlq,
        dlq_with_effect: a.dlq_with_effect,
        dlq_without_effect: a.dlq_without_effect,
        stale_acks: a.stale_acks,
        worker_kills: a.worker_kills,
        worker_crashes: a.worker_crashes,
        rejected: a.rejected,
        handler_retries: a.handler_retries,
        redriven: redrive.redriven,
        redrive_duplicate_effects: redrive.duplicate_effects,
        worker_busy: a.worker_busy,
        last_handler_end: a.last_handler_end,
        max_oldest_age: a.max_oldest_age,
        visibility_timeout: record.visibility_timeout,
        workers: record.workers,
        end: record.end,
        handler,
        end_to_end: latencies.end_to_end.summary(),
        p99_over_visibility: latency::p99_over_visibility(&handler, record.visibility_timeout),
        latencies,
        first_effect_delays: a.first_effect_delays,
    }
}

#[cfg(test)]
mod tests;
