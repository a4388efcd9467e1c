//! A consumer's own publishes in the AMQP proxy, on frames written by hand: a Dramatiq-style
//! retry through a delay queue, a Celery-style retry to the queue itself, and a reject that the
//! queue's arguments dead-letter to the framework's queue.

use super::super::test_frames::{frame, short, Greeted};
use super::tests::{ack, delivery};
use super::*;
use crate::workload::key_reader::KeyReader;

/// basic.consume (60, 20) of `queue`, the server to name the consumer tag.
fn consume(ch: u16, queue: &str) -> Vec<u8> {
    let mut m = vec![0, 60, 0, 20, 0, 0];
    m.extend(short(queue));
    m.extend(short(""));
    m.push(0);
    m.extend_from_slice(&0u32.to_be_bytes());
    frame(1, ch, &m)
}

/// basic.consume-ok (60, 21) naming consumer tag `tag`.
fn consume_ok(ch: u16, tag: &str) -> Vec<u8> {
    let mut m = vec![0, 60, 0, 21];
    m.extend(short(tag));
    frame(1, ch, &m)
}

/// A content header of `body` (no properties) and its body frame.
fn content(ch: u16, body: &[u8]) -> Vec<u8> {
    let mut h = vec![0, 60, 0, 0];
    h.extend_from_slice(&(body.len() as u64).to_be_bytes());
    h.extend_from_slice(&0u16.to_be_bytes());
    let mut all = frame(2, ch, &h);
    all.extend(frame(3, ch, body));
    all
}

/// basic.deliver (60, 60) of `tag` to consumer `ctag`, without a `message_id`, carrying `body`.
fn unnamed_delivery(ch: u16, tag: u64, ctag: &str, body: &[u8]) -> Vec<u8> {
    let mut m = vec![0, 60, 0, 60];
    m.extend(short(ctag));
    m.extend_from_slice(&tag.to_be_bytes());
    m.push(0);
    m.extend(short(""));
    m.extend(short("q"));
    let mut all = frame(1, ch, &m);
    all.extend(content(ch, body));
    all
}

/// basic.publish (60, 40) to the default exchange with `routing_key`, carrying `body`.
fn publish(ch: u16, routing_key: &str, body: &[u8]) -> Vec<u8> {
    let mut m = vec![0, 60, 0, 40, 0, 0];
    m.extend(short(""));
    m.extend(short(routing_key));
    m.push(0);
    let mut all = frame(1, ch, &m);
    all.extend(content(ch, body));
    all
}

/// basic.nack (60, 120) of `tag`, without requeue.
fn reject(ch: u16, tag: u64) -> Vec<u8> {
    let mut m = vec![0, 60, 0, 120];
    m.extend_from_slice(&tag.to_be_bytes());
    m.push(0);
    frame(1, ch, &m)
}

const ORDER: &[u8] = br#"{"key":"msg-1","seq":1,"email":"e"}"#;

/// One worker's connection with the run's queue `q`, Dramatiq's `q.DQ` and `q.XQ`, the plain
/// order body, and message 1 (`msg-1`) published.
fn connection(rejects_dead_letter: bool) -> (Arc<LiveState>, Arc<Ledger>, Box<dyn Connection>) {
    let state = LiveState::new(
        crate::provider::http::LiveClock::new(1.0),
        "q",
        1,
        crate::chaos::KillSchedule::new(&[], 1),
    );
    state.publishing("msg-1");
    let ledger = Arc::new(Ledger::default());
    ledger.published();
    let places = RunQueues {
        queue: "q".into(),
        delay: vec!["q.DQ".into()],
        dead_letter: vec!["q.XQ".into()],
        reader: KeyReader::of(None),
        rejects_dead_letter,
    };
    let c = Amqp {
        state: state.clone(),
        ledger: ledger.clone(),
        consumer_timeout: 1_000,
        wire: None,
        places: Arc::new(places),
    }
    .connection(1)
    .greeted();
    (state, ledger, c)
}

fn seen(state: &LiveState) -> Vec<String> {
    state
        .take_events()
        .into_iter()
        .filter_map(|e| match e.kind {
            EventKind::Delivered { seq, delivery, .. } => Some(format!("deliver {seq}/{delivery}")),
            EventKind::Acked {
                seq,
                delivery,
                outcome,
                ..
            } => Some(format!("ack {seq}/{delivery} {outcome:?}")),
            EventKind::Republished {
                seq, delivery, to, ..
            } => Some(format!("republish {seq}/{delivery} {to:?}")),
            EventKind::DeadLettered { seq, delivery } => Some(format!("dead {seq}/{delivery}")),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn a_retry_through_a_delay_queue_is_the_same_messages_next_delivery() {
    let (state, ledger, mut c) = connection(true);
    let mut out = Vec::new();
    // The worker consumes the queue on channel 1 and the delay queue on channel 2.
    c.from_worker(&consume(1, "q"), &mut out);
    c.from_server(&consume_ok(1, "t1"), &mut out);
    c.from_worker(&consume(2, "q.DQ"), &mut out);
    c.from_server(&consume_ok(2, "t2"), &mut out);
    // Delivery 1 of message 1 fails: the handler publishes it to the delay queue (one copy
    // waiting), then acks it (the copy it replaced).
    c.from_server(&delivery(1, 1, "1"), &mut out);
    c.from_worker(&publish(1, "q.DQ", ORDER), &mut out);
    assert_eq!((ledger.copies_waiting(), ledger.unsettled()), (1, 1));
    c.from_worker(&ack(1, 1, false), &mut out);
    // The delay queue hands its copy over whole, bytes unchanged once its body is in: the
    // framework's hold, no delivery. When due, it is published to the queue (two copies
    // waiting) and the hold acked (one).
    out.clear();
    let held = unnamed_delivery(2, 1, "t2", ORDER);
    c.from_server(&held[..held.len() - 10], &mut out);
    assert!(out.is_empty(), "held until its body names it");
    c.from_server(&held[held.len() - 10..], &mut out);
    assert_eq!(out, held);
    c.from_worker(&publish(2, "q", ORDER), &mut out);
    assert_eq!(ledger.copies_waiting(), 2);
    c.from_worker(&ack(2, 1, false), &mut out);
    assert_eq!(ledger.copies_waiting(), 1);
    // The queue delivers the copy: delivery 2 of message 1, acked: settled.
    c.from_server(&unnamed_delivery(1, 2, "t1", ORDER), &mut out);
    c.from_worker(&ack(1, 2, false), &mut out);
    assert_eq!(
        seen(&state),
        [
            "deliver 1/1",
            "republish 1/1 Delayed",
            "ack 1/1 Superseded",
            "republish 1/0 Queue",
            "deliver 1/2",
            "ack 1/2 Deleted",
        ]
    );
    assert_eq!((ledger.copies_waiting(), ledger.unsettled()), (0, 0));
    assert_eq!((ledger.held(), ledger.deliveries(1)), (0, 2));
}

#[tokio::test]
async fn a_retry_to_the_queue_itself_and_a_reject_the_queue_dead_letters() {
    let (state, ledger, mut c) = connection(true);
    let mut out = Vec::new();
    c.from_worker(&consume(1, "q"), &mut out);
    c.from_server(&consume_ok(1, "t1"), &mut out);
    // Celery's `retry`: the task published to its own queue, then the delivery acked. The copy
    // comes back as delivery 2, which its handler gives up on: a reject without requeue, which
    // the queue's arguments dead-letter to `q.XQ`.
    c.from_server(&delivery(1, 1, "1"), &mut out);
    c.from_worker(&publish(1, "q", ORDER), &mut out);
    c.from_worker(&ack(1, 1, false), &mut out);
    c.from_server(&unnamed_delivery(1, 2, "t1", ORDER), &mut out);
    c.from_worker(&reject(1, 2), &mut out);
    assert_eq!(
        seen(&state),
        [
            "deliver 1/1",
            "republish 1/1 Queue",
            "ack 1/1 Superseded",
            "deliver 1/2",
            "dead 1/2",
        ]
    );
    // Settled (dead-lettered), counted in the DLQ.
    assert_eq!((ledger.unsettled(), ledger.dead_count()), (0, 1));
}

#[tokio::test]
async fn a_publish_of_no_message_of_the_run_or_to_no_queue_of_the_run_changes_nothing() {
    let (state, ledger, mut c) = connection(false);
    let mut out = Vec::new();
    // An unknown key, a body that is no order, and msg-1 to a queue that is none of the run's.
    c.from_worker(&publish(1, "q", br#"{"key":"msg-99"}"#), &mut out);
    c.from_worker(&publish(1, "q", b"hello"), &mut out);
    c.from_worker(&publish(1, "elsewhere", ORDER), &mut out);
    assert_eq!(seen(&state), Vec::<String>::new());
    assert_eq!(ledger.copies_waiting(), 0);
}

#[tokio::test]
async fn a_retry_published_on_another_connection_after_its_ack_is_still_that_deliverys_retry() {
    let (state, ledger, mut consumer) = connection(true);
    // The same worker's second connection, its publisher's (Dramatiq's worker thread).
    let mut publisher = Amqp {
        state: state.clone(),
        ledger: ledger.clone(),
        consumer_timeout: 1_000,
        wire: None,
        places: Arc::new(RunQueues {
            queue: "q".into(),
            delay: vec!["q.DQ".into()],
            dead_letter: vec!["q.XQ".into()],
            reader: KeyReader::of(None),
            rejects_dead_letter: true,
        }),
    }
    .connection(1)
    .greeted();
    let mut out = Vec::new();
    consumer.from_worker(&consume(1, "q"), &mut out);
    consumer.from_server(&consume_ok(1, "t1"), &mut out);
    consumer.from_worker(&consume(2, "q.DQ"), &mut out);
    consumer.from_server(&consume_ok(2, "t2"), &mut out);
    // Delivery 1 fails; its ack reaches the proxy before the retry's publish does (two
    // connections, no publisher confirms): the ack deletes, the publish is still delivery 1's
    // retry, and the message lives on.
    consumer.from_server(&delivery(1, 1, "1"), &mut out);
    consumer.from_worker(&ack(1, 1, false), &mut out);
    publisher.from_worker(&publish(1, "q.DQ", ORDER), &mut out);
    // The delay queue's copy, moved to the queue when due: the framework's move, no retry.
    consumer.from_server(&unnamed_delivery(2, 1, "t2", ORDER), &mut out);
    consumer.from_worker(&publish(2, "q", ORDER), &mut out);
    consumer.from_worker(&ack(2, 1, false), &mut out);
    consumer.from_server(&unnamed_delivery(1, 2, "t1", ORDER), &mut out);
    consumer.from_worker(&ack(1, 2, false), &mut out);
    assert_eq!(
        seen(&state),
        [
            "deliver 1/1",
            "ack 1/1 Deleted",
            "republish 1/1 Delayed",
            "republish 1/0 Queue",
            "deliver 1/2",
            "ack 1/2 Deleted",
        ]
    );
    assert_eq!((ledger.copies_waiting(), ledger.unsettled()), (0, 0));
}
