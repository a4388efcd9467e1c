//! `message` faults in the NATS proxy.
//!
//! - An ack (`+ACK`, empty, `+NXT`) of a delivery the rules select is kept from the server
//!   (`drop_ack`) or passed on `delay` later (`delay_ack`), then without its reply inbox. A
//!   double ack (AckSync, a reply inbox) is answered at once with the confirmation the server
//!   gives (an empty message on the inbox, to the worker's subscription that covers it): the
//!   worker is told its ack succeeded. JetStream matches an ack by stream sequence, so a late
//!   one acts on the message under its current holder, as the sim model judges it. An ack
//!   still held when its connection ends never reaches the server.
//! - A delivery (`MSG`/`HMSG` with the consumer's ack subject) the rules select is kept from
//!   the worker (`drop_delivery`), which is told its pull request ended without a message (a
//!   `408 Request Timeout` status on the same subscription, as the server sends when a pull
//!   expires), so it asks again; or passed on `delay` later (`delay_delivery`). The server
//!   counts it delivered either way and redelivers it when its AckWait ends.

use std::time::Instant;

use super::super::frames::Message;
use super::super::subject::{self, AckKind};
use super::{NatsConnection, Pending};
use crate::record::{Nanos, Seq};
use crate::runner::live::proxy::Flow;
use crate::runner::live::state::{HeldAck, HeldDelivery};

/// A frame on its way to the worker, due at an instant: a delivery (its seq and delivery
/// number, for the `received` kill rules as it arrives), or a reply made up for the worker.
type ToWorker = (Instant, Option<(Seq, u32)>, Vec<u8>);

/// Frames held back, each due at an instant.
#[derive(Debug, Default)]
pub(super) struct Held {
    /// Acks on their way to the server, with the ack each is.
    acks: Vec<(Instant, Pending, Vec<u8>)>,
    /// Frames on their way to the worker.
    to_worker: Vec<ToWorker>,
    /// The worker's subscriptions: subject (wildcards as written), sid.
    subs: Vec<(String, String)>,
}

/// What becomes of a message frame from the server.
pub(super) enum Down {
    /// It goes on now.
    Now,
    /// A `received` kill was decided for it: it stays here, and the connection is cut.
    Cut,
    /// Kept here: in its place goes this (the pull request's end).
    Dropped(Vec<u8>),
    /// Kept, and passed on when due.
    Held,
}

/// Whether `subject` falls under the subscription subject `pattern` (`*` one token, `>` the
/// rest).
fn covers(pattern: &str, subject: &str) -> bool {
    let mut s = subject.split('.');
    for p in pattern.split('.') {
        match (p, s.next()) {
            (">", Some(_)) => return true,
            ("*", Some(_)) => {}
            (p, Some(t)) if p == t => {}
            _ => return false,
        }
    }
    s.next().is_none()
}

/// The control line of a frame, its fields.
fn fields(frame: &[u8]) -> Vec<String> {
    let eol = frame
        .windows(2)
        .position(|w| w == b"\r\n")
        .unwrap_or(frame.len());
    String::from_utf8_lossy(&frame[..eol])
        .split_ascii_whitespace()
        .map(str::to_string)
        .collect()
}

/// A `PUB` (or `HPUB`) frame `m` without its reply subject.
fn without_reply(frame: &[u8], m: &Message) -> Vec<u8> {
    let eol = frame
        .windows(2)
        .position(|w| w == b"\r\n")
        .unwrap_or(frame.len());
    let body = &frame[(eol + 2).min(m.payload.start)..m.payload.end];
    let headers = m.payload.start - (eol + 2).min(m.payload.start);
    let mut out = match headers {
        0 => format!("PUB {} {}\r\n", m.subject, body.len()),
        h => format!("HPUB {} {h} {}\r\n", m.subject, body.len()),
    }
    .into_bytes();
    out.extend_from_slice(body);
    out.extend_from_slice(b"\r\n");
    out
}

/// A pull request's end without a message, to subscription `sid` (`subject` as the delivery
/// named it): the status the server sends when a request expires.
fn request_timeout(subject: &str, sid: &str) -> Vec<u8> {
    let headers = "NATS/1.0 408 Request Timeout\r\n\r\n";
    format!(
        "HMSG {subject} {sid} {n} {n}\r\n{headers}\r\n",
        n = headers.len()
    )
    .into_bytes()
}

impl Held {
    pub(super) fn next_due(&self, to_server: bool) -> Option<Instant> {
        match to_server {
            true => self.acks.iter().map(|a| a.0).min(),
            false => self.to_worker.iter().map(|a| a.0).min(),
        }
    }
}

impl NatsConnection {
    /// A line from the worker that is not a message: a `SUB` is noted (a reply made up for the
    /// worker goes to the subscription covering its inbox).
    pub(super) fn worker_line(&mut self, frame: &[u8]) {
        if !self.acks_faulted {
            return;
        }
        let f = fields(frame);
        if f.len() >= 3 && f[0].eq_ignore_ascii_case("SUB") {
            let sid = f[f.len() - 1].clone();
            self.held.subs.push((f[1].clone(), sid));
        }
    }

    /// The rules' decision on a worker's message frame: true when it is an ack they keep (it
    /// does not go on now).
    pub(super) fn ack_kept(&mut self, m: &Message, frame: &[u8]) -> bool {
        if !self.acks_faulted {
            return false;
        }
        let Some((seq, delivery)) = self.shared.delivery_of(&m.subject) else {
            return false;
        };
        if subject::kind(&frame[m.payload.clone()]) != Some(AckKind::Ack) {
            return false;
        }
        let state = &self.shared.state;
        let Some(fault) = state.ack_fault(self.worker, seq, delivery) else {
            return false;
        };
        state.observed_held_ack(self.worker, seq, delivery);
        let now = Instant::now();
        if let Some(inbox) = &m.reply {
            let sub = self.held.subs.iter().rev().find(|(s, _)| covers(s, inbox));
            if let Some((_, sid)) = sub {
                let confirmed = format!("MSG {inbox} {sid} 0\r\n\r\n").into_bytes();
                self.held.to_worker.push((now, None, confirmed));
            }
        }
        if let HeldAck::Later(d) = fault {
            let pending = Pending {
                seq,
                delivery,
                kind: AckKind::Ack,
            };
            let ack = without_reply(frame, m);
            self.held.acks.push((now + d, pending, ack));
        }
        true
    }

    /// The rules' decision on delivery `delivery` of `seq` (the frame `frame`, whose AckWait
    /// ends at `lease_end`), handed to this worker.
    pub(super) fn delivery_kept(
        &mut self,
        (seq, delivery, lease_end): (Seq, u32, Nanos),
        frame: &[u8],
    ) -> Down {
        if !self.deliveries_faulted {
            return Down::Now;
        }
        let state = &self.shared.state;
        match state.delivery_fault(self.worker, seq, delivery) {
            None => Down::Now,
            Some(HeldDelivery::Dropped) => {
                state.observed_dropped_delivery(self.worker, seq, delivery, lease_end);
                let f = fields(frame);
                Down::Dropped(request_timeout(&f[1], &f[2]))
            }
            Some(HeldDelivery::Later(d)) => {
                state.observed_handout(self.worker, seq, delivery, lease_end);
                let at = Instant::now() + d;
                self.held
                    .to_worker
                    .push((at, Some((seq, delivery)), frame.to_vec()));
                Down::Held
            }
        }
    }

    /// The held acks due at `now` go on to the server, in the order they came due; each is
    /// what the worker's ack does, sent now.
    pub(super) fn acks_due(&mut self, now: Instant, out: &mut Vec<u8>) {
        let (mut due, kept): (Vec<_>, Vec<_>) = std::mem::take(&mut self.held.acks)
            .into_iter()
            .partition(|a| a.0 <= now);
        self.held.acks = kept;
        due.sort_by_key(|a| a.0);
        for (_, pending, frame) in due {
            out.extend_from_slice(&frame);
            self.apply(pending);
        }
    }

    /// The frames due at `now` go on to the worker, in the order they came due;
    /// [`Flow::Cut`] when a `received` kill is decided for a delivery (it stays here).
    pub(super) fn worker_frames_due(&mut self, now: Instant, out: &mut Vec<u8>) -> Flow {
        let (mut due, kept): (Vec<_>, Vec<_>) = std::mem::take(&mut self.held.to_worker)
            .into_iter()
            .partition(|a| a.0 <= now);
        self.held.to_worker = kept;
        due.sort_by_key(|a| a.0);
        for (_, delivery, frame) in due {
            if let Some((seq, delivery)) = delivery {
                if self
                    .shared
                    .state
                    .observed_arrival(self.worker, seq, delivery)
                {
                    return Flow::Cut;
                }
            }
            out.extend_from_slice(&frame);
        }
        Flow::Go
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_subscription_covers_subjects_by_token() {
        assert!(covers("_INBOX.abc.*", "_INBOX.abc.7"));
        assert!(covers("_INBOX.>", "_INBOX.abc.7"));
        assert!(covers("_INBOX.abc.7", "_INBOX.abc.7"));
        assert!(!covers("_INBOX.abc.*", "_INBOX.abc.7.8"));
        assert!(!covers("_INBOX.abc.*", "_INBOX.abd.7"));
        assert!(!covers("_INBOX.abc.7.*", "_INBOX.abc.7"));
    }

    #[test]
    fn an_ack_goes_on_without_its_reply_and_a_timeout_reads_back_as_a_status() {
        let ack = b"PUB $JS.ACK.s.c.1.1.1.1.0 _INBOX.a.7 4\r\n+ACK\r\n";
        let m = super::super::super::frames::frame(ack, 64, usize::MAX)
            .unwrap()
            .unwrap()
            .message
            .unwrap();
        assert_eq!(
            String::from_utf8_lossy(&without_reply(ack, &m)),
            "PUB $JS.ACK.s.c.1.1.1.1.0 4\r\n+ACK\r\n"
        );
        // The 408's headers are 32 bytes: `NATS/1.0 408 Request Timeout` CRLF CRLF.
        let t = request_timeout("orders.new", "9");
        assert_eq!(
            String::from_utf8_lossy(&t),
            "HMSG orders.new 9 32 32\r\nNATS/1.0 408 Request Timeout\r\n\r\n\r\n"
        );
        let f = super::super::super::frames::frame(&t, 64, usize::MAX)
            .unwrap()
            .unwrap();
        assert_eq!((f.len, f.message.unwrap().payload.len()), (t.len(), 0));
    }
}
