//! The effect ledger: every provider call (key, delivery, worker, start, end, outcome) and every
//! effect. Effect counts come from here and nowhere else.
//!
//! A streamed sim run ([`EffectLedger::streaming`]) keeps only the calls still open; what
//! happened since it was last taken ([`EffectLedger::recorded`]: calls started, effects, calls
//! that can no longer have an effect) is handed to the run's streaming accounting.

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
    /// What the provider will answer (`Accepted` or `Error`).
    pub outcome: CallOutcome,
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

    /// A call arrived. With `effect_at: request` an accepted call's effect happens now.
    pub fn start_call(&mut self, c: CallStart) -> CallId {
        if self.effect_at == EffectAt::Request && c.outcome == CallOutcome::Accepted {
            self.effect(c.seq, c.at, c.worker, c.delivery, EffectSource::Provider);
        }
        let record = CallRecord {
            seq: c.seq,
            key: c.key,
            worker: c.worker,
            delivery: c.delivery,
            started: c.at,
            ended: None,
            outcome: c.outcome,
        };
        let may_have_effect = self.may_have_effect(&record);
        if let Some(open) = &mut self.open {
            open.started.push(StartedCall {
                seq: record.seq,
                delivery: record.delivery,
                may_have_effect,
            });
            return open.calls.push(record) as CallId - 1;
        }
        self.ledger.calls.push(record);
        self.ledger.calls.len() - 1
    }

    /// An open call can still have an effect: an accepted call whose effect comes with its
    /// answer.
    fn may_have_effect(&self, c: &CallRecord) -> bool {
        self.effect_at == EffectAt::Response
            && c.ended.is_none()
            && c.outcome == CallOutcome::Accepted
    }

    /// The provider's answer reached the caller. With `effect_at: response` an accepted call's
    /// effect happens now. Returns the call's message and delivery (`None` for a call a streamed
    /// ledger no longer holds).
    pub fn answer(&mut self, id: CallId, at: Nanos) -> Option<(Option<Seq>, u32)> {
        let (seq, worker, delivery, effect) = match &mut self.open {
            Some(open) => {
                let c = open.calls.take(number(id)?)?;
                let effect = self.may_have_effect(&c);
                (c.seq, c.worker, c.delivery, effect)
            }
            None => {
                let effect = self.may_have_effect(&self.ledger.calls[id]);
                let c = &mut self.ledger.calls[id];
                c.ended = Some(at);
                (c.seq, c.worker, c.delivery, effect)
            }
        };
        if effect {
            self.effect(seq, at, worker, delivery, EffectSource::Provider);
            if let Some(open) = &mut self.open {
                open.closed.push(seq);
            }
        }
        Some((seq, delivery))
    }

    /// The caller died (or gave up) before the answer: the call is marked and, with
    /// `effect_at: response`, never has an effect. A streamed ledger lets the call go: an
    /// abandoned or timed-out call is never answered.
    pub fn abandon(&mut self, id: CallId, how: CallOutcome) {
        if self.open.is_some() {
            let open = self.open.as_mut();
            let Some(c) = open.and_then(|o| o.calls.take(number(id)?)) else {
                return;
            };
            if self.may_have_effect(&c) {
                if let Some(open) = &mut self.open {
                    open.closed.push(c.seq);
                }
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
                && matches!(c.outcome, CallOutcome::Accepted | CallOutcome::Error(_))
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
}
