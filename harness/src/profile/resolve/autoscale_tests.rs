use std::time::Duration;

use crate::profile::autoscale::ScalingPolicy;
use crate::profile::testutil::{error, one_chaos_rule, scenario, BASE};
use crate::profile::{AutoscaleRule, PolicyUnit, QueueMetric, ScalingRules, SelectPolicy};

/// `BASE` with three workers and one autoscale rule (on line 7) written `rule`.
fn profile(rule: &str) -> String {
    format!(
        "{}chaos:\n  - autoscale: {rule}\n",
        BASE.replace(
            "target: ack-after-work",
            "target: ack-after-work, workers: 3"
        )
    )
}

fn rule(text: &str) -> AutoscaleRule {
    let rule = one_chaos_rule(&profile(text));
    rule.get::<AutoscaleRule>().cloned().expect("an autoscale")
}

#[test]
fn an_autoscale_gets_keda_s_and_the_hpa_s_defaults() {
    assert_eq!(rule("{ target: 100 }"), AutoscaleRule::new(100));
    let r = rule(
        "{ target: 5, metric: ready_and_in_flight, activation: 2, min: 1, max: 6, \
         polling_interval: 10s, cooldown: 1m, sync_period: 5s, tolerance: 0, startup: 20s, \
         grace: 45s, signal: SIGINT, deletion_cost: { 2: 100 }, optional: true, \
         scale_up: { policies: [{ pods: 1, period: 1m }], select: min }, \
         scale_down: { stabilization: 0s, select: disabled } }",
    );
    assert_eq!(
        (r.metric, r.activation, r.min, r.max, r.tolerance),
        (QueueMetric::ReadyAndInFlight, 2, 1, 6, 0.0)
    );
    assert_eq!(
        (
            r.polling_interval,
            r.cooldown,
            r.sync_period,
            r.startup,
            r.grace
        ),
        (
            Duration::from_secs(10),
            Duration::from_secs(60),
            Duration::from_secs(5),
            Duration::from_secs(20),
            Duration::from_secs(45)
        )
    );
    assert_eq!((r.cost_of(2), r.cost_of(1), r.optional), (100, 0, true));
    assert_eq!(
        r.scale_up,
        ScalingRules {
            stabilization: Duration::ZERO,
            policies: vec![ScalingPolicy {
                unit: PolicyUnit::Pods,
                value: 1,
                period: Duration::from_secs(60)
            }],
            select: SelectPolicy::Min,
        }
    );
    // A direction given in part keeps the HPA's default for the rest: its policies here.
    assert_eq!(
        r.scale_down,
        ScalingRules {
            stabilization: Duration::ZERO,
            select: SelectPolicy::Disabled,
            ..ScalingRules::default_down()
        }
    );
}

#[test]
fn what_could_never_scale_is_refused() {
    let cases = [
        ("{ max: 4 }", "chaos.0.autoscale.target: required: messages per replica"),
        ("{ target: 0 }", "chaos.0.autoscale.target: must be at least 1, got 0"),
        ("{ target: 10, max: 0 }", "chaos.0.autoscale.max: must be at least 1, got 0"),
        ("{ target: 10, min: 5, max: 4 }", "chaos.0.autoscale.min: must be at most max (4), got 5"),
        ("{ target: 10, tolerance: 1.5 }", "chaos.0.autoscale.tolerance: must be from 0 up to"),
        ("{ target: 10, metric: lag }", "chaos.0.autoscale.metric: must be ready"),
        ("{ target: 10, sync_period: 0s }", "chaos.0.autoscale.sync_period: must be more than 0s"),
        ("{ target: 10, grace: 0s }", "chaos.0.autoscale.grace: must be more than 0s"),
        ("{ target: 10, signal: SIGKILL }", "chaos.0.autoscale.signal: must be SIGTERM or SIGINT"),
        ("{ target: 10, max: 4, deletion_cost: { 5: 1 } }", "chaos.0.autoscale.deletion_cost.5: selects nothing: must be a worker number from 1 to 4"),
        ("{ target: 10, scale_up: { policies: [] } }", "chaos.0.autoscale.scale_up.policies: must not be empty"),
        ("{ target: 10, scale_up: { policies: [{ pods: 1 }] } }", "chaos.0.autoscale.scale_up.policies.0.period: required"),
        ("{ target: 10, scale_up: { policies: [{ period: 15s }] } }", "chaos.0.autoscale.scale_up.policies.0: give one of pods, percent"),
        ("{ target: 10, scale_up: { policies: [{ pods: 0, period: 15s }] } }", "chaos.0.autoscale.scale_up.policies.0.pods: must be at least 1, got 0"),
        ("{ target: 10, scale_down: { policies: [{ percent: 50, period: 31m }] } }", "chaos.0.autoscale.scale_down.policies.0.period: must be at most 30m"),
        ("{ target: 10, scale_down: { stabilization: 2h } }", "chaos.0.autoscale.scale_down.stabilization: must be at most 1h"),
        ("{ target: 10, scale_down: { select: most } }", "chaos.0.autoscale.scale_down.select: must be max, min or disabled"),
        ("{ target: 10, replicas: 3 }", "unknown field `replicas`"),
    ];
    for (rule, want) in cases {
        let got = error(&profile(rule));
        assert!(got.contains(want), "{rule}: got {got}");
    }
}

#[test]
fn a_profile_holds_one_autoscale_rule_live_only_where_its_kind_reads_the_queue() {
    let two = format!(
        "{}  - autoscale: {{ target: 5 }}\n",
        profile("{ target: 10 }")
    );
    assert_eq!(
        error(&two),
        "p.yaml:8:5: chaos.1.autoscale: a profile holds one autoscale rule (chaos.0 is one): \
         one fleet, one scaler"
    );
    // Live on SQS (the default kind) and RabbitMQ: their live paths read the queue's length.
    let live = |broker: &str| {
        profile("{ target: 10 }").replace("name: t\n", &format!("name: t\nmode: live\n{broker}"))
    };
    assert_eq!(scenario(&live("")).chaos.len(), 1);
    assert_eq!(
        scenario(&live("broker: { kind: rabbitmq }\n")).chaos.len(),
        1
    );
    // Live on NATS: refused, with the reason.
    let nats = error(&live("broker: { kind: nats }\n"));
    assert!(
        nats.contains(
            "chaos.0.autoscale: runs in the sim only on broker kind nats (run.mode: sim): a live \
             NATS run cannot read its consumer's num_pending while it runs yet"
        ),
        "{nats}"
    );
    // Beside a deploy, each keeps its own rule.
    let both = format!("{}  - deploy: {{ at: 5m }}\n", profile("{ target: 10 }"));
    assert_eq!(scenario(&both).chaos.len(), 2);
}

#[test]
fn the_metric_is_what_the_kinds_scaler_reads() {
    let on = |broker: &str, rule: &str| {
        profile(rule).replace("name: t\n", &format!("name: t\nbroker: {broker}\n"))
    };
    let metric = |text: &str| {
        let rule = one_chaos_rule(text);
        rule.get::<AutoscaleRule>().expect("an autoscale").metric
    };
    // KEDA's NATS JetStream scaler reads num_pending + num_ack_pending: ready and in flight,
    // by default; SQS's reads ready messages by default.
    let nats = "{ kind: nats }";
    assert_eq!(
        metric(&on(nats, "{ target: 10 }")),
        QueueMetric::ReadyAndInFlight
    );
    assert_eq!(metric(&profile("{ target: 10 }")), QueueMetric::Ready);
    // One the scaler cannot read is refused, naming what it reads.
    assert!(error(&on(nats, "{ target: 10, metric: ready }")).contains(
        "chaos.0.autoscale.metric: KEDA's nats-jetstream scaler for broker kind nats cannot read \
         ready: it reads ready_and_in_flight (metric: ready_and_in_flight)"
    ));
    let streams = "{ kind: redis-streams }";
    assert!(
        error(&on(streams, "{ target: 10, metric: ready_and_in_flight }")).contains(
            "chaos.0.autoscale.metric: KEDA's redis-streams scaler for broker kind redis-streams \
             cannot read ready_and_in_flight: it reads ready (metric: ready)"
        )
    );
}
