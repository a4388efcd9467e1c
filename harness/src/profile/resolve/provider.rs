//! `provider`: when effects count, the normal latency, and phases of trouble, each selecting
//! calls by a time window and/or by key, attempt and delivery.

use crate::profile::defaults;
use crate::profile::key_source::{parse_key_source, KeySource};
use crate::profile::path::FieldPath;
use crate::profile::problem::{read_value, Problem};
use crate::profile::raw::{EffectAtName, RawErrors, RawHang, RawPhase, RawProvider};
use crate::profile::scenario::{
    EffectAt, ErrorAnswer, ErrorSpec, HangSpec, LatencyDist, Phase, ProviderSpec, WorkloadSpec,
};

use super::checks::{after, at_least_one, non_empty, required, unit_interval};
use super::keys::KeyUniverse;
use super::latency;

pub fn resolve(
    raw: RawProvider,
    workload: &WorkloadSpec,
    path: &FieldPath,
) -> Result<ProviderSpec, Problem> {
    let latency = match raw.latency {
        Some(l) => latency::resolve(l, &path.key("latency"), false)?,
        None => LatencyDist::LogNormal {
            median: defaults::LATENCY_MEDIAN,
            p99: defaults::LATENCY_P99,
        },
    };
    let effect_at = match raw.effect_at {
        None | Some(EffectAtName::Request) => EffectAt::Request,
        Some(EffectAtName::Response) => EffectAt::Response,
    };
    let keys = KeyUniverse::of(workload);
    let phases_path = path.key("phases");
    let phases = raw
        .phases
        .unwrap_or_default()
        .into_iter()
        .enumerate()
        .map(|(i, p)| phase(p, effect_at, &keys, &phases_path.index(i)))
        .collect::<Result<Vec<_>, _>>()?;
    let key = match raw.key {
        None => KeySource::default(),
        Some(k) => parse_key_source(&k.0)
            .map_err(|e| Problem::new(path.key("key"), e.replacen("--key ", "", 1)))?,
    };
    Ok(ProviderSpec {
        key,
        effect_at,
        latency,
        phases,
    })
}

fn phase(
    raw: RawPhase,
    effect_at: EffectAt,
    keys: &KeyUniverse,
    path: &FieldPath,
) -> Result<Phase, Problem> {
    if raw.after_effect.is_some() {
        return Err(Problem::at_key(
            path.key("after_effect"),
            "says whether an error or a hang comes after the call's effect: write it inside \
             errors: { status, rate, after_effect } or hang: { rate, after_effect }",
        ));
    }
    let selected = keys.selected(raw.keys, &path.key("keys"))?;
    let attempts = match raw.attempt {
        Some(v) => Some(attempts(&v, &path.key("attempt"))?),
        None => None,
    };
    let delivery = match raw.delivery {
        Some(n) => Some(at_least_one(
            n,
            &path.key("delivery"),
            "deliveries count from 1",
        )?),
        None => None,
    };
    let selectors = selected.is_some() || attempts.is_some() || delivery.is_some();
    // Without a selector a phase is a time window and says both ends (as it always has).
    let (from, to) = if selectors {
        (
            raw.from.map(|d| d.0).unwrap_or_default(),
            raw.to.map(|d| d.0),
        )
    } else {
        let from = required(
            raw.from,
            &path.key("from"),
            "when the phase starts, e.g. 0s (or select calls with keys, attempt or delivery)",
        )?
        .0;
        let to = required(
            raw.to,
            &path.key("to"),
            "when the phase ends, e.g. 90m (or select calls with keys, attempt or delivery)",
        )?
        .0;
        (from, Some(to))
    };
    if let Some(to) = to {
        after(to, from, "from", &path.key("to"))?;
    }
    if raw.latency.is_none() && raw.errors.is_none() && raw.hang.is_none() {
        return Err(Problem::new(
            path.clone(),
            "a phase changes latency, errors or hangs: give one or more of latency: {...}, \
             errors: {status, rate}, hang: <probability>",
        ));
    }
    let latency = match raw.latency {
        Some(l) => Some(latency::resolve(l, &path.key("latency"), false)?),
        None => None,
    };
    let errors = match raw.errors {
        Some(e) => Some(errors(e, &path.key("errors"))?),
        None => None,
    };
    let hang = match raw.hang {
        Some(h) => Some(hang(&h, effect_at, &path.key("hang"))?),
        None => None,
    };
    Ok(Phase {
        from,
        to,
        keys: selected,
        attempts,
        delivery,
        latency,
        errors,
        hang,
    })
}

/// `attempt`: a count, or a non-empty list of counts, each at least 1.
fn attempts(value: &yaml_serde::Value, path: &FieldPath) -> Result<Vec<u32>, Problem> {
    const HINT: &str = "a key's calls count from 1";
    let list: Vec<u32> = match value {
        yaml_serde::Value::Sequence(_) => read_value(value, path)?,
        _ => vec![read_value(value, path)?],
    };
    let listed = matches!(value, yaml_serde::Value::Sequence(_));
    non_empty(
        &list,
        path,
        "name the attempts this phase applies to, e.g. [1, 2]",
    )?;
    for (i, n) in list.iter().enumerate() {
        let at = if listed { path.index(i) } else { path.clone() };
        at_least_one(*n, &at, HINT)?;
    }
    Ok(list)
}

fn errors(raw: RawErrors, path: &FieldPath) -> Result<ErrorSpec, Problem> {
    let status_path = path.key("status");
    let status = required(
        raw.status,
        &status_path,
        "the HTTP status of the injected error, 400 to 599, or `reset`",
    )?;
    let answer = answer(&status, &status_path)?;
    let rate_path = path.key("rate");
    let rate = required(raw.rate, &rate_path, "the share of calls that fail, 0 to 1")?;
    Ok(ErrorSpec {
        answer,
        rate: unit_interval(rate, &rate_path)?,
        after_effect: raw.after_effect.unwrap_or(false),
    })
}

/// `errors.status`: an HTTP error status, or `reset` (the connection closed without an
/// answer).
fn answer(value: &yaml_serde::Value, path: &FieldPath) -> Result<ErrorAnswer, Problem> {
    if let yaml_serde::Value::String(word) = value {
        if word == "reset" {
            return Ok(ErrorAnswer::Reset);
        }
        return Err(Problem::new(
            path.clone(),
            format!(
                "must be an HTTP error status, 400 to 599, or `reset` (the connection closed \
                 without an answer), got `{word}`"
            ),
        ));
    }
    let status: u16 = read_value(value, path)?;
    if !(400..=599).contains(&status) {
        return Err(Problem::new(
            path.clone(),
            format!("must be an HTTP error status, 400 to 599, got {status}"),
        ));
    }
    Ok(ErrorAnswer::Status(status))
}

/// `hang`: a probability, or `{ rate, after_effect }`.
fn hang(
    value: &yaml_serde::Value,
    effect_at: EffectAt,
    path: &FieldPath,
) -> Result<HangSpec, Problem> {
    // As an accepted call whose answer never leaves: its work done on arrival with
    // `effect_at: request`, never with `response`.
    let accepted = effect_at == EffectAt::Request;
    if !matches!(value, yaml_serde::Value::Mapping(_)) {
        let rate: f64 = read_value(value, path)?;
        return Ok(HangSpec {
            rate: unit_interval(rate, path)?,
            after_effect: accepted,
        });
    }
    let raw: RawHang = read_value(value, path)?;
    let rate_path = path.key("rate");
    let rate = required(raw.rate, &rate_path, "the share of calls that hang, 0 to 1")?;
    Ok(HangSpec {
        rate: unit_interval(rate, &rate_path)?,
        after_effect: raw.after_effect.unwrap_or(accepted),
    })
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use crate::profile::scenario::{EffectAt, ErrorAnswer, ErrorSpec, HangSpec};
    use crate::profile::testutil::{error, scenario, with};

    /// `BASE` with one phase (on line 8) written `phase`.
    fn profile(phase: &str) -> String {
        with(&format!("provider:\n  phases:\n    - {phase}\n"))
    }

    #[test]
    fn a_phase_with_errors_reads() {
        let s = scenario(&profile(
            "{ from: 10m, to: 20m, errors: { status: 503, rate: 0.25 } }",
        ));
        let phase = &s.provider.phases[0];
        assert_eq!(
            (phase.from, phase.to),
            (Duration::from_secs(600), Some(Duration::from_secs(1200)))
        );
        assert_eq!(
            phase.errors,
            Some(ErrorSpec {
                answer: ErrorAnswer::Status(503),
                rate: 0.25,
                after_effect: false,
            })
        );
        assert_eq!(phase.latency, None);
        assert_eq!(s.provider.effect_at, EffectAt::Request);
    }

    #[test]
    fn a_phase_ends_after_it_starts() {
        assert_eq!(
            error(&profile(
                "{ from: 30m, to: 10m, errors: { status: 503, rate: 1 } }"
            )),
            "p.yaml:8:24: provider.phases.0.to: must be after from (30m), got 10m"
        );
        assert_eq!(
            error(&profile(
                "{ from: 30m, to: 30m, errors: { status: 503, rate: 1 } }"
            )),
            "p.yaml:8:24: provider.phases.0.to: must be after from (30m), got 30m"
        );
    }

    #[test]
    fn a_phase_needs_its_window_and_a_change() {
        assert_eq!(
            error(&profile("{ to: 10m, errors: { status: 503, rate: 1 } }")),
            "p.yaml:8:7: provider.phases.0.from: required: when the phase starts, e.g. 0s (or \
             select calls with keys, attempt or delivery)"
        );
        assert_eq!(
            error(&profile("{ from: 0s, to: 10m }")),
            "p.yaml:8:7: provider.phases.0: a phase changes latency, errors or hangs: give \
             one or more of latency: {...}, errors: {status, rate}, hang: <probability>"
        );
    }

    #[test]
    fn a_phase_may_only_hang_calls() {
        let s = scenario(&profile("{ from: 0s, to: 10m, hang: 0.25 }"));
        assert_eq!(
            s.provider.phases[0].hang,
            Some(HangSpec {
                rate: 0.25,
                after_effect: true
            })
        );
        assert_eq!(
            error(&profile("{ from: 0s, to: 10m, hang: 2 }")),
            "p.yaml:8:34: provider.phases.0.hang: must be between 0 and 1, got 2"
        );
    }

    #[test]
    fn an_error_status_is_400_to_599() {
        assert_eq!(
            error(&profile("{ from: 0s, to: 10m, errors: { status: 302, rate: 1 } }")),
            "p.yaml:8:46: provider.phases.0.errors.status: must be an HTTP error status, 400 to 599, got 302"
        );
        assert_eq!(
            error(&profile("{ from: 0s, to: 10m, errors: { status: 600, rate: 1 } }")),
            "p.yaml:8:46: provider.phases.0.errors.status: must be an HTTP error status, 400 to 599, got 600"
        );
    }

    #[test]
    fn an_error_rate_is_a_probability() {
        assert_eq!(
            error(&profile(
                "{ from: 0s, to: 10m, errors: { status: 500, rate: 1.5 } }"
            )),
            "p.yaml:8:57: provider.phases.0.errors.rate: must be between 0 and 1, got 1.5"
        );
        assert_eq!(
            error(&profile("{ from: 0s, to: 10m, errors: { status: 500 } }")),
            "p.yaml:8:28: provider.phases.0.errors.rate: required: the share of calls that fail, 0 to 1"
        );
    }

    #[test]
    fn selectors_make_the_window_optional() {
        let s = scenario(&profile(
            "{ keys: [msg-3], attempt: 2, delivery: 1, errors: { status: 503, rate: 1, \
             after_effect: true } }",
        ));
        let p = &s.provider.phases[0];
        assert_eq!((p.from, p.to), (Duration::ZERO, None));
        assert_eq!(p.keys, Some(vec!["msg-3".to_string()]));
        assert_eq!((p.attempts.clone(), p.delivery), (Some(vec![2]), Some(1)));
        assert_eq!(
            p.errors,
            Some(ErrorSpec {
                answer: ErrorAnswer::Status(503),
                rate: 1.0,
                after_effect: true,
            })
        );
        // A window narrows the selectors; attempt may list several.
        let s = scenario(&profile(
            "{ from: 1m, attempt: [1, 3], errors: { status: reset, rate: 0.5 } }",
        ));
        let p = &s.provider.phases[0];
        assert_eq!((p.from, p.to), (Duration::from_secs(60), None));
        assert_eq!(p.attempts, Some(vec![1, 3]));
        assert_eq!(
            p.errors.as_ref().map(|e| e.answer),
            Some(ErrorAnswer::Reset)
        );
        assert!(
            !p.errors.as_ref().unwrap().after_effect,
            "default: instead of the work"
        );
    }

    #[test]
    fn a_hang_after_the_effect_defaults_to_where_effect_at_puts_the_effect() {
        // request: the work is done on arrival, before any answer; response: with the answer,
        // which a hang never gives.
        let hang = |effect_at: &str, hang: &str| {
            let text = with(&format!(
                "provider:\n  effect_at: {effect_at}\n  phases:\n    - {{ keys: [msg-1], hang: {hang} }}\n"
            ));
            let h = scenario(&text).provider.phases[0].hang.clone().unwrap();
            (h.rate, h.after_effect)
        };
        assert_eq!(hang("request", "1"), (1.0, true));
        assert_eq!(hang("response", "1"), (1.0, false));
        assert_eq!(
            hang("response", "{ rate: 0.5, after_effect: true }"),
            (0.5, true)
        );
        assert_eq!(
            hang("request", "{ rate: 1, after_effect: false }"),
            (1.0, false)
        );
        assert_eq!(hang("request", "{ rate: 1 }"), (1.0, true));
    }

    #[test]
    fn bad_selectors_and_answers_name_their_field() {
        let cases = [
            (
                "{ keys: [msg-1], attempt: 0, hang: 1 }",
                "p.yaml:8:33: provider.phases.0.attempt: must be at least 1, got 0 (a key's \
                 calls count from 1)",
            ),
            (
                "{ attempt: [1, 0], hang: 1 }",
                "p.yaml:8:22: provider.phases.0.attempt.1: must be at least 1, got 0 (a key's \
                 calls count from 1)",
            ),
            (
                "{ attempt: [], hang: 1 }",
                "p.yaml:8:9: provider.phases.0.attempt: must not be empty: name the attempts \
                 this phase applies to, e.g. [1, 2]",
            ),
            (
                "{ attempt: two, hang: 1 }",
                "p.yaml:8:18: provider.phases.0.attempt: invalid type: string \"two\", expected \
                 a whole number from 0 to 4294967295",
            ),
            (
                "{ keys: [], hang: 1 }",
                "p.yaml:8:9: provider.phases.0.keys: must not be empty: name the message keys \
                 this rule applies to",
            ),
            (
                "{ keys: [order-1], hang: 1 }",
                "p.yaml:8:16: provider.phases.0.keys.0: `order-1` is not a message key: without \
                 workload.keys, messages are keyed msg-1, msg-2, ... (list your own keys in \
                 workload.keys)",
            ),
            (
                "{ delivery: 0, hang: 1 }",
                "p.yaml:8:19: provider.phases.0.delivery: must be at least 1, got 0 (deliveries \
                 count from 1)",
            ),
            (
                "{ keys: [msg-1], errors: { status: teapot, rate: 1 } }",
                "p.yaml:8:42: provider.phases.0.errors.status: must be an HTTP error status, 400 \
                 to 599, or `reset` (the connection closed without an answer), got `teapot`",
            ),
            (
                "{ keys: [msg-1], after_effect: true }",
                "p.yaml:8:24: provider.phases.0.after_effect: says whether an error or a hang \
                 comes after the call's effect: write it inside errors: { status, rate, \
                 after_effect } or hang: { rate, after_effect }",
            ),
            (
                "{ keys: [msg-1], latency: { dist: fixed, value: 1s }, after_effect: true }",
                "p.yaml:8:61: provider.phases.0.after_effect: says whether an error or a hang \
                 comes after the call's effect: write it inside errors: { status, rate, \
                 after_effect } or hang: { rate, after_effect }",
            ),
            (
                "{ keys: [msg-1] }",
                "p.yaml:8:7: provider.phases.0: a phase changes latency, errors or hangs: give \
                 one or more of latency: {...}, errors: {status, rate}, hang: <probability>",
            ),
            (
                "{ keys: [msg-1], hang: { rate: 1, after: true } }",
                "p.yaml:8:41: provider.phases.0.hang.after: unknown field `after`, expected `rate` or \
                 `after_effect`",
            ),
            (
                "{ keys: [msg-1], hang: { after_effect: true } }",
                "p.yaml:8:24: provider.phases.0.hang.rate: required: the share of calls that \
                 hang, 0 to 1",
            ),
            (
                "{ keys: [msg-1], errors: { status: 503, rate: 1, after_effect: yes } }",
                "p.yaml:8:70: provider.phases.0.errors.after_effect: invalid type: string \
                 \"yes\", expected a boolean",
            ),
            (
                "{ from: 5m, to: 1m, keys: [msg-1], hang: 1 }",
                "p.yaml:8:23: provider.phases.0.to: must be after from (5m), got 1m",
            ),
        ];
        let wrong: Vec<String> = cases
            .iter()
            .filter(|(phase, expected)| error(&profile(phase)) != *expected)
            .map(|(phase, _)| format!("{phase}\n  => {}", error(&profile(phase))))
            .collect();
        assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    }
}
