//! What an operator's redrive of the DLQ did: how many entries it moved back, and how many
//! duplicate effects the replay itself caused (effects after the redrive of messages whose work
//! had been done before it, and repeats beyond the first for those that had none).

use crate::record::{EventKind, Nanos, RunRecord};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RedriveAccount {
    /// DLQ entries moved back to the main queue.
    pub redriven: u64,
    /// Duplicate effects caused by the redrive.
    pub duplicate_effects: u64,
}

/// Accounts the redrives of a run (the first redrive of each message counts).
pub fn account(record: &RunRecord) -> RedriveAccount {
    if !record
        .events
        .iter()
        .any(|e| matches!(e.kind, EventKind::Redriven { .. }))
    {
        return RedriveAccount::default();
    }
    let n = record.messages.len();
    let mut redriven_at: Vec<Option<Nanos>> = vec![None; n];
    let mut out = RedriveAccount::default();
    for e in &record.events {
        if let EventKind::Redriven { seq } = e.kind {
            if let Some(slot) = seq
                .checked_sub(1)
                .and_then(|i| redriven_at.get_mut(i as usize))
            {
                out.redriven += 1;
                slot.get_or_insert(e.at);
            }
        }
    }
    let (mut before, mut after) = (vec![0u64; n], vec![0u64; n]);
    for e in &record.ledger.effects {
        let Some(i) = e.seq.and_then(|s| s.checked_sub(1)).map(|i| i as usize) else {
            continue;
        };
        let Some(Some(at)) = redriven_at.get(i) else {
            continue;
        };
        if e.at >= *at {
            after[i] += 1;
        } else {
            before[i] += 1;
        }
    }
    for i in 0..n {
        out.duplicate_effects += duplicates(before[i], after[i]);
    }
    out
}

/// The duplicate effects a redrive caused to one message that had `before` effects before its
/// first redrive and `after` from it on: without an earlier effect, the first effect after the
/// redrive is the work finally done; every other effect after it is a duplicate.
pub fn duplicates(before: u64, after: u64) -> u64 {
    after - u64::from(before == 0 && after > 0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::{EffectRecord, EffectSource, Event, MessageRecord};

    #[test]
    fn replaying_done_work_duplicates_it_and_undone_work_is_not_a_duplicate() {
        let msg = |k: &str| MessageRecord {
            key: k.into(),
            published_at: 0,
            poison: false,
        };
        let eff = |seq, at| EffectRecord {
            seq: Some(seq),
            at,
            worker: 1,
            delivery: 1,
            source: EffectSource::Provider,
        };
        let mut r = RunRecord {
            messages: vec![msg("a"), msg("b"), msg("c")],
            ..RunRecord::default()
        };
        r.events = vec![
            Event {
                at: 100,
                kind: EventKind::Redriven { seq: 1 },
            },
            Event {
                at: 100,
                kind: EventKind::Redriven { seq: 2 },
            },
        ];
        // a: done before (x2) and once after -> 1 duplicate; b: never done before, twice after
        // -> 1 duplicate; c: not redriven.
        r.ledger.effects = vec![
            eff(1, 10),
            eff(1, 20),
            eff(1, 150),
            eff(2, 150),
            eff(2, 160),
            eff(3, 170),
        ];
        assert_eq!(
            account(&r),
            RedriveAccount {
                redriven: 2,
                duplicate_effects: 2
            }
        );
    }
}
