//! The report's rows of what the broker itself answered (summary.json's `broker_counts`): each
//! figure's last and peak value, or, for one the kind cannot give, why not.

use std::fmt::Write;

use super::html::escape;
use crate::metrics::broker_counts::BrokerCounts;

/// One row: the figure's words, its last and peak value (or `null`), and a note.
pub fn rows(b: &BrokerCounts) -> Vec<(&'static str, String, String, String)> {
    [
        ("dlq", "DLQ depth"),
        ("backlog", "backlog (waiting)"),
        ("in_flight", "in flight (unacked)"),
    ]
    .into_iter()
    .map(|(name, words)| match b.figure(name) {
        Some(f) => (words, f.last.to_string(), f.peak.to_string(), String::new()),
        None => (
            words,
            "null".to_string(),
            "null".to_string(),
            b.reason(name).unwrap_or("not given").to_string(),
        ),
    })
    .collect()
}

/// The section of report.html.
pub fn html(h: &mut String, b: &BrokerCounts) {
    let _ = writeln!(
        h,
        "</table>\n<h3 id=\"broker-counts\">From the broker</h3>\n\
         <p class=\"muted\">What the broker itself answered, on a connection of ackbench's own, \
         every {} s: {} samples, {} failed{} (broker-samples.csv; charts/broker.svg sets them \
         beside the counts replayed from the run's events).</p>\n\
         <table>\n<tr><th>figure</th><th>final</th><th>peak</th><th>why not given</th></tr>",
        b.every_s,
        b.samples,
        b.failed_samples,
        b.last_failure
            .as_ref()
            .map(|f| format!(" (the last: {})", escape(f)))
            .unwrap_or_default(),
    );
    for (words, last, peak, why) in rows(b) {
        let _ = writeln!(
            h,
            "<tr><th>{}</th><td class=\"num\">{}</td><td class=\"num\">{}</td><td>{}</td></tr>",
            escape(words),
            last,
            peak,
            escape(&why)
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::broker_counts::{Figure, Missing};

    #[test]
    fn a_figure_the_kind_cannot_give_reads_null_with_its_reason() {
        let b = BrokerCounts {
            every_s: 5.0,
            samples: 12,
            failed_samples: 0,
            last_sample_s: Some(55.0),
            dlq: Some(Figure { last: 2, peak: 2 }),
            backlog: Some(Figure { last: 0, peak: 9 }),
            in_flight: None,
            unavailable: vec![Missing {
                figure: "in_flight".into(),
                reason: "not from a passive declare".into(),
            }],
            last_failure: None,
        };
        let r = rows(&b);
        assert_eq!(r[0], ("DLQ depth", "2".into(), "2".into(), String::new()));
        assert_eq!(r[1].1, "0");
        assert_eq!(r[1].2, "9");
        assert_eq!(
            r[2],
            (
                "in flight (unacked)",
                "null".into(),
                "null".into(),
                "not from a passive declare".into()
            )
        );
        let mut h = String::new();
        html(&mut h, &b);
        assert!(h.contains("every 5 s: 12 samples, 0 failed"), "{h}");
        assert!(h.contains("<td>not from a passive declare</td>"), "{h}");
    }
}
