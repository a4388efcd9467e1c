//! The RESP proxy under `message` rules on acks: an XACK kept from the server or sent later,
//! the worker answered in the server's place in the reply order (pipelined, inside MULTI/EXEC,
//! in RESP3), and the server's late reply read and swallowed.

use std::sync::Arc;
use std::time::{Duration, Instant};

use super::entries::Entries;
use super::proxy::{Observed, RespProtocol};
use super::wire::WireTime;
use crate::chaos::Faults;
use crate::profile::message_action::MessageAction;
use crate::profile::{ChaosRule, MessageRule};
use crate::provider::http::LiveClock;
use crate::record::EventKind;
use crate::runner::live::proxy::link::Direction;
use crate::runner::live::proxy::{observed_lines, Connection, Flow, Protocol};
use crate::runner::live::state::LiveState;

pub(super) fn bulk(s: &str) -> String {
    format!("${}\r\n{s}\r\n", s.len())
}

pub(super) fn cmd(args: &[&str]) -> Vec<u8> {
    let mut out = format!("*{}\r\n", args.len());
    for a in args {
        out.push_str(&bulk(a));
    }
    out.into_bytes()
}

/// XREADGROUP's reply with entry `id` of stream `s` (RESP2).
pub(super) fn read_reply(id: &str) -> String {
    format!(
        "*1\r\n*2\r\n{}*1\r\n*2\r\n{}*2\r\n{}{}",
        bulk("s"),
        bulk(id),
        bulk("body"),
        bulk("x")
    )
}

pub(super) const READ: [&str; 7] = ["XREADGROUP", "GROUP", "g", "c1", "STREAMS", "s", ">"];

/// The proxy's view of a run of `state` on stream `s` holding entries 0-1 (seq 1) and 0-2
/// (seq 2), `min_idle` 30 s.
pub(super) fn observed(state: &Arc<LiveState>, wire: Option<WireTime>) -> Arc<Observed> {
    let entries = Arc::new(Entries::default());
    entries.published("0-1".into(), 1);
    entries.published("0-2".into(), 2);
    Arc::new(Observed {
        state: state.clone(),
        entries,
        stream: "s".into(),
        dead: "s:dead".into(),
        min_idle: 30_000_000_000,
        claim_every: 0,
        wire,
    })
}

/// A run on wall time with one worker, entries 0-1 (seq 1) and 0-2 (seq 2) and one `message`
/// rule, `action` (held `delay`) on seq 1.
pub(super) fn one_rule(action: MessageAction, delay: Duration) -> (Arc<LiveState>, Arc<Observed>) {
    let mut rule = MessageRule::new(action, delay);
    rule.seq = Some(vec![1]);
    let faults = Faults::new(&[ChaosRule::new(rule)], 1);
    let state = LiveState::new(LiveClock::new(1.0), "s", 1, faults);
    let run = observed(&state, None);
    (state, run)
}

/// Worker 1's connection, handed entries 0-1 and 0-2 (both pass on as they came).
fn delivered(run: &Arc<Observed>) -> Box<dyn Connection> {
    let mut c = RespProtocol(run.clone()).connection(1);
    for id in ["0-1", "0-2"] {
        let mut out = Vec::new();
        c.from_worker(&cmd(&READ), &mut out);
        assert_eq!(out, cmd(&READ));
        out.clear();
        c.from_server(read_reply(id).as_bytes(), &mut out);
        assert_eq!(out, read_reply(id).as_bytes());
    }
    c
}

/// The events a proxy reported, and how often rule 0 fired.
pub(super) fn lines(state: &LiveState) -> (Vec<String>, usize) {
    let events = state.take_events();
    let fired = events
        .iter()
        .filter(|e| matches!(e.kind, EventKind::FaultFired { rule: 0, .. }))
        .count();
    (observed_lines(&events), fired)
}

/// The reply made up for the worker, which its writer asks for at once.
fn made_up(c: &mut dyn Connection) -> Vec<u8> {
    let due = c
        .next_due(Direction::ToWorker)
        .expect("a reply for the worker");
    assert!(due <= Instant::now());
    let mut out = Vec::new();
    assert_eq!(c.due(Direction::ToWorker, due, &mut out), Flow::Go);
    assert_eq!(c.next_due(Direction::ToWorker), None);
    out
}

#[tokio::test]
async fn a_dropped_xack_never_reaches_the_server_and_the_worker_reads_1() {
    let (state, run) = one_rule(MessageAction::DropAck, Duration::ZERO);
    let mut c = delivered(&run);
    let mut out = Vec::new();
    c.from_worker(&cmd(&["XACK", "s", "g", "0-1"]), &mut out);
    assert!(out.is_empty(), "nothing to the server");
    assert_eq!(made_up(&mut *c), b":1\r\n");
    assert_eq!(c.next_due(Direction::ToBroker), None, "never sent");
    // The XACK of 0-2 (seq 2, not selected) goes on; the server's reply passes as it came.
    c.from_worker(&cmd(&["XACK", "s", "g", "0-2"]), &mut out);
    assert_eq!(out, cmd(&["XACK", "s", "g", "0-2"]));
    let mut back = Vec::new();
    c.from_server(b":1\r\n", &mut back);
    assert_eq!(back, b":1\r\n");
    // Two deliveries; the kept ack records no `Acked` (the server never judged it), seq 2's
    // ack is confirmed; the rule fired once.
    assert_eq!(
        lines(&state),
        (
            vec![
                "deliver 1.1 to 1".to_string(),
                "deliver 2.1 to 1".to_string(),
                "ack 2.1 by 1: Deleted".to_string(),
            ],
            1
        )
    );
}

#[tokio::test]
async fn a_made_up_reply_waits_for_the_replies_before_it() {
    let (_state, run) = one_rule(MessageAction::DropAck, Duration::ZERO);
    let mut c = delivered(&run);
    // PING, the kept XACK and another PING pipelined: only the PINGs reach the server, and the
    // worker reads PONG, 1, PONG in that order.
    let mut three = cmd(&["PING"]);
    three.extend(cmd(&["XACK", "s", "g", "0-1"]));
    three.extend(cmd(&["PING"]));
    let mut out = Vec::new();
    c.from_worker(&three, &mut out);
    let pings: Vec<u8> = [cmd(&["PING"]), cmd(&["PING"])].concat();
    assert_eq!(out, pings);
    assert_eq!(c.next_due(Direction::ToWorker), None, "not its turn yet");
    let mut back = Vec::new();
    c.from_server(b"+PONG\r\n+PONG\r\n", &mut back);
    assert_eq!(back, b"+PONG\r\n:1\r\n+PONG\r\n");
}

#[tokio::test]
async fn a_delayed_xack_goes_on_later_and_its_reply_is_swallowed() {
    let (state, run) = one_rule(MessageAction::DelayAck, Duration::from_millis(40));
    let mut c = delivered(&run);
    let mut out = Vec::new();
    let before = Instant::now();
    c.from_worker(&cmd(&["XACK", "s", "g", "0-1"]), &mut out);
    assert!(out.is_empty());
    assert_eq!(made_up(&mut *c), b":1\r\n");
    let due = c.next_due(Direction::ToBroker).expect("sent later");
    assert!(due >= before + Duration::from_millis(40));
    // Not before it is due; then as an XACK of its entry alone.
    assert_eq!(c.due(Direction::ToBroker, before, &mut out), Flow::Go);
    assert!(out.is_empty());
    c.due(Direction::ToBroker, due, &mut out);
    assert_eq!(out, cmd(&["XACK", "s", "g", "0-1"]));
    assert_eq!(c.next_due(Direction::ToBroker), None);
    // The server removes it (1): read as the ack, not passed on.
    let mut back = Vec::new();
    c.from_server(b":1\r\n", &mut back);
    assert!(back.is_empty(), "the worker had its answer");
    let (events, fired) = lines(&state);
    assert_eq!(
        events.last().map(String::as_str),
        Some("ack 1.1 by 1: Deleted")
    );
    assert_eq!(fired, 1);
}

#[tokio::test]
async fn a_delayed_xack_that_finds_its_entry_gone_is_a_stale_ack() {
    let (state, run) = one_rule(MessageAction::DelayAck, Duration::ZERO);
    let mut c = delivered(&run);
    let mut out = Vec::new();
    c.from_worker(&cmd(&["XACK", "s", "g", "0-1"]), &mut out);
    made_up(&mut *c);
    // A pending XREADGROUP is ahead of it: its reply passes, the late XACK's 0 does not.
    c.from_worker(&cmd(&READ), &mut out);
    out.clear();
    let due = c.next_due(Direction::ToBroker).expect("due");
    c.due(Direction::ToBroker, due, &mut out);
    assert_eq!(out, cmd(&["XACK", "s", "g", "0-1"]));
    let mut back = Vec::new();
    c.from_server(b"*-1\r\n:0\r\n", &mut back);
    assert_eq!(back, b"*-1\r\n");
    let (events, _) = lines(&state);
    assert_eq!(
        events.last().map(String::as_str),
        Some("ack 1.1 by 1: StaleGone")
    );
}

#[tokio::test]
async fn an_xack_of_several_entries_goes_on_without_the_kept_one_and_counts_it() {
    let (state, run) = one_rule(MessageAction::DropAck, Duration::ZERO);
    let mut c = delivered(&run);
    let mut out = Vec::new();
    c.from_worker(&cmd(&["XACK", "s", "g", "0-1", "0-2"]), &mut out);
    assert_eq!(out, cmd(&["XACK", "s", "g", "0-2"]));
    assert_eq!(c.next_due(Direction::ToWorker), None);
    // The server removed 0-2 (1); the worker reads 2, 0-1 counted as removed.
    let mut back = Vec::new();
    c.from_server(b":1\r\n", &mut back);
    assert_eq!(back, b":2\r\n");
    let (events, fired) = lines(&state);
    assert_eq!(
        events.last().map(String::as_str),
        Some("ack 2.1 by 1: Deleted")
    );
    assert_eq!(fired, 1);
}

#[tokio::test]
async fn a_kept_xack_inside_multi_is_queued_here_and_counted_in_execs_reply() {
    let (state, run) = one_rule(MessageAction::DropAck, Duration::from_millis(0));
    let mut c = delivered(&run);
    // MULTI, XACK 0-1 (kept whole), XACK 0-2, EXEC: the server gets MULTI, XACK 0-2, EXEC.
    let tx = [
        cmd(&["MULTI"]),
        cmd(&["XACK", "s", "g", "0-1"]),
        cmd(&["XACK", "s", "g", "0-2"]),
        cmd(&["EXEC"]),
    ];
    let mut out = Vec::new();
    c.from_worker(&tx.concat(), &mut out);
    assert_eq!(out, [tx[0].clone(), tx[2].clone(), tx[3].clone()].concat());
    // OK, QUEUED (XACK 0-2), [1] from the server; the worker reads OK, QUEUED (made up),
    // QUEUED, [1, 1].
    let mut back = Vec::new();
    c.from_server(b"+OK\r\n+QUEUED\r\n*1\r\n:1\r\n", &mut back);
    assert_eq!(back, b"+OK\r\n+QUEUED\r\n+QUEUED\r\n*2\r\n:1\r\n:1\r\n");
    let (events, fired) = lines(&state);
    assert_eq!(
        events.last().map(String::as_str),
        Some("ack 2.1 by 1: Deleted")
    );
    assert_eq!(fired, 1);
}

#[tokio::test]
async fn a_delayed_xack_waits_for_the_workers_transaction_to_end() {
    let (_state, run) = one_rule(MessageAction::DelayAck, Duration::ZERO);
    let mut c = delivered(&run);
    let mut out = Vec::new();
    c.from_worker(&cmd(&["XACK", "s", "g", "0-1"]), &mut out);
    made_up(&mut *c);
    c.from_worker(&cmd(&["MULTI"]), &mut out);
    assert_eq!(c.next_due(Direction::ToBroker), None, "not inside MULTI");
    c.from_worker(&cmd(&["EXEC"]), &mut out);
    out.clear();
    let due = c.next_due(Direction::ToBroker).expect("due after EXEC");
    c.due(Direction::ToBroker, due, &mut out);
    assert_eq!(out, cmd(&["XACK", "s", "g", "0-1"]));
    // OK and EXEC's empty array pass; the late XACK's reply does not.
    let mut back = Vec::new();
    c.from_server(b"+OK\r\n*0\r\n:1\r\n", &mut back);
    assert_eq!(back, b"+OK\r\n*0\r\n");
}

#[tokio::test]
async fn after_hello_3_the_kept_count_goes_into_a_resp3_reply() {
    let (_state, run) = one_rule(MessageAction::DropAck, Duration::ZERO);
    let mut c = delivered(&run);
    let mut out = Vec::new();
    c.from_worker(&cmd(&["HELLO", "3"]), &mut out);
    let hello = format!("%1\r\n{}:3\r\n", bulk("proto"));
    let mut back = Vec::new();
    c.from_server(hello.as_bytes(), &mut back);
    c.from_worker(&cmd(&["XACK", "s", "g", "0-2", "0-1"]), &mut out);
    let mut back = Vec::new();
    c.from_server(b":1\r\n", &mut back);
    assert_eq!(back, b":2\r\n");
}
