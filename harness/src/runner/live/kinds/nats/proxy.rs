//! The NATS side of a worker's proxy connection: reads the text protocol both ways and reports
//! to the run's state what JetStream does with the run's consumer.
//!
//! - A delivery is a `MSG`/`HMSG` whose reply subject is an ack subject of the run's stream and
//!   consumer (`$JS.ACK.…`): its delivery count and stream sequence come from it. A `received`
//!   kill is decided before the frame is forwarded; then the frame is held and the connection cut.
//! - An ack is a `PUB`/`HPUB` to such a subject (`+ACK` or empty, `+NXT`, `+WPI`, `-NAK` with
//!   an optional delay, `+TERM`). With a reply inbox (a double ack, AckSync) it is recorded when
//!   the server's answer on that inbox passes back: the server confirmed it. Without one, when
//!   it is sent (the server answers nothing).
//! - A redelivery says the previous delivery's wait ended unacked: a lease expiry, recorded
//!   just before the delivery (the server does not tell when it happened).
//!
//! The INFO the server sends is passed on as it is: the worker connected to the proxy already.
//!
//! - A publish to the run's subject whose body names a message of the run is that message's
//!   next life, sent by its consumer (a retry): recorded as `Republished`; the ack of the
//!   delivery it replaced removes that copy (`Superseded`). The copy's stream sequence is learnt
//!   from its first delivery ([`Book::copy_delivered`]).
//!
//! With `message` rules, an ack or a delivery they select is dropped or held back
//! ([`message_faults`]).
//!
//! With the consumer on the scaled clock, the durations it sends are converted to wall time on
//! the way to the server, and those of the server's answers to its JetStream API requests back
//! to profile time ([`super::wire`]); the byte counts of a rewritten frame with them. What is
//! observed is read from the worker's own frames, before any rewrite.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

use super::book::Book;
use super::frames::{
    client_line, frame, with_payload, Message, Violation, DEFAULT_MAX_PAYLOAD, MAX_CONTROL_LINE,
};
use super::subject::{self, AckKind};
use super::wire::{Api, Wire};
use crate::broker::nats::NatsConfig;
use crate::profile::Scenario;
use crate::record::{nanos, AckOutcome, EventKind, Nanos, Republish, Seq, WorkerId};
use crate::runner::live::proxy::link::Direction;
use crate::runner::live::proxy::{Connection, Flow, Protocol, Refusal};
use crate::runner::live::state::LiveState;
use message_faults::{Down, Held};

/// What every worker connection of the run shares.
pub struct Shared {
    pub state: Arc<LiveState>,
    pub book: Arc<Mutex<Book>>,
    pub stream: String,
    pub consumer: String,
    /// The subject the run publishes to: a worker's publish there may be a retry.
    pub subject: String,
    /// AckWait and BackOff in profile time.
    pub waits: NatsConfig,
    /// The consumer runs on the scaled clock: its durations are converted (`None`: it sends
    /// wall time, as the server takes it).
    pub wire: Option<Wire>,
}

impl Shared {
    pub fn new(
        s: &Scenario,
        state: Arc<LiveState>,
        book: Arc<Mutex<Book>>,
        stream: &str,
        consumer: &str,
        subject: &str,
        wire_scaled: bool,
    ) -> Shared {
        let backoff = match &s.broker.kind {
            crate::profile::BrokerKind::Nats(n) => n.backoff.iter().map(|&d| nanos(d)).collect(),
            _ => Vec::new(),
        };
        Shared {
            state,
            book,
            stream: stream.to_string(),
            consumer: consumer.to_string(),
            subject: subject.to_string(),
            waits: NatsConfig {
                ack_wait: nanos(s.broker.lease),
                backoff,
                max_deliver: s.broker.max_deliveries,
                max_ack_pending: 1,
            },
            wire: wire_scaled.then(|| Wire::new(s.run.time_scale)),
        }
    }

    fn book(&self) -> std::sync::MutexGuard<'_, Book> {
        self.book.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The run seq and delivery count of an ack subject of the run's consumer.
    fn delivery_of(&self, subject: &str) -> Option<(Seq, u32)> {
        let a = subject::parse(subject)?;
        if a.stream != self.stream || a.consumer != self.consumer {
            return None;
        }
        self.book().delivery_of(a.stream_seq, a.delivered)
    }

    /// A delivery `m` of a stream message the run did not publish: when its body names a
    /// message of which a worker sent a copy, that copy's delivery.
    fn copy_delivery(&self, m: &Message, frame: &[u8]) -> Option<(Seq, u32)> {
        let a = subject::parse(m.reply.as_deref()?)?;
        if a.stream != self.stream || a.consumer != self.consumer {
            return None;
        }
        let seq = self.state.seq_of_body(&frame[m.payload.clone()])?;
        let mut book = self.book();
        book.copy_delivered(a.stream_seq, seq).then_some(())?;
        book.delivery_of(a.stream_seq, a.delivered)
    }
}

pub struct NatsProtocol(pub Arc<Shared>);

impl Protocol for NatsProtocol {
    fn broke(&self, worker: WorkerId, why: String) {
        self.0.state.connection_broke(worker, why);
    }

    fn connection(&self, worker: WorkerId) -> Box<dyn Connection> {
        Box::new(NatsConnection {
            worker,
            shared: self.0.clone(),
            up: Vec::new(),
            down: Vec::new(),
            confirming: HashMap::new(),
            answers: HashMap::new(),
            acks_faulted: self.0.state.message_faults_on_acks(),
            deliveries_faulted: self.0.state.message_faults_on_deliveries(),
            held: Held::default(),
            max_payload: DEFAULT_MAX_PAYLOAD,
            refusal: None,
        })
    }
}

/// An ack sent with a reply inbox, waiting for the server's answer there.
#[derive(Debug, Clone, Copy)]
struct Pending {
    seq: Seq,
    delivery: u32,
    kind: AckKind,
}

struct NatsConnection {
    worker: WorkerId,
    shared: Arc<Shared>,
    /// Bytes from the worker not yet a whole frame.
    up: Vec<u8>,
    /// Bytes from the server not yet a whole frame.
    down: Vec<u8>,
    /// Reply inbox -> the ack it confirms.
    confirming: HashMap<String, Pending>,
    /// Reply inbox -> the JetStream API request whose answer is converted to profile time.
    answers: HashMap<String, Api>,
    /// Some `message` rule acts on acks, or on deliveries.
    acks_faulted: bool,
    deliveries_faulted: bool,
    /// What the `message` rules hold back ([`message_faults`]).
    held: Held,
    /// The server's `max_payload`, as its `INFO` announced it (1 MB until it does).
    max_payload: usize,
    /// A frame over the server's limits was read: the connection ends as the server ends it.
    refusal: Option<Refusal>,
}

impl NatsConnection {
    /// What an ack did, now that the server has it (confirmed, or sent without a reply).
    fn apply(&self, p: Pending) {
        let sh = &self.shared;
        let now = sh.state.clock.now();
        match p.kind {
            // +TERM takes the message off the consumer for good, as an ack does.
            AckKind::Ack | AckKind::Term if sh.state.replaced(p.seq, p.delivery) => {
                // The handler published the message again: this removes the copy it replaced.
                sh.book().superseded(p.seq, p.delivery);
                sh.state
                    .observed_ack(self.worker, p.seq, p.delivery, AckOutcome::Superseded);
            }
            AckKind::Ack | AckKind::Term => {
                let outcome = sh.book().acked(p.seq, p.delivery);
                sh.state
                    .observed_ack(self.worker, p.seq, p.delivery, outcome);
            }
            AckKind::Progress => {
                let latest = sh.book().latest(p.seq).max(1);
                let end = now.saturating_add(sh.waits.wait(latest));
                sh.book().moved(p.seq, end);
                sh.state
                    .observed_extend(self.worker, p.seq, p.delivery, end);
            }
            AckKind::Nak { delay_ns } => {
                // The record is in profile time: the worker's delay is, on the scaled clock;
                // otherwise it is wall time.
                let delay = match sh.wire {
                    Some(_) => delay_ns,
                    None => (delay_ns as f64 / sh.state.clock.scale()) as Nanos,
                };
                let at = now.saturating_add(delay);
                sh.book().moved(p.seq, at);
                sh.state
                    .observed_release(self.worker, p.seq, p.delivery, at);
            }
        }
    }

    /// A message frame from the server: an answer to an ack, a delivery, or neither; what
    /// becomes of it.
    fn server_message(&mut self, m: &Message, frame: &[u8]) -> Down {
        if let Some(p) = self.confirming.remove(&m.subject) {
            self.apply(p);
            return Down::Now;
        }
        let delivery = (m.reply.as_deref())
            .and_then(|r| self.shared.delivery_of(r))
            .or_else(|| self.shared.copy_delivery(m, frame));
        let Some((seq, delivery)) = delivery else {
            return Down::Now;
        };
        let sh = &self.shared;
        let end = sh.state.clock.now().saturating_add(sh.waits.wait(delivery));
        let replaced = sh.book().delivered(seq, delivery, end);
        if let Some(before) = replaced {
            sh.state.record(EventKind::LeaseExpired {
                seq,
                delivery: before,
            });
        }
        match self.delivery_kept((seq, delivery, end), frame) {
            Down::Now
                if self
                    .shared
                    .state
                    .observed_delivery(self.worker, seq, delivery, end) =>
            {
                Down::Cut
            }
            down => down,
        }
    }

    /// A message frame from the worker: an ack of the run's consumer, or anything else.
    fn worker_message(&mut self, m: &Message, frame: &[u8]) {
        if m.subject == self.shared.subject {
            return self.published(&frame[m.payload.clone()]);
        }
        let Some((seq, delivery)) = self.shared.delivery_of(&m.subject) else {
            return;
        };
        let Some(kind) = subject::kind(&frame[m.payload.clone()]) else {
            return;
        };
        let p = Pending {
            seq,
            delivery,
            kind,
        };
        match &m.reply {
            Some(inbox) => {
                self.confirming.insert(inbox.clone(), p);
            }
            None => self.apply(p),
        }
    }
}

impl NatsConnection {
    /// The worker published `body` to the run's subject: if it names a message of the run, it
    /// is that message's retry, from the delivery the worker holds.
    fn published(&self, body: &[u8]) {
        let state = &self.shared.state;
        let Some(seq) = state.seq_of_body(body) else {
            return;
        };
        let delivery = state.retiring(self.worker, seq, Republish::Queue);
        self.shared.book().copy_sent(seq);
        state.observed_republish(self.worker, seq, delivery, Republish::Queue);
    }

    /// A worker's message frame with its durations in wall time (`None`: as it is); notes the
    /// reply inbox of a JetStream API request whose answer is to be converted back.
    fn for_server(&mut self, m: &Message, frame: &[u8]) -> Option<Vec<u8>> {
        let wire = self.shared.wire?;
        let (payload, answer) = wire.publish(&m.subject, &frame[m.payload.clone()]);
        if let (Some(api), Some(inbox)) = (answer, &m.reply) {
            self.answers.insert(inbox.clone(), api);
        }
        payload.map(|p| with_payload(frame, m, &p))
    }
}

/// A server's message frame with its durations in profile time, when it answers a JetStream
/// API request noted in `answers` (`None`: as it is).
fn for_worker(
    wire: Option<Wire>,
    answers: &mut HashMap<String, Api>,
    m: &Message,
    frame: &[u8],
) -> Option<Vec<u8>> {
    let wire = wire?;
    let api = answers.remove(&m.subject)?;
    let payload = wire.answer(api, &frame[m.payload.clone()])?;
    Some(with_payload(frame, m, &payload))
}

impl NatsConnection {
    /// The first whole frame of `buf` (from the worker: `up`), `None` while partial; a frame
    /// over the server's limits is refused, answered from the worker's side as the server
    /// answers it, and ends the connection (nothing after it is read).
    fn whole(&mut self, buf: &[u8], up: bool) -> Option<super::frames::Frame> {
        if self.refusal.is_some() {
            return None;
        }
        let max_line = if up { MAX_CONTROL_LINE } else { usize::MAX };
        let read = frame(buf, self.max_payload, max_line).and_then(|f| match &f {
            Some(line) if up && line.message.is_none() => client_line(&buf[..line.len]).map(|()| f),
            _ => Ok(f),
        });
        match read {
            Ok(f) => f,
            Err(e) => {
                self.refused(&e, up);
                None
            }
        }
    }

    fn refused(&mut self, e: &Violation, up: bool) {
        let (why, to_worker) = match up {
            true => (format!("the worker sent {e}"), e.answer().to_vec()),
            false => (format!("the server sent {e}"), Vec::new()),
        };
        self.refusal = Some(Refusal { why, to_worker });
    }

    /// A line from the server: its `INFO` announces `max_payload`.
    fn server_line(&mut self, line: &[u8]) {
        let Some(json) = line.strip_prefix(b"INFO ") else {
            return;
        };
        let max = serde_json::from_slice::<serde_json::Value>(json.trim_ascii())
            .ok()
            .and_then(|v| v.get("max_payload")?.as_u64());
        if let Some(max) = max {
            self.max_payload = usize::try_from(max).unwrap_or(usize::MAX);
        }
    }
}

impl Connection for NatsConnection {
    fn from_worker(&mut self, bytes: &[u8], forward: &mut Vec<u8>) -> Flow {
        let mut up = std::mem::take(&mut self.up);
        up.extend_from_slice(bytes);
        let mut at = 0;
        while let Some(f) = self.whole(&up[at..], true) {
            let whole = at..at + f.len;
            let mut rewritten = None;
            if let Some(m) = &f.message {
                let bytes = up[whole.clone()].to_vec();
                if self.ack_kept(m, &bytes) {
                    at += f.len;
                    continue;
                }
                self.worker_message(m, &bytes);
                rewritten = self.for_server(m, &bytes);
            } else {
                let line = up[whole.clone()].to_vec();
                self.worker_line(&line);
            }
            match rewritten {
                Some(frame) => forward.extend_from_slice(&frame),
                None => forward.extend_from_slice(&up[whole]),
            }
            at += f.len;
        }
        up.drain(..at);
        self.up = up;
        Flow::Go
    }

    fn from_server(&mut self, bytes: &[u8], forward: &mut Vec<u8>) -> Flow {
        let mut down = std::mem::take(&mut self.down);
        down.extend_from_slice(bytes);
        let mut at = 0;
        while let Some(f) = self.whole(&down[at..], false) {
            let whole = &down[at..at + f.len];
            let mut rewritten = None;
            if f.message.is_none() {
                self.server_line(whole);
            }
            if let Some(m) = &f.message {
                match self.server_message(m, whole) {
                    Down::Now => {
                        rewritten = for_worker(self.shared.wire, &mut self.answers, m, whole)
                    }
                    // Killed at `received`: this delivery and what follows stay here.
                    Down::Cut => return Flow::Cut,
                    Down::Dropped(instead) => rewritten = Some(instead),
                    Down::Held => rewritten = Some(Vec::new()),
                }
            }
            match rewritten {
                Some(frame) => forward.extend_from_slice(&frame),
                None => forward.extend_from_slice(whole),
            }
            at += f.len;
        }
        down.drain(..at);
        self.down = down;
        Flow::Go
    }

    fn next_due(&self, dir: Direction) -> Option<Instant> {
        self.held.next_due(dir == Direction::ToBroker)
    }

    fn refusal(&mut self) -> Option<Refusal> {
        self.refusal.take()
    }

    fn due(&mut self, dir: Direction, now: Instant, forward: &mut Vec<u8>) -> Flow {
        match dir {
            Direction::ToBroker => {
                self.acks_due(now, forward);
                Flow::Go
            }
            Direction::ToWorker => self.worker_frames_due(now, forward),
        }
    }
}

#[path = "message_faults.rs"]
mod message_faults;
#[cfg(test)]
#[path = "message_tests.rs"]
mod message_tests;

#[cfg(test)]
#[path = "proxy_tests.rs"]
mod tests;
