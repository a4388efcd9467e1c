//! The lease rule: the visibility timeout a handler latency histogram calls for.
//!
//! The smallest lease whose chance of being outlived by a handler is below the target risk,
//! times a margin, rounded up to a readable value. A tail too long for any sensible lease (the
//! rounded lease above `max_lease`, 15 minutes by default: a dead worker's message would wait
//! that long) calls for a heartbeat instead: a short lease extended while the handler works,
//! up to a maximum extension past which the handler is presumed wedged.

use std::time::Duration;

use hdrhistogram::Histogram;
use serde::Serialize;

use super::readable;

/// The default `--target-risk`: at most one handler in 10,000 outlives its lease.
pub const TARGET_RISK: f64 = 1e-4;
/// The default `--margin`.
pub const MARGIN: f64 = 1.25;
/// The default `--max-lease`.
pub const MAX_LEASE: Duration = Duration::from_secs(15 * 60);
/// The lease a heartbeat extends (SQS's default): short, so that a dead worker's message is
/// back within 30 s.
pub const HEARTBEAT_LEASE: Duration = Duration::from_secs(30);
/// SQS's longest visibility timeout.
pub const SQS_MAX_LEASE: Duration = Duration::from_secs(12 * 3600);

/// The inputs of the rule.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LeaseRule {
    pub target_risk: f64,
    pub margin: f64,
    pub max_lease: Duration,
}

impl Default for LeaseRule {
    fn default() -> Self {
        LeaseRule {
            target_risk: TARGET_RISK,
            margin: MARGIN,
            max_lease: MAX_LEASE,
        }
    }
}

/// What the rule recommends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum LeaseAdvice {
    /// A plain visibility timeout.
    Lease {
        #[serde(rename = "visibility_timeout", serialize_with = "secs")]
        lease: Duration,
    },
    /// A short lease, extended every `extend_every` while the handler works, for at most
    /// `max_extension` of extra time.
    Heartbeat {
        #[serde(rename = "visibility_timeout", serialize_with = "secs")]
        lease: Duration,
        #[serde(serialize_with = "secs")]
        extend_every: Duration,
        #[serde(serialize_with = "secs")]
        max_extension: Duration,
    },
}

fn secs<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64(d.as_secs_f64())
}

impl LeaseAdvice {
    /// The lease the advice sets (`visibility_timeout` in sizing.json): also the worst-case
    /// recovery time.
    pub fn lease(&self) -> Duration {
        match *self {
            LeaseAdvice::Lease { lease } | LeaseAdvice::Heartbeat { lease, .. } => lease,
        }
    }
}

impl LeaseAdvice {
    /// The longest a handler may hold a message: the lease, plus the maximum extension with a
    /// heartbeat.
    pub fn longest_hold(&self) -> Duration {
        match *self {
            LeaseAdvice::Lease { lease } => lease,
            LeaseAdvice::Heartbeat {
                lease,
                max_extension,
                ..
            } => lease + max_extension,
        }
    }
}

/// The rule applied to a histogram.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LeaseSizing {
    /// Handlers measured.
    pub handlers: u64,
    /// The smallest latency (µs, top of its HDR bucket) outlived by fewer than `target_risk` of
    /// the handlers.
    pub tail_us: u64,
    /// `tail x margin`, before rounding.
    pub with_margin: Duration,
    pub advice: LeaseAdvice,
}

/// The smallest recorded latency (µs, the top of its bucket) that fewer than `risk` of the
/// handlers exceed; `None` for an empty histogram.
pub fn tail_us(h: &Histogram<u64>, risk: f64) -> Option<u64> {
    let n = h.len();
    let mut seen = 0u64;
    for v in h.iter_recorded() {
        seen += v.count_at_value();
        if ((n - seen) as f64) < risk * n as f64 {
            return Some(h.highest_equivalent(v.value_iterated_to()));
        }
    }
    None
}

/// The chance that a handler outlives `lease`: the share of recorded latencies whose bucket
/// reaches past it (0 for an empty histogram).
pub fn outlive_chance(h: &Histogram<u64>, lease: Duration) -> f64 {
    let n = h.len();
    if n == 0 {
        return 0.0;
    }
    let lease_us = u64::try_from(lease.as_micros()).unwrap_or(u64::MAX);
    let over: u64 = h
        .iter_recorded()
        .filter(|v| h.highest_equivalent(v.value_iterated_to()) > lease_us)
        .map(|v| v.count_at_value())
        .sum();
    over as f64 / n as f64
}

/// The rule: a lease, or a heartbeat when the tail is too long or the target already extends
/// its lease (`heartbeat_target`, whose `current_lease` is kept). `None` for an empty histogram.
pub fn size_lease(
    h: &Histogram<u64>,
    rule: &LeaseRule,
    heartbeat_target: bool,
    current_lease: Duration,
) -> Option<LeaseSizing> {
    let tail = tail_us(h, rule.target_risk)?;
    let with_margin = Duration::from_micros(tail).mul_f64(rule.margin.max(1.0));
    let rounded = readable::round_up(with_margin).filter(|l| *l <= rule.max_lease);
    let advice = match (rounded, heartbeat_target) {
        (Some(lease), false) => LeaseAdvice::Lease { lease },
        _ => {
            let lease = if heartbeat_target {
                current_lease
            } else {
                HEARTBEAT_LEASE
            };
            LeaseAdvice::Heartbeat {
                lease,
                extend_every: lease / 3,
                max_extension: readable::round_up(with_margin).unwrap_or(SQS_MAX_LEASE),
            }
        }
    };
    Some(LeaseSizing {
        handlers: h.len(),
        tail_us: tail,
        with_margin,
        advice,
    })
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    /// A second, in µs.
    pub(in crate::sizing) const S: u64 = 1_000_000;

    /// A histogram of (latency µs, count) pairs.
    pub(in crate::sizing) fn hist(values_us: &[(u64, u64)]) -> Histogram<u64> {
        let mut h = Histogram::<u64>::new(3).expect("histogram");
        for &(v, n) in values_us {
            h.record_n(v, n).expect("recorded");
        }
        h
    }

    fn lease_of(s: &LeaseSizing) -> Duration {
        s.advice.lease()
    }

    #[test]
    fn the_slowest_handler_sets_the_lease_when_the_sample_is_small() {
        // 324 handlers of 31-40 s: fewer than 1/risk, so the tail is the slowest one (40 s,
        // the top of its bucket); x1.25 = 50.01 s, rounded up to 60 s.
        let h = hist(&[(31 * S, 100), (35 * S, 124), (40 * S, 100)]);
        let s =
            size_lease(&h, &LeaseRule::default(), false, Duration::from_secs(30)).expect("sized");
        assert_eq!(s.tail_us, h.highest_equivalent(40 * S));
        assert_eq!(lease_of(&s), Duration::from_secs(60));
        assert!(matches!(s.advice, LeaseAdvice::Lease { .. }));
        assert_eq!(outlive_chance(&h, Duration::from_secs(60)), 0.0);
        assert_eq!(outlive_chance(&h, Duration::from_secs(30)), 1.0);
    }

    #[test]
    fn a_rare_slow_handler_below_the_risk_is_left_out() {
        // 100,000 handlers of 200 ms and 5 of 20 s: 5e-5 < 1e-4, so the 20 s ones do not set
        // the lease: 200 ms x 1.25 rounds up to 1 s. At a risk of 1e-5 they do: 25 s.
        let h = hist(&[(200_000, 100_000), (20 * S, 5)]);
        let s = size_lease(&h, &LeaseRule::default(), false, Duration::ZERO).expect("sized");
        assert_eq!(lease_of(&s), Duration::from_secs(1));
        assert!((outlive_chance(&h, Duration::from_secs(1)) - 5.0 / 100_005.0).abs() < 1e-12);
        let strict = LeaseRule {
            target_risk: 1e-5,
            ..LeaseRule::default()
        };
        let s = size_lease(&h, &strict, false, Duration::ZERO).expect("sized");
        assert_eq!(lease_of(&s), Duration::from_secs(30));
    }

    #[test]
    fn a_tail_past_the_bound_calls_for_a_heartbeat() {
        // 20-minute handlers: 25 min with the margin, above 15 min.
        let h = hist(&[(60 * S, 50), (1200 * S, 50)]);
        let s =
            size_lease(&h, &LeaseRule::default(), false, Duration::from_secs(30)).expect("sized");
        assert_eq!(
            s.advice,
            LeaseAdvice::Heartbeat {
                lease: Duration::from_secs(30),
                extend_every: Duration::from_secs(10),
                max_extension: Duration::from_secs(1800),
            }
        );
        // A heartbeat target keeps its own lease and gets a maximum extension.
        let h = hist(&[(40 * S, 10)]);
        let s =
            size_lease(&h, &LeaseRule::default(), true, Duration::from_secs(45)).expect("sized");
        assert_eq!(s.advice.lease(), Duration::from_secs(45));
        assert!(
            matches!(s.advice, LeaseAdvice::Heartbeat { max_extension, .. }
            if max_extension == Duration::from_secs(60))
        );
    }

    #[test]
    fn an_empty_histogram_sizes_nothing() {
        let h = hist(&[]);
        assert!(size_lease(&h, &LeaseRule::default(), false, Duration::ZERO).is_none());
        assert_eq!(outlive_chance(&h, Duration::from_secs(1)), 0.0);
    }
}
