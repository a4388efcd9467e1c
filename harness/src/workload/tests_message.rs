//! `workload.message` read from profiles and rendered for one message: each framework preset on
//! each kind it runs on, a shape of the profile's own, and the refusals.

use base64::Engine as _;
use serde_json::{json, Value};

use super::message::{message_id, render, Outgoing};
use crate::profile::message::MessageSpec;
use crate::profile::template::Fill;

/// The message of a profile whose broker section is `broker` and message section `message`.
pub(super) fn spec(broker: &str, message: &str) -> Result<crate::profile::Scenario, String> {
    crate::profile::load_str(
        "m.yaml",
        &format!(
            "mode: live\nrun: {{ duration: 1m }}\nbroker: {broker}\nworkload: {{ arrival: {{ every: \
             1s }}, count: 3, message: {message} }}\nconsumer: {{ command: [\"true\"] }}\n"
        ),
        &[],
    )
    .map_err(|e| e.to_string())
}

pub(super) fn message_of(broker: &str, message: &str) -> MessageSpec {
    spec(broker, message)
        .unwrap()
        .workload
        .message
        .expect("a message")
}

/// Message 3 (`msg-3`) of queue `orders`, id `ID`.
pub(super) fn third(m: &MessageSpec) -> Outgoing {
    render(
        m,
        &Fill {
            key: "msg-3",
            seq: 3,
            body: r#"{"key":"msg-3","seq":3,"email":"msg-3@example.test"}"#,
            email: "msg-3@example.test",
            id: "ID",
            queue: "orders",
            now_ms: 1_700_000_000_000,
            port: 0,
        },
    )
}

fn json(text: &str) -> Value {
    serde_json::from_str(text).unwrap()
}

fn unbase64(text: &str) -> String {
    String::from_utf8(
        base64::engine::general_purpose::STANDARD
            .decode(text)
            .unwrap(),
    )
    .unwrap()
}

const CELERY: &str = "{ format: celery, task: tasks.send_email }";

#[test]
fn celery_on_rabbitmq_is_task_protocol_2_in_headers_and_a_json_triple() {
    let m = message_of("{ kind: rabbitmq }", CELERY);
    let out = third(&m);
    // The body is [args, kwargs, embed]; args default to the key and the address.
    assert_eq!(
        json(&out.body),
        json!([["msg-3", "msg-3@example.test"], {}, {"callbacks": null, "errbacks": null, "chain": null, "chord": null}])
    );
    let h: serde_json::Map<_, _> = out.headers.iter().cloned().collect();
    assert_eq!(h["task"], "tasks.send_email");
    assert_eq!(h["id"], "ID");
    assert_eq!(h["root_id"], "ID");
    assert_eq!(h["lang"], "py");
    assert_eq!(h["retries"], 0);
    assert_eq!(h["timelimit"], json!([null, null]));
    assert_eq!(h["argsrepr"], r#"["msg-3","msg-3@example.test"]"#);
    assert_eq!(out.correlation_id.as_deref(), Some("ID"));
    assert_eq!(out.content_type.as_deref(), Some("application/json"));
    assert_eq!(out.content_encoding.as_deref(), Some("utf-8"));
}

#[test]
fn celery_on_rabbitmq_declares_a_classic_queue_without_the_runs_dead_letter_exchange() {
    let s = spec("{ kind: rabbitmq }", CELERY).unwrap();
    let crate::profile::BrokerKind::RabbitMq(r) = &s.broker.kind else {
        panic!("rabbitmq")
    };
    assert_eq!(r.queue_type, crate::profile::RabbitQueueType::Classic);
    assert!(!r.dead_letter && r.arguments.is_empty());
    // A classic queue without a limit: no delivery limit.
    assert_eq!(s.broker.max_deliveries, 0);
    // Set by the profile, the queue's settings are the profile's.
    let s = spec("{ kind: rabbitmq, queue_type: quorum }", CELERY).unwrap();
    let crate::profile::BrokerKind::RabbitMq(r) = &s.broker.kind else {
        panic!("rabbitmq")
    };
    assert_eq!(r.queue_type, crate::profile::RabbitQueueType::Quorum);
}

#[test]
fn celery_on_sqs_is_kombus_base64_envelope_around_a_base64_triple() {
    let m = message_of("{ kind: sqs }", CELERY);
    let out = third(&m);
    let envelope = json(&unbase64(&out.body));
    assert_eq!(envelope["content-type"], "application/json");
    assert_eq!(envelope["content-encoding"], "utf-8");
    assert_eq!(envelope["headers"]["task"], "tasks.send_email");
    assert_eq!(envelope["headers"]["id"], "ID");
    let p = &envelope["properties"];
    assert_eq!(p["body_encoding"], "base64");
    assert_eq!(p["correlation_id"], "ID");
    assert_eq!(
        p["delivery_info"],
        json!({"exchange": "", "routing_key": "orders"})
    );
    let triple = json(&unbase64(envelope["body"].as_str().unwrap()));
    assert_eq!(triple[0], json!(["msg-3", "msg-3@example.test"]));
    assert!(out.headers.is_empty() && out.attributes.is_empty());
}

#[test]
fn dramatiq_is_its_json_message_on_a_queue_with_its_dead_letter_arguments() {
    let s = spec(
        "{ kind: rabbitmq, queue: orders }",
        "{ format: dramatiq, task: send_email, args: [\"{key}\"], kwargs: { n: \"{seq}\" } }",
    )
    .unwrap();
    let m = s.workload.message.as_ref().unwrap();
    let body = json(&third(m).body);
    assert_eq!(body["queue_name"], "orders");
    assert_eq!(body["actor_name"], "send_email");
    assert_eq!(body["args"], json!(["msg-3"]));
    // A text that is exactly {seq} or {now_ms} is a number.
    assert_eq!(body["kwargs"], json!({"n": 3}));
    assert_eq!(body["message_timestamp"], 1_700_000_000_000u64);
    assert_eq!(body["message_id"], "ID");
    let crate::profile::BrokerKind::RabbitMq(r) = &s.broker.kind else {
        panic!("rabbitmq")
    };
    let names: Vec<_> = r.arguments.iter().map(|(k, _)| k.as_str()).collect();
    assert_eq!(
        names,
        ["x-dead-letter-exchange", "x-dead-letter-routing-key"]
    );
    assert_eq!(m.leaves.len(), 2, "its .DQ and .XQ queues");
}

#[test]
fn faststream_on_redis_streams_writes_its_data_field_envelope() {
    let m = message_of("{ kind: redis-streams }", "{ format: faststream }");
    let out = third(&m);
    assert_eq!(out.fields.len(), 1);
    let (name, value) = &out.fields[0];
    assert_eq!(name, "__data__");
    let envelope = json(value);
    // The payload is the order's JSON, as text inside FastStream's envelope.
    assert_eq!(
        json(envelope["data"].as_str().unwrap()),
        json!({"key": "msg-3", "seq": 3, "email": "msg-3@example.test"})
    );
    assert_eq!(envelope["headers"]["content-type"], "application/json");
    assert_eq!(out.entry_fields(), vec![("__data__", value.as_str())]);
}

#[test]
fn faststream_on_kafka_is_the_orders_json_with_its_content_type_and_correlation_headers() {
    // What FastStream's Kafka producer sends: the value is the payload itself (no envelope),
    // and two record headers, the content type its subscriber decodes JSON by and the
    // correlation id (the message's id, `ID` here). No AMQP property: Kafka has none.
    let m = message_of("{ kind: kafka, partitions: 2 }", "{ format: faststream }");
    let out = third(&m);
    assert_eq!(
        json(&out.body),
        json!({"key": "msg-3", "seq": 3, "email": "msg-3@example.test"})
    );
    assert_eq!(
        out.headers,
        vec![
            ("content-type".to_string(), json!("application/json")),
            ("correlation_id".to_string(), json!("ID")),
        ]
    );
    assert_eq!(out.content_type, None);
    assert_eq!(out.correlation_id, None);
    assert!(out.fields.is_empty() && out.attributes.is_empty());
}

#[test]
fn a_custom_shape_places_the_key_in_headers_fields_and_attributes() {
    let m = message_of(
        "{ kind: rabbitmq }",
        "{ body: { order: \"{key}\", n: \"{seq}\", raw: { $base64: \"{key}\" } }, headers: { \
         x-key: \"{key}\" }, content_type: application/x-order }",
    );
    let out = third(&m);
    assert_eq!(
        json(&out.body),
        json!({"order": "msg-3", "n": 3, "raw": "bXNnLTM="})
    );
    assert_eq!(out.headers, vec![("x-key".to_string(), json!("msg-3"))]);
    assert_eq!(out.content_type.as_deref(), Some("application/x-order"));
    let m = message_of(
        "{ kind: redis-streams }",
        "{ fields: { data: \"{body}\", k: \"{key}\" } }",
    );
    assert_eq!(
        third(&m).entry_fields(),
        vec![
            (
                "data",
                r#"{"key":"msg-3","seq":3,"email":"msg-3@example.test"}"#
            ),
            ("k", "msg-3")
        ]
    );
    let m = message_of(
        "{ kind: sqs }",
        "{ body: \"{key}\", attributes: { key: \"{key}\" } }",
    );
    let out = third(&m);
    assert_eq!(out.body, "msg-3");
    assert_eq!(
        out.attributes,
        vec![("key".to_string(), "msg-3".to_string())]
    );
}

#[test]
fn message_ids_are_uuids_of_the_seed_and_the_message() {
    let a = message_id(1, 3);
    assert_eq!(a, message_id(1, 3));
    assert_ne!(a, message_id(1, 4));
    assert_ne!(a, message_id(2, 3));
    let u = uuid::Uuid::parse_str(&a).unwrap();
    assert_eq!(u.get_version_num(), 4);
}

#[test]
fn refusals_name_the_field_and_the_reason() {
    let cases = [
        // The key placed nowhere.
        (
            "{ kind: sqs }",
            "{ body: \"hello {seq}\" }",
            "places its key nowhere",
        ),
        // A preset on a kind it has no transport for.
        (
            "{ kind: nats }",
            CELERY,
            "celery does not run on broker.kind nats",
        ),
        (
            "{ kind: kafka }",
            CELERY,
            "celery does not run on broker.kind kafka: it runs on rabbitmq and sqs",
        ),
        (
            "{ kind: sqs }",
            "{ format: dramatiq, task: t }",
            "dramatiq does not run on broker.kind sqs",
        ),
        (
            "{ kind: sqs }",
            "{ format: faststream }",
            "faststream does not run on broker.kind sqs: it runs on rabbitmq, nats, redis-streams \
             and kafka",
        ),
        // A task framework without its task.
        (
            "{ kind: rabbitmq }",
            "{ format: celery }",
            "workload.message.task: required",
        ),
        // A part the kind does not carry.
        (
            "{ kind: sqs }",
            "{ headers: { k: \"{key}\" } }",
            "carries no headers",
        ),
        (
            "{ kind: rabbitmq }",
            "{ fields: { k: \"{key}\" } }",
            "carries no fields",
        ),
        // A preset writes the whole message.
        (
            "{ kind: rabbitmq }",
            "{ format: celery, task: t, headers: { a: b } }",
            "format: custom",
        ),
        // Unknown placeholders and steps.
        (
            "{ kind: sqs }",
            "{ body: \"{kee}\" }",
            "unknown placeholder {kee}",
        ),
        (
            "{ kind: sqs }",
            "{ body: { $gzip: \"{key}\" } }",
            "unknown encoding step",
        ),
        // NATS headers are text.
        (
            "{ kind: nats }",
            "{ headers: { k: [\"{key}\"] } }",
            "carries text here",
        ),
    ];
    for (broker, message, expect) in cases {
        let e = spec(broker, message).unwrap_err();
        assert!(e.contains(expect), "{broker} {message}: {e}");
        assert!(e.contains("workload.message"), "{e}");
    }
}

#[test]
fn poison_needs_the_body_placed_and_a_queue_name_is_checked() {
    let e = crate::profile::load_str(
        "m.yaml",
        "mode: live\nrun: { duration: 1m }\nbroker: { kind: rabbitmq }\nworkload: { arrival: { \
         every: 1s }, poison: { first: 1 }, message: { format: celery, task: t } }\nconsumer: { \
         command: [\"true\"] }\n",
        &[],
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("workload.poison") && e.contains("{body}"), "{e}");
    for bad in ["\"a b\"", "\"\"", "\"x/y\""] {
        let e = spec(&format!("{{ kind: rabbitmq, queue: {bad} }}"), CELERY).unwrap_err();
        assert!(
            e.contains("broker.queue") && e.contains("queue name"),
            "{e}"
        );
    }
    let e = spec("{ kind: rabbitmq, reuse: true }", CELERY).unwrap_err();
    assert!(
        e.contains("broker.reuse") && e.contains("goes with broker.queue"),
        "{e}"
    );
}
