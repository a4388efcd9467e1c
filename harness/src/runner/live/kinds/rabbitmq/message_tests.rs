//! The AMQP proxy under `message` rules, on frames written by hand: acks dropped or held back
//! (a `multiple` ack split around them), deliveries dropped or held back whole, and everything
//! else passing as it came.

use std::time::Duration;

use super::super::test_frames::{frame, short, Greeted};
use super::tests::{ack, channel_close, delivery};
use super::*;
use crate::chaos::Faults;
use crate::profile::message_action::MessageAction;
use crate::profile::{ChaosRule, MessageRule};

/// The state of a run of one worker on wall time with one `message` rule: `action` (held
/// `delay`) on the messages `seq`.
fn one_rule(action: MessageAction, delay: Duration, seq: &[Seq]) -> Arc<LiveState> {
    let mut rule = MessageRule::new(action, delay);
    rule.seq = Some(seq.to_vec());
    LiveState::new(
        crate::provider::http::LiveClock::new(1.0),
        "q",
        1,
        Faults::new(&[ChaosRule::new(rule)], 1),
    )
}

fn amqp(state: &Arc<LiveState>) -> Box<dyn Connection> {
    Amqp {
        state: state.clone(),
        ledger: Arc::new(Ledger::default()),
        consumer_timeout: 1_000,
        wire: None,
        places: Default::default(),
    }
    .connection(1)
    .greeted()
}

fn fired(events: &[crate::record::Event]) -> usize {
    events
        .iter()
        .filter(|e| matches!(e.kind, EventKind::FaultFired { rule: 0, .. }))
        .count()
}

#[tokio::test]
async fn a_dropped_ack_never_reaches_the_broker_and_a_multiple_ack_goes_on_without_it() {
    let state = one_rule(MessageAction::DropAck, Duration::ZERO, &[8]);
    let mut c = amqp(&state);
    let mut out = Vec::new();
    for (tag, seq) in [(1, "7"), (2, "8"), (3, "9")] {
        c.from_server(&delivery(1, tag, seq), &mut out);
    }
    // The ack of tag 1 (seq 7) goes on byte for byte; the ack of tag 2 (seq 8, selected) does
    // not go on at all.
    let mut sent = Vec::new();
    c.from_worker(&ack(1, 1, false), &mut sent);
    assert_eq!(sent, ack(1, 1, false));
    sent.clear();
    c.from_worker(&ack(1, 2, false), &mut sent);
    assert!(sent.is_empty());
    // An ack of tag 3 with `multiple` covers tag 2 too: it goes on as a single ack of tag 3,
    // so the broker still holds tag 2. Nothing is due later.
    c.from_worker(&ack(1, 3, true), &mut sent);
    assert_eq!(sent, ack(1, 3, false));
    assert_eq!(c.next_due(Direction::ToBroker), None);
    // The broker closes the channel (consumer_timeout): it requeues tag 2, seq 8.
    c.from_server(&channel_close(1), &mut out);
    let events = state.take_events();
    assert_eq!(
        crate::runner::live::proxy::observed_lines(&events)[3..],
        ["ack 7.1 by 1: Deleted", "ack 9.1 by 1: Deleted"]
    );
    let returned: Vec<_> = events
        .iter()
        .filter_map(|e| match e.kind {
            EventKind::LeaseExpired { seq, .. } => Some(seq),
            _ => None,
        })
        .collect();
    assert_eq!((returned, fired(&events)), (vec![8], 1));
}

#[tokio::test]
async fn a_delayed_ack_goes_on_when_due_or_is_stale_if_its_channel_closed_first() {
    let state = one_rule(MessageAction::DelayAck, Duration::from_secs(40), &[7, 9]);
    let mut c = amqp(&state);
    let mut out = Vec::new();
    c.from_server(&delivery(1, 1, "7"), &mut out);
    c.from_server(&delivery(2, 1, "9"), &mut out);
    let before = Instant::now();
    let mut sent = Vec::new();
    c.from_worker(&ack(1, 1, false), &mut sent);
    c.from_worker(&ack(2, 1, false), &mut sent);
    // Both held: nothing went on; the first is due 40 s (wall, at scale 1) after its ack.
    assert!(sent.is_empty());
    let due = c.next_due(Direction::ToBroker).expect("a held ack");
    assert!(due >= before + Duration::from_secs(40), "{due:?}");
    assert!(due <= Instant::now() + Duration::from_secs(40), "{due:?}");
    // A heartbeat from the worker passes meanwhile, untouched.
    let heartbeat = [8u8, 0, 0, 0, 0, 0, 0, 0xCE];
    c.from_worker(&heartbeat, &mut sent);
    assert_eq!(sent, heartbeat);
    // Before it is due nothing goes on.
    sent.clear();
    c.due(Direction::ToBroker, Instant::now(), &mut sent);
    assert!(sent.is_empty());
    // The broker closes channel 2 (seq 9's): its delayed ack will be stale.
    c.from_server(&channel_close(2), &mut out);
    // 41 s on, both are due: channel 1's goes on as a single ack of tag 1, channel 2's does
    // not go on.
    c.due(Direction::ToBroker, due + Duration::from_secs(1), &mut sent);
    assert_eq!(sent, ack(1, 1, false));
    assert_eq!(c.next_due(Direction::ToBroker), None);
    let events = state.take_events();
    assert_eq!(
        crate::runner::live::proxy::observed_lines(&events)[2..],
        ["ack 7.1 by 1: Deleted", "ack 9.1 by 1: StaleRejected"]
    );
    assert_eq!(fired(&events), 2);
}

#[tokio::test]
async fn without_rules_on_acks_an_ack_passes_as_it_comes() {
    // A rule on deliveries only: the worker's bytes go on as they are read, a partial frame
    // with them.
    let state = one_rule(MessageAction::DropDelivery, Duration::ZERO, &[7]);
    let mut c = amqp(&state);
    let a = ack(1, 1, false);
    let mut sent = Vec::new();
    c.from_worker(&a[..5], &mut sent);
    assert_eq!(sent, a[..5]);
}

/// The method and header frames of `delivery(ch, tag, seq)`, and its body frame apart.
fn split_delivery(ch: u16, tag: u64, seq: &str) -> (Vec<u8>, Vec<u8>) {
    let d = delivery(ch, tag, seq);
    // The body frame is the last: 7 bytes of frame header, the 2-byte body "{}", frame end.
    let at = d.len() - (7 + 2 + 1);
    (d[..at].to_vec(), d[at..].to_vec())
}

#[tokio::test]
async fn a_dropped_delivery_never_reaches_the_worker_and_the_next_passes() {
    let state = one_rule(MessageAction::DropDelivery, Duration::ZERO, &[8]);
    let mut c = amqp(&state);
    let mut out = Vec::new();
    // Tag 1 (seq 8, selected): its method, header and body frame all stay here, the body in a
    // read of its own. Tag 2 (seq 9) passes byte for byte.
    let (head, body) = split_delivery(1, 1, "8");
    assert_eq!(c.from_server(&head, &mut out), Flow::Go);
    assert_eq!(c.from_server(&body, &mut out), Flow::Go);
    assert!(out.is_empty());
    c.from_server(&delivery(1, 2, "9"), &mut out);
    assert_eq!(out, delivery(1, 2, "9"));
    assert_eq!(c.next_due(Direction::ToWorker), None);
    // Both count as deliveries; seq 8's handler span ended where it began. The server closes
    // the channel: it requeues both (the worker never acked tag 1).
    c.from_server(&channel_close(1), &mut out);
    let events = state.take_events();
    assert_eq!(
        crate::runner::live::proxy::observed_lines(&events),
        ["deliver 8.1 to 1", "deliver 9.1 to 1"]
    );
    let ended = events.iter().any(|e| {
        matches!(
            e.kind,
            EventKind::HandlerEnded {
                seq: 8,
                delivery: 1,
                ..
            }
        )
    });
    assert!(ended);
    assert_eq!(fired(&events), 1);
}

#[tokio::test]
async fn a_held_delivery_goes_on_whole_when_due_between_the_contents_of_its_channel() {
    let state = one_rule(MessageAction::DelayDelivery, Duration::from_secs(10), &[8]);
    let mut c = amqp(&state);
    let mut out = Vec::new();
    // Tag 1 (seq 8) is held; its body comes in a read of its own and joins it.
    let (head8, body8) = split_delivery(1, 1, "8");
    c.from_server(&head8, &mut out);
    let due = c.next_due(Direction::ToWorker).expect("a held delivery");
    c.from_server(&body8, &mut out);
    assert!(out.is_empty());
    // Tag 2 (seq 9) passes, but only its method and header are in when seq 8 comes due.
    let (head9, body9) = split_delivery(1, 2, "9");
    c.from_server(&head9, &mut out);
    assert_eq!(out, head9);
    out.clear();
    let later = due + Duration::from_secs(1);
    assert_eq!(c.due(Direction::ToWorker, later, &mut out), Flow::Go);
    assert!(out.is_empty(), "not inside seq 9's content");
    assert_eq!(c.next_due(Direction::ToWorker), None, "due, waiting");
    // Seq 9's body frame ends its content: seq 8 follows it, whole.
    c.from_server(&body9, &mut out);
    assert_eq!(out, [body9, delivery(1, 1, "8")].concat());
    let events = state.take_events();
    assert_eq!(
        crate::runner::live::proxy::observed_lines(&events),
        ["deliver 8.1 to 1", "deliver 9.1 to 1"]
    );
    assert_eq!(fired(&events), 1);
}

#[tokio::test]
async fn a_held_delivery_whose_channel_closes_first_never_reaches_the_worker() {
    let state = one_rule(MessageAction::DelayDelivery, Duration::from_secs(10), &[8]);
    let mut c = amqp(&state);
    let mut out = Vec::new();
    c.from_server(&delivery(1, 1, "8"), &mut out);
    assert!(c.next_due(Direction::ToWorker).is_some());
    // consumer_timeout: the server closes the channel and requeues tag 1; only the close goes
    // on, and nothing is due any more.
    c.from_server(&channel_close(1), &mut out);
    assert_eq!(out, channel_close(1));
    assert_eq!(c.next_due(Direction::ToWorker), None);
}

#[tokio::test]
async fn a_dropped_get_ok_is_answered_get_empty() {
    let state = one_rule(MessageAction::DropDelivery, Duration::ZERO, &[8]);
    let mut c = amqp(&state);
    // basic.get-ok (60, 71) of tag 1: tag, redelivered, exchange, routing key, message count;
    // then the header and body of `delivery(1, 1, "8")`.
    let mut m = vec![0, 60, 0, 71];
    m.extend_from_slice(&1u64.to_be_bytes());
    m.push(0);
    m.extend(short(""));
    m.extend(short("q"));
    m.extend_from_slice(&0u32.to_be_bytes());
    let d = delivery(1, 1, "8");
    let method_len = 7 + u32::from_be_bytes([d[3], d[4], d[5], d[6]]) as usize + 1;
    let mut get_ok = frame(1, 1, &m);
    get_ok.extend_from_slice(&d[method_len..]);
    let mut out = Vec::new();
    assert_eq!(c.from_server(&get_ok, &mut out), Flow::Go);
    // In its place the worker gets basic.get-empty, as the server sends for an empty queue.
    let parsed = parse_frame(out.as_slice()).map(|(_, f)| f);
    assert!(
        matches!(
            parsed,
            Ok(AMQPFrame::Method(
                1,
                AMQPClass::Basic(basic::AMQPMethod::GetEmpty(_))
            ))
        ),
        "{parsed:?}"
    );
    assert_eq!(fired(&state.take_events()), 1);
}
