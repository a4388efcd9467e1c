//! Latency histograms (HDR, microseconds, 3 significant digits): handler latency (receive to
//! the end of the handler, however it ended), end-to-end latency (publish to first effect) and
//! time to done (publish to the moment the message had its effect and an ack had deleted it).

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

use super::accounting::MessageAccount;
use super::handlers::{for_each_span, Span};
use crate::record::{Nanos, RunRecord};

/// Significant digits of every latency histogram.
pub const SIGNIFICANT_DIGITS: u8 = 3;

/// Percentiles of one latency, in milliseconds (microsecond resolution).
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct LatencySummary {
    pub p50: f64,
    pub p90: f64,
    pub p99: f64,
    pub p999: f64,
    pub max: f64,
}

/// Percentiles of exact values (nanoseconds), nearest-rank, each truncated to the microsecond
/// and given in milliseconds; all zero for no value.
pub fn exact_summary(mut values: Vec<Nanos>) -> LatencySummary {
    if values.is_empty() {
        return LatencySummary::default();
    }
    values.sort_unstable();
    let at = |q: f64| {
        let rank = ((q * values.len() as f64).ceil() as usize).clamp(1, values.len());
        (values[rank - 1] / 1000) as f64 / 1000.0
    };
    LatencySummary {
        p50: at(0.50),
        p90: at(0.90),
        p99: at(0.99),
        p999: at(0.999),
        max: at(1.0),
    }
}

/// One latency histogram, values in microseconds, with the exact largest value beside it.
#[derive(Debug, Clone)]
pub struct LatencyHistogram {
    /// The raw histogram (microseconds), e.g. for HDR interval logs.
    pub histogram: Histogram<u64>,
    /// The largest recorded value, exact (the histogram only knows its bucket).
    pub max_us: u64,
}

impl Default for LatencyHistogram {
    fn default() -> Self {
        Self::new()
    }
}

impl LatencyHistogram {
    pub fn new() -> Self {
        let histogram = Histogram::new(SIGNIFICANT_DIGITS)
            .expect("3 significant digits is a valid histogram precision");
        LatencyHistogram {
            histogram,
            max_us: 0,
        }
    }

    /// Records one latency, rounded to the nearest microsecond.
    #[inline]
    pub fn record(&mut self, latency: Nanos) {
        let us = latency.saturating_add(500) / 1000;
        // The histogram grows to fit; only a value beyond its largest possible range saturates.
        if self.histogram.record(us).is_err() {
            self.histogram.saturating_record(us);
        }
        self.max_us = self.max_us.max(us);
    }

    pub fn len(&self) -> u64 {
        self.histogram.len()
    }

    pub fn is_empty(&self) -> bool {
        self.histogram.is_empty()
    }

    /// The value at `quantile`, in microseconds: the top of its HDR bucket, never above the
    /// largest value recorded (so a run of equal latencies reports that latency exactly).
    pub fn value_at_quantile_us(&self, quantile: f64) -> u64 {
        if self.is_empty() {
            return 0;
        }
        self.histogram.value_at_quantile(quantile).min(self.max_us)
    }

    /// p50, p90, p99, p99.9 and max in milliseconds; zeros when nothing was recorded.
    pub fn summary(&self) -> LatencySummary {
        let ms = |us: u64| us as f64 / 1000.0;
        LatencySummary {
            p50: ms(self.value_at_quantile_us(0.5)),
            p90: ms(self.value_at_quantile_us(0.9)),
            p99: ms(self.value_at_quantile_us(0.99)),
            p999: ms(self.value_at_quantile_us(0.999)),
            max: ms(self.max_us),
        }
    }
}

/// The run's latency histograms.
#[derive(Debug, Clone, Default)]
pub struct Latencies {
    /// From a delivery to the end of its handler (finished, killed or crashed). Handlers still
    /// working when the run stopped have no latency yet and are not recorded.
    pub handler: LatencyHistogram,
    /// From publish to the message's first effect, for messages that had one.
    pub end_to_end: LatencyHistogram,
    /// From publish to the moment the message was done ([`MessageAccount::done_at`]), for
    /// messages that were.
    pub time_to_done: LatencyHistogram,
}

impl Latencies {
    /// Builds both histograms from the record and its per-message accounts.
    pub fn of(record: &RunRecord, accounts: &[MessageAccount]) -> Self {
        let mut l = Latencies::default();
        for_each_span(record, |s| l.span(&s));
        for (a, m) in accounts
            .iter()
            .zip(&record.messages)
            .filter(|(a, _)| !a.copy)
        {
            l.message(a, m.published_at);
        }
        l
    }

    /// Records one handler span's latency (handlers still working at the end have none).
    #[inline]
    pub fn span(&mut self, s: &Span) {
        if s.how.is_some() {
            self.handler.record(s.duration());
        }
    }

    /// Records one message's end-to-end latency and time to done, if it had them.
    #[inline]
    pub fn message(&mut self, a: &MessageAccount, published_at: Nanos) {
        if let Some(first) = a.first_effect {
            self.end_to_end.record(first.saturating_sub(published_at));
        }
        if let Some(done) = a.done_at() {
            self.time_to_done.record(done.saturating_sub(published_at));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::accounting::per_message;
    use crate::metrics::testkit::{s, slow_handler};
    use crate::profile::StaleAck;

    #[test]
    fn percentiles_of_one_to_a_thousand_microseconds() {
        // 1..=1000 µs are exact at 3 significant digits: the q-quantile is the ceil(q * 1000)-th
        // value.
        let mut h = LatencyHistogram::new();
        for us in 1..=1000u64 {
            h.record(us * 1000);
        }
        let sum = h.summary();
        assert_eq!(
            sum,
            LatencySummary {
                p50: 0.5,
                p90: 0.9,
                p99: 0.99,
                p999: 0.999,
                max: 1.0
            }
        );
    }

    #[test]
    fn large_equal_latencies_report_exactly() {
        // 34 s falls in a 32.768 ms wide bucket; capping at the exact max reports 34000 ms.
        let mut h = LatencyHistogram::new();
        h.record(s(34.0));
        h.record(s(34.0));
        assert_eq!(
            h.summary(),
            LatencySummary {
                p50: 34000.0,
                p90: 34000.0,
                p99: 34000.0,
                p999: 34000.0,
                max: 34000.0
            }
        );
    }

    #[test]
    fn the_tail_comes_from_the_top_bucket() {
        // 99 fast handlers of 100 µs and one of 5 s: p50..p99 are 100 µs, p99.9 is the slow one.
        let mut h = LatencyHistogram::new();
        for _ in 0..99 {
            h.record(100_000);
        }
        h.record(s(5.0));
        let sum = h.summary();
        assert_eq!((sum.p50, sum.p90, sum.p99), (0.1, 0.1, 0.1));
        assert_eq!((sum.p999, sum.max), (5000.0, 5000.0));
    }

    #[test]
    fn nanoseconds_round_to_the_nearest_microsecond() {
        let mut h = LatencyHistogram::new();
        h.record(1_499);
        assert_eq!(h.max_us, 1);
        h.record(1_500);
        assert_eq!(h.max_us, 2);
    }

    #[test]
    fn an_empty_histogram_reports_zeros() {
        assert_eq!(LatencyHistogram::new().summary(), LatencySummary::default());
    }

    #[test]
    fn the_slow_handler_against_its_lease() {
        let r = slow_handler(StaleAck::Reject);
        let l = Latencies::of(&r, &per_message(&r));
        assert_eq!(l.handler.len(), 3);
        let h = l.handler.summary();
        assert_eq!((h.p50, h.p99, h.max), (34000.0, 34000.0, 34000.0));
        // The first email goes out at receive time, when it is published.
        assert_eq!(l.end_to_end.len(), 1);
        assert_eq!(l.end_to_end.summary().max, 0.0);
        // Every ack is stale and the message ends in the DLQ: never done.
        assert!(l.time_to_done.is_empty());
    }

    #[test]
    fn time_to_done_waits_for_the_ack_that_deleted_the_message() {
        // Under stale_ack: delete delivery 1's late ack at 34 s deletes the message (published
        // at 0 s, email at 0 s): 34 s to done, while end to end is 0.
        let r = slow_handler(StaleAck::Delete);
        let l = Latencies::of(&r, &per_message(&r));
        assert_eq!(l.time_to_done.len(), 1);
        assert_eq!(l.time_to_done.summary().max, 34000.0);
        assert_eq!(l.end_to_end.summary().max, 0.0);
    }
}
