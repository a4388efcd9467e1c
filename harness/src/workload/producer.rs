//! The producer's sends: with `workload.producer`, a send whose answer never reaches the
//! producer is sent again after its backoff, so one message of the workload may reach the
//! broker several times. Every attempt reaches the broker (what is lost is the answer); whether
//! it becomes a broker message is the broker's deduplication's call, during the run.
//!
//! Unacknowledged draws and the jitter of an exponential backoff come from the seed's
//! `producer` stream, so a producer changes no arrival, poison flag or latency.

use rand::RngExt;
use rand_chacha::ChaCha8Rng;

use crate::profile::{ProducerBackoff, ProducerSpec, Unacknowledged};
use crate::record::{nanos, Nanos};

/// One send of the producer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Attempt {
    pub at: Nanos,
    /// The workload's message it sends (1-based, plan order).
    pub planned: u32,
    /// 1 = the first send, 2 = the first retry, ...
    pub attempt: u32,
    /// Whether the broker's answer reaches the producer; if not it retries (after its last
    /// attempt it gives up).
    pub acknowledged: bool,
}

/// One acknowledged attempt per message first sent at `at` (plan order): what a producer
/// without `workload.producer` sends.
pub fn single_attempts(at: impl IntoIterator<Item = Nanos>) -> Vec<Attempt> {
    at.into_iter()
        .enumerate()
        .map(|(i, at)| Attempt {
            at,
            planned: i as u32 + 1,
            attempt: 1,
            acknowledged: true,
        })
        .collect()
}

/// Every send of the producer for messages first sent at `at` (plan order) with keys `key(i)`
/// (0-based), sorted by time; sends at one instant go in plan order, then attempt order.
pub fn attempts(
    spec: &ProducerSpec,
    at: impl IntoIterator<Item = Nanos>,
    key: impl Fn(usize) -> String,
    rng: &mut ChaCha8Rng,
) -> Vec<Attempt> {
    let chosen: Option<std::collections::HashSet<&str>> = spec
        .keys
        .as_ref()
        .map(|k| k.iter().map(String::as_str).collect());
    let max = spec.backoff.max_attempts();
    let at = at.into_iter();
    let mut out = Vec::with_capacity(at.size_hint().0);
    for (i, first) in at.enumerate() {
        let planned = i as u32 + 1;
        let retried = chosen.as_ref().is_none_or(|c| c.contains(key(i).as_str()));
        let mut t = first;
        let mut n = 1;
        loop {
            let unacknowledged = retried
                && match spec.unacknowledged {
                    Unacknowledged::Probability(p) => rng.random::<f64>() < p,
                    Unacknowledged::FirstAttempts(k) => n <= k,
                };
            out.push(Attempt {
                at: t,
                planned,
                attempt: n,
                acknowledged: !unacknowledged,
            });
            if !unacknowledged || n >= max {
                break;
            }
            let u = match &spec.backoff {
                ProducerBackoff::Exponential(r) if r.jitter > 0.0 => rng.random::<f64>(),
                _ => 0.0,
            };
            let Some(delay) = spec.backoff.delay(n, u) else {
                break;
            };
            t = t.saturating_add(nanos(delay));
            n += 1;
        }
    }
    out.sort_by_key(|a| (a.at, a.planned, a.attempt));
    out
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::profile::RetrySpec;
    use crate::seed;

    const M: Nanos = 60_000_000_000;

    fn minutes(list: &[u64]) -> ProducerBackoff {
        ProducerBackoff::List(list.iter().map(|&m| Duration::from_secs(60 * m)).collect())
    }

    fn key(i: usize) -> String {
        format!("msg-{}", i + 1)
    }

    #[test]
    fn the_domain_example_sends_at_0_1_3_and_7_minutes() {
        // First three attempts unacknowledged, backoff 1m, 2m, 4m: sends at 0, 0+1, 1+2, 3+4
        // minutes; the fourth is acknowledged and the producer stops.
        let spec = ProducerSpec {
            unacknowledged: Unacknowledged::FirstAttempts(3),
            keys: None,
            backoff: minutes(&[1, 2, 4]),
        };
        let a = attempts(&spec, [0], key, &mut seed::stream(1, "producer"));
        let got: Vec<(Nanos, u32, bool)> = a
            .iter()
            .map(|a| (a.at / M, a.attempt, a.acknowledged))
            .collect();
        assert_eq!(
            got,
            vec![(0, 1, false), (1, 2, false), (3, 3, false), (7, 4, true)]
        );
    }

    #[test]
    fn chosen_keys_only_and_sends_sorted_by_time() {
        // Messages at 0 and 2 minutes; only msg-1 retried, first attempt unacknowledged, backoff
        // 3m: msg-1 at 0 (unacked) and 3 (acked), msg-2 once at 2: in time order 0, 2, 3.
        let spec = ProducerSpec {
            unacknowledged: Unacknowledged::FirstAttempts(1),
            keys: Some(vec!["msg-1".into()]),
            backoff: minutes(&[3]),
        };
        let a = attempts(&spec, [0, 2 * M], key, &mut seed::stream(1, "producer"));
        let got: Vec<(Nanos, u32, u32)> =
            a.iter().map(|a| (a.at / M, a.planned, a.attempt)).collect();
        assert_eq!(got, vec![(0, 1, 1), (2, 2, 1), (3, 1, 2)]);
    }

    #[test]
    fn the_producer_gives_up_after_its_last_attempt() {
        // Every attempt unacknowledged (first 9), two retries of 1m: sends at 0, 1, 2 minutes,
        // the last unacknowledged too, then nothing.
        let spec = ProducerSpec {
            unacknowledged: Unacknowledged::FirstAttempts(9),
            keys: None,
            backoff: minutes(&[1, 1]),
        };
        let a = attempts(&spec, [0], key, &mut seed::stream(1, "producer"));
        assert_eq!(a.len(), 3);
        assert!(a.iter().all(|a| !a.acknowledged));
        assert_eq!(a[2].at, 2 * M);
    }

    #[test]
    fn exponential_backoff_as_the_consumer_retry() {
        // base 1m, cap 3m, no jitter, 4 attempts, all unacknowledged: delays 1, 2, 3 (capped)
        // minutes: sends at 0, 1, 3, 6.
        let spec = ProducerSpec {
            unacknowledged: Unacknowledged::Probability(1.0),
            keys: None,
            backoff: ProducerBackoff::Exponential(RetrySpec {
                max_attempts: 4,
                base: Duration::from_secs(60),
                cap: Duration::from_secs(180),
                jitter: 0.0,
            }),
        };
        let a = attempts(&spec, [0], key, &mut seed::stream(1, "producer"));
        let at: Vec<Nanos> = a.iter().map(|a| a.at / M).collect();
        assert_eq!(at, vec![0, 1, 3, 6]);
        assert_eq!(
            spec.backoff.attempt_offsets(),
            [0, 1, 3, 6].map(|m| Duration::from_secs(60 * m)).to_vec()
        );
    }

    #[test]
    fn a_probability_draws_from_the_seed() {
        // p = 0.5 over 10,000 messages, one retry each at most: about 5,000 retries; p = 0 none.
        let at = || [0; 10_000];
        let spec = |p| ProducerSpec {
            unacknowledged: Unacknowledged::Probability(p),
            keys: None,
            backoff: minutes(&[1]),
        };
        let n = attempts(&spec(0.5), at(), key, &mut seed::stream(1, "producer")).len() - 10_000;
        assert!((4_700..5_300).contains(&n), "{n}");
        assert_eq!(
            attempts(&spec(0.0), at(), key, &mut seed::stream(1, "producer")).len(),
            10_000
        );
    }
}
