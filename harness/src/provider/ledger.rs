//! The effect ledger: every provider call (key, delivery, worker, start, end, outcome) and every
//! effect. Effect counts come from here and nowhere else.

use crate::profile::EffectAt;
use crate::record::{
    CallOutcome, CallRecord, EffectRecord, EffectSource, Ledger, Nanos, Seq, WorkerId,
};

/// Index of a call in the ledger.
pub type CallId = usize;

/// Records calls and effects as they happen.
#[derive(Debug, Clone)]
pub struct EffectLedger {
    effect_at: EffectAt,
    ledger: Ledger,
    /// Whether each message (index seq - 1) has had an effect: for live progress only.
    effected: Vec<bool>,
    messages_with_effect: u64,
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
        }
    }

    /// Room for `calls` more calls and as many effects (a sim run reserves one per message).
    pub fn reserve(&mut self, calls: usize) {
        self.ledger.calls.reserve(calls);
        self.ledger.effects.reserve(calls);
    }

    /// A call arrived. With `effect_at: request` an accepted call's effect happens now.
    pub fn start_call(&mut self, c: CallStart) -> CallId {
        if self.effect_at == EffectAt::Request && c.outcome == CallOutcome::Accepted {
            self.effect(c.seq, c.at, c.worker, c.delivery, EffectSource::Provider);
        }
        self.ledger.calls.push(CallRecord {
            seq: c.seq,
            key: c.key,
            worker: c.worker,
            delivery: c.delivery,
            started: c.at,
            ended: None,
            outcome: c.outcome,
        });
        self.ledger.calls.len() - 1
    }

    /// The provider's answer reached the caller. With `effect_at: response` an accepted call's
    /// effect happens now.
    pub fn answer(&mut self, id: CallId, at: Nanos) {
        let c = &mut self.ledger.calls[id];
        c.ended = Some(at);
        if self.effect_at == EffectAt::Response && c.outcome == CallOutcome::Accepted {
            let (seq, worker, delivery) = (c.seq, c.worker, c.delivery);
            self.effect(seq, at, worker, delivery, EffectSource::Provider);
        }
    }

    /// The caller died (or gave up) before the answer: the call is marked and, with
    /// `effect_at: response`, never has an effect.
    pub fn abandon(&mut self, id: CallId, how: CallOutcome) {
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
            if i >= self.effected.len() {
                self.effected.resize(i + 1, false);
            }
            if !std::mem::replace(&mut self.effected[i], true) {
                self.messages_with_effect += 1;
            }
        }
        self.ledger.effects.push(EffectRecord {
            seq,
            at,
            worker,
            delivery,
            source,
        });
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
        let effects = self.ledger.effects.len() as u64;
        (effects, effects.saturating_sub(self.messages_with_effect))
    }

    pub fn into_ledger(self) -> Ledger {
        self.ledger
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
