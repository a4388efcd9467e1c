//! The "Publisher" rows of a live run that published the plan itself: its sends against the
//! schedule and what the broker made them wait (console).

use super::words::{number, plural};
use crate::metrics::publisher::PublisherSummary;

/// The rows: (label, value, note).
pub(crate) fn rows(p: &PublisherSummary) -> Vec<(&'static str, String, String)> {
    let lag = &p.schedule_lag_ms;
    vec![
        (
            "sends",
            p.sends.to_string(),
            format!(
                "up to {} unconfirmed; {} pushed back (waited for the broker)",
                p.window, p.pushed_back
            ),
        ),
        (
            "offered per second",
            number(p.offered_per_s.round()),
            format!(
                "first to last send; confirmed {}/s",
                number(p.confirmed_per_s.round())
            ),
        ),
        (
            "schedule lag",
            format!("{:.3} ms", lag.p99),
            format!(
                "p99; p50 {:.3}, max {:.3} ms; {} {} more than 1 ms late",
                lag.p50,
                lag.max,
                p.late_sends,
                plural(p.late_sends, "send", "sends")
            ),
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::LatencySummary;

    #[test]
    fn rows_say_the_rate_the_lag_and_the_push_back() {
        let p = PublisherSummary {
            sends: 4000,
            window: 1024,
            offered_per_s: 19_999.6,
            confirmed_per_s: 15_000.2,
            schedule_lag_ms: LatencySummary {
                p50: 0.21,
                p90: 0.5,
                p99: 0.9,
                p999: 1.5,
                max: 2.25,
            },
            late_sends: 1,
            pushed_back: 0,
        };
        let r = rows(&p);
        assert_eq!(
            r[0],
            (
                "sends",
                "4000".to_string(),
                "up to 1024 unconfirmed; 0 pushed back (waited for the broker)".to_string()
            )
        );
        assert_eq!(r[1].1, "20000");
        assert_eq!(r[1].2, "first to last send; confirmed 15000/s");
        assert_eq!(r[2].1, "0.900 ms");
        assert_eq!(
            r[2].2,
            "p99; p50 0.210, max 2.250 ms; 1 send more than 1 ms late"
        );
    }
}
