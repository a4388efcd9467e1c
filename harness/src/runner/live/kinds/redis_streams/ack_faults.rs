//! `message` faults on acks in the RESP proxy: an entry of a worker's XACK the rules select is
//! kept from the server (`drop_ack`) or sent `delay` later (`delay_ack`), as an XACK of that
//! entry alone on the worker's connection.
//!
//! XACK has a reply, and RESP replies pair with the commands in order, so the proxy answers
//! the worker in the server's place, in its turn among the replies still to come: the count of
//! entries removed, each kept one counted as removed (`:1` for an XACK of one entry), as the
//! server answers for an entry the consumer holds. An XACK of several entries of which some are
//! kept goes on with the others alone, and its reply is the server's count plus the kept ones.
//! Inside MULTI the proxy answers `QUEUED` for an XACK kept whole, and EXEC's reply gets its
//! count at its place in the array. The server's reply to a delayed XACK, when it comes, is
//! read (1: the entry was still pending, removed; 0: acked or gone already, a stale ack) and not
//! passed on: the worker had its answer.
//!
//! A delayed XACK goes on between two whole commands, never inside a worker's MULTI; Redis runs
//! a connection's commands in order, so one that comes due while the worker waits in a blocking
//! XREADGROUP runs when that read returns. An XACK kept when the connection ends never reaches
//! the server. The XACK that completes a move to the dead stream is not the worker's ack: the
//! rules are not asked about it.

use std::time::Instant;

use super::entries::EntryPlace;
use super::proxy::{Expect, RespConnection};
use super::resp::{encode_command, Frame, Reply};
use crate::runner::live::proxy::Flow;
use crate::runner::live::state::HeldAck;

/// The acks one connection keeps and the replies it made up.
#[derive(Debug, Default)]
pub(super) struct HeldAcks {
    /// Delayed XACKs: when each goes on, its bytes, its entry.
    later: Vec<(Instant, Vec<u8>, String)>,
    /// Replies made up for the worker whose turn came: they go on at once.
    ready: Vec<u8>,
}

impl HeldAcks {
    /// When the next delayed XACK is due.
    pub(super) fn next_later(&self) -> Option<Instant> {
        self.later.iter().map(|l| l.0).min()
    }

    /// Whether replies made up for the worker wait to go on.
    pub(super) fn has_ready(&self) -> bool {
        !self.ready.is_empty()
    }

    /// The replies made up for the worker whose turn came, taken out.
    pub(super) fn take_ready(&mut self, forward: &mut Vec<u8>) {
        forward.append(&mut self.ready);
    }
}

impl RespConnection {
    /// The worker's XACK `args` of the run's stream, under the rules: `None` when it goes on as
    /// it is, else what goes on to the server in its place (nothing, or an XACK of the entries
    /// not kept). What its reply will say is noted here.
    pub(super) fn ack_under_rules(&mut self, args: &[String]) -> Option<Vec<u8>> {
        let run = self.run.clone();
        if args.len() < 4 || args[1] != run.stream || !run.state.message_faults_on_acks() {
            return None;
        }
        let mut passed = Vec::new();
        let mut kept = 0i64;
        for id in &args[3..] {
            let holds = run.entries.with(id, run.state.clock.now(), |e| {
                let delivery = e.held.get(&self.worker).copied();
                delivery
                    .filter(|_| e.place != EntryPlace::Dead)
                    .map(|d| (e.seq, d))
            });
            let fault = holds.flatten().and_then(|(seq, delivery)| {
                let fault = run.state.ack_fault(self.worker, seq, delivery)?;
                run.state.observed_held_ack(self.worker, seq, delivery);
                Some(fault)
            });
            match fault {
                None => passed.push(id.clone()),
                Some(HeldAck::Dropped) => kept += 1,
                Some(HeldAck::Later(d)) => {
                    kept += 1;
                    let xack = xack(&args[1], &args[2], std::slice::from_ref(id));
                    self.held.later.push((Instant::now() + d, xack, id.clone()));
                }
            }
        }
        if kept == 0 {
            return None;
        }
        let in_tx = self.multi.is_some();
        let (goes_on, expect) = match passed.is_empty() {
            true if in_tx => (Vec::new(), Expect::MadeUp(b"+QUEUED\r\n".to_vec())),
            true => (
                Vec::new(),
                Expect::MadeUp(format!(":{kept}\r\n").into_bytes()),
            ),
            false => (
                xack(&args[1], &args[2], &passed),
                Expect::AckKept { ids: passed, kept },
            ),
        };
        match (&mut self.multi, expect) {
            (Some(queued), Expect::MadeUp(queued_reply)) => {
                queued.push(Expect::KeptInTx(kept));
                self.expected.push_back(Expect::MadeUp(queued_reply));
            }
            (Some(queued), e) => {
                queued.push(e);
                self.expected.push_back(Expect::Queued);
            }
            (None, e) => self.expected.push_back(e),
        }
        self.made_up_turns();
        Some(goes_on)
    }

    /// The replies made up for the worker at the front of the reply order go on now.
    pub(super) fn made_up_turns(&mut self) {
        while let Some(Expect::MadeUp(_)) = self.expected.front() {
            if let Some(Expect::MadeUp(bytes)) = self.expected.pop_front() {
                self.held.ready.extend_from_slice(&bytes);
            }
        }
    }

    /// The delayed XACKs due at `now` go on to the server (not inside the worker's MULTI);
    /// their replies will be read, not passed on.
    pub(super) fn acks_due(&mut self, now: Instant, forward: &mut Vec<u8>) -> Flow {
        if self.multi.is_some() || self.blind {
            return Flow::Go;
        }
        let mut due: Vec<_> = Vec::new();
        self.held.later.retain(|l| match l.0 <= now {
            true => {
                due.push(l.clone());
                false
            }
            false => true,
        });
        due.sort_by_key(|l| l.0);
        for (_, bytes, id) in due {
            forward.extend_from_slice(&bytes);
            self.expected.push_back(Expect::Late(vec![id]));
        }
        Flow::Go
    }
}

/// `XACK stream group ids...` as the wire lays it out.
fn xack(stream: &str, group: &str, ids: &[String]) -> Vec<u8> {
    let mut args = vec![b"XACK".to_vec(), stream.into(), group.into()];
    args.extend(ids.iter().map(|id| id.as_bytes().to_vec()));
    encode_command(&args).unwrap_or_default()
}

/// Puts the counts of kept XACKs into a reply that expected `e`: an XACK's count plus its kept
/// entries, EXEC's array with each XACK kept whole at its place. True when any changed.
pub(super) fn kept_counts(e: &Expect, frame: &mut Frame) -> bool {
    use redis_protocol::resp2::types::OwnedFrame as Frame2;
    use redis_protocol::resp3::types::OwnedFrame as Frame3;
    let array = matches!(
        frame,
        Frame::Two(Frame2::Array(_)) | Frame::Three(Frame3::Array { .. })
    );
    // An aborted transaction (nil, an error): nothing ran, nothing to put in.
    if matches!(e, Expect::Exec(_)) && !array {
        return false;
    }
    match frame {
        Frame::Two(f) => kept_in(e, f),
        Frame::Three(f) => kept_in(e, f),
    }
}

fn kept_in<F: Reply>(e: &Expect, f: &mut F) -> bool {
    match e {
        Expect::AckKept { kept, .. } => match f.int_mut() {
            Some(n) => {
                *n += kept;
                true
            }
            None => false,
        },
        Expect::Exec(queued) => {
            let mut changed = false;
            for (i, e) in queued.iter().enumerate() {
                match e {
                    Expect::KeptInTx(kept) => {
                        f.insert_int(i, *kept);
                        changed = true;
                    }
                    Expect::AckKept { .. } => {
                        if let Some(item) = f.items_mut().get_mut(i) {
                            changed |= kept_in(e, item);
                        }
                    }
                    _ => {}
                }
            }
            changed
        }
        _ => false,
    }
}
