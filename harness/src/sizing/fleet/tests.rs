//! The rules worked by hand on the shipped morning and evening profiles, and the manifests.

use std::time::Duration;

use super::scaled_object::manifests;
use super::*;
use crate::profile::testutil::{scenario, with};

fn rule(yaml: &str) -> AutoscaleRule {
    let s = scenario(&with(&format!("chaos:\n  - autoscale: {yaml}\n")));
    s.chaos[0]
        .get::<AutoscaleRule>()
        .expect("an autoscale rule")
        .clone()
}

fn secs(s: u64) -> Duration {
    Duration::from_secs(s)
}

/// The rule `yaml` sized with a margin of 1.25.
fn sized(
    yaml: &str,
    p99: Duration,
    mean_handler: Duration,
    peak_workers: u32,
    messages: Option<u64>,
) -> FleetSizing {
    size_fleet(&FleetInputs {
        rule: &rule(yaml),
        p99,
        margin: 1.25,
        mean_handler,
        peak_workers,
        messages,
    })
}

/// autoscale-evening-sqs: 10-minute jobs, 4 of them, on 1 to 4 replicas scaled on ready
/// messages, grace 30 s. Little's law at 1 a second x 600 s / 0.7 asks 858 workers.
fn evening() -> FleetSizing {
    let yaml = "{ target: 1, metric: ready, min: 1, max: 4 }";
    sized(yaml, secs(600), secs(600), 858, Some(4))
}

fn setting<'a>(f: &'a FleetSizing, key: &str) -> &'a FleetSetting {
    (f.settings.iter()).find(|s| s.key == key).expect(key)
}

/// autoscale-morning-sqs: 20 s handlers, replicas 60 s to start, Little's law's 29 workers at
/// the peak (1 order a second x 20 s / 0.7), 120 orders.
#[test]
fn the_morning_keeps_its_target_and_sizes_max_by_littles_law() {
    let f = sized(
        "{ target: 5, metric: ready_and_in_flight, min: 1, max: 10, startup: 60s }",
        secs(20),
        secs(20),
        29,
        Some(120),
    );
    // grace: 20 s x 1.25 = 25 s, within the 30 s default: kept.
    assert_eq!(f.rule.grace, secs(30));
    assert!(setting(&f, "grace").reason.starts_with(
        "kept: it covers the handler p99 under the fault, 20 s, x the margin 1.25 = 25s"
    ));
    // max: min(29, 120 messages) = 29.
    assert_eq!(f.rule.max, 29);
    // min: 1 already.
    assert_eq!(f.rule.min, 1);
    // target: sync 15 s + startup 60 s = 75 s; ceil(75 / 20) = 4, + 1 in flight = 5: kept.
    assert_eq!(f.rule.target, 5);
    // The window: 300 s, longer than the 75 s a replica takes to come back: kept.
    assert_eq!(f.rule.scale_down.stabilization, secs(300));
    assert_eq!(f.sets(0), ["chaos.0.autoscale.max=29"]);
    let keys: Vec<_> = f.settings.iter().map(|s| s.key).collect();
    assert_eq!(
        keys,
        [
            "grace",
            "max",
            "min",
            "target",
            "polling_interval",
            "cooldown",
            "scale_down.stabilization"
        ]
    );
}

#[test]
fn the_evening_gets_a_grace_and_a_window_longer_than_its_jobs() {
    let f = evening();
    // grace: 600 s x 1.25 = 750 s = 12m30s.
    assert_eq!(f.rule.grace, secs(750));
    // max: 858 capped at the 4 messages.
    assert_eq!(f.rule.max, 4);
    assert!(setting(&f, "max")
        .reason
        .contains("capped at the 4 messages"));
    // target: ceil(15 s / 600 s) = 1, no in-flight message counted.
    assert_eq!(f.rule.target, 1);
    // The window: 300 s, longer than the 15 s a replica takes to come back: kept.
    assert_eq!(f.rule.scale_down.stabilization, secs(300));
    assert_eq!(f.sets(2), ["chaos.2.autoscale.grace=12m30s"]);
}

#[test]
fn a_fleet_at_zero_is_given_one_replica_and_max_is_never_below_it() {
    // min 0, polling 30 s, startup 45 s: the first message waits up to 75 s.
    let f = sized(
        "{ target: 10, startup: 45s }",
        Duration::from_millis(300),
        Duration::from_millis(240),
        1,
        None,
    );
    assert_eq!((f.rule.min, f.rule.max), (1, 1));
    assert!(
        setting(&f, "min").reason.contains("(up to 1m15s)"),
        "{:?}",
        setting(&f, "min")
    );
    // target: (15 s + 45 s) / 0.24 s = 250.
    assert_eq!(f.rule.target, 250);
    // grace: 0.3 s x 1.25 rounds up to 1 s, under the 30 s default: kept.
    assert_eq!(f.rule.grace, secs(30));
    assert_eq!(
        f.sets(0),
        [
            "chaos.0.autoscale.max=1",
            "chaos.0.autoscale.min=1",
            "chaos.0.autoscale.target=250"
        ]
    );
}

#[test]
fn a_window_shorter_than_a_replicas_return_is_raised_to_it() {
    // A 5m window, a 15 s sync and replicas 10 minutes to start: 10m15s.
    let f = sized(
        "{ target: 2, min: 1, max: 3, startup: 10m }",
        secs(1),
        secs(1),
        3,
        None,
    );
    assert_eq!(f.rule.scale_down.stabilization, secs(615));
    assert!(f
        .sets(0)
        .contains(&"chaos.0.autoscale.scale_down.stabilization=10m15s".to_string()));
}

#[test]
fn the_scaled_object_carries_the_sized_rule_in_the_scalers_words() {
    let f = evening();
    let sqs = crate::profile::kinds::sqs::KIND
        .keda
        .as_ref()
        .expect("a scaler");
    let m = manifests("evening", sqs, &f.rule);
    let expected = "\
# The ScaledObject `ackbench size` verified on the profile evening. Replace the <...>
# values, then: kubectl apply -f scaledobject.yaml
# The HPA's sync period (15s) and tolerance (0.1) are the cluster's (kube-controller-manager
# flags), not this object's; a replica's startup is its image pull and readiness.
apiVersion: keda.sh/v1alpha1
kind: ScaledObject
metadata:
  name: evening-consumer
spec:
  scaleTargetRef:
    name: <the consumer's Deployment>
  pollingInterval: 30
  cooldownPeriod: 300
  minReplicaCount: 1
  maxReplicaCount: 4
  advanced:
    horizontalPodAutoscalerConfig:
      behavior:
        scaleUp:
          stabilizationWindowSeconds: 0
          selectPolicy: Max
          policies:
          - type: Percent
            value: 100
            periodSeconds: 15
          - type: Pods
            value: 4
            periodSeconds: 15
        scaleDown:
          stabilizationWindowSeconds: 300
          selectPolicy: Max
          policies:
          - type: Percent
            value: 100
            periodSeconds: 15
  triggers:
  - type: aws-sqs-queue
    metadata:
      queueURL: <the queue's URL>
      awsRegion: <the queue's region>
      scaleOnInFlight: 'false'
      queueLength: '1'
      activationQueueLength: '0'
";
    assert_eq!(m.scaled_object, expected);
    assert!(m
        .deployment_patch
        .ends_with("spec:\n  template:\n    spec:\n      terminationGracePeriodSeconds: 750\n"));
    // The file parses back, the values as KEDA reads them.
    let v: yaml_serde::Value = yaml_serde::from_str(&m.scaled_object).expect("YAML");
    assert_eq!(v["spec"]["triggers"][0]["metadata"]["queueLength"], "1");
}

#[test]
fn a_scaler_that_cannot_read_the_metric_says_what_its_trigger_reads() {
    // Redis Streams scaled on ready + in flight: KEDA's scaler reads the lag (ready) only.
    let now = rule("{ target: 3, metric: ready_and_in_flight, min: 1, max: 4 }");
    let streams = crate::profile::kinds::redis_streams::KIND
        .keda
        .as_ref()
        .expect("a scaler");
    let m = manifests("p", streams, &now);
    assert!(m.scaled_object.contains("# KEDA's redis-streams scaler cannot read the metric the profile scaled on; this trigger reads ready messages only"), "{}", m.scaled_object);
    assert!(m.scaled_object.contains("      lagCount: '3'\n"));
    // Kafka's share groups have no scaler at all.
    assert!(crate::profile::kinds::kafka_share::KIND.keda.is_none());
}

#[test]
fn a_fleet_row_sums_the_scale_ins() {
    use crate::metrics::autoscale::{Autoscaling, ScaleEvent};
    use crate::metrics::deploys::StopCost;
    use crate::record::ScaledBy;
    let cut = |interrupted, duplicates| StopCost {
        told: interrupted,
        stopped: 0,
        killed: interrupted,
        interrupted,
        duplicates,
        lost: 0,
        late: 0,
    };
    let event = |to, cost| ScaleEvent {
        at_s: 0.0,
        by: ScaledBy::Hpa,
        metric: 0,
        from: 0,
        to,
        cost,
        lag: None,
    };
    // The evening: 4 -> 1 cutting 3 (3 duplicated), 1 -> 2, 2 -> 1 cutting 1 (duplicated).
    let a = Autoscaling {
        rule: 0,
        scale_events: vec![
            event(1, Some(cut(3, 3))),
            event(2, None),
            event(1, Some(cut(1, 1))),
        ],
        workers_max: 4,
        worker_seconds: 4066.0,
    };
    let row = FleetRow::of_scaling(&a);
    assert_eq!((row.scale_events, row.scale_ins_that_stopped), (3, 2));
    assert_eq!((row.handlers_cut, row.cut_with_duplicate), (4, 4));
}

#[test]
fn a_rule_that_never_scaled_still_shows_the_fleet_it_ran() {
    // One worker, min = max = 1: the HPA never changes the count. The summary has no
    // `autoscaling`; the row has no event and the one worker, running for the whole run.
    let s = scenario(&with(
        "chaos:\n  - autoscale: { target: 1000, min: 1, max: 1, optional: true }\n",
    ));
    let run = crate::sizing::simulate::simulate(&s).expect("a run");
    assert!(run.summary.autoscaling.is_none());
    let row = FleetRow::of(&run);
    assert_eq!((row.scale_events, row.workers_max), (0, run.record.workers));
    assert!(row.worker_seconds > 0.0, "{row:?}");
}

#[test]
fn periods_are_whole_seconds_rounded_up_past_the_histograms_slack() {
    let ms = Duration::from_millis;
    // 20.005 s x 1.25 = 25.006 s: within 10 ms of 25 s.
    assert_eq!(whole_seconds_up(ms(25_006)), secs(25));
    assert_eq!(whole_seconds_up(ms(25_020)), secs(26));
    assert_eq!(whole_seconds_up(ms(300)), secs(1));
    assert_eq!(whole_seconds_up(secs(75)), secs(75));
}
