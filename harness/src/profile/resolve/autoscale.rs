//! `chaos[].autoscale`: a KEDA ScaledObject over the consumer's Deployment. Its keys carry KEDA's
//! and the HPA's names and defaults; every value they would refuse, or that could never scale,
//! is refused here.

use std::collections::BTreeMap;
use std::time::Duration;

use serde::Deserialize;

use crate::profile::autoscale::{
    AutoscaleRule, PolicyUnit, QueueMetric, ScalingPolicy, ScalingRules, SelectPolicy,
};
use crate::profile::consumer_spec::ConsumerSpec;
use crate::profile::fault::{ChaosRule, Fault};
use crate::profile::kinds::spec::BrokerSpec;
use crate::profile::path::FieldPath;
use crate::profile::problem::{read_value, Problem};
use crate::profile::scalar::{DurationText, Text};

use super::checks::{at_least_one, exactly_one, positive, required};

pub const FAULT: Fault = Fault {
    name: "autoscale",
    example: "autoscale: { target: 100, max: 8 }",
    // Its scale events and what each scale-in cost are read from the record's events.
    needs_full_record: true,
    resolve: |value, c, path| {
        let raw = read_value(value, path)?;
        Ok(ChaosRule::new(resolve(raw, c.consumer, c.broker, path)?))
    },
};

/// `chaos[].autoscale`.
#[derive(Debug, Default, Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a mapping with keys target, metric, activation, min, max, polling_interval, \
                 cooldown, sync_period, tolerance, scale_up, scale_down, startup, grace, signal, \
                 deletion_cost, optional"
)]
struct RawAutoscale {
    target: Option<u64>,
    metric: Option<Text>,
    activation: Option<u64>,
    min: Option<u32>,
    max: Option<u32>,
    polling_interval: Option<DurationText>,
    cooldown: Option<DurationText>,
    sync_period: Option<DurationText>,
    tolerance: Option<f64>,
    scale_up: Option<RawRules>,
    scale_down: Option<RawRules>,
    startup: Option<DurationText>,
    grace: Option<DurationText>,
    signal: Option<Text>,
    deletion_cost: Option<BTreeMap<u32, i32>>,
    optional: Option<bool>,
}

/// `scale_up` / `scale_down`: the HPA's `behavior` for one direction.
#[derive(Debug, Default, Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a mapping with keys stabilization, policies, select"
)]
struct RawRules {
    stabilization: Option<DurationText>,
    policies: Option<Vec<RawPolicy>>,
    select: Option<Text>,
}

/// One policy: `{ pods: 4, period: 15s }` or `{ percent: 100, period: 15s }`.
#[derive(Debug, Default, Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a mapping with keys pods or percent, and period"
)]
struct RawPolicy {
    pods: Option<u32>,
    percent: Option<u32>,
    period: Option<DurationText>,
}

/// The longest policy period the HPA takes (`periodSeconds` at most 1800).
const LONGEST_PERIOD: Duration = Duration::from_secs(1800);
/// The longest stabilization window the HPA takes (3600 s).
const LONGEST_WINDOW: Duration = Duration::from_secs(3600);

fn resolve(
    raw: RawAutoscale,
    consumer: &ConsumerSpec,
    broker: &BrokerSpec,
    path: &FieldPath,
) -> Result<AutoscaleRule, Problem> {
    let defaults = AutoscaleRule::new(1);
    let target = required(raw.target, &path.key("target"), "messages per replica")?;
    let target = at_least_one(target, &path.key("target"), "messages per replica")?;
    let max = raw.max.unwrap_or(defaults.max);
    at_least_one(max, &path.key("max"), "the fleet needs room for a replica")?;
    let min = raw.min.unwrap_or(defaults.min);
    if min > max {
        return Err(Problem::new(
            path.key("min"),
            format!("must be at most max ({max}), got {min}"),
        ));
    }
    let tolerance = raw.tolerance.unwrap_or(defaults.tolerance);
    if !(0.0..1.0).contains(&tolerance) {
        return Err(Problem::new(
            path.key("tolerance"),
            format!("must be from 0 up to (not including) 1, got {tolerance}"),
        ));
    }
    let duration = |d: Option<DurationText>, default: Duration| d.map_or(default, |d| d.0);
    let deletion_cost = raw.deletion_cost.unwrap_or_default();
    let slots = consumer.workers.max(max);
    for &w in deletion_cost.keys() {
        if w == 0 || w > slots {
            return Err(Problem::new(
                path.key("deletion_cost").key(&w.to_string()),
                format!(
                    "selects nothing: must be a worker number from 1 to {slots} (the most \
                     workers the fleet can have), got {w}"
                ),
            ));
        }
    }
    Ok(AutoscaleRule {
        metric: metric(raw.metric, broker, path)?,
        target,
        activation: raw.activation.unwrap_or(defaults.activation),
        min,
        max,
        polling_interval: positive(
            duration(raw.polling_interval, defaults.polling_interval),
            &path.key("polling_interval"),
        )?,
        cooldown: duration(raw.cooldown, defaults.cooldown),
        sync_period: positive(
            duration(raw.sync_period, defaults.sync_period),
            &path.key("sync_period"),
        )?,
        tolerance,
        scale_up: rules(raw.scale_up, defaults.scale_up, &path.key("scale_up"))?,
        scale_down: rules(raw.scale_down, defaults.scale_down, &path.key("scale_down"))?,
        startup: duration(raw.startup, defaults.startup),
        grace: positive(duration(raw.grace, defaults.grace), &path.key("grace"))?,
        signal: super::deploy::signal(
            raw.signal.as_ref().map(|t| t.0.as_str()),
            &path.key("signal"),
        )?,
        deletion_cost: deletion_cost.into_iter().collect(),
        optional: raw.optional.unwrap_or(false),
    })
}

/// `metric`: what KEDA's scaler for the broker's kind reads. By default messages ready, or ready
/// and in flight where the scaler reads only that (a lag); one the scaler cannot read is refused,
/// as is a kind without a scaler.
fn metric(
    raw: Option<Text>,
    broker: &BrokerSpec,
    rule: &FieldPath,
) -> Result<QueueMetric, Problem> {
    let path = rule.key("metric");
    let kind = broker.kind.descriptor();
    let Some(keda) = kind.keda.as_ref() else {
        return Err(Problem::new(
            rule.clone(),
            format!(
                "broker kind {} has no KEDA scaler: nothing reads its queue's length for the HPA",
                kind.name
            ),
        ));
    };
    let words = |m: QueueMetric| match m {
        QueueMetric::Ready => "ready",
        QueueMetric::ReadyAndInFlight => "ready_and_in_flight",
    };
    let reads = |m: QueueMetric| match m {
        QueueMetric::Ready => keda.ready.is_some(),
        QueueMetric::ReadyAndInFlight => keda.ready_and_in_flight.is_some(),
    };
    let (given, other) = match raw.as_ref().map(|t| t.0.as_str()) {
        None if reads(QueueMetric::Ready) => return Ok(QueueMetric::Ready),
        None => return Ok(QueueMetric::ReadyAndInFlight),
        Some("ready") => (QueueMetric::Ready, QueueMetric::ReadyAndInFlight),
        Some("ready_and_in_flight") => (QueueMetric::ReadyAndInFlight, QueueMetric::Ready),
        Some(other) => {
            return Err(Problem::new(
                path,
                format!(
                    "must be ready (messages waiting) or ready_and_in_flight (waiting, and \
                     delivered but not settled), got {other:?}"
                ),
            ))
        }
    };
    if reads(given) {
        return Ok(given);
    }
    Err(Problem::new(
        path,
        format!(
            "KEDA's {} scaler for broker kind {} cannot read {}: it reads {} (metric: {})",
            keda.scaler,
            kind.name,
            words(given),
            words(other),
            words(other)
        ),
    ))
}

/// One direction's `behavior`: what is given replaces the HPA's default for it.
fn rules(
    raw: Option<RawRules>,
    default: ScalingRules,
    path: &FieldPath,
) -> Result<ScalingRules, Problem> {
    let Some(raw) = raw else {
        return Ok(default);
    };
    let stabilization = raw.stabilization.map_or(default.stabilization, |d| d.0);
    if stabilization > LONGEST_WINDOW {
        return Err(Problem::new(
            path.key("stabilization"),
            "must be at most 1h (the HPA's longest stabilizationWindowSeconds)",
        ));
    }
    let select = match raw.select.as_ref().map(|t| t.0.as_str()) {
        None | Some("max") => SelectPolicy::Max,
        Some("min") => SelectPolicy::Min,
        Some("disabled") => SelectPolicy::Disabled,
        Some(other) => {
            return Err(Problem::new(
                path.key("select"),
                format!("must be max, min or disabled (the HPA's selectPolicy), got {other:?}"),
            ))
        }
    };
    let policies = match raw.policies {
        None => default.policies,
        Some(list) => {
            let at = path.key("policies");
            if list.is_empty() && select != SelectPolicy::Disabled {
                return Err(Problem::new(
                    at,
                    "must not be empty: give a policy, or select: disabled to scale no further \
                     this way",
                ));
            }
            list.into_iter()
                .enumerate()
                .map(|(i, p)| policy(p, &at.index(i)))
                .collect::<Result<_, _>>()?
        }
    };
    Ok(ScalingRules {
        stabilization,
        policies,
        select,
    })
}

fn policy(raw: RawPolicy, path: &FieldPath) -> Result<ScalingPolicy, Problem> {
    exactly_one(
        path,
        &[
            ("pods", raw.pods.is_some()),
            ("percent", raw.percent.is_some()),
        ],
        "{ pods: 4, period: 15s } or { percent: 100, period: 15s }",
    )?;
    let (unit, value) = match (raw.pods, raw.percent) {
        (Some(n), _) => (PolicyUnit::Pods, n),
        (None, p) => (PolicyUnit::Percent, p.unwrap_or_default()),
    };
    let key = match unit {
        PolicyUnit::Pods => "pods",
        PolicyUnit::Percent => "percent",
    };
    at_least_one(
        value,
        &path.key(key),
        "a policy that allows no change is select: disabled",
    )?;
    let period = required(raw.period, &path.key("period"), "the policy's period")?.0;
    let period = positive(period, &path.key("period"))?;
    if period > LONGEST_PERIOD {
        return Err(Problem::new(
            path.key("period"),
            "must be at most 30m (the HPA's longest periodSeconds)",
        ));
    }
    Ok(ScalingPolicy {
        unit,
        value,
        period,
    })
}

#[cfg(test)]
#[path = "autoscale_tests.rs"]
mod tests;
