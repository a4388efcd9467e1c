//! `workload`: arrival process, count cap, explicit keys, poison messages, and the HTTP ingress
//! load ([`ingress`]) that may publish them.

use std::collections::HashMap;

use crate::profile::path::FieldPath;
use crate::profile::problem::Problem;
use crate::profile::raw::{ProcessName, RawArrival, RawPoison, RawWorkload};
use crate::profile::scenario::{Arrival, Poison, RateProcess, RunSpec, WorkloadSpec};

use super::checks::{at_least_one, exactly_one, non_empty, positive, unit_interval};
use super::ingress;
use super::keys::KeyUniverse;

const ARRIVAL_FORMS: &str = "{ every: 50s }, { rate_per_s: 2, process: poisson }, \
     { at: [0s, 3s] } or { ramp: { from: 50, to: 500, step: 50, hold: 20s } }";

/// Resolves the workload; `run` is the resolved run section (an ingress load's default users
/// depend on its duration and time scale).
pub fn resolve(
    raw: Option<RawWorkload>,
    run: &RunSpec,
    path: &FieldPath,
) -> Result<WorkloadSpec, Problem> {
    let mut raw = raw.unwrap_or_default();
    let arrival_path = path.key("arrival");
    let arrival = match raw.arrival.take() {
        Some(a) => Some(resolve_arrival(a, run, &arrival_path)?),
        None => None,
    };
    let ingress_path = path.key("ingress");
    let pace = match &raw.ingress {
        Some(i) => Some(ingress::pace(i, arrival.as_ref(), &ingress_path)?),
        None => None,
    };
    let arrival = match pace.as_ref().map_or(arrival, |p| p.arrival.clone()) {
        Some(a) => a,
        None if raw.ingress.is_some() => {
            return Err(Problem::new(
                arrival_path,
                format!(
                    "required: how messages arrive: {ARRIVAL_FORMS}; or, with an ingress load, \
                     workload.ingress.rate_per_s or workload.ingress.users"
                ),
            ))
        }
        None => {
            return Err(Problem::new(
                arrival_path,
                format!("required: how messages arrive: {ARRIVAL_FORMS}"),
            ))
        }
    };
    let count = match raw.count {
        Some(n) => Some(at_least_one(
            n,
            &path.key("count"),
            "leave count out for no cap",
        )?),
        None => None,
    };
    let keys = match raw.keys {
        Some(keys) => Some(resolve_keys(
            keys.into_iter().map(|k| k.0).collect(),
            &path.key("keys"),
        )?),
        None => None,
    };
    let mut spec = WorkloadSpec {
        arrival,
        count,
        poison: Poison::None,
        keys,
        ingress: None,
        producer: None,
        groups: match raw.groups {
            Some(n) => Some(at_least_one(
                n,
                &path.key("groups"),
                "leave groups out for one group per message key",
            )?),
            None => None,
        },
        message: None,
    };
    if let Some(poison) = raw.poison {
        spec.poison = resolve_poison(poison, &spec, &path.key("poison"))?;
    }
    if let (Some(i), Some(pace)) = (raw.ingress, pace) {
        spec.ingress = Some(ingress::resolve(
            i,
            &pace,
            &spec,
            run.time_scale,
            run.duration,
            &ingress_path,
        )?);
    }
    if let Some(p) = raw.producer {
        spec.producer = Some(super::producer::resolve(p, &spec, &path.key("producer"))?);
    }
    Ok(spec)
}

fn resolve_arrival(raw: RawArrival, run: &RunSpec, path: &FieldPath) -> Result<Arrival, Problem> {
    exactly_one(
        path,
        &[
            ("every", raw.every.is_some()),
            ("rate_per_s", raw.rate_per_s.is_some()),
            ("at", raw.at.is_some()),
            ("ramp", raw.ramp.is_some()),
        ],
        ARRIVAL_FORMS,
    )?;
    if raw.process.is_some() && raw.rate_per_s.is_none() {
        return Err(Problem::at_key(
            path.key("process"),
            "goes with rate_per_s only",
        ));
    }
    if let Some(every) = raw.every {
        return Ok(Arrival::Every(positive(every.0, &path.key("every"))?));
    }
    if let Some(rate) = raw.rate_per_s {
        if !rate.is_finite() || rate <= 0.0 {
            return Err(Problem::new(
                path.key("rate_per_s"),
                format!("must be a positive number of messages per second, got {rate}"),
            ));
        }
        let process = match raw.process {
            None | Some(ProcessName::Poisson) => RateProcess::Poisson,
            Some(ProcessName::Uniform) => RateProcess::Uniform,
        };
        return Ok(Arrival::Rate {
            rate_per_s: rate,
            process,
        });
    }
    if let Some(ramp) = raw.ramp {
        return Ok(Arrival::Ramp(super::ramp::resolve(
            ramp,
            run.duration,
            &path.key("ramp"),
        )?));
    }
    let at = raw.at.unwrap_or_default();
    non_empty(
        &at,
        &path.key("at"),
        "list the publish instants, e.g. [0s, 3s]",
    )?;
    let mut at: Vec<_> = at.into_iter().map(|d| d.0).collect();
    at.sort();
    Ok(Arrival::At(at))
}

fn resolve_keys(keys: Vec<String>, path: &FieldPath) -> Result<Vec<String>, Problem> {
    non_empty(
        &keys,
        path,
        "list the message keys in publish order, or leave keys out for msg-1, msg-2, ...",
    )?;
    // Each key's first index, so that a repeat is found in one pass.
    let mut first_at: HashMap<&str, usize> = HashMap::with_capacity(keys.len());
    for (i, key) in keys.iter().enumerate() {
        if key.is_empty() {
            return Err(Problem::new(
                path.index(i),
                "a message key must not be empty",
            ));
        }
        if let Some(&first) = first_at.get(key.as_str()) {
            return Err(Problem::new(
                path.index(i),
                format!(
                    "duplicate key `{key}` (also {}): every message needs its own key",
                    path.index(first)
                ),
            ));
        }
        first_at.insert(key, i);
    }
    Ok(keys)
}

fn resolve_poison(
    raw: RawPoison,
    workload: &WorkloadSpec,
    path: &FieldPath,
) -> Result<Poison, Problem> {
    exactly_one(
        path,
        &[
            ("first", raw.first.is_some()),
            ("fraction", raw.fraction.is_some()),
            ("keys", raw.keys.is_some()),
        ],
        "{ first: 3 }, { fraction: 0.01 } or { keys: [msg-7] }",
    )?;
    if let Some(n) = raw.first {
        return Ok(Poison::First(n));
    }
    if let Some(f) = raw.fraction {
        return Ok(Poison::Fraction(unit_interval(f, &path.key("fraction"))?));
    }
    let keys: Vec<String> = raw
        .keys
        .unwrap_or_default()
        .into_iter()
        .map(|k| k.0)
        .collect();
    let universe = KeyUniverse::of(workload);
    let keys_path = path.key("keys");
    for (i, k) in keys.iter().enumerate() {
        universe.check(k, &keys_path.index(i))?;
    }
    Ok(Poison::Keys(keys))
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use crate::profile::scenario::{Arrival, Poison, RateProcess};
    use crate::profile::testutil::{error, scenario};

    /// A profile whose workload section (from line 3) is `workload`.
    fn profile(workload: &str) -> String {
        format!("run: {{ duration: 10m }}\nconsumer: {{ target: ack-after-work }}\nworkload:\n{workload}")
    }

    fn secs(n: u64) -> Duration {
        Duration::from_secs(n)
    }

    #[test]
    fn arrival_is_required() {
        assert_eq!(
            error(&profile("  count: 3\n")),
            "p.yaml:3:1: workload.arrival: required: how messages arrive: { every: 50s }, \
             { rate_per_s: 2, process: poisson }, { at: [0s, 3s] } or \
             { ramp: { from: 50, to: 500, step: 50, hold: 20s } }"
        );
    }

    #[test]
    fn arrival_takes_exactly_one_form() {
        assert_eq!(
            error(&profile("  arrival: {}\n")),
            "p.yaml:4:3: workload.arrival: give one of every, rate_per_s, at, ramp, as in \
             { every: 50s }, { rate_per_s: 2, process: poisson }, { at: [0s, 3s] } or \
             { ramp: { from: 50, to: 500, step: 50, hold: 20s } }"
        );
        assert_eq!(
            error(&profile("  arrival:\n    every: 1s\n    at: [0s]\n")),
            "p.yaml:4:3: workload.arrival: give only one of every, rate_per_s, at, ramp, got every \
             and at"
        );
    }

    #[test]
    fn every_must_be_positive() {
        assert_eq!(
            error(&profile("  arrival:\n    every: 0s\n")),
            "p.yaml:5:12: workload.arrival.every: must be more than 0s, got 0s"
        );
    }

    #[test]
    fn rate_must_be_positive_and_finite() {
        assert_eq!(
            error(&profile("  arrival:\n    rate_per_s: 0\n")),
            "p.yaml:5:17: workload.arrival.rate_per_s: must be a positive number of messages \
             per second, got 0"
        );
        assert!(error(&profile("  arrival: { rate_per_s: .inf }\n")).contains("got inf"));
        assert!(error(&profile("  arrival: { rate_per_s: -2 }\n")).contains("got -2"));
    }

    #[test]
    fn rate_process_defaults_to_poisson() {
        let s = scenario(&profile("  arrival: { rate_per_s: 2 }\n"));
        assert_eq!(
            s.workload.arrival,
            Arrival::Rate {
                rate_per_s: 2.0,
                process: RateProcess::Poisson
            }
        );
        let s = scenario(&profile("  arrival: { rate_per_s: 2, process: uniform }\n"));
        assert_eq!(
            s.workload.arrival,
            Arrival::Rate {
                rate_per_s: 2.0,
                process: RateProcess::Uniform
            }
        );
    }

    #[test]
    fn process_goes_with_rate_only() {
        assert_eq!(
            error(&profile(
                "  arrival:\n    every: 1s\n    process: uniform\n"
            )),
            "p.yaml:6:5: workload.arrival.process: goes with rate_per_s only"
        );
    }

    #[test]
    fn at_instants_are_sorted() {
        let s = scenario(&profile("  arrival: { at: [3s, 0s, 1s] }\n"));
        assert_eq!(
            s.workload.arrival,
            Arrival::At(vec![secs(0), secs(1), secs(3)])
        );
    }

    #[test]
    fn at_must_not_be_empty() {
        assert_eq!(
            error(&profile("  arrival:\n    at: []\n")),
            "p.yaml:5:5: workload.arrival.at: must not be empty: list the publish instants, e.g. [0s, 3s]"
        );
    }

    #[test]
    fn count_must_be_at_least_one() {
        assert_eq!(
            error(&profile("  arrival: { every: 1s }\n  count: 0\n")),
            "p.yaml:5:10: workload.count: must be at least 1, got 0 (leave count out for no cap)"
        );
    }

    #[test]
    fn keys_are_kept_in_order_and_may_be_numbers() {
        let s = scenario(&profile(
            "  arrival: { every: 1s }\n  keys: [order-9, 1001, order-3]\n",
        ));
        assert_eq!(
            s.workload.keys,
            Some(vec!["order-9".into(), "1001".into(), "order-3".into()])
        );
    }

    #[test]
    fn keys_must_be_unique() {
        assert_eq!(
            error(&profile(
                "  arrival: { every: 1s }\n  keys:\n    - a\n    - b\n    - a\n"
            )),
            "p.yaml:8:7: workload.keys.2: duplicate key `a` (also workload.keys.0): every message \
             needs its own key"
        );
    }

    #[test]
    fn a_long_key_list_is_checked_in_one_pass() {
        // 200,000 distinct keys, then key-7 again: the repeat is item 200,000 and the first
        // one item 7. (A pairwise check would not finish in the suite; the time itself is not
        // asserted here.)
        let n = 200_000;
        let mut list: String = (0..n).map(|i| format!("key-{i},")).collect();
        list.push_str("key-7");
        let e = error(&profile(&format!(
            "  arrival: {{ every: 1s }}\n  keys: [{list}]\n"
        )));
        assert!(
            e.ends_with(
                "workload.keys.200000: duplicate key `key-7` (also workload.keys.7): every \
                 message needs its own key"
            ),
            "{e}"
        );
        let keys: Vec<String> = (0..n).map(|i| format!("key-{i}")).collect();
        let ok = super::resolve_keys(keys, &crate::profile::path::FieldPath::root().key("keys"));
        assert_eq!(ok.map(|k| k.len()), Ok(n));
    }

    #[test]
    fn keys_must_not_be_empty() {
        assert_eq!(
            error(&profile("  arrival: { every: 1s }\n  keys: []\n")),
            "p.yaml:5:3: workload.keys: must not be empty: list the message keys in publish \
             order, or leave keys out for msg-1, msg-2, ..."
        );
        assert_eq!(
            error(&profile("  arrival: { every: 1s }\n  keys: [a, '']\n")),
            "p.yaml:5:13: workload.keys.1: a message key must not be empty"
        );
    }

    #[test]
    fn poison_takes_exactly_one_form() {
        assert_eq!(
            error(&profile("  arrival: { every: 1s }\n  poison: { first: 1, fraction: 0.5 }\n")),
            "p.yaml:5:3: workload.poison: give only one of first, fraction, keys, got first and fraction"
        );
    }

    #[test]
    fn poison_fraction_is_a_probability() {
        assert_eq!(
            error(&profile(
                "  arrival: { every: 1s }\n  poison: { fraction: 1.5 }\n"
            )),
            "p.yaml:5:23: workload.poison.fraction: must be between 0 and 1, got 1.5"
        );
        let s = scenario(&profile(
            "  arrival: { every: 1s }\n  poison: { fraction: 0.01 }\n",
        ));
        assert_eq!(s.workload.poison, Poison::Fraction(0.01));
    }

    #[test]
    fn poison_keys_must_be_among_explicit_keys() {
        assert_eq!(
            error(&profile(
                "  arrival: { every: 1s }\n  keys: [a, b]\n  poison:\n    keys: [b, c]\n"
            )),
            "p.yaml:7:15: workload.poison.keys.1: `c` is not one of workload.keys (a, b)"
        );
        let s = scenario(&profile(
            "  arrival: { every: 1s }\n  keys: [a, b]\n  poison: { keys: [b] }\n",
        ));
        assert_eq!(s.workload.poison, Poison::Keys(vec!["b".into()]));
    }

    #[test]
    fn poison_keys_without_explicit_keys_are_msg_n() {
        assert_eq!(
            error(&profile("  arrival: { every: 1s }\n  poison: { keys: [msg-3, order-1] }\n")),
            "p.yaml:5:27: workload.poison.keys.1: `order-1` is not a message key: without \
             workload.keys, messages are keyed msg-1, msg-2, ... (list your own keys in workload.keys)"
        );
        assert_eq!(
            error(&profile(
                "  arrival: { every: 1s }\n  count: 5\n  poison: { keys: [msg-6] }\n"
            )),
            "p.yaml:6:20: workload.poison.keys.0: `msg-6` is never published: the workload \
             publishes at most 5 messages (msg-1 to msg-5)"
        );
        let s = scenario(&profile(
            "  arrival: { at: [0s, 1s] }\n  poison: { keys: [msg-2] }\n",
        ));
        assert_eq!(s.workload.poison, Poison::Keys(vec!["msg-2".into()]));
        assert!(error(&profile(
            "  arrival: { at: [0s, 1s] }\n  poison: { keys: [msg-3] }\n"
        ))
        .contains("publishes at most 2 messages"));
    }
}
