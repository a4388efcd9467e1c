//! The AMQP proxy on frames written by hand: deliveries held until their header, acks with
//! `multiple`, a channel the broker closes, durations on the scaled clock, frame splitting.

use super::super::test_frames::{frame, short, tune, Greeted};
use super::*;

/// basic.deliver (60, 60) of `tag`, its content header with `message_id` = `seq` and a body.
pub(super) fn delivery(ch: u16, tag: u64, seq: &str) -> Vec<u8> {
    let mut m = vec![0, 60, 0, 60];
    m.extend(short("ctag"));
    m.extend_from_slice(&tag.to_be_bytes());
    m.push(0);
    m.extend(short(""));
    m.extend(short("q"));
    // Header: class 60, weight 0, body size 2, flags: message-id (bit 7) only.
    let mut h = vec![0, 60, 0, 0];
    h.extend_from_slice(&2u64.to_be_bytes());
    h.extend_from_slice(&0x0080u16.to_be_bytes());
    h.extend(short(seq));
    let mut all = frame(1, ch, &m);
    all.extend(frame(2, ch, &h));
    all.extend(frame(3, ch, b"{}"));
    all
}

/// basic.ack (60, 80) of `tag`.
pub(super) fn ack(ch: u16, tag: u64, multiple: bool) -> Vec<u8> {
    let mut m = vec![0, 60, 0, 80];
    m.extend_from_slice(&tag.to_be_bytes());
    m.push(u8::from(multiple));
    frame(1, ch, &m)
}

/// channel.close (20, 40) from the server: 406 PRECONDITION_FAILED.
pub(super) fn channel_close(ch: u16) -> Vec<u8> {
    let mut m = vec![0, 20, 0, 40];
    m.extend_from_slice(&406u16.to_be_bytes());
    m.extend(short(
        "PRECONDITION_FAILED - delivery acknowledgement timed out",
    ));
    m.extend_from_slice(&[0, 0, 0, 0]);
    frame(1, ch, &m)
}

/// The state of a run of one worker at `scale`, without kills.
fn one_worker(scale: f64) -> Arc<LiveState> {
    LiveState::new(
        crate::provider::http::LiveClock::new(scale),
        "q",
        1,
        crate::chaos::KillSchedule::new(&[], 1),
    )
}

#[tokio::test]
async fn deliveries_are_held_until_their_header_and_acks_of_a_closed_channel_are_stale() {
    let state = one_worker(1.0);
    let ledger = Arc::new(Ledger::default());
    let mut c = Amqp {
        state: state.clone(),
        ledger: ledger.clone(),
        consumer_timeout: 1_000,
        wire: None,
        places: Default::default(),
    }
    .connection(1)
    .greeted();
    let mut out = Vec::new();
    // Delivery tag 1 of seq 7, in two reads split inside the header: nothing passes until
    // the header names the message, then everything read so far.
    let d = delivery(1, 1, "7");
    let split = d.len() - 15;
    assert_eq!(c.from_server(&d[..split], &mut out), Flow::Go);
    assert!(out.is_empty());
    assert_eq!(c.from_server(&d[split..], &mut out), Flow::Go);
    assert_eq!(out, d);
    // Tags 2 (seq 8) and 3 (seq 9); an ack of 2 with `multiple` settles 1 and 2.
    out.clear();
    c.from_server(&delivery(1, 2, "8"), &mut out);
    c.from_server(&delivery(1, 3, "9"), &mut out);
    c.from_worker(&ack(1, 2, true), &mut out);
    // The server closes the channel (consumer_timeout): tag 3 is returned, its ack stale.
    c.from_server(&channel_close(1), &mut out);
    c.from_worker(&ack(1, 3, false), &mut out);
    let seen: Vec<_> = state
        .take_events()
        .into_iter()
        .filter_map(|e| match e.kind {
            EventKind::Delivered { seq, delivery, .. } => Some(format!("deliver {seq}/{delivery}")),
            EventKind::Acked { seq, outcome, .. } => Some(format!("ack {seq} {outcome:?}")),
            EventKind::LeaseExpired { seq, .. } => Some(format!("return {seq}")),
            _ => None,
        })
        .collect();
    assert_eq!(
        seen,
        [
            "deliver 7/1",
            "deliver 8/1",
            "deliver 9/1",
            "ack 7 Deleted",
            "ack 8 Deleted",
            "return 9",
            "ack 9 StaleRejected"
        ]
    );
    // 3 published-and-delivered, 2 acked, nothing held (9 went back to the queue).
    assert_eq!((ledger.held(), ledger.deliveries(9)), (0, 1));
}

/// The delivery of tag 1, seq 7, published with `expiration` (flag 0x0100, on the wire
/// before message-id's 0x0080).
fn expiring_delivery(expiration: &str) -> Vec<u8> {
    let d = delivery(1, 1, "7");
    let method_len = 7 + u32::from_be_bytes([d[3], d[4], d[5], d[6]]) as usize + 1;
    let mut h = vec![0, 60, 0, 0];
    h.extend_from_slice(&2u64.to_be_bytes());
    h.extend_from_slice(&0x0180u16.to_be_bytes());
    h.extend(short(expiration));
    h.extend(short("7"));
    let mut all = d[..method_len].to_vec();
    all.extend(frame(2, 1, &h));
    all.extend(frame(3, 1, b"{}"));
    all
}

#[tokio::test]
async fn a_scaled_workers_durations_are_converted_and_its_deliveries_still_observed() {
    let state = one_worker(0.05);
    let mut c = Amqp {
        state: state.clone(),
        ledger: Arc::new(Ledger::default()),
        consumer_timeout: 1_000,
        wire: Some(WireTime::new(0.05)),
        places: Default::default(),
    }
    .connection(1)
    .greeted();
    let mut out = Vec::new();
    // The server's 60 s heartbeat reaches the worker as 1200 (profile) seconds.
    c.from_server(&tune(30, 60), &mut out);
    assert_eq!(out, tune(30, 1200));
    // The worker's answer, in two reads split inside the frame: nothing goes on until it
    // is complete, then 1200 x 0.05 = 60 s.
    out.clear();
    let ok = tune(31, 1200);
    assert_eq!(c.from_worker(&ok[..9], &mut out), Flow::Go);
    assert!(out.is_empty());
    c.from_worker(&ok[9..], &mut out);
    assert_eq!(out, tune(31, 60));
    // A delivery whose message was published with 1 profile minute to live ("3000" wall
    // ms) reaches the worker as "60000", and is observed as delivery 1 of seq 7; the ack
    // passes byte for byte and is observed.
    out.clear();
    c.from_server(&expiring_delivery("3000"), &mut out);
    assert_eq!(out, expiring_delivery("60000"));
    out.clear();
    c.from_worker(&ack(1, 1, false), &mut out);
    assert_eq!(out, ack(1, 1, false));
    let seen: Vec<_> = state
        .take_events()
        .into_iter()
        .filter_map(|e| match e.kind {
            EventKind::Delivered { seq, delivery, .. } => Some((seq, delivery, "deliver")),
            EventKind::Acked { seq, delivery, .. } => Some((seq, delivery, "ack")),
            _ => None,
        })
        .collect();
    assert_eq!(seen, [(7, 1, "deliver"), (7, 1, "ack")]);
}

#[test]
fn frames_are_split_at_their_length_and_a_partial_frame_waits() {
    // A heartbeat is 8 bytes: type 8, channel 0, size 0, frame end 0xCE.
    let heartbeat = [8u8, 0, 0, 0, 0, 0, 0, 0xCE];
    let mut buf = b"AMQP\x00\x00\x09\x01".to_vec();
    buf.extend_from_slice(&heartbeat);
    buf.extend_from_slice(&heartbeat[..5]);
    let mut max = FrameMax::default();
    let (got, over) = frames(&mut buf, &mut max);
    assert_eq!((got.len(), over), (2, None));
    assert!(matches!(got[0].0, Some(AMQPFrame::ProtocolHeader(_))));
    assert_eq!(got[1].0, Some(AMQPFrame::Heartbeat));
    // The 5 bytes of the third frame stay until the rest arrives.
    assert_eq!(buf.len(), 5);
    buf.extend_from_slice(&heartbeat[5..]);
    assert_eq!(frames(&mut buf, &mut max).0.len(), 1);
    assert!(buf.is_empty());
}

#[tokio::test]
async fn a_connection_that_does_not_open_with_amqp_or_nests_its_tables_past_128_is_refused() {
    let open = || {
        Amqp {
            state: one_worker(1.0),
            ledger: Arc::new(Ledger::default()),
            consumer_timeout: 1_000,
            wire: None,
            places: Default::default(),
        }
        .connection(1)
    };
    // An HTTP request where the protocol header goes: nothing goes on, the broker's header back.
    let mut c = open();
    let mut out = Vec::new();
    c.from_worker(b"GET / HTTP/1.1\r\n", &mut out);
    assert!(out.is_empty());
    let r = c.refusal().unwrap();
    assert_eq!(r.to_worker, b"AMQP\x00\x00\x09\x01");
    assert!(r
        .why
        .contains(r#""GET / HTTP/1.1\r\n" where the AMQP protocol header"#));
    // A connection.start-ok whose client properties nest 200 tables deep (1,400 bytes): the
    // header goes on, the frame does not; connection.close 502 back.
    let mut tables = Vec::new();
    for _ in 0..200 {
        let mut t = vec![b'F'];
        t.extend_from_slice(&((tables.len() + 2) as u32).to_be_bytes());
        t.extend_from_slice(&[1, b'k']);
        t.append(&mut tables);
        tables = t;
    }
    let mut c = open();
    let mut out = Vec::new();
    let mut bytes = b"AMQP\x00\x00\x09\x01".to_vec();
    bytes.extend(frame(1, 0, &[&[0, 10, 0, 11][..], &tables].concat()));
    c.from_worker(&bytes, &mut out);
    assert_eq!(out, b"AMQP\x00\x00\x09\x01");
    let r = c.refusal().unwrap();
    assert_eq!(
        r.why,
        "the worker sent a frame whose field tables nest deeper than 128: SYNTAX_ERROR"
    );
    assert_eq!(&r.to_worker[7..13], &[0, 10, 0, 50, 1, 246]);
}

#[tokio::test]
async fn a_frame_over_frame_max_is_refused_at_its_header_with_the_brokers_501() {
    // A body frame declaring 2^32 - 1 bytes, its header there: refused now (the default
    // frame_max, 131072), nothing of it buffered, the worker sent connection.close 501. With
    // no rule changing frames, bytes go on as they come, but not the refused frame's: the
    // broker sees the protocol header before it only.
    let mut c = Amqp {
        state: one_worker(1.0),
        ledger: Arc::new(Ledger::default()),
        consumer_timeout: 1_000,
        wire: None,
        places: Default::default(),
    }
    .connection(1);
    let mut out = Vec::new();
    let mut bytes = b"AMQP\x00\x00\x09\x01".to_vec();
    bytes.extend_from_slice(&[3, 0, 1, 0xFF, 0xFF, 0xFF, 0xFF, b'x']);
    c.from_worker(&bytes, &mut out);
    assert_eq!(out, b"AMQP\x00\x00\x09\x01");
    let r = c.refusal().unwrap();
    assert_eq!(
        r.why,
        "the worker sent a frame of 4294967295 payload bytes over the negotiated frame_max \
         (131072): FRAME_ERROR"
    );
    assert_eq!(&r.to_worker[7..13], &[0, 10, 0, 50, 1, 245]);
}
