//! `provider`: when effects count, the normal latency, and timed phases of trouble.

use crate::profile::defaults;
use crate::profile::key_source::{parse_key_source, KeySource};
use crate::profile::path::FieldPath;
use crate::profile::problem::Problem;
use crate::profile::raw::{EffectAtName, RawErrors, RawPhase, RawProvider};
use crate::profile::scenario::{EffectAt, ErrorSpec, LatencyDist, Phase, ProviderSpec};

use super::checks::{after, required, unit_interval};
use super::latency;

pub fn resolve(raw: RawProvider, path: &FieldPath) -> Result<ProviderSpec, Problem> {
    let latency = match raw.latency {
        Some(l) => latency::resolve(l, &path.key("latency"), false)?,
        None => LatencyDist::LogNormal {
            median: defaults::LATENCY_MEDIAN,
            p99: defaults::LATENCY_P99,
        },
    };
    let phases_path = path.key("phases");
    let phases = raw
        .phases
        .unwrap_or_default()
        .into_iter()
        .enumerate()
        .map(|(i, p)| phase(p, &phases_path.index(i)))
        .collect::<Result<Vec<_>, _>>()?;
    let key = match raw.key {
        None => KeySource::default(),
        Some(k) => parse_key_source(&k.0)
            .map_err(|e| Problem::new(path.key("key"), e.replacen("--key ", "", 1)))?,
    };
    Ok(ProviderSpec {
        key,
        effect_at: match raw.effect_at {
            None | Some(EffectAtName::Request) => EffectAt::Request,
            Some(EffectAtName::Response) => EffectAt::Response,
        },
        latency,
        phases,
    })
}

fn phase(raw: RawPhase, path: &FieldPath) -> Result<Phase, Problem> {
    let from = required(
        raw.from,
        &path.key("from"),
        "when the phase starts, e.g. 0s",
    )?
    .0;
    let to = required(raw.to, &path.key("to"), "when the phase ends, e.g. 90m")?.0;
    after(to, from, "from", &path.key("to"))?;
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
        Some(h) => Some(unit_interval(h, &path.key("hang"))?),
        None => None,
    };
    Ok(Phase {
        from,
        to,
        latency,
        errors,
        hang,
    })
}

fn errors(raw: RawErrors, path: &FieldPath) -> Result<ErrorSpec, Problem> {
    let status_path = path.key("status");
    let status = required(
        raw.status,
        &status_path,
        "the HTTP status of the injected error, 400 to 599",
    )?;
    if !(400..=599).contains(&status) {
        return Err(Problem::new(
            status_path,
            format!("must be an HTTP error status, 400 to 599, got {status}"),
        ));
    }
    let rate_path = path.key("rate");
    let rate = required(raw.rate, &rate_path, "the share of calls that fail, 0 to 1")?;
    Ok(ErrorSpec {
        status,
        rate: unit_interval(rate, &rate_path)?,
    })
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use crate::profile::scenario::{EffectAt, ErrorSpec};
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
            (Duration::from_secs(600), Duration::from_secs(1200))
        );
        assert_eq!(
            phase.errors,
            Some(ErrorSpec {
                status: 503,
                rate: 0.25
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
            "p.yaml:8:7: provider.phases.0.from: required: when the phase starts, e.g. 0s"
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
        assert_eq!(s.provider.phases[0].hang, Some(0.25));
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
}
