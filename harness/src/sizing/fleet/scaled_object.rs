//! The sized rule as Kubernetes objects: a KEDA `ScaledObject` (scaledobject.yaml) and the
//! patch of the consumer's Deployment that sets its `terminationGracePeriodSeconds`
//! (deployment-patch.yaml), so the settings a run verified are the settings deployed.

use std::time::Duration;

use yaml_serde::{Mapping, Value};

use crate::profile::kinds::keda::{Entry, KedaScaler};
use crate::profile::{AutoscaleRule, PolicyUnit, QueueMetric, ScalingRules, SelectPolicy};

/// The Deployment's name in both files, for the user to replace.
pub const DEPLOYMENT: &str = "<the consumer's Deployment>";

/// The two files' text.
#[derive(Debug, Clone, PartialEq)]
pub struct Manifests {
    pub scaled_object: String,
    pub deployment_patch: String,
}

fn map(entries: Vec<(&str, Value)>) -> Value {
    let mut m = Mapping::new();
    for (k, v) in entries {
        m.insert(Value::String(k.to_string()), v);
    }
    Value::Mapping(m)
}

fn text(s: &str) -> Value {
    Value::String(s.to_string())
}

fn seconds(d: Duration) -> Value {
    Value::Number(d.as_secs().into())
}

fn behavior(rules: &ScalingRules) -> Value {
    let policies = (rules.policies.iter())
        .map(|p| {
            let unit = match p.unit {
                PolicyUnit::Pods => "Pods",
                PolicyUnit::Percent => "Percent",
            };
            map(vec![
                ("type", text(unit)),
                ("value", Value::Number(p.value.into())),
                ("periodSeconds", seconds(p.period)),
            ])
        })
        .collect();
    let select = match rules.select {
        SelectPolicy::Max => "Max",
        SelectPolicy::Min => "Min",
        SelectPolicy::Disabled => "Disabled",
    };
    map(vec![
        ("stabilizationWindowSeconds", seconds(rules.stabilization)),
        ("selectPolicy", text(select)),
        ("policies", Value::Sequence(policies)),
    ])
}

/// The trigger's metadata, and a line saying so when the scaler cannot read `metric`.
fn trigger(scaler: &KedaScaler, rule: &AutoscaleRule) -> (Value, Option<String>) {
    let (wanted, other, other_words) = match rule.metric {
        QueueMetric::Ready => (
            scaler.ready,
            scaler.ready_and_in_flight,
            "ready and in-flight messages",
        ),
        QueueMetric::ReadyAndInFlight => (
            scaler.ready_and_in_flight,
            scaler.ready,
            "ready messages only",
        ),
    };
    let (reads, warning): (&[Entry], _) = match (wanted, other) {
        (Some(w), _) => (w, None),
        (None, Some(o)) => (
            o,
            Some(format!(
                "KEDA's {} scaler cannot read the metric the profile scaled on; this trigger \
                 reads {other_words}: run the profile with that metric before applying it",
                scaler.scaler
            )),
        ),
        (None, None) => (&[], None),
    };
    let mut meta = Mapping::new();
    let target = rule.target.to_string();
    let activation = rule.activation.to_string();
    let entries = (scaler.placeholders.iter().copied())
        .chain(reads.iter().copied())
        .chain([
            (scaler.target, target.as_str()),
            (scaler.activation, activation.as_str()),
        ]);
    for (k, v) in entries {
        meta.insert(text(k), text(v));
    }
    let t = map(vec![
        ("type", text(scaler.scaler)),
        ("metadata", Value::Mapping(meta)),
    ]);
    (t, warning)
}

fn yaml(v: &Value) -> String {
    yaml_serde::to_string(v).expect("a mapping of strings and numbers serializes")
}

/// The manifests of `rule` on a kind whose KEDA scaler is `scaler`, for the profile `profile`.
pub fn manifests(profile: &str, scaler: &KedaScaler, rule: &AutoscaleRule) -> Manifests {
    let (trigger, warning) = trigger(scaler, rule);
    let spec = map(vec![
        ("scaleTargetRef", map(vec![("name", text(DEPLOYMENT))])),
        ("pollingInterval", seconds(rule.polling_interval)),
        ("cooldownPeriod", seconds(rule.cooldown)),
        ("minReplicaCount", Value::Number(rule.min.into())),
        ("maxReplicaCount", Value::Number(rule.max.into())),
        (
            "advanced",
            map(vec![(
                "horizontalPodAutoscalerConfig",
                map(vec![(
                    "behavior",
                    map(vec![
                        ("scaleUp", behavior(&rule.scale_up)),
                        ("scaleDown", behavior(&rule.scale_down)),
                    ]),
                )]),
            )]),
        ),
        ("triggers", Value::Sequence(vec![trigger])),
    ]);
    let object = map(vec![
        ("apiVersion", text("keda.sh/v1alpha1")),
        ("kind", text("ScaledObject")),
        (
            "metadata",
            map(vec![("name", text(&format!("{profile}-consumer")))]),
        ),
        ("spec", spec),
    ]);
    let mut head = format!(
        "# The ScaledObject `ackbench size` verified on the profile {profile}. Replace the <...>\n\
         # values, then: kubectl apply -f scaledobject.yaml\n\
         # The HPA's sync period ({}s) and tolerance ({}) are the cluster's (kube-controller-manager\n\
         # flags), not this object's; a replica's startup is its image pull and readiness.\n",
        rule.sync_period.as_secs(),
        rule.tolerance
    );
    if let Some(w) = warning {
        head.push_str(&format!("# {w}.\n"));
    }
    let patch = map(vec![(
        "spec",
        map(vec![(
            "template",
            map(vec![(
                "spec",
                map(vec![("terminationGracePeriodSeconds", seconds(rule.grace))]),
            )]),
        )]),
    )]);
    Manifests {
        scaled_object: format!("{head}{}", yaml(&object)),
        deployment_patch: format!(
            "# The grace a scale-in gives a running handler, as `ackbench size` verified it on the\n\
             # profile {profile}: kubectl patch deployment <the consumer's Deployment> --patch-file \
             deployment-patch.yaml\n{}",
            yaml(&patch)
        ),
    }
}
