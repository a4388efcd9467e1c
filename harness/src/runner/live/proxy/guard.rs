//! A connection that breaks ends alone: every [`Connection`] the proxy forwards is wrapped in a
//! [`Guard`], which carries out a [`Refusal`] the protocol's reader made (a frame over the
//! broker's own limits, bytes that are no frame of its protocol): the refused bytes and all
//! that follow go nowhere, the worker is sent what the broker would have answered (NATS's
//! `-ERR 'Maximum Payload Violation'`, AMQP's `connection.close` 501, Redis's `-ERR Protocol
//! error`) and both sides are closed, as the broker closes them; the run is told which worker's
//! connection broke and why ([`Protocol::broke`]). A panic of a reader ends its connection's
//! task only; [`super::accept`] tells the run of it in the same words.

use std::sync::Arc;
use std::time::Instant;

use super::link::Direction;
use super::{Connection, Flow, Protocol};
use crate::record::WorkerId;

/// Why a protocol's reader gave up on a connection, and the broker's last words to the worker.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    /// In words: `PUB of 2147483648 bytes over the server's max_payload (1048576)`.
    pub why: String,
    /// What the broker sends before it closes (empty: it closes without a word).
    pub to_worker: Vec<u8>,
}

impl Refusal {
    /// The first `max` bytes a refused frame starts with, escaped, as a refusal's words quote
    /// them (`\x16\x03\x01...`): bytes that are no frame are often not text.
    pub fn quote(bytes: &[u8], max: usize) -> String {
        bytes[..bytes.len().min(max)].escape_ascii().to_string()
    }
}

/// Test-only: the worker whose connections' reader panics on the first bytes the worker sends
/// (`ACKBENCH_TEST_PROXY_PANIC=<worker>`), so the tests can see a panic end one connection and
/// not the run. Honoured in debug builds only; a release build never reads it.
#[cfg(debug_assertions)]
fn panics_for(worker: WorkerId) -> bool {
    std::env::var("ACKBENCH_TEST_PROXY_PANIC")
        .ok()
        .and_then(|v| v.parse::<WorkerId>().ok())
        == Some(worker)
}

#[cfg(not(debug_assertions))]
fn panics_for(_worker: WorkerId) -> bool {
    false
}

/// A [`Connection`] that carries out its reader's refusal.
pub(super) struct Guard {
    inner: Box<dyn Connection>,
    worker: WorkerId,
    protocol: Arc<dyn Protocol>,
    /// The broker's last words, once refused (sent to the worker, then the connection ends).
    last_words: Option<Vec<u8>>,
    panics: bool,
}

impl Guard {
    pub(super) fn new(
        inner: Box<dyn Connection>,
        worker: WorkerId,
        protocol: Arc<dyn Protocol>,
    ) -> Guard {
        Guard {
            inner,
            worker,
            protocol,
            last_words: None,
            panics: panics_for(worker),
        }
    }

    /// The reader refused what it just read: the run is told, the last words wait for the
    /// worker's direction.
    fn refused(&mut self) -> bool {
        if self.last_words.is_some() {
            return true;
        }
        match self.inner.refusal() {
            Some(r) => {
                self.protocol.broke(self.worker, r.why);
                self.last_words = Some(r.to_worker);
                true
            }
            None => false,
        }
    }

    /// Towards the worker once refused: the last words, then the end.
    fn last_words(&mut self, forward: &mut Vec<u8>) -> Flow {
        if let Some(words) = self.last_words.as_mut() {
            forward.append(words);
        }
        Flow::Cut
    }
}

impl Connection for Guard {
    fn from_worker(&mut self, bytes: &[u8], forward: &mut Vec<u8>) -> Flow {
        if self.panics {
            panic!(
                "ACKBENCH_TEST_PROXY_PANIC: a panic injected in worker {}'s proxy",
                self.worker
            );
        }
        if self.last_words.is_some() {
            return Flow::Go;
        }
        let flow = self.inner.from_worker(bytes, forward);
        if self.refused() {
            // What the reader passed on before the refused frame goes on; the broker's answer
            // goes the other way, when that direction looks ([`Connection::next_due`]).
            return Flow::Go;
        }
        flow
    }

    fn from_server(&mut self, bytes: &[u8], forward: &mut Vec<u8>) -> Flow {
        if self.last_words.is_some() {
            return self.last_words(forward);
        }
        let flow = self.inner.from_server(bytes, forward);
        if self.refused() {
            return self.last_words(forward);
        }
        flow
    }

    fn closed(&mut self) {
        self.inner.closed()
    }

    fn broker_closed(&mut self) {
        self.inner.broker_closed()
    }

    fn next_due(&self, dir: Direction) -> Option<Instant> {
        match (&self.last_words, dir) {
            (Some(_), Direction::ToWorker) => Some(Instant::now()),
            (Some(_), Direction::ToBroker) => None,
            (None, _) => self.inner.next_due(dir),
        }
    }

    fn due(&mut self, dir: Direction, now: Instant, forward: &mut Vec<u8>) -> Flow {
        match (&self.last_words, dir) {
            (Some(_), Direction::ToWorker) => self.last_words(forward),
            (Some(_), Direction::ToBroker) => Flow::Go,
            (None, _) => self.inner.due(dir, now, forward),
        }
    }

    fn refusal(&mut self) -> Option<Refusal> {
        None
    }
}
