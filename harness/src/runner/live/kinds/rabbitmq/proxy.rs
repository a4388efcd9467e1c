//! The AMQP 0-9-1 reader of one worker connection (amq-protocol's frame parser), between the
//! worker and RabbitMQ.
//!
//! From the broker: a `basic.deliver` (or `basic.get-ok`) is held until its content header
//! names the message (`message_id` = seq); the delivery is then reported, and a `received` kill
//! decided for it cuts the connection before the worker sees any of its frames (the broker
//! requeues it, as it does for every unacked delivery of a closed connection). A
//! `channel.close` from the broker (406 after `consumer_timeout`) returns what the channel held,
//! and a later ack of those delivery tags is stale (the client cannot ack on a closed channel);
//! so does the end of the connection, and the server closing it behind a partition (its
//! heartbeat) does at that instant, though the worker's held frames reach it later.
//! From the worker: `basic.ack` (with `multiple`), `basic.nack` and `basic.reject` of the
//! channel's delivery tags.
//!
//! With the worker on the scaled clock ([`WireTime`]), the frames carrying a duration are
//! converted between its profile time and the server's wall time, each way; the worker's bytes
//! then go on frame by frame (a frame waits until it is complete), and what is observed is
//! read from the frames as they were sent.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use amq_protocol::frame::{parse_frame, AMQPFrame};
use amq_protocol::protocol::{basic, channel, connection, AMQPClass};

use super::ledger::Ledger;
use super::wire_time::WireTime;
use crate::record::{AckOutcome, EventKind, Nanos, Seq, WorkerId};
use crate::runner::live::proxy::{Connection, Flow, Protocol};
use crate::runner::live::state::LiveState;

/// Makes the reader of each worker connection.
pub struct Amqp {
    pub state: Arc<LiveState>,
    pub ledger: Arc<Ledger>,
    /// The profile's `consumer_timeout`: a delivery's "lease" ends at the earliest instant the
    /// server may close its channel for it.
    pub consumer_timeout: Nanos,
    /// The worker runs on the scaled clock: its durations on the wire are in profile time.
    pub wire: Option<WireTime>,
}

impl Protocol for Amqp {
    fn connection(&self, worker: WorkerId) -> Box<dyn Connection> {
        Box::new(AmqpConnection {
            worker,
            state: self.state.clone(),
            ledger: self.ledger.clone(),
            consumer_timeout: self.consumer_timeout,
            wire: self.wire,
            from_worker: Vec::new(),
            from_server: Vec::new(),
            channels: HashMap::new(),
            pending: None,
        })
    }
}

/// A delivery (seq, delivery number) by delivery tag.
type Tags = BTreeMap<u64, (Seq, u32)>;

#[derive(Default)]
struct ChannelView {
    /// Closed by the broker (or by the worker): acks of `stale` tags fail.
    closed: bool,
    held: Tags,
    stale: Tags,
}

/// A delivery method waiting for its content header: (channel, delivery tag, its bytes).
struct Pending {
    channel: u16,
    tag: u64,
    bytes: Vec<u8>,
}

struct AmqpConnection {
    worker: WorkerId,
    state: Arc<LiveState>,
    ledger: Arc<Ledger>,
    consumer_timeout: Nanos,
    wire: Option<WireTime>,
    from_worker: Vec<u8>,
    from_server: Vec<u8>,
    channels: HashMap<u16, ChannelView>,
    pending: Option<Pending>,
}

/// The length of the frame (or protocol header) at the start of `buf`, once it is all there.
fn frame_len(buf: &[u8]) -> Option<usize> {
    if buf.starts_with(b"AMQP") || (buf.len() < 4 && b"AMQP".starts_with(buf)) {
        return (buf.len() >= 8).then_some(8);
    }
    if buf.len() < 7 {
        return None;
    }
    let size = u32::from_be_bytes([buf[3], buf[4], buf[5], buf[6]]) as usize;
    let total = 7 + size + 1;
    (buf.len() >= total).then_some(total)
}

/// Splits the complete frames off the front of `buf`, with their bytes.
fn frames(buf: &mut Vec<u8>) -> Vec<(Option<AMQPFrame>, Vec<u8>)> {
    let mut out = Vec::new();
    let mut at = 0;
    while let Some(n) = frame_len(&buf[at..]) {
        let bytes = buf[at..at + n].to_vec();
        let frame = parse_frame(bytes.as_slice()).ok().map(|(_, f)| f);
        out.push((frame, bytes));
        at += n;
    }
    buf.drain(..at);
    out
}

/// The seq an ackbench message carries as its `message_id`.
fn seq_of(props: &basic::AMQPProperties) -> Option<Seq> {
    props.message_id().as_ref()?.as_str().parse().ok()
}

impl AmqpConnection {
    fn channel(&mut self, ch: u16) -> &mut ChannelView {
        self.channels.entry(ch).or_default()
    }

    /// The broker requeues what channel `ch` held: each a return.
    fn close_channel(&mut self, ch: u16) {
        let view = self.channel(ch);
        view.closed = true;
        let held = std::mem::take(&mut view.held);
        let now = self.state.clock.now();
        for (&tag, &(seq, delivery)) in &held {
            self.ledger.settled(seq, false);
            self.ledger.returned(seq, now);
            self.state.record(EventKind::LeaseExpired { seq, delivery });
            self.state.observed_return(self.worker, seq, delivery);
            self.channel(ch).stale.insert(tag, (seq, delivery));
        }
    }

    fn close_all(&mut self) {
        let open: Vec<u16> = self.channels.keys().copied().collect();
        for ch in open {
            self.close_channel(ch);
        }
    }

    /// The delivery tags an ack, nack or reject of `tag` settles on channel `ch`.
    fn take_tags(&mut self, ch: u16, tag: u64, multiple: bool) -> (bool, Tags) {
        let view = self.channel(ch);
        let source = if view.closed {
            &mut view.stale
        } else {
            &mut view.held
        };
        let taken = if multiple {
            let keep = if tag == 0 {
                Tags::new()
            } else {
                source.split_off(&(tag + 1))
            };
            std::mem::replace(source, keep)
        } else {
            source
                .remove(&tag)
                .map(|d| Tags::from([(tag, d)]))
                .unwrap_or_default()
        };
        (view.closed, taken)
    }

    fn ack(&mut self, ch: u16, tag: u64, multiple: bool) {
        let (closed, taken) = self.take_tags(ch, tag, multiple);
        for (seq, delivery) in taken.into_values() {
            let outcome = if closed {
                self.ledger.stale_outcome(seq)
            } else {
                self.ledger.settled(seq, true);
                AckOutcome::Deleted
            };
            self.state.observed_ack(self.worker, seq, delivery, outcome);
        }
    }

    fn nack(&mut self, ch: u16, tag: u64, multiple: bool, requeue: bool) {
        let (closed, taken) = self.take_tags(ch, tag, multiple);
        if closed {
            return;
        }
        let now: Nanos = self.state.clock.now();
        for (seq, delivery) in taken.into_values() {
            self.ledger.settled(seq, false);
            self.state.observed_release(self.worker, seq, delivery, now);
            if requeue {
                self.ledger.returned(seq, now);
                self.state.record(EventKind::LeaseExpired { seq, delivery });
            }
        }
    }

    fn worker_frame(&mut self, frame: &AMQPFrame) {
        let AMQPFrame::Method(ch, class) = frame else {
            return;
        };
        let ch = *ch;
        match class {
            AMQPClass::Basic(basic::AMQPMethod::Ack(a)) => self.ack(ch, a.delivery_tag, a.multiple),
            AMQPClass::Basic(basic::AMQPMethod::Nack(n)) => {
                self.nack(ch, n.delivery_tag, n.multiple, n.requeue)
            }
            AMQPClass::Basic(basic::AMQPMethod::Reject(r)) => {
                self.nack(ch, r.delivery_tag, false, r.requeue)
            }
            AMQPClass::Channel(channel::AMQPMethod::Open(_)) => {
                self.channels.insert(ch, ChannelView::default());
            }
            AMQPClass::Channel(channel::AMQPMethod::Close(_)) => self.close_channel(ch),
            AMQPClass::Connection(connection::AMQPMethod::Close(_)) => self.close_all(),
            _ => {}
        }
    }

    /// One frame from the broker: false when the connection is to be cut before it.
    fn server_frame(
        &mut self,
        frame: Option<AMQPFrame>,
        bytes: Vec<u8>,
        forward: &mut Vec<u8>,
    ) -> bool {
        let bytes = match self.wire {
            Some(wire) => wire.to_worker(frame.as_ref(), bytes),
            None => bytes,
        };
        match frame {
            Some(AMQPFrame::Method(ch, AMQPClass::Basic(basic::AMQPMethod::Deliver(d)))) => {
                self.hold(ch, d.delivery_tag, bytes, forward);
            }
            Some(AMQPFrame::Method(ch, AMQPClass::Basic(basic::AMQPMethod::GetOk(g)))) => {
                self.hold(ch, g.delivery_tag, bytes, forward);
            }
            Some(AMQPFrame::Header(ch, header))
                if self.pending.as_ref().is_some_and(|p| p.channel == ch) =>
            {
                let p = self.pending.take().expect("a pending delivery");
                if let Some(seq) = seq_of(&header.properties) {
                    let delivery = self.ledger.delivered(seq);
                    self.channel(ch).held.insert(p.tag, (seq, delivery));
                    let lease_end = self.state.clock.now().saturating_add(self.consumer_timeout);
                    if self
                        .state
                        .observed_delivery(self.worker, seq, delivery, lease_end)
                    {
                        return false;
                    }
                }
                forward.extend_from_slice(&p.bytes);
                forward.extend_from_slice(&bytes);
            }
            Some(AMQPFrame::Method(ch, AMQPClass::Channel(channel::AMQPMethod::Close(_)))) => {
                self.close_channel(ch);
                forward.extend_from_slice(&bytes);
            }
            Some(AMQPFrame::Method(_, AMQPClass::Connection(connection::AMQPMethod::Close(_)))) => {
                self.close_all();
                forward.extend_from_slice(&bytes);
            }
            _ => forward.extend_from_slice(&bytes),
        }
        true
    }

    /// Holds a delivery method until its content header says which message it is.
    fn hold(&mut self, channel: u16, tag: u64, bytes: Vec<u8>, forward: &mut Vec<u8>) {
        if let Some(p) = self.pending.take() {
            // A delivery without a header (cannot happen in AMQP): let it pass.
            forward.extend_from_slice(&p.bytes);
        }
        self.pending = Some(Pending {
            channel,
            tag,
            bytes,
        });
    }
}

impl Connection for AmqpConnection {
    fn from_worker(&mut self, bytes: &[u8], forward: &mut Vec<u8>) -> Flow {
        if self.wire.is_none() {
            forward.extend_from_slice(bytes);
        }
        self.from_worker.extend_from_slice(bytes);
        let mut buf = std::mem::take(&mut self.from_worker);
        for (frame, raw) in frames(&mut buf) {
            if let Some(f) = &frame {
                self.worker_frame(f);
            }
            if let Some(wire) = self.wire {
                forward.extend(wire.to_server(frame.as_ref(), raw));
            }
        }
        self.from_worker = buf;
        Flow::Go
    }

    fn from_server(&mut self, bytes: &[u8], forward: &mut Vec<u8>) -> Flow {
        self.from_server.extend_from_slice(bytes);
        let mut buf = std::mem::take(&mut self.from_server);
        let split = frames(&mut buf);
        self.from_server = buf;
        for (frame, raw) in split {
            if !self.server_frame(frame, raw, forward) {
                return Flow::Cut;
            }
        }
        Flow::Go
    }

    fn closed(&mut self) {
        self.close_all();
    }

    fn broker_closed(&mut self) {
        self.close_all();
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_frames::{frame, short, tune};
    use super::*;

    /// basic.deliver (60, 60) of `tag`, its content header with `message_id` = `seq` and a body.
    fn delivery(ch: u16, tag: u64, seq: &str) -> Vec<u8> {
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
    fn ack(ch: u16, tag: u64, multiple: bool) -> Vec<u8> {
        let mut m = vec![0, 60, 0, 80];
        m.extend_from_slice(&tag.to_be_bytes());
        m.push(u8::from(multiple));
        frame(1, ch, &m)
    }

    /// channel.close (20, 40) from the server: 406 PRECONDITION_FAILED.
    fn channel_close(ch: u16) -> Vec<u8> {
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
        }
        .connection(1);
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
                EventKind::Delivered { seq, delivery, .. } => {
                    Some(format!("deliver {seq}/{delivery}"))
                }
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
        }
        .connection(1);
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
        let got = frames(&mut buf);
        assert_eq!(got.len(), 2);
        assert!(matches!(got[0].0, Some(AMQPFrame::ProtocolHeader(_))));
        assert_eq!(got[1].0, Some(AMQPFrame::Heartbeat));
        // The 5 bytes of the third frame stay until the rest arrives.
        assert_eq!(buf.len(), 5);
        buf.extend_from_slice(&heartbeat[5..]);
        assert_eq!(frames(&mut buf).len(), 1);
        assert!(buf.is_empty());
    }
}
