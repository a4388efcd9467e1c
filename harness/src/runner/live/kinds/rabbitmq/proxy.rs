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
//! heartbeat) does at that instant, though the worker's held frames reach it later. Each return
//! is recorded with what closed the channel ([`ReturnWhy`]): the worker's own `channel.close` or
//! `connection.close` (after which the broker discards what the worker sends, an ack included),
//! its connection ending, the broker's close (the consumer timeout, a refused ack: [`closes`]).
//! From the worker: `basic.ack` (with `multiple`), `basic.nack` and `basic.reject` of the
//! channel's delivery tags. With `message` rules on acks, the worker's bytes go on frame by
//! frame and an ack a rule selects is kept back ([`ack_faults`]); with rules on deliveries, a
//! delivery a rule selects is dropped or held back whole ([`delivery_faults`]).
//!
//! With the worker on the scaled clock ([`WireTime`]), the frames carrying a duration are
//! converted between its profile time and the server's wall time, each way; the worker's bytes
//! then go on frame by frame (a frame waits until it is complete), and what is observed is
//! read from the frames as they were sent.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::time::Instant;

use amq_protocol::frame::{parse_frame, AMQPFrame};
use amq_protocol::protocol::{basic, channel, connection, AMQPClass};

use super::ledger::Ledger;
use super::wire_time::WireTime;
use crate::record::{AckOutcome, EventKind, Nanos, ReturnWhy, Seq, WorkerId};
use crate::runner::live::proxy::link::Direction;
use crate::runner::live::proxy::{Connection, Flow, Protocol, Refusal};
use crate::runner::live::state::LiveState;
use ack_faults::KeptAcks;
use delivery_faults::KeptDeliveries;
use frame_max::FrameMax;
use identify::{Consumers, Unnamed};
use refused::FrameRefused;
use republish::{Publishing, QueueRole, RunQueues};

/// Makes the reader of each worker connection.
pub struct Amqp {
    pub state: Arc<LiveState>,
    pub ledger: Arc<Ledger>,
    /// The profile's `consumer_timeout`: a delivery's "lease" ends at the earliest instant the
    /// server may close its channel for it.
    pub consumer_timeout: Nanos,
    /// The worker runs on the scaled clock: its durations on the wire are in profile time.
    pub wire: Option<WireTime>,
    /// The run's queue and its framework's queues, and how a body names its message.
    pub places: Arc<RunQueues>,
}

impl Protocol for Amqp {
    fn broke(&self, worker: WorkerId, why: String) {
        self.state.connection_broke(worker, why);
    }

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
            acks_faulted: self.state.message_faults_on_acks(),
            kept: KeptAcks::default(),
            deliveries_faulted: self.state.message_faults_on_deliveries(),
            kept_deliveries: KeptDeliveries::default(),
            places: self.places.clone(),
            consumers: Consumers::default(),
            unnamed: HashMap::new(),
            publishing: Publishing::default(),
            frame_max: FrameMax::default(),
            greeted: false,
            refusal: None,
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
    /// Copies taken from a framework's delay queue, which it holds until their retry is due:
    /// no delivery of the message (seq by delivery tag).
    holds: BTreeMap<u64, Seq>,
}

/// A delivery method waiting for its content header: (channel, delivery tag, its bytes).
struct Pending {
    channel: u16,
    tag: u64,
    bytes: Vec<u8>,
    /// A `basic.get-ok` (the answer to the worker's `basic.get`), not a `basic.deliver`.
    get: bool,
    /// The queue it comes from, as the worker's `basic.consume` or `basic.get` named it.
    queue: Option<String>,
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
    /// Some `message` rule acts on acks: each ack is judged before it goes on.
    acks_faulted: bool,
    kept: KeptAcks,
    /// Some `message` rule acts on deliveries: each is read whole before it goes on.
    deliveries_faulted: bool,
    kept_deliveries: KeptDeliveries,
    places: Arc<RunQueues>,
    consumers: Consumers,
    /// Deliveries held until their body names their message, by channel.
    unnamed: HashMap<u16, Unnamed>,
    /// The worker's own publishes in progress.
    publishing: Publishing,
    /// The connection's `frame_max`, as negotiated.
    frame_max: FrameMax,
    /// The worker's first bytes were `AMQP`.
    greeted: bool,
    /// A frame over it was read: the connection ends as the broker ends it.
    refusal: Option<Refusal>,
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

/// A frame split off a buffer (`None`: not one the parser reads), with its bytes.
type Split = (Option<AMQPFrame>, Vec<u8>);

/// Splits the complete frames off the front of `buf`, with their bytes, until one is refused:
/// over `max`, or its tables nested past [`nesting::MAX_TABLE_DEPTH`] (checked before it is
/// parsed). The refused frame's bytes, and what follows them, are left in `buf`.
pub(crate) fn frames(buf: &mut Vec<u8>, max: &mut FrameMax) -> (Vec<Split>, Option<FrameRefused>) {
    let mut out = Vec::new();
    let mut at = 0;
    let mut over = None;
    loop {
        if let Err(e) = max.check(&buf[at..]) {
            over = Some(FrameRefused::TooLarge(e));
            break;
        }
        let Some(n) = frame_len(&buf[at..]) else {
            break;
        };
        let bytes = buf[at..at + n].to_vec();
        let tables = matches!(bytes[0], 1 | 2) && n >= 8;
        if tables && nesting::deeper_than(&bytes[7..n - 1], nesting::MAX_TABLE_DEPTH) {
            over = Some(FrameRefused::TooDeep);
            break;
        }
        max.saw(&bytes);
        let frame = parse_frame(bytes.as_slice()).ok().map(|(_, f)| f);
        out.push((frame, bytes));
        at += n;
    }
    buf.drain(..at);
    (out, over)
}

/// The seq an ackbench message carries as its `message_id`.
fn seq_of(props: &basic::AMQPProperties) -> Option<Seq> {
    props.message_id().as_ref()?.as_str().parse().ok()
}

impl AmqpConnection {
    fn channel(&mut self, ch: u16) -> &mut ChannelView {
        self.channels.entry(ch).or_default()
    }

    /// The broker requeues what channel `ch` held, closed for `why`: each a return.
    fn close_channel(&mut self, ch: u16, why: ReturnWhy) {
        self.kept.channel_closed(ch);
        self.kept_deliveries.channel_closed(ch);
        self.consumers.channel_closed(ch);
        self.publishing.channel_closed(ch);
        self.unnamed.remove(&ch);
        let view = self.channel(ch);
        view.closed = true;
        // The server requeues a delay queue's copies there: they still wait.
        view.holds.clear();
        let held = std::mem::take(&mut view.held);
        let now = self.state.clock.now();
        for (&tag, &(seq, delivery)) in &held {
            self.ledger.settled(seq, false);
            self.ledger.returned(seq, now);
            self.returned(seq, delivery, why);
            self.state.observed_return(self.worker, seq, delivery);
            self.channel(ch).stale.insert(tag, (seq, delivery));
        }
    }

    fn close_all(&mut self, why: ReturnWhy) {
        let open: Vec<u16> = self.channels.keys().copied().collect();
        for ch in open {
            self.close_channel(ch, why);
        }
    }

    /// The broker took delivery `delivery` of `seq` back from this worker for `why`: the
    /// message is in the queue again.
    fn returned(&self, seq: Seq, delivery: u32, why: ReturnWhy) {
        let worker = self.worker;
        self.state.record(EventKind::Returned {
            seq,
            worker,
            delivery,
            why,
        });
        self.state.record(EventKind::LeaseExpired { seq, delivery });
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

    /// An ack from the worker: `None` when its frame goes on as it is, else what goes on instead.
    fn ack(&mut self, ch: u16, tag: u64, multiple: bool) -> Option<Vec<u8>> {
        self.holds_settled(ch, tag, multiple, false);
        let (closed, taken) = self.take_tags(ch, tag, multiple);
        if self.acks_faulted {
            return self.ack_under_rules(ch, closed, taken);
        }
        for (seq, delivery) in taken.into_values() {
            self.acked(closed, seq, delivery);
        }
        None
    }

    /// The broker gets the ack of delivery `delivery` of `seq`, on a channel open or `closed`.
    fn acked(&mut self, closed: bool, seq: Seq, delivery: u32) {
        let outcome = if closed {
            self.ledger.stale_outcome(seq)
        } else if self.state.replaced(seq, delivery) {
            // The handler published the message again: this removes the copy it replaced.
            self.ledger.settled(seq, false);
            AckOutcome::Superseded
        } else {
            self.ledger.settled(seq, true);
            AckOutcome::Deleted
        };
        self.state.observed_ack(self.worker, seq, delivery, outcome);
    }

    fn nack(&mut self, ch: u16, tag: u64, multiple: bool, requeue: bool) {
        self.holds_settled(ch, tag, multiple, requeue);
        let (closed, taken) = self.take_tags(ch, tag, multiple);
        if closed {
            return;
        }
        let now: Nanos = self.state.clock.now();
        for (seq, delivery) in taken.into_values() {
            let retired = self.state.replaced(seq, delivery);
            self.ledger.settled(seq, false);
            self.state.observed_release(self.worker, seq, delivery, now);
            if requeue {
                self.ledger.returned(seq, now);
                self.returned(seq, delivery, ReturnWhy::Nack);
            } else if self.places.rejects_dead_letter && !retired && self.ledger.dead_lettered(seq)
            {
                // The queue's own dead-letter arguments move it to the framework's queue.
                self.state.record(EventKind::DeadLettered { seq, delivery });
            }
        }
    }

    /// An ack (or a reject, `requeue` or not) of `tag` on channel `ch` settles the delay
    /// queue's copies it covers: acked or dropped, they no longer wait there; requeued, they do.
    fn holds_settled(&mut self, ch: u16, tag: u64, multiple: bool, requeue: bool) {
        let view = self.channel(ch);
        let taken: Vec<Seq> = if multiple {
            let keep = if tag == 0 {
                BTreeMap::new()
            } else {
                view.holds.split_off(&(tag + 1))
            };
            std::mem::replace(&mut view.holds, keep)
                .into_values()
                .collect()
        } else {
            view.holds.remove(&tag).into_iter().collect()
        };
        if !requeue {
            for seq in taken {
                self.ledger.copy_taken(seq);
            }
        }
    }

    /// One frame from the worker: `None` when it goes on as it is, else what goes on instead.
    fn worker_frame(&mut self, frame: &AMQPFrame) -> Option<Vec<u8>> {
        let (ch, class) = match frame {
            AMQPFrame::Method(ch, class) => (*ch, class),
            AMQPFrame::Header(ch, header) => {
                if let Some(out) = self.publishing.header(*ch, header.body_size) {
                    self.published(out);
                }
                return None;
            }
            AMQPFrame::Body(ch, data) => {
                if let Some(out) = self.publishing.body(*ch, data) {
                    self.published(out);
                }
                return None;
            }
            _ => return None,
        };
        match class {
            AMQPClass::Basic(basic::AMQPMethod::Publish(p)) => {
                self.publishing
                    .started(ch, p.exchange.as_str(), p.routing_key.as_str());
            }
            AMQPClass::Basic(basic::AMQPMethod::Consume(c)) => {
                self.consumers
                    .consume(ch, c.queue.as_str(), c.consumer_tag.as_str(), c.nowait);
            }
            AMQPClass::Basic(basic::AMQPMethod::Get(g)) => {
                self.consumers.get(ch, g.queue.as_str());
            }
            AMQPClass::Basic(basic::AMQPMethod::Ack(a)) => {
                return self.ack(ch, a.delivery_tag, a.multiple)
            }
            AMQPClass::Basic(basic::AMQPMethod::Nack(n)) => {
                self.nack(ch, n.delivery_tag, n.multiple, n.requeue)
            }
            AMQPClass::Basic(basic::AMQPMethod::Reject(r)) => {
                self.nack(ch, r.delivery_tag, false, r.requeue)
            }
            AMQPClass::Channel(channel::AMQPMethod::Open(_)) => {
                self.kept.channel_closed(ch);
                self.kept_deliveries.channel_closed(ch);
                self.channels.insert(ch, ChannelView::default());
            }
            AMQPClass::Channel(channel::AMQPMethod::Close(_)) => {
                self.close_channel(ch, ReturnWhy::ChannelClosed)
            }
            AMQPClass::Connection(connection::AMQPMethod::Close(_)) => {
                self.close_all(ReturnWhy::ConnectionClosed)
            }
            _ => {}
        }
        None
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
                let queue = self
                    .consumers
                    .delivering(ch, d.consumer_tag.as_str())
                    .map(str::to_string);
                self.hold((ch, false, queue), d.delivery_tag, bytes, forward);
            }
            Some(AMQPFrame::Method(ch, AMQPClass::Basic(basic::AMQPMethod::GetOk(g)))) => {
                let queue = self.consumers.got(ch);
                self.hold((ch, true, queue), g.delivery_tag, bytes, forward);
            }
            Some(AMQPFrame::Method(ch, AMQPClass::Basic(basic::AMQPMethod::ConsumeOk(c)))) => {
                self.consumers.consume_ok(ch, c.consumer_tag.as_str());
                forward.extend_from_slice(&bytes);
            }
            Some(AMQPFrame::Body(ch, data)) if self.unnamed.contains_key(&ch) => {
                let flow = self.unnamed_body(ch, &data, &bytes, forward);
                return flow.is_none_or(|f| f == Flow::Go);
            }
            Some(AMQPFrame::Header(ch, header))
                if self.pending.as_ref().is_some_and(|p| p.channel == ch) =>
            {
                let p = self.pending.take().expect("a pending delivery");
                let role = self.places.role(p.queue.as_deref());
                let named = seq_of(&header.properties).filter(|_| role == QueueRole::Main);
                if named.is_none() && role != QueueRole::Other {
                    // A copy a consumer published, or a delay queue's: its body names it.
                    let unnamed = Unnamed {
                        channel: ch,
                        tag: p.tag,
                        get: p.get,
                        role,
                        bytes: [p.bytes.as_slice(), &bytes].concat(),
                        body: Vec::new(),
                        left: header.body_size,
                    };
                    return self.read_whole(unnamed, forward) == Flow::Go;
                }
                if let Some(seq) = named {
                    let delivery = self.ledger.delivered(seq);
                    self.channel(ch).held.insert(p.tag, (seq, delivery));
                    let lease_end = self.state.clock.now().saturating_add(self.consumer_timeout);
                    let whole = [p.bytes.as_slice(), &bytes].concat();
                    let content = (ch, header.body_size, p.get);
                    if self.delivery_kept(content, (seq, delivery, lease_end), whole, forward) {
                        return self.pass_waiting(forward) == Flow::Go;
                    }
                    if self
                        .state
                        .observed_delivery(self.worker, seq, delivery, lease_end)
                    {
                        return false;
                    }
                } else {
                    self.content_passes(ch, header.body_size);
                }
                forward.extend_from_slice(&p.bytes);
                forward.extend_from_slice(&bytes);
            }
            Some(AMQPFrame::Header(ch, header)) => {
                self.content_passes(ch, header.body_size);
                forward.extend_from_slice(&bytes);
            }
            Some(AMQPFrame::Body(ch, data)) if self.deliveries_faulted => {
                self.body_frame(ch, data.len() as u64, bytes, forward);
                return self.pass_waiting(forward) == Flow::Go;
            }
            Some(AMQPFrame::Method(ch, AMQPClass::Channel(channel::AMQPMethod::Close(c)))) => {
                let why = closes::server_closed_channel(c.reply_code, c.reply_text.as_str());
                self.close_channel(ch, why);
                forward.extend_from_slice(&bytes);
            }
            Some(AMQPFrame::Method(_, AMQPClass::Connection(connection::AMQPMethod::Close(c)))) => {
                self.close_all(ReturnWhy::BrokerClosedConnection { code: c.reply_code });
                forward.extend_from_slice(&bytes);
            }
            _ => forward.extend_from_slice(&bytes),
        }
        true
    }

    /// Holds a delivery method until its content header says which message it is.
    fn hold(
        &mut self,
        (channel, get, queue): (u16, bool, Option<String>),
        tag: u64,
        bytes: Vec<u8>,
        out: &mut Vec<u8>,
    ) {
        if let Some(p) = self.pending.take() {
            // A delivery without a header (cannot happen in AMQP): let it pass.
            out.extend_from_slice(&p.bytes);
        }
        self.pending = Some(Pending {
            channel,
            tag,
            bytes,
            get,
            queue,
        });
    }
}

impl AmqpConnection {
    /// The connection ends as the broker ends it, for `e` (from the worker: `up`, answered
    /// with the broker's last words; from the broker: the proxy cannot read on).
    fn refuse(&mut self, e: FrameRefused, up: bool) {
        self.refusal = Some(match up {
            true => Refusal {
                why: format!("the worker sent {e}"),
                to_worker: e.close(),
            },
            false => Refusal {
                why: format!("the broker sent {e}"),
                to_worker: Vec::new(),
            },
        });
    }
}

impl Connection for AmqpConnection {
    fn from_worker(&mut self, bytes: &[u8], forward: &mut Vec<u8>) -> Flow {
        self.from_worker.extend_from_slice(bytes);
        if !self.greeted {
            match refused::greeting(&self.from_worker) {
                Ok(seen) => self.greeted = seen,
                Err(e) => {
                    self.from_worker.clear();
                    self.refuse(e, true);
                    return Flow::Go;
                }
            }
        }
        // Frame by frame when a frame may change on its way; else the bytes go on as they come.
        let by_frame = self.wire.is_some() || self.acks_faulted;
        if !by_frame {
            forward.extend_from_slice(bytes);
        }
        let mut buf = std::mem::take(&mut self.from_worker);
        let (split, over) = frames(&mut buf, &mut self.frame_max);
        if let Some(e) = over {
            // The refused frame's bytes that came in this read do not go on.
            if !by_frame {
                forward.truncate(forward.len() - buf.len().min(bytes.len()));
            }
            buf.clear();
            self.refuse(e, true);
        }
        for (frame, raw) in split {
            let instead = frame.as_ref().and_then(|f| self.worker_frame(f));
            if !by_frame {
                continue;
            }
            match (instead, self.wire) {
                (Some(bytes), _) => forward.extend(bytes),
                (None, Some(wire)) => forward.extend(wire.to_server(frame.as_ref(), raw)),
                (None, None) => forward.extend(raw),
            }
        }
        self.from_worker = buf;
        Flow::Go
    }

    fn from_server(&mut self, bytes: &[u8], forward: &mut Vec<u8>) -> Flow {
        self.from_server.extend_from_slice(bytes);
        let mut buf = std::mem::take(&mut self.from_server);
        let (split, over) = frames(&mut buf, &mut self.frame_max);
        if let Some(e) = over {
            buf.clear();
            self.refuse(e, false);
        }
        self.from_server = buf;
        for (frame, raw) in split {
            if !self.server_frame(frame, raw, forward) {
                return Flow::Cut;
            }
        }
        Flow::Go
    }

    fn refusal(&mut self) -> Option<Refusal> {
        self.refusal.take()
    }

    fn closed(&mut self) {
        self.close_all(ReturnWhy::ConnectionLost);
        self.acks_outlive_connection();
    }

    fn next_due(&self, dir: Direction) -> Option<Instant> {
        match dir {
            Direction::ToBroker => self.kept.next_due(),
            Direction::ToWorker => self.kept_deliveries.next_due(),
        }
    }

    fn due(&mut self, dir: Direction, now: Instant, forward: &mut Vec<u8>) -> Flow {
        match dir {
            Direction::ToBroker => {
                self.acks_due(now, forward);
                Flow::Go
            }
            Direction::ToWorker => self.deliveries_due(now, forward),
        }
    }

    fn broker_closed(&mut self) {
        self.close_all(ReturnWhy::BrokerClosedConnection { code: 0 });
    }
}

#[path = "ack_faults.rs"]
mod ack_faults;
#[path = "closes.rs"]
mod closes;
#[path = "delivery_faults.rs"]
mod delivery_faults;
#[path = "frame_max.rs"]
pub(crate) mod frame_max;
#[path = "identify.rs"]
mod identify;
#[path = "nesting.rs"]
mod nesting;
#[path = "refused.rs"]
pub(crate) mod refused;
#[path = "republish.rs"]
pub mod republish;

#[cfg(test)]
#[path = "message_tests.rs"]
mod message_tests;
#[cfg(test)]
#[path = "republish_tests.rs"]
mod republish_tests;
#[cfg(test)]
#[path = "proxy_tests.rs"]
mod tests;
