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
//! With the consumer on the scaled clock, the durations it sends are converted to wall time on
//! the way to the server, and those of the server's answers to its JetStream API requests back
//! to profile time ([`super::wire`]); the byte counts of a rewritten frame with them. What is
//! observed is read from the worker's own frames, before any rewrite.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use super::book::Book;
use super::frames::{frame, with_payload, Message};
use super::subject::{self, AckKind};
use super::wire::{Api, Wire};
use crate::broker::nats::NatsConfig;
use crate::profile::Scenario;
use crate::record::{nanos, EventKind, Nanos, Seq, WorkerId};
use crate::runner::live::proxy::{Connection, Flow, Protocol};
use crate::runner::live::state::LiveState;

/// What every worker connection of the run shares.
pub struct Shared {
    pub state: Arc<LiveState>,
    pub book: Arc<Mutex<Book>>,
    pub stream: String,
    pub consumer: String,
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
        Some((self.book().seq_of(a.stream_seq)?, a.delivered))
    }
}

pub struct NatsProtocol(pub Arc<Shared>);

impl Protocol for NatsProtocol {
    fn connection(&self, worker: WorkerId) -> Box<dyn Connection> {
        Box::new(NatsConnection {
            worker,
            shared: self.0.clone(),
            up: Vec::new(),
            down: Vec::new(),
            confirming: HashMap::new(),
            answers: HashMap::new(),
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
}

impl NatsConnection {
    /// What an ack did, now that the server has it (confirmed, or sent without a reply).
    fn apply(&self, p: Pending) {
        let sh = &self.shared;
        let now = sh.state.clock.now();
        match p.kind {
            // +TERM takes the message off the consumer for good, as an ack does.
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

    /// A message frame from the server: an answer to an ack, a delivery, or neither. True:
    /// the worker is being killed and must not see it.
    fn server_message(&mut self, m: &Message) -> bool {
        if let Some(p) = self.confirming.remove(&m.subject) {
            self.apply(p);
            return false;
        }
        let Some((seq, delivery)) = m.reply.as_deref().and_then(|r| self.shared.delivery_of(r))
        else {
            return false;
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
        sh.state.observed_delivery(self.worker, seq, delivery, end)
    }

    /// A message frame from the worker: an ack of the run's consumer, or anything else.
    fn worker_message(&mut self, m: &Message, frame: &[u8]) {
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

impl Connection for NatsConnection {
    fn from_worker(&mut self, bytes: &[u8], forward: &mut Vec<u8>) -> Flow {
        self.up.extend_from_slice(bytes);
        let mut at = 0;
        while let Some(f) = frame(&self.up[at..]) {
            let whole = at..at + f.len;
            let mut rewritten = None;
            if let Some(m) = &f.message {
                let bytes = self.up[whole.clone()].to_vec();
                self.worker_message(m, &bytes);
                rewritten = self.for_server(m, &bytes);
            }
            match rewritten {
                Some(frame) => forward.extend_from_slice(&frame),
                None => forward.extend_from_slice(&self.up[whole]),
            }
            at += f.len;
        }
        self.up.drain(..at);
        Flow::Go
    }

    fn from_server(&mut self, bytes: &[u8], forward: &mut Vec<u8>) -> Flow {
        self.down.extend_from_slice(bytes);
        let mut at = 0;
        while let Some(f) = frame(&self.down[at..]) {
            let whole = at..at + f.len;
            let mut rewritten = None;
            if let Some(m) = &f.message {
                if self.server_message(m) {
                    // Killed at `received`: this delivery and what follows stay here.
                    self.down.clear();
                    return Flow::Cut;
                }
                let frame = &self.down[whole.clone()];
                rewritten = for_worker(self.shared.wire, &mut self.answers, m, frame);
            }
            match rewritten {
                Some(frame) => forward.extend_from_slice(&frame),
                None => forward.extend_from_slice(&self.down[whole]),
            }
            at += f.len;
        }
        self.down.drain(..at);
        Flow::Go
    }
}

#[cfg(test)]
mod tests {
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
    async fn on_the_real_clock_a_nak_is_passed_on_as_it_is_and_its_wall_delay_recorded_in_profile_time(
    ) {
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
}
