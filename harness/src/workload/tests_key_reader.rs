//! The key read back from bodies shaped by each framework preset and by a profile's own shape,
//! as a consumer publishing the task again would send them.

use super::KeyReader;
use crate::workload::tests_message::{message_of, third};

fn read(broker: &str, message: &str) -> Option<String> {
    let m = message_of(broker, message);
    KeyReader::of(Some(&m))?.read(third(&m).body.as_bytes())
}

#[test]
fn each_preset_body_gives_its_key_back() {
    let celery = "{ format: celery, task: tasks.send_email }";
    // Celery on RabbitMQ: args[0] of the JSON triple; on SQS inside kombu's base64 envelope,
    // whose `body` is base64 of the triple.
    assert_eq!(read("{ kind: rabbitmq }", celery).as_deref(), Some("msg-3"));
    assert_eq!(read("{ kind: sqs }", celery).as_deref(), Some("msg-3"));
    // Dramatiq: args[0] of its JSON message.
    let dramatiq = "{ format: dramatiq, task: send_email }";
    assert_eq!(
        read("{ kind: rabbitmq }", dramatiq).as_deref(),
        Some("msg-3")
    );
    // FastStream on Kafka: the order's JSON itself ({body}), its `key`.
    let fs = "{ format: faststream }";
    assert_eq!(
        read("{ kind: kafka, partitions: 1 }", fs).as_deref(),
        Some("msg-3")
    );
    // FastStream on Redis Streams: the field `__data__`, its JSON envelope whose `data` is a
    // string holding the order's JSON.
    let m = message_of("{ kind: redis-streams }", fs);
    let reader = KeyReader::of(Some(&m)).unwrap();
    let data = &third(&m).fields[0].1;
    assert_eq!(reader.read(data.as_bytes()).as_deref(), Some("msg-3"));
    // As FastStream's own publish writes it (headers of its own).
    let own = r#"{"data":"{\"key\": \"msg-3\", \"email\": \"e\"}","headers":{"retries":"1"}}"#;
    assert_eq!(reader.read(own.as_bytes()).as_deref(), Some("msg-3"));
    // FastStream 0.7's binary envelope: a magic, offsets, its headers, then the payload.
    let mut binary = b"\x89BIN\r\n\x1a\n\x00\x01\x00\x00\x00\x12".to_vec();
    binary.extend_from_slice(b"\x00\x01\x00\x07retries\x00\x011");
    binary.extend_from_slice(br#"{"key":"msg-3","email":"e"}"#);
    assert_eq!(reader.read(&binary).as_deref(), Some("msg-3"));
    // Nor is anything but an order's JSON read as one.
    assert_eq!(reader.read(b"\x89BIN {\"to\": 1} {oops").as_deref(), None);
}

#[test]
fn the_plain_order_and_a_shape_of_the_profiles_own_give_their_key_back() {
    let plain = KeyReader::of(None).unwrap();
    assert_eq!(
        plain
            .read(br#"{"key":"msg-9","seq":9,"email":"e"}"#)
            .as_deref(),
        Some("msg-9")
    );
    // A key inside text, inside $json inside $base64.
    let shape =
        "{ body: { n: \"{seq}\", job: { $base64: { $json: { ref: \"order-{key}!\" } } } } }";
    assert_eq!(read("{ kind: rabbitmq }", shape).as_deref(), Some("msg-3"));
}

#[test]
fn a_body_off_the_path_or_a_shape_without_the_key_in_its_body_reads_nothing() {
    let m = message_of(
        "{ kind: rabbitmq }",
        "{ format: dramatiq, task: send_email }",
    );
    let r = KeyReader::of(Some(&m)).unwrap();
    // Not JSON; args missing; args[0] not text; not UTF-8.
    for body in [
        &b"hello"[..],
        br#"{"queue_name":"q"}"#,
        br#"{"args":[17]}"#,
        &[0xff, 0xfe],
    ] {
        assert_eq!(r.read(body), None, "{body:?}");
    }
    // The key only in a header: the body cannot tell.
    let m = message_of(
        "{ kind: rabbitmq }",
        "{ body: \"{seq}\", headers: { x-key: \"{key}\" } }",
    );
    assert_eq!(KeyReader::of(Some(&m)), None);
}
