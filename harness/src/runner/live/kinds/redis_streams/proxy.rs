//! The RESP reader of one worker connection: it decodes the worker's commands, remembers in
//! order what each one asked (replies come back in the same order, pipelined or not, and
//! inside MULTI/EXEC at EXEC), and reads the server's reply to each:
//!
//! - XREADGROUP `>` on the run's stream: each entry is delivery 1 (the server's count).
//! - XCLAIM and XAUTOCLAIM: each entry claimed is a delivery (the count goes up by one). With
//!   JUSTID the count stays: to the entry's holder that is a heartbeat (an `IDLE` argument: a
//!   hand-back, claimable again after `min_idle - IDLE`); by another consumer it only moves the
//!   entry (as a consumer takes one it is about to move to the dead stream).
//! - XACK: 1 is accepted (by the holder of the latest delivery: the ack; by a consumer whose
//!   entry was claimed away: a stale ack that still removes it), 0 is a stale ack of an entry
//!   already acked or gone.
//! - XADD to the run's stream with a field naming a message of the run: the worker's retry of
//!   it, a copy whose deliveries continue the message's ([`super::copies`]); the ack of the
//!   delivery it replaced removes that copy (`Superseded`).
//! - XADD to `<stream>:dead` with the entry's `id` field: the consumer-side max_deliveries rule
//!   moved the entry; its XACK that follows is part of the move, not an ack.
//!
//! An XACK a `message` rule selects is kept or sent later, the worker answered in the server's
//! place ([`super::ack_faults`]); an entry a rule drops is taken out of the reply that carries
//! it ([`super::delivery_faults`]).
//!
//! A reply carrying a delivery a `received` kill is decided for is not forwarded: the
//! connection is cut. Bytes that cannot be read as RESP are passed on unread from there on.
//!
//! With a consumer on the scaled clock, the durations in its commands and in the replies it
//! reads are converted between profile and wall time ([`super::wire`]); what is observed is
//! read from the commands as the server gets them (wall time). A command is forwarded once it
//! is complete.

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Instant;

use super::ack_faults::{kept_counts, HeldAcks};
use super::delivery_faults::{nil, without_entries};
use super::entries::{Entries, EntryPlace};
use super::limits::{check, COMMANDS, REPLIES};
use super::resp::{command_args, decode, decode_frame, encode_command, Frame, Reply, Resp, Value};
use super::wire::{Retime, WireTime};
use crate::record::{AckOutcome, EventKind, Nanos, Seq, WorkerId};
use crate::runner::live::proxy::link::Direction;
use crate::runner::live::proxy::{Connection, Flow, Protocol, Refusal};
use crate::runner::live::state::LiveState;

/// The run's names and the consumer rule's lease, in profile time, as the proxy needs them.
pub struct Observed {
    pub state: Arc<LiveState>,
    pub entries: Arc<Entries>,
    pub stream: String,
    pub dead: String,
    /// `min_idle` and `claim_every` in profile nanoseconds.
    pub min_idle: Nanos,
    pub claim_every: Nanos,
    /// With a consumer on the scaled clock: the conversion of its wire durations.
    pub wire: Option<WireTime>,
}

impl Observed {
    /// When an entry delivered (or touched) now becomes claimable: `min_idle` on, at a tick.
    fn claimable_at(&self, from: Nanos) -> Nanos {
        self.on_tick(from.saturating_add(self.min_idle))
    }

    /// The first claim tick at or after `at`.
    fn on_tick(&self, at: Nanos) -> Nanos {
        match self.claim_every {
            0 => at,
            every => at.div_ceil(every).saturating_mul(every),
        }
    }
}

/// Makes each worker connection's reader.
pub struct RespProtocol(pub Arc<Observed>);

impl Protocol for RespProtocol {
    fn broke(&self, worker: WorkerId, why: String) {
        self.0.state.connection_broke(worker, why);
    }

    fn connection(&self, worker: WorkerId) -> Box<dyn Connection> {
        Box::new(RespConnection {
            run: self.0.clone(),
            worker,
            resp: Resp::Two,
            up: Vec::new(),
            down: Vec::new(),
            expected: VecDeque::new(),
            multi: None,
            blind: false,
            refusal: None,
            held: HeldAcks::default(),
            deliveries_faulted: self.0.state.message_faults_on_deliveries(),
            dropped: Vec::new(),
        })
    }
}

/// What a command's reply will say, as far as the run cares.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Expect {
    Nothing,
    /// XREADGROUP with `>` for the run's stream.
    ReadNew,
    /// XCLAIM (`justid`, `idle`: its IDLE argument in wall ms) or XAUTOCLAIM (`auto`).
    Claim {
        auto: bool,
        justid: bool,
        idle: Option<u64>,
    },
    Ack(Vec<String>),
    /// XADD to the dead stream of the entry with this id.
    DeadAdd(String),
    /// XADD to the run's stream of a copy of this message (the worker's retry).
    CopyAdd(Seq),
    Hello(Resp),
    /// A command queued inside MULTI: its reply is `QUEUED`.
    Queued,
    /// EXEC: an array of the queued commands' replies.
    Exec(Vec<Expect>),
    /// A reply with durations the consumer reads, converted to profile time.
    Retime(Retime),
    /// A reply made up here for a command the server never got (an XACK kept whole): these
    /// bytes go to the worker in its turn.
    MadeUp(Vec<u8>),
    /// In a transaction: an XACK kept whole, its count put into EXEC's reply at its place.
    KeptInTx(i64),
    /// XACK of `ids`, sent in place of one that also had `kept` entries kept: the worker reads
    /// the server's count plus these.
    AckKept {
        ids: Vec<String>,
        kept: i64,
    },
    /// A delayed XACK of the proxy's: its reply is read, not passed on.
    Late(Vec<String>),
}

pub(super) struct RespConnection {
    pub(super) run: Arc<Observed>,
    pub(super) worker: WorkerId,
    resp: Resp,
    /// Bytes of a command not complete yet (already forwarded).
    up: Vec<u8>,
    /// Bytes of a reply not complete yet (held).
    down: Vec<u8>,
    pub(super) expected: VecDeque<Expect>,
    /// Inside MULTI: what the queued commands' replies will say.
    pub(super) multi: Option<Vec<Expect>>,
    /// The protocol could not be read: pass everything on unread.
    pub(super) blind: bool,
    /// A frame over Redis's limits was read: the connection ends as Redis ends it.
    refusal: Option<Refusal>,
    /// XACKs kept by the `message` rules, and the replies made up in their place.
    pub(super) held: HeldAcks,
    /// Whether some `message` rule acts on deliveries.
    pub(super) deliveries_faulted: bool,
    /// Entries of the reply being read that a rule dropped.
    pub(super) dropped: Vec<String>,
}

fn upper(s: &str) -> String {
    s.to_ascii_uppercase()
}

impl RespConnection {
    /// What the reply to `args` will say.
    fn expect(&self, args: &[String]) -> Expect {
        let name = upper(&args[0]);
        let on_stream = |i: usize| args.get(i).is_some_and(|k| *k == self.run.stream);
        match name.as_str() {
            "XREADGROUP" => {
                let Some(s) = args.iter().position(|a| upper(a) == "STREAMS") else {
                    return Expect::Nothing;
                };
                let rest = &args[s + 1..];
                let (keys, ids) = rest.split_at(rest.len() / 2);
                match keys.iter().position(|k| *k == self.run.stream) {
                    Some(i) if ids.get(i).map(String::as_str) == Some(">") => Expect::ReadNew,
                    _ => Expect::Nothing,
                }
            }
            "XCLAIM" | "XAUTOCLAIM" if on_stream(1) => {
                let flag = |f: &str| args.iter().skip(5).any(|a| upper(a) == f);
                let idle = args
                    .iter()
                    .skip(5)
                    .position(|a| upper(a) == "IDLE")
                    .and_then(|i| args.get(i + 6))
                    .and_then(|v| v.parse().ok());
                Expect::Claim {
                    auto: name == "XAUTOCLAIM",
                    justid: flag("JUSTID"),
                    idle,
                }
            }
            "XACK" if on_stream(1) => Expect::Ack(args.iter().skip(3).cloned().collect()),
            "XADD" if args.get(1).is_some_and(|k| *k == self.run.dead) => args
                .windows(2)
                .skip(2)
                .find(|kv| kv[0] == "id")
                .map_or(Expect::Nothing, |kv| Expect::DeadAdd(kv[1].clone())),
            "XADD" if on_stream(1) => self
                .copy_sent(args)
                .map_or(Expect::Nothing, Expect::CopyAdd),
            "HELLO" => match args.get(1).map(String::as_str) {
                Some("3") => Expect::Hello(Resp::Three),
                Some("2") => Expect::Hello(Resp::Two),
                _ => Expect::Nothing,
            },
            _ => Expect::Nothing,
        }
    }

    /// A command of the worker (as the server gets it): remember what its reply will say, and
    /// what of it to convert.
    fn command(&mut self, args: &[String], retime: Option<Retime>) {
        let name = upper(&args[0]);
        let expect = |c: &Self| match (c.expect(args), retime) {
            (Expect::Nothing, Some(r)) => Expect::Retime(r),
            (e, _) => e,
        };
        match (name.as_str(), &mut self.multi) {
            ("MULTI", None) => {
                self.multi = Some(Vec::new());
                self.expected.push_back(Expect::Nothing);
            }
            ("EXEC", Some(_)) => {
                let queued = self.multi.take().unwrap_or_default();
                self.expected.push_back(Expect::Exec(queued));
            }
            ("DISCARD", Some(_)) => {
                self.multi = None;
                self.expected.push_back(Expect::Nothing);
            }
            (_, Some(_)) => {
                let e = expect(self);
                if let Some(q) = &mut self.multi {
                    q.push(e);
                }
                self.expected.push_back(Expect::Queued);
            }
            (_, None) => {
                let e = expect(self);
                self.expected.push_back(e);
            }
        }
    }

    /// The server's reply to a command that expected `e`: true when a `received` kill fired
    /// for a delivery in it.
    fn reply(&mut self, e: Expect, v: &Value) -> bool {
        if matches!(v, Value::Error(_)) {
            return false;
        }
        match e {
            Expect::Nothing
            | Expect::Queued
            | Expect::Retime(_)
            | Expect::MadeUp(_)
            | Expect::KeptInTx(_) => false,
            Expect::Hello(r) => {
                self.resp = r;
                false
            }
            Expect::Exec(queued) => {
                let mut killed = false;
                for (e, v) in queued.into_iter().zip(v.array()) {
                    killed |= self.reply(e, v);
                }
                killed
            }
            Expect::ReadNew => {
                for list in self.run_stream_lists(v) {
                    self.copies_in(list);
                }
                let ids = self.read_entries(v);
                self.delivered(&ids)
            }
            Expect::Claim { auto, justid, idle } => {
                let list = if auto {
                    v.array().get(1).cloned().unwrap_or(Value::Null)
                } else {
                    v.clone()
                };
                let ids = if justid {
                    list.array().iter().filter_map(Value::text).collect()
                } else {
                    list.entry_ids()
                };
                if justid {
                    self.touched(&ids, idle);
                    false
                } else {
                    self.copies_in(&list);
                    self.delivered(&ids)
                }
            }
            Expect::Ack(ids) | Expect::Late(ids) => {
                self.acked(&ids, v.int().unwrap_or(0));
                false
            }
            // The reply read here has the kept entries counted in already.
            Expect::AckKept { ids, kept } => {
                self.acked(&ids, v.int().unwrap_or(0) - kept);
                false
            }
            Expect::DeadAdd(id) => {
                self.dead(&id);
                false
            }
            Expect::CopyAdd(seq) => {
                if let Some(id) = v.text() {
                    self.run.entries.found(&id, seq);
                }
                false
            }
        }
    }

    /// The run stream's entry ids in an XREADGROUP reply: `[[stream, entries], ...]` in RESP2,
    /// `[stream, entries, ...]` from a RESP3 map.
    fn read_entries(&self, v: &Value) -> Vec<String> {
        (self.run_stream_lists(v).into_iter())
            .flat_map(Value::entry_ids)
            .collect()
    }

    /// The run stream's entry lists in an XREADGROUP reply.
    fn run_stream_lists<'v>(&self, v: &'v Value) -> Vec<&'v Value> {
        let streams = v.array();
        let pairs: Vec<&[Value]> = match streams.first() {
            Some(Value::Array(_)) => streams.iter().map(Value::array).collect(),
            _ => streams.chunks(2).collect(),
        };
        pairs
            .into_iter()
            .filter(|p| p.first().and_then(Value::text).as_deref() == Some(&self.run.stream))
            .filter_map(|p| p.get(1))
            .collect()
    }

    /// Deliveries (XREADGROUP `>` or claims): each adds one to the server's count.
    fn delivered(&mut self, ids: &[String]) -> bool {
        let run = self.run.clone();
        let mut killed = false;
        for id in ids {
            let now = run.state.clock.now();
            let lease_end = run.claimable_at(now);
            let Some((seq, delivery)) =
                run.entries.delivered(id, self.worker, true, now, lease_end)
            else {
                continue;
            };
            if self.delivery_dropped(id, seq, delivery, lease_end) {
                continue;
            }
            killed |= run
                .state
                .observed_delivery(self.worker, seq, delivery, lease_end);
        }
        killed
    }

    /// The reply `frame` (converted already) without the entries the rules dropped; an
    /// XREADGROUP reply (`reads_new`) left with none of the run's entries is nil.
    fn without_dropped(&mut self, frame: &mut Frame, reads_new: bool) -> Vec<u8> {
        let dropped = std::mem::take(&mut self.dropped);
        without_entries(frame, &dropped);
        let value = frame.clone().into_value();
        let streams = match value.array().first() {
            Some(Value::Array(_)) => value.array().len(),
            _ => value.array().len() / 2,
        };
        match reads_new && streams <= 1 && self.read_entries(&value).is_empty() {
            true => nil(self.resp),
            false => frame.encode().unwrap_or_default(),
        }
    }

    /// JUSTID claims: the holder's heartbeat or hand-back, or another consumer taking it.
    fn touched(&self, ids: &[String], idle: Option<u64>) {
        let run = &self.run;
        let scale = run.state.clock.scale();
        for id in ids {
            let now = run.state.clock.now();
            let at = match idle {
                None => run.claimable_at(now),
                Some(idle_ms) => {
                    // Idle for `idle_ms` wall milliseconds: claimable `min_idle - idle` on.
                    let idle = (idle_ms as f64 * 1e6 / scale) as Nanos;
                    run.on_tick(now.saturating_add(run.min_idle.saturating_sub(idle)))
                }
            };
            let seen = run.entries.with(id, now, |e| {
                let holds = e.is_current(self.worker);
                if !holds {
                    e.owner = Some(self.worker);
                }
                e.claimable_at = Some(at);
                (e.seq, e.deliveries, holds)
            });
            match seen {
                Some((seq, delivery, true)) if idle.is_some() => {
                    run.state.observed_release(self.worker, seq, delivery, at)
                }
                Some((seq, delivery, true)) => {
                    run.state.observed_extend(self.worker, seq, delivery, at)
                }
                _ => {}
            }
        }
    }

    /// XACK answered `accepted` (how many of `ids` it removed from the pending entries list).
    fn acked(&self, ids: &[String], accepted: i64) {
        let run = &self.run;
        let replaced = |seq, delivery| run.state.replaced(seq, delivery);
        for id in ids {
            let seen = run.entries.with(id, run.state.clock.now(), |e| {
                let was = e.place;
                // With one id the reply says it; with several, an entry still unsettled here
                // is one of those removed.
                let removed = if ids.len() == 1 {
                    accepted == 1
                } else {
                    was == EntryPlace::Unsettled && accepted > 0
                };
                if removed && was == EntryPlace::Unsettled {
                    e.place = EntryPlace::Acked;
                    e.claimable_at = None;
                }
                let outcome = match (removed, e.is_current(self.worker)) {
                    // The handler added the message again: this removes the copy it replaced.
                    (true, true) if replaced(e.seq, e.delivery_of(self.worker)) => {
                        AckOutcome::Superseded
                    }
                    (true, true) => AckOutcome::Deleted,
                    (true, false) => AckOutcome::StaleDeleted,
                    (false, _) => AckOutcome::StaleGone,
                };
                (e.seq, e.delivery_of(self.worker), was, outcome)
            });
            match seen {
                // The ack that completes a move to the dead stream is not the worker's ack.
                Some((_, _, EntryPlace::Dead, AckOutcome::StaleDeleted | AckOutcome::Deleted)) => {}
                Some((seq, delivery, _, outcome)) => {
                    run.state.observed_ack(self.worker, seq, delivery, outcome)
                }
                None => {}
            }
        }
    }

    /// The entry `id` was added to the dead stream.
    fn dead(&self, id: &str) {
        let now = self.run.state.clock.now();
        let moved = self.run.entries.with(id, now, |e| {
            let first = e.place != EntryPlace::Dead;
            e.place = EntryPlace::Dead;
            e.claimable_at = None;
            first.then_some((e.seq, e.deliveries))
        });
        if let Some(Some((seq, delivery))) = moved {
            self.run
                .state
                .record(EventKind::DeadLettered { seq, delivery });
        }
    }
}

impl Connection for RespConnection {
    fn from_worker(&mut self, bytes: &[u8], forward: &mut Vec<u8>) -> Flow {
        if self.blind {
            forward.extend_from_slice(bytes);
            return Flow::Go;
        }
        self.up.extend_from_slice(bytes);
        let mut used = 0;
        loop {
            if let Err(e) = check(&self.up[used..], &COMMANDS) {
                let why = format!("the worker sent {e}");
                self.refusal = Some(Refusal {
                    why,
                    to_worker: e.answer(),
                });
                used = self.up.len();
                break;
            }
            match decode(&self.up[used..], Resp::Two) {
                Ok(Some((v, n))) => {
                    let raw = used..used + n;
                    used += n;
                    let Some(mut args) = command_args(v) else {
                        forward.extend_from_slice(&self.up[raw]);
                        self.expected.push_back(Expect::Nothing);
                        continue;
                    };
                    let (changed, retime) = match &self.run.wire {
                        Some(w) => w.command(&mut args),
                        None => (false, None),
                    };
                    let text: Vec<String> = args
                        .iter()
                        .map(|a| String::from_utf8_lossy(a).into_owned())
                        .collect();
                    if text[0].eq_ignore_ascii_case("XACK") {
                        if let Some(in_place) = self.ack_under_rules(&text) {
                            forward.extend_from_slice(&in_place);
                            continue;
                        }
                    }
                    match changed.then(|| encode_command(&args)) {
                        Some(Ok(converted)) => forward.extend_from_slice(&converted),
                        _ => forward.extend_from_slice(&self.up[raw]),
                    }
                    self.command(&text, retime);
                }
                Ok(None) => break,
                Err(_) => {
                    self.blind = true;
                    forward.extend_from_slice(&self.up[used..]);
                    used = self.up.len();
                    break;
                }
            }
        }
        self.up.drain(..used);
        Flow::Go
    }

    fn from_server(&mut self, bytes: &[u8], forward: &mut Vec<u8>) -> Flow {
        // Replies made up for the worker whose turn came go before any still to come.
        self.held.take_ready(forward);
        if self.blind {
            forward.extend_from_slice(&self.down);
            self.down.clear();
            forward.extend_from_slice(bytes);
            return Flow::Go;
        }
        self.down.extend_from_slice(bytes);
        let mut used = 0;
        let mut flow = Flow::Go;
        loop {
            // The reply to HELLO is in the protocol it asks for.
            let resp = match self.expected.front() {
                Some(Expect::Hello(r)) => *r,
                _ => self.resp,
            };
            if let Err(e) = check(&self.down[used..], &REPLIES) {
                let why = format!("the server sent {e}, which the proxy does not read");
                self.refusal = Some(Refusal {
                    why,
                    to_worker: Vec::new(),
                });
                used = self.down.len();
                break;
            }
            match decode_frame(&self.down[used..], resp) {
                Ok(Some((mut frame, n))) => {
                    let raw = used..used + n;
                    used += n;
                    if frame.is_push() {
                        forward.extend_from_slice(&self.down[raw]);
                        continue;
                    }
                    let e = self.expected.pop_front().unwrap_or(Expect::Nothing);
                    let retimed = match &self.run.wire {
                        Some(w) => retime(w, &e, &mut frame),
                        None => false,
                    };
                    let counted = kept_counts(&e, &mut frame);
                    // Converted, before encoding (which puts RESP3 maps in wire order in place).
                    let kept = self.deliveries_faulted.then(|| frame.clone());
                    let converted = (retimed | counted).then(|| frame.encode().ok()).flatten();
                    // The reply to a delayed XACK of the proxy's: the worker had its answer.
                    let late = matches!(e, Expect::Late(_));
                    // A reply the run reads nothing of is only measured, not made into a value.
                    let read = !matches!(e, Expect::Nothing | Expect::Queued | Expect::Retime(_));
                    let reads_new = matches!(e, Expect::ReadNew);
                    if read && self.reply(e, &frame.into_value()) {
                        flow = Flow::Cut;
                        break;
                    }
                    let converted = match (kept, self.dropped.is_empty()) {
                        (Some(mut frame), false) => {
                            Some(self.without_dropped(&mut frame, reads_new))
                        }
                        _ => converted,
                    };
                    match (late, converted) {
                        (true, _) => {}
                        (false, Some(bytes)) => forward.extend_from_slice(&bytes),
                        (false, None) => forward.extend_from_slice(&self.down[raw]),
                    }
                    self.made_up_turns();
                    self.held.take_ready(forward);
                }
                Ok(None) => break,
                Err(_) => {
                    self.blind = true;
                    forward.extend_from_slice(&self.down[used..]);
                    used = self.down.len();
                    break;
                }
            }
        }
        self.down.drain(..used);
        flow
    }

    fn refusal(&mut self) -> Option<Refusal> {
        self.refusal.take()
    }

    fn next_due(&self, dir: Direction) -> Option<Instant> {
        match dir {
            Direction::ToWorker => self.held.has_ready().then(Instant::now),
            Direction::ToBroker if self.multi.is_some() || self.blind => None,
            Direction::ToBroker => self.held.next_later(),
        }
    }

    fn due(&mut self, dir: Direction, now: Instant, forward: &mut Vec<u8>) -> Flow {
        match dir {
            Direction::ToWorker => {
                self.held.take_ready(forward);
                Flow::Go
            }
            Direction::ToBroker => self.acks_due(now, forward),
        }
    }
}

/// Converts the durations of a reply that expected `e` (the replies queued in a transaction
/// included): true when any were.
fn retime(wire: &WireTime, e: &Expect, frame: &mut Frame) -> bool {
    match frame {
        Frame::Two(f) => retime_in(wire, e, f),
        Frame::Three(f) => retime_in(wire, e, f),
    }
}

fn retime_in<F: Reply>(wire: &WireTime, e: &Expect, f: &mut F) -> bool {
    match e {
        Expect::Retime(r) => {
            wire.retime(*r, f);
            true
        }
        Expect::Exec(queued) => queued
            .iter()
            .zip(f.items_mut())
            .fold(false, |any, (e, f)| retime_in(wire, e, f) | any),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::super::ack_fault_tests::{bulk, cmd, observed};
    use super::*;
    use crate::chaos::kill_worker::KillSchedule;
    use crate::provider::http::LiveClock;

    /// `[[id, [body, x]]]`: one entry of a stream reply.
    fn entry(id: &str) -> String {
        format!(
            "*1\r\n*2\r\n{}*2\r\n{}{}",
            bulk(id),
            bulk("body"),
            bulk("x")
        )
    }

    fn run() -> (Arc<LiveState>, Arc<Observed>) {
        run_with(1.0, None)
    }

    fn run_with(scale: f64, wire: Option<WireTime>) -> (Arc<LiveState>, Arc<Observed>) {
        let state = LiveState::new(LiveClock::new(scale), "s", 3, KillSchedule::new(&[], 1));
        let run = observed(&state, wire);
        (state, run)
    }

    /// Sends `command` from worker `w` and the server's `reply` back; what reached the worker.
    fn exchange(c: &mut dyn Connection, command: &[&str], reply: &str) -> (Vec<u8>, Flow) {
        let mut fwd = Vec::new();
        c.from_worker(&cmd(command), &mut fwd);
        assert_eq!(fwd, cmd(command), "commands pass on unchanged");
        let mut back = Vec::new();
        let flow = c.from_server(reply.as_bytes(), &mut back);
        (back, flow)
    }

    use crate::runner::live::proxy::observed_lines as outcomes;

    #[tokio::test]
    async fn reads_claims_acks_and_moves_to_the_dead_stream_are_observed() {
        let (state, run) = run();
        let proto = RespProtocol(run.clone());
        let (mut w1, mut w2) = (proto.connection(1), proto.connection(2));
        let read = [
            "XREADGROUP",
            "GROUP",
            "g",
            "c1",
            "COUNT",
            "1",
            "BLOCK",
            "5",
            "STREAMS",
            "s",
            ">",
        ];
        // Worker 1 reads entry 0-1 (delivery 1); the reply comes in two pieces and only the
        // complete frame is forwarded.
        let reply = format!("*1\r\n*2\r\n{}{}", bulk("s"), entry("0-1"));
        let mut fwd = Vec::new();
        w1.from_worker(&cmd(&read), &mut fwd);
        let mut back = Vec::new();
        w1.from_server(&reply.as_bytes()[..9], &mut back);
        assert!(back.is_empty());
        w1.from_server(&reply.as_bytes()[9..], &mut back);
        assert_eq!(back, reply.as_bytes());
        // Worker 2 claims it (delivery 2), worker 2 heartbeats it (XCLAIM to itself, JUSTID).
        let claim = ["XCLAIM", "s", "g", "c2", "1500", "0-1"];
        exchange(&mut *w2, &claim, &entry("0-1"));
        let beat = ["XCLAIM", "s", "g", "c2", "0", "0-1", "JUSTID"];
        exchange(&mut *w2, &beat, &format!("*1\r\n{}", bulk("0-1")));
        // Worker 1's late XACK still removes it (1: a stale ack that deletes); worker 2's XACK
        // then returns 0 (stale, the entry is gone).
        exchange(&mut *w1, &["XACK", "s", "g", "0-1"], ":1\r\n");
        exchange(&mut *w2, &["XACK", "s", "g", "0-1"], ":0\r\n");
        // Entry 0-2: read by worker 2, then worker 1 takes it (JUSTID, no delivery), adds it
        // to the dead stream and acks it: dead-lettered at delivery 1, no ack recorded.
        let read2 = format!("*1\r\n*2\r\n{}{}", bulk("s"), entry("0-2"));
        exchange(&mut *w2, &read, &read2);
        let grab = ["XCLAIM", "s", "g", "c1", "1500", "0-2", "JUSTID"];
        exchange(&mut *w1, &grab, &format!("*1\r\n{}", bulk("0-2")));
        let add = ["XADD", "s:dead", "*", "id", "0-2", "deliveries", "1"];
        exchange(&mut *w1, &add, &bulk("1-0"));
        exchange(&mut *w1, &["XACK", "s", "g", "0-2"], ":1\r\n");
        assert_eq!(
            outcomes(&state.take_events()),
            [
                "deliver 1.1 to 1",
                "deliver 1.2 to 2",
                "touch 1 by 2",
                "ack 1.1 by 1: StaleDeleted",
                "ack 1.2 by 2: StaleGone",
                "deliver 2.1 to 2",
                "dead 2.1",
            ]
        );
    }

    #[tokio::test]
    async fn after_hello_3_replies_are_read_as_resp3() {
        let (state, run) = run();
        let mut w1 = RespProtocol(run).connection(1);
        // HELLO 3 is answered in RESP3 (a map); XREADGROUP's reply then is a map of streams.
        let hello = format!("%1\r\n{}:3\r\n", bulk("proto"));
        let (back, _) = exchange(&mut *w1, &["HELLO", "3"], &hello);
        assert_eq!(back, hello.as_bytes());
        let read = ["XREADGROUP", "GROUP", "g", "c1", "STREAMS", "s", ">"];
        let reply = format!("%1\r\n{}{}", bulk("s"), entry("0-2"));
        exchange(&mut *w1, &read, &reply);
        assert_eq!(outcomes(&state.take_events()), ["deliver 2.1 to 1"]);
    }

    #[tokio::test]
    async fn pipelined_and_transaction_replies_pair_with_their_commands() {
        let (state, run) = run();
        let mut w1 = RespProtocol(run).connection(1);
        // XAUTOCLAIM and XACK pipelined: [cursor, [entries], []] then 1.
        let mut fwd = Vec::new();
        let mut both = cmd(&["XAUTOCLAIM", "s", "g", "c1", "1500", "0-0", "COUNT", "1"]);
        both.extend(cmd(&["MULTI"]));
        both.extend(cmd(&["XACK", "s", "g", "0-1"]));
        both.extend(cmd(&["EXEC"]));
        w1.from_worker(&both, &mut fwd);
        let replies = format!(
            "*3\r\n{}{}*0\r\n+OK\r\n+QUEUED\r\n*1\r\n:1\r\n",
            bulk("0-0"),
            entry("0-1")
        );
        let mut back = Vec::new();
        assert_eq!(w1.from_server(replies.as_bytes(), &mut back), Flow::Go);
        assert_eq!(back, replies.as_bytes());
        assert_eq!(
            outcomes(&state.take_events()),
            ["deliver 1.1 to 1", "ack 1.1 by 1: Deleted"]
        );
    }

    /// Sends `command` from a worker; what reached the server.
    fn sent(c: &mut dyn Connection, command: &[&str]) -> Vec<u8> {
        let mut fwd = Vec::new();
        c.from_worker(&cmd(command), &mut fwd);
        fwd
    }

    #[tokio::test]
    async fn a_scaled_consumers_durations_are_converted_and_its_deliveries_still_observed() {
        // time_scale 0.05: 20 profile ms per wall ms.
        let (state, run) = run_with(0.05, Some(WireTime::new(0.05, 1_000_000.0)));
        let mut w1 = RespProtocol(run).connection(1);
        // BLOCK 1000 profile ms reaches the server as 50 wall ms; the reply is read as always:
        // entry 0-1 is delivery 1. A command in two pieces goes on once complete.
        let read = [
            "XREADGROUP",
            "GROUP",
            "g",
            "c1",
            "BLOCK",
            "1000",
            "STREAMS",
            "s",
            ">",
        ];
        let bytes = cmd(&read);
        let mut fwd = Vec::new();
        w1.from_worker(&bytes[..7], &mut fwd);
        assert!(fwd.is_empty());
        w1.from_worker(&bytes[7..], &mut fwd);
        assert_eq!(
            fwd,
            cmd(&[
                "XREADGROUP",
                "GROUP",
                "g",
                "c1",
                "BLOCK",
                "50",
                "STREAMS",
                "s",
                ">"
            ])
        );
        let reply = format!("*1\r\n*2\r\n{}{}", bulk("s"), entry("0-1"));
        let mut back = Vec::new();
        w1.from_server(reply.as_bytes(), &mut back);
        assert_eq!(back, reply.as_bytes());
        // XPENDING IDLE 30000 -> 1500; its reply's idle 1600 wall ms is 32 000 profile ms. The
        // same inside MULTI/EXEC, beside an XACK that is still observed.
        assert_eq!(
            sent(
                &mut *w1,
                &["XPENDING", "s", "g", "IDLE", "30000", "-", "+", "16"]
            ),
            cmd(&["XPENDING", "s", "g", "IDLE", "1500", "-", "+", "16"])
        );
        let pending =
            |idle: u32| format!("*1\r\n*4\r\n{}{}:{idle}\r\n:1\r\n", bulk("0-1"), bulk("c1"));
        let mut back = Vec::new();
        w1.from_server(pending(1600).as_bytes(), &mut back);
        assert_eq!(back, pending(32_000).as_bytes());
        let mut fwd = Vec::new();
        let mut tx = cmd(&["MULTI"]);
        tx.extend(cmd(&["XPENDING", "s", "g", "-", "+", "16"]));
        tx.extend(cmd(&["XACK", "s", "g", "0-1"]));
        tx.extend(cmd(&["EXEC"]));
        w1.from_worker(&tx, &mut fwd);
        assert_eq!(fwd, tx, "nothing to convert in these commands");
        let replies =
            |idle: u32| format!("+OK\r\n+QUEUED\r\n+QUEUED\r\n*2\r\n{}:1\r\n", pending(idle));
        let mut back = Vec::new();
        w1.from_server(replies(5).as_bytes(), &mut back);
        assert_eq!(back, replies(100).as_bytes());
        // TTL goes as PTTL; 1499 wall ms to live is 29.98 profile s: 30.
        assert_eq!(sent(&mut *w1, &["TTL", "k"]), cmd(&["PTTL", "k"]));
        let mut back = Vec::new();
        w1.from_server(b":1499\r\n", &mut back);
        assert_eq!(back, b":30\r\n");
        assert_eq!(
            outcomes(&state.take_events()),
            ["deliver 1.1 to 1", "ack 1.1 by 1: Deleted"]
        );
    }

    #[tokio::test]
    async fn a_scaled_consumers_hand_back_is_observed_from_its_wall_idle() {
        // IDLE 10 000 profile ms on a JUSTID XCLAIM by the holder reaches the server as 500
        // wall ms: the entry is claimable 30 s - 10 s = 20 s of profile time on.
        let (state, run) = run_with(0.05, Some(WireTime::new(0.05, 0.0)));
        let mut w1 = RespProtocol(run).connection(1);
        let read = ["XREADGROUP", "GROUP", "g", "c1", "STREAMS", "s", ">"];
        exchange(
            &mut *w1,
            &read,
            &format!("*1\r\n*2\r\n{}{}", bulk("s"), entry("0-1")),
        );
        let back = [
            "XCLAIM", "s", "g", "c1", "0", "0-1", "IDLE", "10000", "JUSTID",
        ];
        assert_eq!(
            sent(&mut *w1, &back),
            cmd(&["XCLAIM", "s", "g", "c1", "0", "0-1", "IDLE", "500", "JUSTID"])
        );
        let mut fwd = Vec::new();
        w1.from_server(format!("*1\r\n{}", bulk("0-1")).as_bytes(), &mut fwd);
        let released = state.take_events().into_iter().find_map(|e| match e.kind {
            EventKind::VisibilityChanged { lease_end, .. } => Some((lease_end, e.at)),
            _ => None,
        });
        let (visible_at, at) = released.expect("a hand-back");
        assert!(
            visible_at.abs_diff(at + 20_000_000_000) < 1_000_000_000,
            "claimable 20 s after {at}: {visible_at}"
        );
    }

    #[tokio::test]
    async fn a_scaled_consumers_resp3_replies_are_converted() {
        let (_state, run) = run_with(0.05, Some(WireTime::new(0.05, 0.0)));
        let mut w1 = RespProtocol(run).connection(1);
        let hello = format!("%1\r\n{}:3\r\n", bulk("proto"));
        exchange(&mut *w1, &["HELLO", "3"], &hello);
        // XINFO CONSUMERS in RESP3: a map per consumer; idle 75 wall ms is 1500 profile ms.
        sent(&mut *w1, &["XINFO", "CONSUMERS", "s", "g"]);
        let info = |idle: u32| {
            format!(
                "*1\r\n%2\r\n{}{}{}:{idle}\r\n",
                bulk("name"),
                bulk("c1"),
                bulk("idle")
            )
        };
        let mut back = Vec::new();
        w1.from_server(info(75).as_bytes(), &mut back);
        assert_eq!(back, info(1500).as_bytes());
    }
}
