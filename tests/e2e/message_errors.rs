//! `ackbench check` on broken `message` fault rules: exit code 2 and a message naming the field
//! (an unknown action, a delay missing or misplaced, a selector that selects nothing, an action
//! a live kind cannot apply), and the live kinds that apply every action checking ok.

use crate::common::{ackbench, stderr, temp_profile};
use crate::profile_errors::{expect_error, with};

fn rule(r: &str) -> String {
    with(&format!("chaos:\n  - message: {r}\n"))
}

#[test]
fn an_unknown_action_is_refused_naming_the_actions() {
    expect_error(
        &rule("{ action: lose_ack }"),
        &[],
        "chaos.0.message.action: unknown action `lose_ack`: one of drop_ack, delay_ack, \
         drop_delivery, delay_delivery",
    );
}

#[test]
fn a_delay_is_required_by_delay_actions_and_refused_by_drops() {
    expect_error(
        &rule("{ action: delay_ack }"),
        &[],
        "chaos.0.message.delay: required: how long delay_ack holds it back, as in delay: 40s",
    );
    expect_error(
        &rule("{ action: delay_delivery, delay: 0s }"),
        &[],
        "chaos.0.message.delay: must be more than 0s, got 0s",
    );
    expect_error(
        &rule("{ action: drop_delivery, delay: 5s }"),
        &[],
        "chaos.0.message.delay: belongs to delay_ack and delay_delivery: drop_delivery holds \
         nothing back",
    );
}

#[test]
fn selectors_that_select_nothing_are_refused() {
    expect_error(
        &rule("{ action: drop_ack, delivery: 0 }"),
        &[],
        "chaos.0.message.delivery: must be at least 1, got 0 (deliveries count from 1)",
    );
    expect_error(
        &rule("{ action: drop_ack, probability: 1.5 }"),
        &[],
        "chaos.0.message.probability: must be more than 0 and at most 1, got 1.5",
    );
    expect_error(
        &rule("{ action: drop_ack, probability: 0 }"),
        &[],
        "chaos.0.message.probability: must be more than 0 and at most 1, got 0",
    );
    // workload.count 12: seq 13 is never published.
    expect_error(
        &rule("{ action: drop_ack, seq: [13] }"),
        &["workload.count=12"],
        "chaos.0.message.seq.0: selects nothing: the workload publishes at most 12 messages, \
         got seq 13",
    );
    expect_error(
        &rule("{ action: drop_ack, keys: [msg-13] }"),
        &["workload.count=12"],
        "chaos.0.message.keys.0: selects nothing: `msg-13` is never published",
    );
}

#[test]
fn a_live_kind_refuses_what_its_live_path_cannot_apply() {
    let live = |broker: &str, action: &str| {
        format!(
            "name: e2e\nmode: live\nrun: {{ duration: 10m }}\nbroker: {broker}\nworkload:\n  \
             arrival: {{ every: 50s }}\nconsumer: {{ target: ack-after-work }}\nchaos:\n  - \
             message: {{ action: {action} }}\n"
        )
    };
    expect_error(
        &live("{ kind: kafka }", "drop_ack"),
        &[],
        "chaos.0.message.action: drop_ack cannot run live on kafka: ackbench's Kafka proxy \
         relays every OffsetCommit and every fetched record as it comes",
    );
    expect_error(
        &live("{ kind: redis-streams }", "delay_delivery, delay: 5s"),
        &[],
        "chaos.0.message.action: delay_delivery cannot run live on redis-streams: ackbench's \
         Redis proxy cannot hold an entry back: it comes in the reply to a read or a claim",
    );
    expect_error(
        &live("{ kind: sqs }", "delay_delivery, delay: 5s"),
        &[],
        "chaos.0.message.action: delay_delivery cannot run live on sqs: the embedded endpoint \
         answers a ReceiveMessage with all its messages at once",
    );
}

#[test]
fn the_rabbitmq_and_nats_proxies_take_every_action_live() {
    // The AMQP proxy keeps or holds a basic.ack and drops or holds a basic.deliver; the NATS
    // proxy keeps or holds an ack publish and drops or holds a delivery: no action is refused.
    for kind in ["rabbitmq", "nats"] {
        for action in [
            "drop_ack",
            "delay_ack, delay: 5s",
            "drop_delivery",
            "delay_delivery, delay: 5s",
        ] {
            let text = format!(
                "name: e2e\nmode: live\nrun: {{ duration: 10m }}\nbroker: {{ kind: {kind} }}\n\
                 workload:\n  arrival: {{ every: 50s }}\nconsumer: {{ target: ack-after-work }}\n\
                 chaos:\n  - message: {{ action: {action} }}\n"
            );
            let (_dir, path) = temp_profile(&text);
            let out = ackbench(&["check", &path.display().to_string()]);
            assert_eq!(
                out.status.code(),
                Some(0),
                "{kind}, {action}: {}",
                stderr(&out)
            );
        }
    }
}

#[test]
fn the_redis_proxy_takes_drop_ack_delay_ack_and_drop_delivery_live() {
    // The RESP proxy keeps or holds an XACK, answering the worker in the server's place, and
    // takes a dropped entry out of its reply.
    for action in ["drop_ack", "delay_ack, delay: 5s", "drop_delivery"] {
        let text = format!(
            "name: e2e\nmode: live\nrun: {{ duration: 10m }}\nbroker: {{ kind: redis-streams }}\n\
             workload:\n  arrival: {{ every: 50s }}\nconsumer: {{ target: ack-after-work }}\n\
             chaos:\n  - message: {{ action: {action} }}\n"
        );
        let (_dir, path) = temp_profile(&text);
        let out = ackbench(&["check", &path.display().to_string()]);
        assert_eq!(out.status.code(), Some(0), "{action}: {}", stderr(&out));
    }
}
