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

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use super::book::Book;
use super::frames::{frame, Message};
use super::subject::{self, AckKind};
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
}

impl Shared {
    pub fn new(
        s: &Scenario,
        state: Arc<LiveState>,
        book: Arc<Mutex<Book>>,
        stream: &str,
        consumer: &str,
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
                ack_wait: nanos(s.broker.visibility_timeout),
                backoff,
                max_deliver: s.broker.max_receives,
                max_ack_pending: 1,
            },
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
                // The delay is wall time; the record is in profile time.
                let delay = (delay_ns as f64 / sh.state.clock.scale()) as Nanos;
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

impl Connection for NatsConnection {
    fn from_worker(&mut self, bytes: &[u8], forward: &mut Vec<u8>) -> Flow {
        self.up.extend_from_slice(bytes);
        let mut at = 0;
        while let Some(f) = frame(&self.up[at..]) {
            let whole = at..at + f.len;
            if let Some(m) = &f.message {
                let bytes = self.up[whole.clone()].to_vec();
                self.worker_message(m, &bytes);
            }
            forward.extend_from_slice(&self.up[whole]);
            at += f.len;
        }
        self.up.drain(..at);
        Flow::Go
    }

    fn from_server(&mut self, bytes: &[u8], forward: &mut Vec<u8>) -> Flow {
        self.down.extend_from_slice(bytes);
        let mut at = 0;
        while let Some(f) = frame(&self.down[at..]) {
            if let Some(m) = &f.message {
                if self.server_message(m) {
                    // Killed at `received`: this delivery and what follows stay here.
                    self.down.clear();
                    return Flow::Cut;
                }
            }
            forward.extend_from_slice(&self.down[at..at + f.len]);
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
        let book = Arc::new(Mutex::new(Book::default()));
        book.lock().unwrap().published(1, 1);
        Arc::new(Shared {
            state: LiveState::new(LiveClock::new(1.0), "q", 2, KillSchedule::new(&[], 1)),
            book,
            stream: "s".to_string(),
            consumer: "workers".to_string(),
            waits: NatsConfig {
                ack_wait: 30,
                backoff: Vec::new(),
                max_deliver: 0,
                max_ack_pending: 1,
            },
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
}
