//! Latency distributions: `dist` and the keys that distribution takes.

use crate::profile::duration::format_duration;
use crate::profile::path::FieldPath;
use crate::profile::problem::Problem;
use crate::profile::raw::{DistName, RawLatency};
use crate::profile::scenario::LatencyDist;

use super::checks::{non_empty, non_negative, positive, required};

const DISTS: &str = "fixed, uniform, lognormal, per_message, mix";

/// The keys each distribution takes.
fn keys_of(dist: DistName) -> &'static [&'static str] {
    match dist {
        DistName::Fixed => &["value"],
        DistName::Uniform => &["min", "max"],
        DistName::Lognormal => &["median", "p99"],
        DistName::PerMessage => &["values"],
        DistName::Mix => &["parts"],
    }
}

fn dist_name(dist: DistName) -> &'static str {
    match dist {
        DistName::Fixed => "fixed",
        DistName::Uniform => "uniform",
        DistName::Lognormal => "lognormal",
        DistName::PerMessage => "per_message",
        DistName::Mix => "mix",
    }
}

/// Resolves a distribution found at `path`; `in_mix` when it is a part of a `mix`, whose
/// `weight` the caller reads.
pub fn resolve(raw: RawLatency, path: &FieldPath, in_mix: bool) -> Result<LatencyDist, Problem> {
    let dist = required(raw.dist, &path.key("dist"), &format!("one of {DISTS}"))?;
    let present = [
        ("value", raw.value.is_some()),
        ("min", raw.min.is_some()),
        ("max", raw.max.is_some()),
        ("median", raw.median.is_some()),
        ("p99", raw.p99.is_some()),
        ("values", raw.values.is_some()),
        ("parts", raw.parts.is_some()),
    ];
    let takes = keys_of(dist);
    if let Some((stray, _)) = present
        .iter()
        .find(|(k, given)| *given && !takes.contains(k))
    {
        return Err(Problem::at_key(
            path.key(stray),
            format!(
                "does not go with dist {}, which takes {}",
                dist_name(dist),
                takes.join(", ")
            ),
        ));
    }
    if raw.weight.is_some() && !in_mix {
        return Err(Problem::at_key(
            path.key("weight"),
            "only the parts of a mix have a weight",
        ));
    }
    let need = format!("dist {} takes {}", dist_name(dist), takes.join(" and "));
    match dist {
        DistName::Fixed => Ok(LatencyDist::Fixed(
            required(raw.value, &path.key("value"), &need)?.0,
        )),
        DistName::Uniform => {
            let min = required(raw.min, &path.key("min"), &need)?.0;
            let max = required(raw.max, &path.key("max"), &need)?.0;
            if max < min {
                return Err(Problem::new(
                    path.key("max"),
                    format!(
                        "must be at least min ({}), got {}",
                        format_duration(min),
                        format_duration(max)
                    ),
                ));
            }
            Ok(LatencyDist::Uniform { min, max })
        }
        DistName::Lognormal => {
            let median = positive(
                required(raw.median, &path.key("median"), &need)?.0,
                &path.key("median"),
            )?;
            let p99 = positive(
                required(raw.p99, &path.key("p99"), &need)?.0,
                &path.key("p99"),
            )?;
            if p99 < median {
                return Err(Problem::new(
                    path.key("p99"),
                    format!(
                        "must be at least median ({}), got {}",
                        format_duration(median),
                        format_duration(p99)
                    ),
                ));
            }
            Ok(LatencyDist::LogNormal { median, p99 })
        }
        DistName::PerMessage => {
            let values = required(raw.values, &path.key("values"), &need)?;
            non_empty(
                &values,
                &path.key("values"),
                "the i-th published message takes the i-th value",
            )?;
            Ok(LatencyDist::PerMessage(
                values.into_iter().map(|d| d.0).collect(),
            ))
        }
        DistName::Mix => {
            let parts_path = path.key("parts");
            let parts = required(raw.parts, &parts_path, &need)?;
            non_empty(
                &parts,
                &parts_path,
                "list the parts, each a distribution with a weight",
            )?;
            mix(parts, &parts_path)
        }
    }
}

/// The parts of a mix: weights of 0 or more, adding up to more than 0; parts of weight 0 drop out.
fn mix(parts: Vec<RawLatency>, path: &FieldPath) -> Result<LatencyDist, Problem> {
    let mut out = Vec::with_capacity(parts.len());
    let mut total = 0.0;
    for (i, part) in parts.into_iter().enumerate() {
        let at = path.index(i);
        let weight = required(
            part.weight,
            &at.key("weight"),
            "the part's share of calls, e.g. weight: 9",
        )?;
        let weight = non_negative(weight, &at.key("weight"))?;
        let dist = resolve(part, &at, true)?;
        total += weight;
        if weight > 0.0 {
            out.push((weight, dist));
        }
    }
    if !(total.is_finite() && total > 0.0) {
        return Err(Problem::new(
            path.clone(),
            format!("the weights must add up to a positive finite number, got {total}"),
        ));
    }
    Ok(LatencyDist::Mix(out))
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use crate::profile::scenario::LatencyDist;
    use crate::profile::testutil::{error, scenario, with};

    /// `BASE` with `provider.latency` (on line 8) set to `latency`.
    fn profile(latency: &str) -> String {
        with(&format!(
            "provider:\n  effect_at: request\n  latency: {latency}\n"
        ))
    }

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn every_dist_reads() {
        let latency = |l: &str| scenario(&profile(l)).provider.latency;
        assert_eq!(
            latency("{ dist: fixed, value: 0ms }"),
            LatencyDist::Fixed(ms(0))
        );
        assert_eq!(
            latency("{ dist: uniform, min: 1s, max: 1s }"),
            LatencyDist::Uniform {
                min: ms(1000),
                max: ms(1000)
            }
        );
        assert_eq!(
            latency("{ dist: lognormal, median: 240ms, p99: 900ms }"),
            LatencyDist::LogNormal {
                median: ms(240),
                p99: ms(900)
            }
        );
        assert_eq!(
            latency("{ dist: per_message, values: [1s, 0s] }"),
            LatencyDist::PerMessage(vec![ms(1000), ms(0)])
        );
        assert_eq!(
            latency("{ dist: mix, parts: [{ weight: 9, dist: fixed, value: 1s }, { weight: 0, dist: fixed, value: 9s }, { weight: 1, dist: uniform, min: 31s, max: 40s }] }"),
            LatencyDist::Mix(vec![
                (9.0, LatencyDist::Fixed(ms(1000))),
                (1.0, LatencyDist::Uniform { min: ms(31_000), max: ms(40_000) })
            ])
        );
    }

    #[test]
    fn dist_is_required_and_named() {
        assert_eq!(
            error(&profile("{ value: 1s }")),
            "p.yaml:8:3: provider.latency.dist: required: one of fixed, uniform, lognormal, per_message, mix"
        );
        assert_eq!(
            error(&profile("{ dist: normal }")),
            "p.yaml:8:20: provider.latency.dist: unknown variant `normal`, expected one of \
             `fixed`, `uniform`, `lognormal`, `per_message`, `mix`"
        );
    }

    #[test]
    fn a_key_of_another_dist_is_refused() {
        assert_eq!(
            error(&profile("{ dist: fixed, value: 1s, max: 2s }")),
            "p.yaml:8:38: provider.latency.max: does not go with dist fixed, which takes value"
        );
        assert_eq!(
            error(&profile("{ dist: fixed, value: 1s, weight: 2 }")),
            "p.yaml:8:38: provider.latency.weight: only the parts of a mix have a weight"
        );
    }

    #[test]
    fn a_dist_needs_its_keys() {
        assert_eq!(
            error(&profile("{ dist: uniform, min: 1s }")),
            "p.yaml:8:3: provider.latency.max: required: dist uniform takes min and max"
        );
    }

    #[test]
    fn uniform_min_is_at_most_max() {
        assert_eq!(
            error(&profile("{ dist: uniform, min: 5s, max: 1s }")),
            "p.yaml:8:43: provider.latency.max: must be at least min (5s), got 1s"
        );
    }

    #[test]
    fn lognormal_is_positive_and_p99_at_least_median() {
        assert_eq!(
            error(&profile("{ dist: lognormal, median: 0s, p99: 1s }")),
            "p.yaml:8:39: provider.latency.median: must be more than 0s, got 0s"
        );
        assert_eq!(
            error(&profile("{ dist: lognormal, median: 1s, p99: 0s }")),
            "p.yaml:8:48: provider.latency.p99: must be more than 0s, got 0s"
        );
        assert_eq!(
            error(&profile("{ dist: lognormal, median: 1s, p99: 500ms }")),
            "p.yaml:8:48: provider.latency.p99: must be at least median (1s), got 500ms"
        );
    }

    #[test]
    fn per_message_values_must_not_be_empty() {
        assert_eq!(
            error(&profile("{ dist: per_message, values: [] }")),
            "p.yaml:8:33: provider.latency.values: must not be empty: the i-th published message \
             takes the i-th value"
        );
    }

    #[test]
    fn mix_weights_are_required_non_negative_finite_and_add_up_to_more_than_zero() {
        assert_eq!(
            error(&profile("{ dist: mix, parts: [] }")),
            "p.yaml:8:25: provider.latency.parts: must not be empty: list the parts, each a \
             distribution with a weight"
        );
        assert_eq!(
            error(&profile("{ dist: mix, parts: [{ dist: fixed, value: 1s }] }")),
            "p.yaml:8:33: provider.latency.parts.0.weight: required: the part's share of calls, e.g. weight: 9"
        );
        assert_eq!(
            error(&profile(
                "{ dist: mix, parts: [{ weight: -1, dist: fixed, value: 1s }] }"
            )),
            "p.yaml:8:43: provider.latency.parts.0.weight: must be a number of 0 or more, got -1"
        );
        assert_eq!(
            error(&profile(
                "{ dist: mix, parts: [{ weight: .inf, dist: fixed, value: 1s }] }"
            )),
            "p.yaml:8:43: provider.latency.parts.0.weight: must be a number of 0 or more, got inf"
        );
        assert_eq!(
            error(&profile("{ dist: mix, parts: [{ weight: 0, dist: fixed, value: 1s }] }")),
            "p.yaml:8:25: provider.latency.parts: the weights must add up to a positive finite number, got 0"
        );
    }

    #[test]
    fn mix_parts_are_checked_like_any_dist() {
        assert_eq!(
            error(&profile(
                "{ dist: mix, parts: [{ weight: 1, dist: uniform, min: 2s, max: 1s }] }"
            )),
            "p.yaml:8:75: provider.latency.parts.0.max: must be at least min (2s), got 1s"
        );
    }
}
