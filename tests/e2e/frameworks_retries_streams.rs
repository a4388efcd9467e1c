//! The retries consumers make themselves by publishing the message again, on NATS JetStream,
//! Redis Streams and Kafka: a nats-py consumer publishing the body again to the stream's subject
//! (`targets/python/nats_republish_on_error.py`), a FastStream app on Redis Streams adding the
//! order again (`profiles/frameworks/faststream/retry_app.py`, its own binary envelope on the
//! wire), and FastStream's Kafka app producing it again (`kafka_app.py`, `MAX_RETRIES=1`);
//! FastStream installed from PyPI by the test. Each copy is a new broker message (a stream
//! sequence, an entry id, an offset of its own), followed through the worker's proxy by the key
//! its body names.
//!
//! The profiles expect the counts of `frameworks_retries` (20 orders, the first call of msg-10
//! and msg-20 failing, each retried once): 20 messages, 22 deliveries, 20 effects, 0 duplicates,
//! 0 lost, 0 unfinished, 0 DLQ, 2 consumer retries, 2 handler retries, every provider call
//! attributed, the run's stream gone; and the sim run of the same profile gives the same.
//! Out of retries (msg-20 failing every call) the consumer drops the order: 21 deliveries,
//! 19 effects, 1 failed, 0 lost.

use serde_json::Value;

use crate::common::python_with;
use crate::common::service_up;
use crate::frameworks::profile_run;
use crate::frameworks_retries::{counts, equals_sim, RETRIED};
use crate::live_kafka::left_on_broker;
use crate::live_nats::{nats_up, streams_of};
use crate::live_redis_streams::{keys_of, redis_up};

/// Runs `profiles/NAME.yaml` live with `args`: its pid and summary.
fn live_run(name: &str, args: &[&str]) -> (u32, Value) {
    let (pid, s, _) = profile_run(name, args);
    (pid, s)
}

const EVERY_CALL: [&str; 2] = [
    "--set",
    "provider.phases=[{keys: [msg-20], errors: {status: 500, rate: 1}}]",
];

/// Out of retries: msg-20's retry fails too and the consumer drops it, no effect, not lost.
const DROPPED: [u64; 9] = [20, 21, 19, 0, 0, 0, 0, 1, 1];

fn checked(name: &str, args: &[&str], s: &Value, expected: [u64; 9]) {
    assert_eq!(counts(s), expected, "{s}");
    assert_eq!(s["unattributed_calls"], Value::Null, "{s}");
    assert_eq!(s["removed_at_end"], Value::Null, "{s}");
    equals_sim(name, args, s);
}

#[test]
fn a_nats_consumers_republish_is_each_orders_next_delivery() {
    if !nats_up() || !python_with("nats", "nats-py>=2.6") {
        return;
    }
    let name = "brokers/live-nats-republish";
    let (pid, s) = live_run(name, &[]);
    checked(name, &[], &s, RETRIED);
    assert_eq!(s["verdict"], "pass");
    assert_eq!(streams_of(pid), Vec::<String>::new());
    let (pid, s) = live_run(name, &EVERY_CALL);
    checked(name, &EVERY_CALL, &s, DROPPED);
    assert_eq!(s["failed"], 1, "{s}");
    assert_eq!(streams_of(pid), Vec::<String>::new());
}

#[test]
fn a_faststream_apps_xadd_of_its_order_on_redis_streams_is_its_next_delivery() {
    if !redis_up() || !python_with("faststream.redis", "faststream[redis,cli]>=0.6") {
        return;
    }
    let name = "frameworks/faststream-retry-redis-streams";
    let (pid, s) = live_run(name, &[]);
    checked(name, &[], &s, RETRIED);
    assert_eq!(s["verdict"], "pass");
    assert_eq!(keys_of(pid), Vec::<String>::new());
    let (pid, s) = live_run(name, &EVERY_CALL);
    checked(name, &EVERY_CALL, &s, DROPPED);
    assert_eq!(s["failed"], 1, "{s}");
    assert_eq!(keys_of(pid), Vec::<String>::new());
}

#[test]
fn a_faststream_apps_produce_of_its_order_on_kafka_is_its_next_delivery() {
    let ready = service_up("the Kafka broker (Tansu)", 9092)
        && python_with("faststream.kafka, aiokafka", "faststream[kafka,cli]>=0.6");
    if !ready {
        return;
    }
    let name = "frameworks/faststream-retry-kafka";
    let (pid, s) = live_run(name, &[]);
    checked(name, &[], &s, RETRIED);
    assert_eq!(s["verdict"], "pass");
    assert_eq!(left_on_broker(&[pid]), Vec::<String>::new());
}
