//! The effect ledger: every provider call (key, delivery, worker, start, end, outcome) and every
//! effect. Effect counts come from here and nowhere else.
//!
//! A call has its effect when the provider does its work ([`CallStart::works`]: an accepted
//! call, or an error or hang after the effect), at the instant `effect_at` says: as it arrives
//! (`request`), or as its answer leaves (`response`; for a hang after the effect, when its
//! answer would have left). A call abandoned or timed out before that instant never has it.
//!
//! A streamed sim run ([`EffectLedger::streaming`]) keeps only the calls still open; what
//! happened since it was last taken ([`EffectLedger::recorded`]: calls started, effects, calls
//! that can no longer have an effect) is handed to the run's streaming accounting.

use std::collections::HashSet;

use crate::profile::EffectAt;
use crate::record::{
    Batched, CallOutcome, CallRecord, EffectRecord, EffectSource, Ledger, Nanos, Seq, StartedCall,
    WorkerId,
};
use crate::seq_window::SeqWindow;

/// A call's id: its index in the ledger (a streamed ledger: its number, never reused).
pub type CallId = usize;

/// Records calls and effects as they happen.
#[derive(Debug, Clone)]
pub struct EffectLedger {
    effect_at: EffectAt,
    ledger: Ledger,
    /// Whether each message (bit seq - 1) has had an effect: for progress only.
    effected: Vec<u64>,
    messages_with_effect: u64,
    effects: u64,
    /// A streamed ledger's open calls and what it has not handed over yet.
    open: Option<OpenCalls>,
    /// Open calls whose effect is still to come (`effect_at: response`, the work done).
    pending: HashSet<CallId>,
}

/// What a streamed ledger keeps.
#[derive(Debug, Clone, Default)]
struct OpenCalls {
    /// The open calls by number (call id + 1): calls are numbered as they start and mostly
    /// end in about that order, as messages are published and settle.
    calls: SeqWindow<CallRecord>,
    /// Calls started and not handed over yet, each with whether it can still have an effect.
    started: Vec<StartedCall>,
    /// Messages of calls that could have had an effect and no longer can, not handed over yet.
    closed: Vec<Option<Seq>>,
}

pub use crate::record::Recorded;

/// The number a streamed ledger keeps open call `id` under; `None` beyond any it numbered.
fn number(id: CallId) -> Option<Seq> {
    Seq::try_from(id + 1).ok()
}

/// A call as it arrives at the provider.
#[derive(Debug, Clone)]
pub struct CallStart {
    pub seq: Option<Seq>,
    /// `None` when the key is message `seq`'s ([`CallRecord::key`]).
    pub key: Option<String>,
    pub worker: WorkerId,
    pub delivery: u32,
    pub at: Nanos,
    /// What the provider will answer (`Accepted`, `Error` or `Reset`).
    pub outcome: CallOutcome,
    /// Whether the provider does the call's work ([`crate::provider::CallPlan::works`]).
    pub works: bool,
}

impl EffectLedger {
    pub fn new(effect_at: EffectAt) -> EffectLedger {
        EffectLedger {
            effect_at,
            ledger: Ledger::default(),
            effected: Vec::new(),
            messages_with_effect: 0,
            effects: 0,
            open: None,
            pending: HashSet::new(),
        }
    }

    /// A ledger that keeps only the open calls and hands everything else over
    /// ([`EffectLedger::recorded`]).
    pub fn streaming(effect_at: EffectAt) -> EffectLedger {
        EffectLedger {
            open: Some(OpenCalls::default()),
            ..EffectLedger::new(effect_at)
        }
    }

    /// Room for `calls` more calls and as many effects (a sim run reserves one per message).
    pub fn reserve(&mut self, calls: usize) {
        if self.open.is_none() {
            self.ledger.calls.reserve(calls);
            self.ledger.effects.reserve(calls);
        }
    }

    /// A call arrived. With `effect_at: request` a call the provider works on has its effect
    /// now; with `response` it has it later ([`EffectLedger::answer`], [`EffectLedger::work_done`]).
    pub fn start_call(&mut self, c: CallStart) -> CallId {
        if self.effect_at == EffectAt::Request && c.works {
            self.effect(c.seq, c.at, c.worker, c.delivery, EffectSource::Provider);
        }
        let may_have_effect = self.effect_at == EffectAt::Response && c.works;
        let record = CallRecord {
            seq: c.seq,
            key: c.key,
            worker: c.worker,
            delivery: c.delivery,
            started: c.at,
            ended: None,
            outcome: c.outcome,
        };
        let id = if let Some(open) = &mut self.open {
            open.started.push(StartedCall {
                seq: record.seq,
                delivery: record.delivery,
                may_have_effect,
                fails_from: record.outcome.is_failure().then_some(record.started),
            });
            open.calls.push(record) as CallId - 1
        } else {
            self.ledger.calls.push(record);
            self.ledger.calls.len() - 1
        };
        if may_have_effect {
            self.pending.insert(id);
        }
        id
    }

    /// The call's message, worker and delivery (`None` for a call a streamed ledger no longer
    /// holds).
    fn call_of(&self, id: CallId) -> Option<(Option<Seq>, WorkerId, u32)> {
        let c = match &self.open {
            Some(open) => open.calls.get(number(id)?)?,
            None => self.ledger.calls.get(id)?,
        };
        Some((c.seq, c.worker, c.delivery))
    }

    /// The call's effect, if it is still to come: it happens at `at`.
    fn settle(&mut self, id: CallId, at: Nanos) {
        if !self.pending.remove(&id) {
            return;
        }
        if let Some((seq, worker, delivery)) = self.call_of(id) {
            self.effect(seq, at, worker, delivery, EffectSource::Provider);
            if let Some(open) = &mut self.open {
                open.closed.push(seq);
            }
        }
    }

    /// The provider's answer reached the caller (its status, or its connection closed). With
    /// `effect_at: response` a call the provider works on has its effect now. Returns the
    /// call's message and delivery (`None` for a call a streamed ledger no longer holds).
    pub fn answer(&mut self, id: CallId, at: Nanos) -> Option<(Option<Seq>, u32)> {
        self.settle(id, at);
        match &mut self.open {
            Some(open) => {
                let c = open.calls.take(number(id)?)?;
                Some((c.seq, c.delivery))
            }
            None => {
                let c = &mut self.ledger.calls[id];
                c.ended = Some(at);
                Some((c.seq, c.delivery))
            }
        }
    }

    /// A hung call's answer would have left now, its work done: with `effect_at: response` it
    /// has its effect now (if its caller still waits). It stays open, never answered.
    pub fn work_done(&mut self, id: CallId, at: Nanos) {
        self.settle(id, at);
    }

    /// The caller died (or gave up) before the answer: the call is marked and, with
    /// `effect_at: response`, never has an effect. A streamed ledger lets the call go: an
    /// abandoned or timed-out call is never answered.
    pub fn abandon(&mut self, id: CallId, how: CallOutcome) {
        let pending = self.pending.remove(&id);
        if let Some(open) = &mut self.open {
            let Some(c) = number(id).and_then(|n| open.calls.take(n)) else {
                return;
            };
            if pending {
                open.closed.push(c.seq);
            }
            return;
        }
        let c = &mut self.ledger.calls[id];
        if c.ended.is_none() {
            c.outcome = how;
        }
    }

    /// An effect observed outside a provider call (a store-backed target's row).
    pub fn effect(
        &mut self,
        seq: Option<Seq>,
        at: Nanos,
        worker: WorkerId,
        delivery: u32,
        source: EffectSource,
    ) {
        if let Some(i) = seq.and_then(|s| s.checked_sub(1)).map(|i| i as usize) {
            let (word, bit) = (i / 64, 1u64 << (i % 64));
            if word >= self.effected.len() {
                self.effected.resize(word + 1, 0);
            }
            if self.effected[word] & bit == 0 {
                self.effected[word] |= bit;
                self.messages_with_effect += 1;
            }
        }
        self.effects += 1;
        self.ledger.effects.push(EffectRecord {
            seq,
            at,
            worker,
            delivery,
            source,
        });
    }

    /// What a streamed ledger recorded and has not handed over yet (the calls started, the
    /// effects, the calls closed), each list growing until its caller takes it: what is
    /// taken out of them is handed over; beside them the broker's `batched` (the run's, handed
    /// over with them). A full ledger hands over nothing (it keeps everything).
    pub fn recorded<'a>(&'a mut self, batched: &'a mut Vec<Batched>) -> Option<Recorded<'a>> {
        let open = self.open.as_mut()?;
        Some(Recorded {
            started: &mut open.started,
            effects: &mut self.ledger.effects,
            closed: &mut open.closed,
            batched,
        })
    }

    /// Marks every call still without an answer as abandoned (the run is over).
    pub fn abandon_open(&mut self) {
        for c in &mut self.ledger.calls {
            if c.ended.is_none()
                && matches!(
                    c.outcome,
                    CallOutcome::Accepted | CallOutcome::Error(_) | CallOutcome::Reset
                )
            {
                c.outcome = CallOutcome::Abandoned;
            }
        }
    }

    /// Effects so far and, of those, the ones beyond the first for their key (a running count
    /// for progress display; the summary recounts from the ledger).
    pub fn running_counts(&self) -> (u64, u64) {
        (
            self.effects,
            self.effects.saturating_sub(self.messages_with_effect),
        )
    }

    /// The ledger (a streamed one's is empty: what it recorded was handed over).
    pub fn into_ledger(self) -> Ledger {
        match self.open {
            Some(_) => Ledger::default(),
            None => self.ledger,
        }
    }

    pub fn ledger(&self) -> &Ledger {
        &self.ledger
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn start(l: &mut EffectLedger, outcome: CallOutcome) -> CallId {
        l.start_call(CallStart {
            seq: Some(1),
            key: Some("msg-1".into()),
            worker: 1,
            delivery: 1,
            at: 5,
            outcome,
            works: outcome == CallOutcome::Accepted,
        })
    }

    #[test]
    fn effect_at_request_counts_on_arrival_even_if_abandoned() {
        let mut l = EffectLedger::new(EffectAt::Request);
        let id = start(&mut l, CallOutcome::Accepted);
        assert_eq!(l.ledger().effects.len(), 1);
        l.abandon(id, CallOutcome::Abandoned);
        assert_eq!(l.ledger().effects.len(), 1);
        assert_eq!(l.ledger().calls[0].outcome, CallOutcome::Abandoned);
    }

    #[test]
    fn effect_at_response_needs_the_answer() {
        let mut l = EffectLedger::new(EffectAt::Response);
        let a = start(&mut l, CallOutcome::Accepted);
        let b = start(&mut l, CallOutcome::Accepted);
        let e = start(&mut l, CallOutcome::Error(503));
        assert!(l.ledger().effects.is_empty());
        l.answer(a, 9);
        l.abandon(b, CallOutcome::Abandoned);
        l.answer(e, 9);
        assert_eq!(l.ledger().effects.len(), 1);
        assert_eq!(l.ledger().effects[0].at, 9);
    }

    fn start_working(l: &mut EffectLedger, outcome: CallOutcome, at: Nanos) -> CallId {
        l.start_call(CallStart {
            seq: Some(1),
            key: None,
            worker: 1,
            delivery: 1,
            at,
            outcome,
            works: true,
        })
    }

    #[test]
    fn an_error_after_the_effect_has_it_where_effect_at_says() {
        // request: a 503 and a reset after the effect, each its effect on arrival (5 s, 6 s);
        // a 503 instead of the work (works: false), none. 2 effects, both before any answer.
        let mut l = EffectLedger::new(EffectAt::Request);
        let a = start_working(&mut l, CallOutcome::Error(503), 5);
        let b = start_working(&mut l, CallOutcome::Reset, 6);
        let c = start(&mut l, CallOutcome::Error(503));
        let at: Vec<Nanos> = l.ledger().effects.iter().map(|e| e.at).collect();
        assert_eq!(at, vec![5, 6]);
        l.answer(a, 9);
        l.answer(b, 9);
        l.answer(c, 9);
        assert_eq!(l.ledger().effects.len(), 2);
        assert_eq!(l.ledger().calls[1].outcome, CallOutcome::Reset);
        // response: the 503 after the effect has it as its answer leaves (9 s); the reset
        // after the effect is abandoned first (its caller died): none. 1 effect.
        let mut l = EffectLedger::new(EffectAt::Response);
        let a = start_working(&mut l, CallOutcome::Error(503), 5);
        let b = start_working(&mut l, CallOutcome::Reset, 6);
        assert!(l.ledger().effects.is_empty());
        l.abandon(b, CallOutcome::Abandoned);
        l.answer(b, 9);
        l.answer(a, 9);
        let at: Vec<Nanos> = l.ledger().effects.iter().map(|e| e.at).collect();
        assert_eq!(at, vec![9]);
    }

    #[test]
    fn a_hang_after_the_effect_has_it_when_its_answer_would_have_left() {
        // response: hung call a's work done at 8 s (its effect then, the call still open, then
        // timed out at 20 s: still 1 effect); hung call b times out at 7 s, before its work
        // would be done at 8 s: none. 1 effect, at 8 s.
        let mut l = EffectLedger::new(EffectAt::Response);
        let a = start_working(&mut l, CallOutcome::Accepted, 5);
        let b = start_working(&mut l, CallOutcome::Accepted, 5);
        l.abandon(b, CallOutcome::TimedOut);
        l.work_done(a, 8);
        l.work_done(b, 8);
        l.abandon(a, CallOutcome::TimedOut);
        let at: Vec<Nanos> = l.ledger().effects.iter().map(|e| e.at).collect();
        assert_eq!(at, vec![8]);
        assert_eq!(l.ledger().calls[0].ended, None, "never answered");
        // The same streamed: call a's effect handed over once, and its message closed once.
        let mut l = EffectLedger::streaming(EffectAt::Response);
        let a = start_working(&mut l, CallOutcome::Accepted, 5);
        l.work_done(a, 8);
        l.abandon(a, CallOutcome::TimedOut);
        let mut batched = Vec::new();
        let r = l.recorded(&mut batched).expect("streamed");
        assert_eq!((r.effects.len(), r.closed.len()), (1, 1));
        assert!(r.started[0].may_have_effect);
    }
}
