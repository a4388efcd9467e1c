//! The NATS proxy on frames as async-nats and the server send them: deliveries and double
//! acks observed, another consumer's passed on, durations converted on the scaled clock.

use super::*;
use crate::chaos::KillSchedule;
use crate::provider::http::LiveClock;
use crate::record::AckOutcome;

fn shared() -> Arc<Shared> {
    on_clock(1.0, None)
}

/// A run at `scale` whose consumer's durations `wire` converts, if any.
fn on_clock(scale: f64, wire: Option<Wire>) -> Arc<Shared> {
    let book = Arc::new(Mutex::new(Book::default()));
    book.lock().unwrap().published(1, 1);
    Arc::new(Shared {
        state: LiveState::new(LiveClock::new(scale), "q", 2, KillSchedule::new(&[], 1)),
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
        wire,
    })
}

fn kinds(sh: &Shared) -> Vec<EventKind> {
    sh.state.take_events().into_iter().map(|e| e.kind).collect()
}

#[tokio::test]
async fn a_split_delivery_is_observed_once_whole_and_its_double_ack_when_the_server_answers() {
    let sh = shared();
    let mut c = NatsProtocol(sh.clone()).connection(1);
    let msg = b"MSG _INBOX.p.1 9 $JS.ACK.s.workers.1.1.1.1700000000000000000.0 5\r\nhello\r\n";
    let mut out = Vec::new();
    // The first 20 bytes are held until the rest arrives.
    assert_eq!(c.from_server(&msg[..20], &mut out), Flow::Go);
    assert!(out.is_empty());
    assert_eq!(c.from_server(&msg[20..], &mut out), Flow::Go);
    assert_eq!(out, msg);
    assert!(matches!(
        kinds(&sh)[..],
        [EventKind::Delivered {
            seq: 1,
            worker: 1,
            delivery: 1,
            ..
        }]
    ));
    // The double ack: recorded when the server's answer on its inbox passes back.
    let ack = b"PUB $JS.ACK.s.workers.1.1.1.1700000000000000000.0 _INBOX.a.7 4\r\n+ACK\r\n";
    out.clear();
    c.from_worker(ack, &mut out);
    assert_eq!(out, ack);
    assert!(kinds(&sh).is_empty());
    out.clear();
    c.from_server(b"MSG _INBOX.a.7 3 0\r\n\r\n", &mut out);
    let ev = kinds(&sh);
    assert!(
        ev.contains(&EventKind::Acked {
            seq: 1,
            worker: 1,
            delivery: 1,
            outcome: AckOutcome::Deleted
        }),
        "{ev:?}"
    );
}

#[tokio::test]
async fn deliveries_of_another_consumer_are_passed_on_unobserved() {
    let sh = shared();
    let mut c = NatsProtocol(sh.clone()).connection(2);
    let msg = b"MSG _INBOX.p.1 9 $JS.ACK.other.workers.1.1.1.1700000000000000000.0 0\r\n\r\n";
    let mut out = Vec::new();
    assert_eq!(c.from_server(msg, &mut out), Flow::Go);
    assert_eq!(out, msg);
    assert!(kinds(&sh).is_empty());
}

/// Checks that a NAK of delivery 1 was recorded as a release 10 s of profile time after
/// the moment it was observed (between the run's start and `now`).
fn released_10s_later(sh: &Shared, now: Nanos) {
    let ev = kinds(sh);
    let Some(EventKind::VisibilityChanged { lease_end, .. }) = ev
        .iter()
        .find(|e| matches!(e, EventKind::VisibilityChanged { delivery: 1, .. }))
    else {
        panic!("no release in {ev:?}");
    };
    assert!(
        (10_000_000_000..=10_000_000_000 + now).contains(lease_end),
        "{lease_end}"
    );
}

const DELIVERY: &[u8] =
    b"MSG _INBOX.p.1 9 $JS.ACK.s.workers.1.1.1.1700000000000000000.0 2\r\n{}\r\n";
const NAK_SUBJECT: &str = "$JS.ACK.s.workers.1.1.1.1700000000000000000.0";

#[tokio::test]
async fn a_scaled_consumers_pull_and_nak_reach_the_server_in_wall_time_and_the_nak_is_recorded_in_profile_time(
) {
    // Time scale 0.02: 1 profile second is 20 ms of wall time.
    let sh = on_clock(0.02, Some(Wire::new(0.02)));
    let mut c = NatsProtocol(sh.clone()).connection(1);
    // A pull request: expires 5 s -> 100_000_000 ns; `{"batch":1,"expires":5000000000}`
    // is 32 bytes, the rewritten `{"batch":1,"expires":100000000}` 31.
    let pull = b"PUB $JS.API.CONSUMER.MSG.NEXT.s.workers _INBOX.p.1 32\r\n{\"batch\":1,\"expires\":5000000000}\r\n";
    let mut out = Vec::new();
    c.from_worker(pull, &mut out);
    assert_eq!(
        String::from_utf8_lossy(&out),
        "PUB $JS.API.CONSUMER.MSG.NEXT.s.workers _INBOX.p.1 31\r\n{\"batch\":1,\"expires\":100000000}\r\n"
    );
    // The delivery passes as it is and is observed.
    out.clear();
    c.from_server(DELIVERY, &mut out);
    assert_eq!(out, DELIVERY);
    assert!(matches!(
        kinds(&sh)[..],
        [EventKind::Delivered { seq: 1, .. }]
    ));
    // A NAK with 10 s of profile delay: 200 ms to the server (`{"delay":200000000}`, 19
    // bytes after `-NAK `: 24), recorded as 10 s of profile time from now.
    let nak = format!("PUB {NAK_SUBJECT} 26\r\n-NAK {{\"delay\":10000000000}}\r\n");
    out.clear();
    c.from_worker(nak.as_bytes(), &mut out);
    assert_eq!(
        String::from_utf8_lossy(&out),
        format!("PUB {NAK_SUBJECT} 24\r\n-NAK {{\"delay\":200000000}}\r\n")
    );
    released_10s_later(&sh, sh.state.clock.now());
}

#[tokio::test]
async fn on_the_real_clock_a_nak_is_passed_on_as_it_is_and_its_wall_delay_recorded_in_profile_time()
{
    // Time scale 0.02, the consumer on the real clock: its 200 ms delay is wall time, 10 s
    // of profile time (200_000_000 / 0.02).
    let sh = on_clock(0.02, None);
    let mut c = NatsProtocol(sh.clone()).connection(1);
    let mut out = Vec::new();
    c.from_server(DELIVERY, &mut out);
    kinds(&sh);
    let nak = format!("PUB {NAK_SUBJECT} 24\r\n-NAK {{\"delay\":200000000}}\r\n");
    out.clear();
    c.from_worker(nak.as_bytes(), &mut out);
    assert_eq!(out, nak.as_bytes());
    released_10s_later(&sh, sh.state.clock.now());
}

#[tokio::test]
async fn the_answer_to_a_consumer_info_request_comes_back_in_profile_time() {
    let sh = on_clock(0.02, Some(Wire::new(0.02)));
    let mut c = NatsProtocol(sh.clone()).connection(1);
    let mut out = Vec::new();
    c.from_worker(
        b"PUB $JS.API.CONSUMER.INFO.s.workers _INBOX.r.1 0\r\n\r\n",
        &mut out,
    );
    // AckWait 600 ms of wall time / 0.02 = 30 s: `{"config":{"ack_wait":600000000}}` (33
    // bytes) becomes `{"config":{"ack_wait":30000000000}}` (35).
    out.clear();
    let info = b"MSG _INBOX.r.1 3 33\r\n{\"config\":{\"ack_wait\":600000000}}\r\n";
    c.from_server(info, &mut out);
    assert_eq!(
        String::from_utf8_lossy(&out),
        "MSG _INBOX.r.1 3 35\r\n{\"config\":{\"ack_wait\":30000000000}}\r\n"
    );
    // Only the answer: the same inbox again is passed on as it is.
    out.clear();
    c.from_server(info, &mut out);
    assert_eq!(out, info);
    // Frames without durations pass byte for byte.
    out.clear();
    c.from_worker(b"PING\r\nPUB orders.new 2\r\nhi\r\n", &mut out);
    assert_eq!(out, b"PING\r\nPUB orders.new 2\r\nhi\r\n");
}

#[tokio::test]
async fn a_handlers_publish_of_its_message_is_its_retry_and_the_copy_its_next_delivery() {
    let sh = shared();
    sh.state.publishing("msg-1");
    (sh.state).follow_copies(crate::workload::key_reader::KeyReader::of(None));
    let mut c = NatsProtocol(sh.clone()).connection(1);
    let mut out = Vec::new();
    let body = br#"{"key":"msg-1","to":"a@example.com"}"#;
    let msg = |stream_seq: u64| {
        let mut f = format!(
            "MSG _INBOX.p.1 9 $JS.ACK.s.workers.1.{stream_seq}.{stream_seq}.1700000000000000000.0 {}\r\n",
            body.len()
        )
        .into_bytes();
        f.extend_from_slice(body);
        f.extend_from_slice(b"\r\n");
        f
    };
    // Stream sequence 1 is message 1 (the test's book); its first delivery.
    c.from_server(&msg(1), &mut out);
    // The handler fails, publishes the message again to the run's subject and acks.
    let mut publish = format!("PUB s.orders {}\r\n", body.len()).into_bytes();
    publish.extend_from_slice(body);
    publish.extend_from_slice(b"\r\n");
    c.from_worker(&publish, &mut out);
    c.from_worker(
        b"PUB $JS.ACK.s.workers.1.1.1.1700000000000000000.0 4\r\n+ACK\r\n",
        &mut out,
    );
    // The copy is stream sequence 2, unknown until it comes: JetStream's delivery 1 of it.
    c.from_server(&msg(2), &mut out);
    c.from_worker(
        b"PUB $JS.ACK.s.workers.1.2.1.1700000000000000000.0 4\r\n+ACK\r\n",
        &mut out,
    );
    let ev = kinds(&sh);
    let ack = |delivery, outcome| EventKind::Acked {
        seq: 1,
        worker: 1,
        delivery,
        outcome,
    };
    assert!(
        ev.contains(&EventKind::Republished {
            seq: 1,
            worker: 1,
            delivery: 1,
            to: Republish::Queue
        }),
        "{ev:?}"
    );
    // The first ack removes the copy the retry replaced; the copy is message 1's delivery 2,
    // replacing no lease, and its ack deletes the message.
    assert!(ev.contains(&ack(1, AckOutcome::Superseded)), "{ev:?}");
    assert!(
        ev.iter().any(|e| matches!(
            e,
            EventKind::Delivered {
                seq: 1,
                delivery: 2,
                ..
            }
        )),
        "{ev:?}"
    );
    assert!(ev.contains(&ack(2, AckOutcome::Deleted)), "{ev:?}");
    assert!(
        !ev.iter()
            .any(|e| matches!(e, EventKind::LeaseExpired { .. })),
        "{ev:?}"
    );
}

#[tokio::test]
async fn a_pub_over_the_servers_max_payload_is_refused_at_its_line() {
    // `CONNECT {}` then a PUB whose size wraps `line + size + 2` to 0: refused at the line
    // under the default 1 MB, with the server's answer; nothing of it goes to the server.
    let mut c = NatsProtocol(shared()).connection(1);
    let mut out = Vec::new();
    let bomb = b"CONNECT {}\r\nPUB foo 18446744073709551584\r\nX";
    c.from_worker(bomb, &mut out);
    assert_eq!(out, b"CONNECT {}\r\n");
    let r = c.refusal().unwrap();
    assert_eq!(r.to_worker, b"-ERR 'Maximum Payload Violation'\r\n");
    assert!(r
        .why
        .starts_with("the worker sent PUB of 18446744073709551584 bytes"));
    assert_eq!(c.refusal(), None);
    // The server's INFO announces 64 bytes: a PUB of 65 is refused, one of 64 passes.
    let mut c = NatsProtocol(shared()).connection(2);
    out.clear();
    c.from_server(
        b"INFO {\"server_id\":\"x\",\"max_payload\":64}\r\n",
        &mut out,
    );
    let mut ok = b"PUB foo 64\r\n".to_vec();
    ok.extend_from_slice(&[b'a'; 64]);
    ok.extend_from_slice(b"\r\n");
    out.clear();
    c.from_worker(&ok, &mut out);
    assert_eq!((out.len(), c.refusal()), (ok.len(), None));
    out.clear();
    c.from_worker(b"PUB foo 65\r\n", &mut out);
    assert!(out.is_empty());
    assert!(c.refusal().unwrap().why.contains("max_payload (64)"));
}
