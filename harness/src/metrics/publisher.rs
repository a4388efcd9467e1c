//! How a live run's own producer kept the plan's schedule: the `publisher` object of
//! summary.json, read from the run's [`PublisherRecord`] (absent for sim runs, which publish at
//! each planned instant, and for a run whose ingress load published).
//!
//! A send's lag is how long after its planned instant it was handed to the broker, in profile
//! time: the loop's wake-up (the runtime's timers have a millisecond's grain), the hand-over of
//! the sends due just before it, and the broker's push-back (the window of unconfirmed
//! publishes full; those sends are counted in `pushed_back`).

use serde::{Deserialize, Serialize};

use super::latency::{exact_summary, LatencySummary};
use crate::record::{Nanos, PublisherRecord, RunRecord};

/// A send later than this is late (`late_sends`): the schedule is kept to the millisecond.
pub const LATE_AFTER: Nanos = 1_000_000;

/// The `publisher` object of summary.json.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PublisherSummary {
    /// Sends made (every attempt of a retrying producer).
    pub sends: u64,
    /// The most sends left unconfirmed at once (`run.publish_window`).
    pub window: u32,
    /// Sends per profile second from the first hand-over to the last ((sends - 1) / span; 0
    /// for fewer than two sends or no span): the load the run offered the broker.
    pub offered_per_s: f64,
    /// Sends per profile second from the first hand-over to the last confirmation.
    pub confirmed_per_s: f64,
    /// How late sends were handed to the broker against the plan, profile milliseconds.
    pub schedule_lag_ms: LatencySummary,
    /// Sends handed over more than 1 ms after their planned instant.
    pub late_sends: u64,
    /// Sends that first waited for a confirmation, the window being full: the broker pushing
    /// back.
    pub pushed_back: u64,
}

/// Rounds to 6 decimals so the bytes are stable.
fn round6(x: f64) -> f64 {
    (x * 1e6).round() / 1e6
}

/// `n` per second over `from..to` (profile nanoseconds); 0 without a span.
fn per_s(n: u64, from: Option<Nanos>, to: Option<Nanos>) -> f64 {
    match (from, to) {
        (Some(a), Some(b)) if b > a && n > 0 => round6(n as f64 / ((b - a) as f64 / 1e9)),
        _ => 0.0,
    }
}

/// The publisher's summary of a run, if the run recorded its own sends.
pub fn summarise(record: &RunRecord) -> Option<PublisherSummary> {
    let p: &PublisherRecord = record.publisher.as_ref()?;
    let sends = p.lags.len() as u64;
    Some(PublisherSummary {
        sends,
        window: p.window,
        offered_per_s: per_s(sends.saturating_sub(1), p.first_sent, p.last_sent),
        confirmed_per_s: per_s(sends, p.first_sent, p.last_confirmed),
        schedule_lag_ms: exact_summary(p.lags.clone()),
        late_sends: p.lags.iter().filter(|&&l| l > LATE_AFTER).count() as u64,
        pushed_back: p.pushed_back,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Nanos = 1_000_000;

    #[test]
    fn lags_give_nearest_rank_percentiles_and_late_sends() {
        // 100 sends: 50 on time, 45 at 0.4 ms, then 1 ms exactly, 1.0005 ms, 2 ms and 25 ms
        // twice. Sorted, rank 50 (p50: 0.5 x 100) is 0; rank 90 (p90; 91 were the product
        // rounded up) is 0.4 ms; rank 99 and 100 (p99, p99.9, max) are 25 ms. Late (more than
        // 1 ms): 1.0005, 2, 25 and 25 ms, 4; exactly 1 ms is not late. Sent from 1 s to 3 s: 99
        // gaps over 2 s, 49.5/s offered; the last confirmed at 5 s: 100 over 4 s, 25/s confirmed.
        let mut lags = vec![0; 50];
        lags.extend([MS * 4 / 10; 45]);
        lags.extend([MS, MS + 500_000, 2 * MS, 25 * MS, 25 * MS]);
        let record = RunRecord {
            publisher: Some(PublisherRecord {
                lags,
                first_sent: Some(1_000 * MS),
                last_sent: Some(3_000 * MS),
                last_confirmed: Some(5_000 * MS),
                window: 1024,
                pushed_back: 1,
            }),
            ..RunRecord::default()
        };
        let s = summarise(&record).expect("a publisher");
        assert_eq!(s.sends, 100);
        assert_eq!(
            s.schedule_lag_ms,
            LatencySummary {
                p50: 0.0,
                p90: 0.4,
                p99: 25.0,
                p999: 25.0,
                max: 25.0
            }
        );
        assert_eq!((s.late_sends, s.pushed_back, s.window), (4, 1, 1024));
        assert_eq!((s.offered_per_s, s.confirmed_per_s), (49.5, 25.0));
    }

    #[test]
    fn no_record_no_summary_and_one_send_has_no_rate() {
        assert_eq!(summarise(&RunRecord::default()), None);
        // One send, 3 ms late, confirmed 2 ms later: no span to offer over (0 gaps), one
        // confirmation over 2 ms is 500/s.
        let record = RunRecord {
            publisher: Some(PublisherRecord {
                lags: vec![3 * MS],
                first_sent: Some(3 * MS),
                last_sent: Some(3 * MS),
                last_confirmed: Some(5 * MS),
                window: 1,
                pushed_back: 0,
            }),
            ..RunRecord::default()
        };
        let s = summarise(&record).expect("a publisher");
        assert_eq!((s.offered_per_s, s.confirmed_per_s), (0.0, 500.0));
        assert_eq!((s.schedule_lag_ms.p50, s.schedule_lag_ms.max), (3.0, 3.0));
        assert_eq!(s.late_sends, 1);
    }
}
