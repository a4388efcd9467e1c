//! `workload.producer`: a producer that does not get every send acknowledged, and retries.

use crate::profile::path::FieldPath;
use crate::profile::problem::Problem;
use crate::profile::raw::RawProducer;
use crate::profile::scenario::{ProducerBackoff, ProducerSpec, Unacknowledged, WorkloadSpec};

use super::checks::{at_least_one, exactly_one, non_empty, positive, unit_interval};
use super::consumer::retry;
use super::keys::KeyUniverse;

/// Resolves `workload.producer`; `workload` is the rest of the workload, resolved (its keys).
pub fn resolve(
    raw: RawProducer,
    workload: &WorkloadSpec,
    path: &FieldPath,
) -> Result<ProducerSpec, Problem> {
    if workload.ingress.is_some() {
        return Err(Problem::at_key(
            path.clone(),
            "an HTTP ingress load publishes through the system's own service, which is the \
             producer: leave workload.producer out with workload.ingress",
        ));
    }
    exactly_one(
        path,
        &[
            ("probability", raw.probability.is_some()),
            ("first_attempts", raw.first_attempts.is_some()),
        ],
        "{ first_attempts: 3 } or { probability: 0.05 } (which sends get no answer)",
    )?;
    let unacknowledged = match (raw.probability, raw.first_attempts) {
        (Some(p), _) => Unacknowledged::Probability(unit_interval(p, &path.key("probability"))?),
        (None, Some(n)) => Unacknowledged::FirstAttempts(at_least_one(
            n,
            &path.key("first_attempts"),
            "leave workload.producer out for a producer whose every send is acknowledged",
        )?),
        (None, None) => unreachable!("exactly one is given"),
    };
    let keys = match raw.keys {
        Some(keys) => {
            let keys: Vec<String> = keys.into_iter().map(|k| k.0).collect();
            let keys_path = path.key("keys");
            non_empty(
                &keys,
                &keys_path,
                "name the keys whose sends go unacknowledged, or leave keys out for every key",
            )?;
            let universe = KeyUniverse::of(workload);
            for (i, k) in keys.iter().enumerate() {
                universe.check(k, &keys_path.index(i))?;
            }
            Some(keys)
        }
        None => None,
    };
    exactly_one(
        path,
        &[
            ("backoff", raw.backoff.is_some()),
            ("retry", raw.retry.is_some()),
        ],
        "{ backoff: [1m, 2m, 4m] } or { retry: { max_attempts: 4, base: 1m, cap: 4m } } (when \
         the producer sends again)",
    )?;
    let backoff = match (raw.backoff, raw.retry) {
        (Some(list), _) => {
            let list_path = path.key("backoff");
            non_empty(
                &list,
                &list_path,
                "the delay before each retry, as in [1m, 2m, 4m]",
            )?;
            let mut delays = Vec::with_capacity(list.len());
            for (i, d) in list.into_iter().enumerate() {
                delays.push(positive(d.0, &list_path.index(i))?);
            }
            ProducerBackoff::List(delays)
        }
        (None, Some(r)) => ProducerBackoff::Exponential(retry(r, &path.key("retry"))?),
        (None, None) => unreachable!("exactly one is given"),
    };
    Ok(ProducerSpec {
        unacknowledged,
        keys,
        backoff,
    })
}
