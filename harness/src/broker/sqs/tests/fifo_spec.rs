//! A FIFO queue ackbench creates itself (a live run's, `QueueSpec::fifo`): `.fifo` names for it
//! and its dead-letter queue, both FIFO, and the deduplication interval it is given instead of
//! SQS's 5 minutes.

use crate::broker::sqs::config::QueueSpec;
use crate::broker::sqs::receipt::ReceiptCodec;
use crate::broker::sqs::registry::Registry;
use crate::broker::sqs::request::{NewMessage, Receive};
use crate::broker::BrokerConfig;
use crate::profile::StaleAck;
use crate::record::Nanos;

const S: Nanos = 1_000_000_000;

fn registry() -> Registry {
    Registry::new(
        "http://127.0.0.1:1".into(),
        "us-east-1".into(),
        "000000000000".into(),
        crate::broker::sqs::queue::default_broker_config(),
    )
}

fn spec(max_receives: u32, dlq: Option<&str>, fifo: Option<Nanos>) -> QueueSpec {
    QueueSpec {
        broker: BrokerConfig {
            visibility_timeout: S,
            max_receives,
            stale_ack: StaleAck::Reject,
        },
        dead_letter_queue: dlq.map(str::to_string),
        fifo,
    }
}

fn send(key: &str) -> NewMessage {
    NewMessage {
        body: format!("{{\"key\":\"{key}\"}}"),
        delay_s: None,
        attributes: Default::default(),
        group_id: Some("group-1".into()),
        dedup_id: Some(key.into()),
    }
}

#[test]
fn a_fifo_queue_and_its_dlq_are_named_and_made_fifo() {
    let mut r = registry();
    r.create_with_spec("q.fifo", &spec(2, Some("q-dlq.fifo"), Some(10 * S)), 0)
        .expect("a FIFO queue with a FIFO DLQ");
    assert!(r.get("q.fifo").expect("queue").settings.fifo);
    assert!(r.get("q-dlq.fifo").expect("dlq").settings.fifo);
    // A FIFO queue needs .fifo names, for it and its DLQ; a standard queue must not have them.
    for (name, dlq, fifo) in [
        ("p", Some("p-dlq.fifo"), Some(S)),
        ("p.fifo", Some("p-dlq"), Some(S)),
        ("p.fifo", None, None),
    ] {
        let e = r
            .create_with_spec(name, &spec(2, dlq, fifo), 0)
            .expect_err(name);
        assert!(e.to_string().contains("ends in .fifo"), "{e}");
    }
}

#[test]
fn the_spec_sets_the_deduplication_interval() {
    // A 10 s interval: `k` at 0 accepted (message 1); `j` at 5 s accepted (message 2); `k` at
    // 9.999 s dropped, at 10 s accepted (message 3, a new interval). With SQS's 5 minutes the
    // send at 10 s would be dropped.
    let mut r = registry();
    r.create_with_spec("q.fifo", &spec(0, None, Some(10 * S)), 0)
        .expect("queue");
    let q = r.get("q.fifo").expect("queue");
    let sent: Vec<Option<u32>> = [(0, "k"), (5 * S, "j"), (10 * S - 1_000_000, "k")]
        .into_iter()
        .map(|(at, k)| q.send(at, 0, send(k)).expect("sent").0)
        .collect();
    assert_eq!(sent, vec![Some(1), Some(2), None]);
    assert_eq!(q.send(10 * S, 0, send("k")).expect("sent").0, Some(3));
}

#[test]
fn a_dead_letter_moves_into_the_fifo_dlq() {
    // max_receives 1 and a 1 s lease: received at 0, lease over at 1 s, dead-lettered and moved
    // into q-dlq.fifo, where it is visible.
    let mut r = registry();
    r.create_with_spec("q.fifo", &spec(1, Some("q-dlq.fifo"), Some(10 * S)), 0)
        .expect("queue");
    let q = r.get("q.fifo").expect("queue");
    q.send(0, 0, send("k")).expect("sent");
    let got = q.receive(
        0,
        0,
        1,
        &Receive {
            queue: "q.fifo".into(),
            max_messages: 1,
            wait_s: Some(0),
            visibility_timeout_s: None,
            system_attributes: Vec::new(),
            message_attributes: Vec::new(),
        },
        &ReceiptCodec::new([7; 32]),
    );
    assert_eq!(got.len(), 1);
    r.advance_all(2 * S);
    assert_eq!(r.get("q.fifo").expect("queue").counts().dead_lettered, 1);
    assert_eq!(r.get("q-dlq.fifo").expect("dlq").counts().visible, 1);
}
