//! The broker's own counts over the run ([`crate::record::BrokerSamples`]), summed up: each
//! figure's last and peak value, or why there is none. A figure the kind cannot give, or that
//! no sample brought back, is `None` (summary.json's `null`) with its reason, never a guess.

use serde::{Deserialize, Serialize};

use super::seconds;
use crate::record::broker::FIGURES;
use crate::record::{BrokerSample, BrokerSamples};

/// summary.json's `broker_counts`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BrokerCounts {
    /// The sampling interval (profile time).
    pub every_s: f64,
    /// Samples that succeeded.
    pub samples: u64,
    /// Samples that failed (counted, not fatal).
    pub failed_samples: u64,
    /// When the last successful sample was taken; `null` without one.
    pub last_sample_s: Option<f64>,
    /// The broker's DLQ depth (its word for it: dead-letter queue, MaxDeliver, dead stream).
    pub dlq: Option<Figure>,
    /// Messages waiting to be handed out.
    pub backlog: Option<Figure>,
    /// Messages handed out and not acked.
    pub in_flight: Option<Figure>,
    /// Why each `null` figure is `null`.
    #[serde(default)]
    pub unavailable: Vec<Missing>,
    /// The last failed sample's reason.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_failure: Option<String>,
}

/// One figure over the run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Figure {
    /// Its value at the last sample that gave it.
    #[serde(rename = "final")]
    pub last: u64,
    /// Its largest value.
    pub peak: u64,
}

/// A figure that is `null`, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Missing {
    pub figure: String,
    pub reason: String,
}

impl BrokerCounts {
    /// Figure `name` ([`FIGURES`]).
    pub fn figure(&self, name: &str) -> Option<Figure> {
        match name {
            "dlq" => self.dlq,
            "backlog" => self.backlog,
            "in_flight" => self.in_flight,
            _ => None,
        }
    }

    /// Why figure `name` is `null`, if it is.
    pub fn reason(&self, name: &str) -> Option<&str> {
        self.unavailable
            .iter()
            .find(|m| m.figure == name)
            .map(|m| m.reason.as_str())
    }
}

/// The summary of a run's broker samples.
pub fn summarise(b: &BrokerSamples) -> BrokerCounts {
    let of = |name: &str| figure(&b.samples, |s| s.figure(name));
    let mut unavailable: Vec<Missing> = Vec::new();
    for name in FIGURES {
        if let Some(u) = b.unavailable.iter().find(|u| u.figure == name) {
            unavailable.push(Missing {
                figure: name.to_string(),
                reason: u.reason.clone(),
            });
        } else if of(name).is_none() {
            let reason = match &b.last_failure {
                Some(why) => format!("no sample gave it ({} failed; the last: {why})", b.failed),
                None => "no sample was taken".to_string(),
            };
            unavailable.push(Missing {
                figure: name.to_string(),
                reason,
            });
        }
    }
    let absent = |name: &str| unavailable.iter().any(|m| m.figure == name);
    let given = |name: &str| if absent(name) { None } else { of(name) };
    BrokerCounts {
        every_s: seconds(b.every),
        samples: b.samples.len() as u64,
        failed_samples: b.failed,
        last_sample_s: b.samples.last().map(|s| seconds(s.at)),
        dlq: given("dlq"),
        backlog: given("backlog"),
        in_flight: given("in_flight"),
        unavailable,
        last_failure: b.last_failure.clone(),
    }
}

/// The last and largest value of one figure over the samples that gave it.
fn figure(samples: &[BrokerSample], get: impl Fn(&BrokerSample) -> Option<u64>) -> Option<Figure> {
    let values: Vec<u64> = samples.iter().filter_map(get).collect();
    Some(Figure {
        last: *values.last()?,
        peak: values.iter().copied().max()?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::Unavailable;

    const S: u64 = 1_000_000_000;

    fn sample(at: u64, dlq: u64, backlog: u64, in_flight: Option<u64>) -> BrokerSample {
        BrokerSample {
            at: at * S,
            dlq: Some(dlq),
            backlog: Some(backlog),
            in_flight,
        }
    }

    #[test]
    fn the_last_and_the_peak_of_each_figure_and_why_one_is_missing() {
        // A RabbitMQ-like run sampled every 10 s: the backlog rises to 7 and drains, two
        // messages reach the DLQ; in-flight cannot be read (passive declare).
        let b = BrokerSamples {
            every: 10 * S,
            samples: vec![
                sample(0, 0, 3, None),
                sample(10, 1, 7, None),
                sample(20, 2, 4, None),
                sample(30, 2, 0, None),
            ],
            failed: 1,
            last_failure: Some("no answer in 2 s".into()),
            unavailable: vec![Unavailable {
                figure: "in_flight".into(),
                reason: "a passive declare gives the ready count only".into(),
            }],
        };
        let c = summarise(&b);
        // dlq: 0, 1, 2, 2 -> last 2, peak 2; backlog: 3, 7, 4, 0 -> last 0, peak 7.
        assert_eq!(c.dlq, Some(Figure { last: 2, peak: 2 }));
        assert_eq!(c.backlog, Some(Figure { last: 0, peak: 7 }));
        assert_eq!(c.in_flight, None);
        assert_eq!(
            c.reason("in_flight"),
            Some("a passive declare gives the ready count only")
        );
        assert_eq!((c.samples, c.failed_samples), (4, 1));
        assert_eq!((c.every_s, c.last_sample_s), (10.0, Some(30.0)));
        let json = serde_json::to_string(&c).unwrap_or_default();
        assert!(
            json.contains(
                r#""dlq":{"final":2,"peak":2},"backlog":{"final":0,"peak":7},"in_flight":null"#
            ),
            "{json}"
        );
        let back: BrokerCounts = serde_json::from_str(&json).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(back, c);
    }

    #[test]
    fn a_figure_no_sample_gave_is_null_with_the_last_failure() {
        // Both samples failed: every figure is null, and says why.
        let b = BrokerSamples {
            every: S,
            samples: Vec::new(),
            failed: 2,
            last_failure: Some("connection refused".into()),
            unavailable: Vec::new(),
        };
        let c = summarise(&b);
        assert_eq!((c.dlq, c.backlog, c.in_flight), (None, None, None));
        assert_eq!(
            c.reason("dlq"),
            Some("no sample gave it (2 failed; the last: connection refused)")
        );
        assert_eq!(c.unavailable.len(), 3);
        assert_eq!(c.last_sample_s, None);
    }
}
