//! A rolling deploy against each real broker (RabbitMQ, NATS JetStream, Redis Streams) and the
//! embedded SQS endpoint with the built-in ack-after-work, beside the sim model of the same
//! profile: the same cost per rollout and the same effects. Kafka, on the real clock, is in
//! `live_deploy_kafka.rs`.

use serde_json::Value;

pub use crate::common::deploy_cost as cost;
use crate::common::{run_text, service_up};

/// Two workers (prefetch 1), `orders` orders one a second from 0 s, each handler a 60 s call
/// (the effect at the request) then the ack; a restart 5 s after a worker ends; one rollout at
/// 45 s replacing worker 1, then worker 2. Both workers are busy at 45 s whichever took which
/// order (a real server picks), and a live run's first sends and connections, which may take a
/// few seconds of wall time on a loaded machine (10 s of profile time a second), are over by
/// then (a worker still connecting when its turn comes would not be told). Ten times faster
/// than profile time: about 15 s of wall time. `broker` is the profile's broker mapping; a
/// lease (AckWait, min idle, visibility timeout) of 90 s outlasts every handler.
fn profile(broker: &str, grace: &str, orders: u32) -> String {
    format!(
        "name: live-deploy
mode: live
run: {{ duration: 3s, drain: 4m, time_scale: 0.1 }}
broker: {broker}
workload: {{ arrival: {{ every: 1s }}, count: {orders} }}
consumer: {{ target: ack-after-work, workers: 2, restart_after: 5s }}
provider: {{ effect_at: request, latency: {{ dist: fixed, value: 60s }} }}
chaos:
  - deploy: {{ at: 45s, grace: {grace} }}
"
    )
}

/// The run's message counts: messages, effects, duplicate effects, lost.
pub fn effects(summary: &Value) -> Vec<u64> {
    crate::common::counts(
        summary,
        &["messages", "effects", "duplicate_effects", "lost"],
    )
}

/// The summaries of `text` run live, then with `--set mode=sim`.
pub fn live_and_sim(text: &str) -> (Value, Value) {
    let live = run_text(text, &["--quiet"]);
    assert!(live.code() <= 1, "{}", live.stderr());
    let sim = run_text(text, &["--quiet", "--set", "mode=sim"]);
    assert!(sim.code() <= 1, "{}", sim.stderr());
    (live.summary(), sim.summary())
}

/// Grace 90 s, three orders, on `broker`: the two workers take orders 1 and 2 (0-60 s, 1-61 s);
/// order 3 waits. The first worker told (45 s) finishes, acks and exits; the other takes order 3
/// at 60 or 61 s (to 121 s or so). The first is back 5 s after its exit, when the other is
/// told: it finishes order 3 within its grace and exits. Both stopped, nothing cut, nothing
/// twice: 3 messages, 3 effects.
fn within_the_grace(broker: &str) {
    let (live, sim) = live_and_sim(&profile(broker, "90s", 3));
    assert_eq!(cost(&sim), [2, 2, 0, 0, 0, 0, 0], "{broker}: {sim}");
    assert_eq!(effects(&sim), [3, 3, 0, 0], "{broker}");
    assert_eq!(cost(&live), cost(&sim), "{broker}: {live}");
    assert_eq!(effects(&live), effects(&sim), "{broker}");
}

/// Grace 3 s, two orders, on `broker`: the first worker told (45 s) is killed at 48 s inside its
/// call, its effect already made; back at 53 s, when the other is told, killed at 56 s the same
/// way, back at 61 s. Each cut order comes back to an idle worker (the caller says when) and
/// runs again: a second effect. 2 told, 0 stopped, 2 killed, 2 deliveries cut, 2 messages with
/// a duplicate effect: 2 messages, 4 effects, 0 lost.
fn shorter_than_the_handler(broker: &str) {
    let (live, sim) = live_and_sim(&profile(broker, "3s", 2));
    assert_eq!(cost(&sim), [2, 0, 2, 2, 2, 0, 0], "{broker}: {sim}");
    assert_eq!(effects(&sim), [2, 4, 2, 0], "{broker}");
    assert_eq!(cost(&live), cost(&sim), "{broker}: {live}");
    assert_eq!(effects(&live), effects(&sim), "{broker}");
}

const RABBITMQ: &str = "{ kind: rabbitmq, consumer_timeout: 300m }";
const NATS: &str = "{ kind: nats, ack_wait: 90s, max_deliver: 5 }";
const REDIS_STREAMS: &str = "{ kind: redis-streams, min_idle: 90s, max_deliveries: 5 }";
const SQS: &str = "{ kind: sqs, visibility_timeout: 90s, max_receives: 5 }";

#[test]
fn a_rolling_deploy_within_the_grace_on_real_rabbitmq_costs_nothing_as_in_sim() {
    if service_up("RabbitMQ", 5672) {
        within_the_grace(RABBITMQ);
    }
}

#[test]
fn a_grace_shorter_than_the_handler_on_real_rabbitmq_costs_what_the_sim_model_says() {
    // A cut order comes back as the killed worker's connection closes (RabbitMQ requeues); the
    // other worker is busy, so the killed one, back 5 s later, takes its own order again.
    if service_up("RabbitMQ", 5672) {
        shorter_than_the_handler(RABBITMQ);
    }
}

#[test]
fn a_rolling_deploy_within_the_grace_on_real_nats_jetstream_costs_nothing_as_in_sim() {
    if service_up("NATS", 4222) {
        within_the_grace(NATS);
    }
}

#[test]
fn a_grace_shorter_than_the_handler_on_real_nats_jetstream_costs_what_the_sim_model_says() {
    // A cut order comes back once its AckWait (90 s from its delivery) is over, at about 90 and
    // 91 s, when both workers are back and idle.
    if service_up("NATS", 4222) {
        shorter_than_the_handler(NATS);
    }
}

#[test]
fn a_rolling_deploy_within_the_grace_on_real_redis_streams_costs_nothing_as_in_sim() {
    if service_up("Redis", 6379) {
        within_the_grace(REDIS_STREAMS);
    }
}

#[test]
fn a_grace_shorter_than_the_handler_on_real_redis_streams_costs_what_the_sim_model_says() {
    // An idle worker claims a cut order's pending entry once it has been idle for min_idle (90 s
    // from its delivery), at about 90 and 91 s.
    if service_up("Redis", 6379) {
        shorter_than_the_handler(REDIS_STREAMS);
    }
}

#[test]
fn a_rolling_deploy_within_the_grace_on_the_embedded_sqs_endpoint_costs_nothing_as_in_sim() {
    within_the_grace(SQS);
}

#[test]
fn a_grace_shorter_than_the_handler_on_the_embedded_sqs_endpoint_costs_what_the_sim_says() {
    // The queue hands a cut order out once its visibility timeout (90 s from its receive) is
    // over, at about 90 and 91 s.
    shorter_than_the_handler(SQS);
}
