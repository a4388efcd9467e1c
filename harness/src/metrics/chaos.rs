//! How often each chaos rule fired: its kills in the record (`WorkerKilled::rule`).

use serde::{Deserialize, Serialize};

use crate::record::{ChaosRuleRecord, EventKind};

/// One chaos rule of the run and how often it fired.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RuleFires {
    /// Its index in the profile's `chaos` list.
    pub rule: u32,
    /// What it does, as in `kill_worker at call_started (delivery 5)`.
    pub label: String,
    /// `optional: true`: never firing is not a failure.
    pub optional: bool,
    /// Kills it caused.
    pub fired: u64,
}

/// Every chaos rule of the record, in profile order, with its kills (what the streamed and batch
/// analyses count, checked against the record in the tests).
#[cfg(test)]
pub fn fires(record: &crate::record::RunRecord) -> Vec<RuleFires> {
    let mut fired = vec![0u64; record.chaos.len()];
    for e in &record.events {
        count_kill(&mut fired, &e.kind);
    }
    named(&record.chaos, fired)
}

/// Counts a kill in `fired` (by rule index); a kill naming no rule of the run is nobody's.
#[inline]
pub fn count_kill(fired: &mut [u64], kind: &EventKind) {
    if let EventKind::WorkerKilled { rule, .. } = *kind {
        if let Some(n) = fired.get_mut(rule as usize) {
            *n += 1;
        }
    }
}

/// The rules with their kill counts (`fired`, by rule index).
pub fn named(rules: &[ChaosRuleRecord], fired: Vec<u64>) -> Vec<RuleFires> {
    rules
        .iter()
        .zip(fired)
        .enumerate()
        .map(|(i, (r, fired))| RuleFires {
            rule: i as u32,
            label: r.label.clone(),
            optional: r.optional,
            fired,
        })
        .collect()
}

/// The rules that never fired although they are not optional.
pub fn unfired_required(rules: &[RuleFires]) -> impl Iterator<Item = &RuleFires> {
    rules.iter().filter(|r| r.fired == 0 && !r.optional)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::testkit::Rec;
    use crate::record::Event;

    #[test]
    fn kills_are_counted_per_rule() {
        // Rule 0 kills twice (the testkit's kills are rule 0), rule 2 once, rule 1 never; a kill
        // naming a rule the record does not describe is nobody's.
        let mut r = Rec::new(30.0, 2);
        r.kill(1.0, 1).kill(2.0, 2);
        let mut rec = r.finish(10.0);
        for rule in [2, 7] {
            rec.events.push(Event {
                at: 3_000_000_000,
                kind: EventKind::WorkerKilled { worker: 1, rule },
            });
        }
        rec.chaos = ["a", "b", "c"]
            .iter()
            .map(|l| ChaosRuleRecord {
                label: l.to_string(),
                optional: *l == "c",
            })
            .collect();
        let got = fires(&rec);
        let counts: Vec<(u32, u64, bool)> =
            got.iter().map(|f| (f.rule, f.fired, f.optional)).collect();
        assert_eq!(counts, vec![(0, 2, false), (1, 0, false), (2, 1, true)]);
        let unfired: Vec<&str> = unfired_required(&got).map(|f| f.label.as_str()).collect();
        assert_eq!(unfired, vec!["b"]);
    }
}
