//! The NATS proxy under `message` rules: a double ack kept from the server and answered for
//! it, or passed on later without its inbox; a delivery dropped (the pull ends in a 408) or
//! held back; everything else passing as it came.

use std::time::Duration;

use super::*;
use crate::chaos::Faults;
use crate::profile::message_action::MessageAction;
use crate::profile::{ChaosRule, MessageRule};
use crate::provider::http::LiveClock;
use crate::record::AckOutcome;

/// A run on wall time with one worker and one `message` rule, `action` (held `delay`) on seq 1
/// (stream sequence 1).
fn one_rule(action: MessageAction, delay: Duration) -> Arc<Shared> {
    let book = Arc::new(Mutex::new(Book::default()));
    book.lock().unwrap().published(1, 1);
    let mut rule = MessageRule::new(action, delay);
    rule.seq = Some(vec![1]);
    let faults = Faults::new(&[ChaosRule::new(rule)], 1);
    Arc::new(Shared {
        state: LiveState::new(LiveClock::new(1.0), "q", 1, faults),
        book,
        stream: "s".to_string(),
        consumer: "workers".to_string(),
        subject: "s.orders".to_string(),
        waits: NatsConfig {
            ack_wait: 30,
            backoff: Vec::new(),
            max_deliver: 0,
            max_ack_pending: 1,
        },
        wire: None,
    })
}

const SUB: &[u8] = b"SUB _INBOX.a.* 3\r\n";
const DELIVERY: &[u8] =
    b"MSG orders.new 9 $JS.ACK.s.workers.1.1.1.1700000000000000000.0 2\r\n{}\r\n";
const DOUBLE_ACK: &[u8] =
    b"PUB $JS.ACK.s.workers.1.1.1.1700000000000000000.0 _INBOX.a.7 4\r\n+ACK\r\n";

fn lines(sh: &Shared) -> (Vec<String>, usize) {
    let events = sh.state.take_events();
    let fired = events
        .iter()
        .filter(|e| matches!(e.kind, EventKind::FaultFired { rule: 0, .. }))
        .count();
    (crate::runner::live::proxy::observed_lines(&events), fired)
}

/// A connection of worker 1 that subscribed to its reply inbox and was handed seq 1: what it
/// sent on and got, checked.
fn delivered(sh: &Arc<Shared>) -> Box<dyn Connection> {
    let mut c = NatsProtocol(sh.clone()).connection(1);
    let mut out = Vec::new();
    c.from_worker(SUB, &mut out);
    assert_eq!(out, SUB);
    out.clear();
    c.from_server(DELIVERY, &mut out);
    assert_eq!(out, DELIVERY);
    c
}

#[tokio::test]
async fn a_dropped_double_ack_never_reaches_the_server_and_the_worker_is_answered() {
    let sh = one_rule(MessageAction::DropAck, Duration::ZERO);
    let mut c = delivered(&sh);
    let mut out = Vec::new();
    c.from_worker(DOUBLE_ACK, &mut out);
    assert!(out.is_empty(), "nothing to the server");
    assert_eq!(c.next_due(Direction::ToBroker), None);
    // The confirmation the server would give, on the inbox, to subscription 3: at once.
    let due = c
        .next_due(Direction::ToWorker)
        .expect("an answer for the worker");
    assert_eq!(c.due(Direction::ToWorker, due, &mut out), Flow::Go);
    assert_eq!(out, b"MSG _INBOX.a.7 3 0\r\n\r\n");
    assert_eq!(c.next_due(Direction::ToWorker), None);
    // A ping passes as it came.
    out.clear();
    c.from_worker(b"PING\r\n", &mut out);
    assert_eq!(out, b"PING\r\n");
    // Delivered, never acked; the rule fired once.
    assert_eq!(lines(&sh), (vec!["deliver 1.1 to 1".to_string()], 1));
}

#[tokio::test]
async fn a_delayed_ack_reaches_the_server_when_due_without_its_inbox() {
    let sh = one_rule(MessageAction::DelayAck, Duration::from_secs(40));
    let mut c = delivered(&sh);
    let mut out = Vec::new();
    let before = Instant::now();
    c.from_worker(DOUBLE_ACK, &mut out);
    assert!(out.is_empty());
    let answer = c.next_due(Direction::ToWorker).expect("an answer");
    c.due(Direction::ToWorker, answer, &mut out);
    assert_eq!(out, b"MSG _INBOX.a.7 3 0\r\n\r\n");
    // 40 s (wall, at scale 1) on, the ack goes on, no inbox to answer, and is recorded.
    let due = c.next_due(Direction::ToBroker).expect("a held ack");
    assert!(due >= before + Duration::from_secs(40), "{due:?}");
    out.clear();
    c.due(Direction::ToBroker, due - Duration::from_secs(1), &mut out);
    assert!(out.is_empty(), "not yet due");
    c.due(Direction::ToBroker, due, &mut out);
    assert_eq!(
        out,
        b"PUB $JS.ACK.s.workers.1.1.1.1700000000000000000.0 4\r\n+ACK\r\n"
    );
    let (seen, fired) = lines(&sh);
    assert_eq!(seen, ["deliver 1.1 to 1", "ack 1.1 by 1: Deleted"]);
    assert_eq!(fired, 1);
    let _ = AckOutcome::Deleted;
}

#[tokio::test]
async fn a_dropped_delivery_ends_the_pull_request_instead_and_a_held_one_comes_later() {
    let sh = one_rule(MessageAction::DropDelivery, Duration::ZERO);
    let mut c = NatsProtocol(sh.clone()).connection(1);
    let mut out = Vec::new();
    c.from_server(DELIVERY, &mut out);
    assert_eq!(
        String::from_utf8_lossy(&out),
        "HMSG orders.new 9 32 32\r\nNATS/1.0 408 Request Timeout\r\n\r\n\r\n"
    );
    assert_eq!(lines(&sh), (vec!["deliver 1.1 to 1".to_string()], 1));

    let sh = one_rule(MessageAction::DelayDelivery, Duration::from_secs(10));
    let mut c = NatsProtocol(sh.clone()).connection(1);
    out.clear();
    c.from_server(DELIVERY, &mut out);
    c.from_server(b"PING\r\n", &mut out);
    assert_eq!(out, b"PING\r\n", "the delivery held, the ping passed");
    let due = c.next_due(Direction::ToWorker).expect("a held delivery");
    out.clear();
    assert_eq!(c.due(Direction::ToWorker, due, &mut out), Flow::Go);
    assert_eq!(out, DELIVERY);
    assert_eq!(lines(&sh), (vec!["deliver 1.1 to 1".to_string()], 1));
}
