//! The shipped `profiles/chaos/deploy-thursday-*.yaml` and `partition-45s-*.yaml` give the
//! counts their comments derive, and pass the budgets that encode them.

use crate::common::{deploy_cost, root, run_profile};

const KEYS: [&str; 8] = [
    "messages",
    "deliveries",
    "effects",
    "duplicate_effects",
    "lost",
    "dlq",
    "stale_acks",
    "worker_kills",
];

/// The run's counts (KEYS) and its rollout's: told, stopped, killed, interrupted, duplicates,
/// lost, late.
fn run(kind: &str) -> (Vec<u64>, Vec<u64>) {
    let profile = root().join(format!("profiles/chaos/deploy-thursday-{kind}.yaml"));
    let ran = run_profile(&profile, &["--quiet"]);
    assert_eq!(ran.code(), 0, "{kind}: the budgets hold\n{}", ran.stderr());
    let s = ran.summary();
    (crate::common::counts(&s, &KEYS), deploy_cost(&s))
}

#[test]
fn the_thursday_deploys_cost_what_their_profiles_derive() {
    // Every order 3 deliveries and 3 emails, all acks refused, each order dead-lettered; the
    // release cuts nothing.
    assert_eq!(
        run("sqs"),
        (
            vec![108, 324, 324, 216, 0, 108, 324, 0],
            vec![4, 4, 0, 0, 0, 0, 0]
        )
    );
    // Every order 2 deliveries and 2 emails, both acks stale; the release cuts nothing.
    for kind in ["nats", "redis-streams"] {
        assert_eq!(
            run(kind),
            (
                vec![108, 216, 216, 108, 0, 0, 216, 0],
                vec![4, 4, 0, 0, 0, 0, 0]
            ),
            "{kind}"
        );
    }
    // Every order once but order 55, whose worker is killed at the grace's end after the email:
    // requeued (RabbitMQ) or released as the share session closes (a Kafka share group, its
    // lock 60 s), sent again at once.
    for kind in ["rabbitmq", "kafka-share"] {
        assert_eq!(
            run(kind),
            (
                vec![108, 109, 109, 1, 0, 0, 0, 1],
                vec![4, 3, 1, 1, 1, 0, 0]
            ),
            "{kind}"
        );
    }
    // Every order once but order 55, whose worker is killed at the grace's end after the email:
    // its member removed when its session ends (2775 s), the order runs again from the
    // committed offset. The stops leave the group at once: 3 rebalances (3 s, 2700 s, 2775 s).
    assert_eq!(
        run("kafka"),
        (
            vec![108, 109, 109, 1, 0, 0, 0, 1],
            vec![4, 3, 1, 1, 1, 0, 0]
        )
    );
}

/// The counts (KEYS) of `profiles/chaos/<name>.yaml` run with `args`, which pass its budgets.
fn partition_counts(name: &str, args: &[&str]) -> Vec<u64> {
    let profile = root().join(format!("profiles/chaos/{name}.yaml"));
    let ran = run_profile(&profile, &[&["--quiet"], args].concat());
    assert_eq!(ran.code(), 0, "{name}: the budgets hold\n{}", ran.stderr());
    crate::common::counts(&ran.summary(), &KEYS)
}

#[test]
fn the_45s_partitions_cost_what_their_profiles_derive() {
    // RabbitMQ, heartbeat 15 s: the connection closes at 55 s (25 s + two heartbeats), order 2
    // runs again on worker 2 and worker 1's held ack is refused at 70 s: 10 messages, 11
    // deliveries and effects, 1 duplicate, 1 stale ack.
    let closed = vec![10, 11, 11, 1, 0, 0, 1, 0];
    assert_eq!(partition_counts("partition-45s-rabbitmq", &[]), closed);
    // Heartbeat 30 s: the close would come at 85 s, after the window; the held ack deletes
    // order 2 at 70 s: every order once.
    assert_eq!(
        partition_counts("partition-45s-rabbitmq", &["--set", "broker.heartbeat=30s"]),
        vec![10, 10, 10, 0, 0, 0, 0, 0]
    );
    // SQS: order 2's lease ends at 50 s, worker 2 runs it again, the held delete is stale.
    assert_eq!(partition_counts("partition-45s-sqs", &[]), closed);
}

#[test]
fn the_kafka_thursday_deploy_rebalances_when_its_stopped_consumers_leave() {
    // profiles/chaos/deploy-thursday-kafka.yaml: the group forms at 3 s; worker 1's stop at
    // 2700 s sends LeaveGroup and the three others, idle, rejoin at once (3 members, 1 moved);
    // worker 2's stop at 2701 s starts the next rebalance, which waits for killed worker 3's
    // session to end at 2775 s (4 members, every member id new: 4 moved).
    let profile = root().join("profiles/chaos/deploy-thursday-kafka.yaml");
    let ran = run_profile(&profile, &["--quiet"]);
    assert_eq!(ran.code(), 0, "{}", ran.stderr());
    let s = ran.summary();
    let log: Vec<(f64, u64, u64, String)> = s["rebalance_log"]
        .as_array()
        .expect("a rebalance log")
        .iter()
        .map(|r| {
            (
                r["at_s"].as_f64().unwrap(),
                r["members"].as_u64().unwrap(),
                r["moved"].as_u64().unwrap(),
                r["why"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let want = [
        (3.0, 4, 4, "join"),
        (2700.0, 3, 1, "leave"),
        (2775.0, 4, 4, "leave"),
    ];
    let want: Vec<(f64, u64, u64, String)> = want
        .iter()
        .map(|&(at, n, moved, why)| (at, n, moved, why.to_string()))
        .collect();
    assert_eq!(log, want);
}
