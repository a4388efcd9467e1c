//! How often each chaos rule fired: its firings in the record (`FaultFired::rule`, and an
//! `autoscale` rule's `Scaled`).

use serde::{Deserialize, Serialize};

use crate::record::{ChaosRuleRecord, EventKind};

/// One chaos rule of the run and how often it fired.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RuleFires {
    /// Its index in the profile's `chaos` list.
    pub rule: u32,
    /// Its fault (`deploy`, ...); left out for `kill_worker`, so a run with kill rules only
    /// writes the same bytes as before other faults existed (and an absent field reads as it).
    #[serde(default = "unnamed_fault", skip_serializing_if = "is_unnamed_fault")]
    pub fault: String,
    /// What it does, as in `kill_worker at call_started (delivery 5)`.
    pub label: String,
    /// `optional: true`: never firing is not a failure.
    pub optional: bool,
    /// Times it fired: a `kill_worker`'s kills, a `deploy`'s workers told to stop, an
    /// `autoscale`'s changes of the replica count.
    pub fired: u64,
}

/// The fault of a rule that names none.
fn unnamed_fault() -> String {
    KILL_WORKER.to_string()
}

fn is_unnamed_fault(fault: &str) -> bool {
    fault == KILL_WORKER
}

/// The fault summary.json leaves unnamed: every rule was a `kill_worker` before other faults
/// existed, and a summary of kills only keeps its bytes.
const KILL_WORKER: &str = <crate::profile::KillRule as crate::profile::FaultRule>::FAULT;

impl RuleFires {
    /// A fault other than `kill_worker`: reports show such rules one per line.
    pub fn is_other_fault(&self) -> bool {
        !is_unnamed_fault(&self.fault)
    }
}

/// Every chaos rule of the record, in profile order, with its firings (what the streamed and
/// batch analyses count, checked against the record in the tests).
#[cfg(test)]
pub fn fires(record: &crate::record::RunRecord) -> Vec<RuleFires> {
    let mut fired = vec![0u64; record.chaos.len()];
    for e in &record.events {
        count_kill(&mut fired, &e.kind);
    }
    named(&record.chaos, fired)
}

/// Counts a firing in `fired` (by rule index); one naming no rule of the run is nobody's.
#[inline]
pub fn count_kill(fired: &mut [u64], kind: &EventKind) {
    if let EventKind::FaultFired { rule, .. } | EventKind::Scaled { rule, .. } = *kind {
        if let Some(n) = fired.get_mut(rule as usize) {
            *n += 1;
        }
    }
}

/// The rules with their firing counts (`fired`, by rule index).
pub fn named(rules: &[ChaosRuleRecord], fired: Vec<u64>) -> Vec<RuleFires> {
    rules
        .iter()
        .zip(fired)
        .enumerate()
        .map(|(i, (r, fired))| RuleFires {
            rule: i as u32,
            fault: r.fault.to_string(),
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
        // Rule 0 fires twice (the testkit's kills are rule 0's), rule 2 once, rule 1 never; a
        // firing naming a rule the record does not describe is nobody's.
        let mut r = Rec::new(30.0, 2);
        r.kill(1.0, 1).kill(2.0, 2);
        let mut rec = r.finish(10.0);
        for rule in [2, 7] {
            rec.events.push(Event {
                at: 3_000_000_000,
                kind: EventKind::FaultFired { worker: 1, rule },
            });
        }
        rec.chaos = ["a", "b", "c"]
            .iter()
            .map(|l| ChaosRuleRecord {
                fault: "kill_worker",
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
