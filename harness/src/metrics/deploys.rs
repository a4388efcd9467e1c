//! What each rollout of a `deploy` rule cost, read from the record: the workers it told to stop,
//! how many exited within their grace and how many it killed, the deliveries those kills cut,
//! and of the messages they cut, how many ended with a duplicate effect, lost, or late.
//!
//! A rollout starts at its `DeployStarted`; a worker is its own from the rule's `FaultFired` on
//! it to its `WorkerStopped` (in its grace) or the rule's `WorkerKilled` (at the grace's end),
//! whose `HandlerEnded` (killed, at the same instant) names the delivery cut. A message counts
//! once per rollout however many of its deliveries the rollout cut.

use std::collections::{BTreeSet, HashMap};

use serde::{Deserialize, Serialize};

use super::accounting::{per_message, MessageAccount};
use crate::record::{secs_f64, EventKind, HandlerEnd, Nanos, RunRecord, Seq, WorkerId};

/// What one rollout cost.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DeployCost {
    /// The rule's index in the profile's `chaos` list.
    pub rule: u32,
    /// Its rollout number (1 for the rule's first).
    pub deploy: u32,
    pub started_s: f64,
    /// Its workers and the messages their kills cut (written beside the fields above).
    #[serde(flatten)]
    pub cost: StopCost,
}

/// What stopping a wave of workers cost (a rollout's, a scale-in's).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct StopCost {
    /// Workers told to stop.
    pub told: u64,
    /// Of those, workers that exited within their grace.
    pub stopped: u64,
    /// Of those, workers killed at the end of their grace.
    pub killed: u64,
    /// Deliveries whose handler those kills ended.
    pub interrupted: u64,
    /// Of the messages those deliveries carried: with more than one effect at the end.
    pub duplicates: u64,
    /// ... deleted without an effect (nothing will do their work).
    pub lost: u64,
    /// ... whose first effect came more than `late_after` after their publish.
    pub late: u64,
}

/// A way of stopping workers in waves: the event that starts a wave (naming its rule), and the
/// event that tells one of its workers to stop (naming the worker and the rule).
pub(crate) struct Waves {
    pub starts: fn(&EventKind) -> Option<u32>,
    pub tells: fn(&EventKind) -> Option<(WorkerId, u32)>,
}

/// A `deploy`'s rollouts: `DeployStarted`, then the rule's `FaultFired` on each worker.
const ROLLOUTS: Waves = Waves {
    starts: |kind| match *kind {
        EventKind::DeployStarted { rule } => Some(rule),
        _ => None,
    },
    tells: |kind| match *kind {
        EventKind::FaultFired { worker, rule } => Some((worker, rule)),
        _ => None,
    },
};

/// Every rollout of the record, in the order they started (empty without a `deploy`).
pub fn costs(record: &RunRecord, late_after: Nanos) -> Vec<DeployCost> {
    waves(record, late_after, &ROLLOUTS)
}

/// What each wave of `how` cost, in the order they started (a scale-in's cost is a rollout's,
/// [`super::autoscale`]).
pub(crate) fn waves(record: &RunRecord, late_after: Nanos, how: &Waves) -> Vec<DeployCost> {
    let mut rollouts: Vec<(DeployCost, BTreeSet<Seq>)> = Vec::new();
    // Each deploy rule's current rollout, and each worker's, by index in `rollouts`.
    let mut current: HashMap<u32, usize> = HashMap::new();
    let mut told: HashMap<WorkerId, usize> = HashMap::new();
    // The handler a kill ended a moment ago: (worker, message).
    let mut cut: Option<(WorkerId, Seq)> = None;
    for e in &record.events {
        if let Some(rule) = (how.starts)(&e.kind) {
            let deploy = rollouts.iter().filter(|(c, _)| c.rule == rule).count() as u32 + 1;
            current.insert(rule, rollouts.len());
            rollouts.push((DeployCost::new(rule, deploy, e.at), BTreeSet::new()));
            continue;
        }
        if let Some((worker, rule)) = (how.tells)(&e.kind) {
            if let Some(&i) = current.get(&rule) {
                rollouts[i].0.cost.told += 1;
                told.insert(worker, i);
            }
            continue;
        }
        match e.kind {
            EventKind::HandlerEnded {
                seq,
                worker,
                how: HandlerEnd::Killed,
                ..
            } => cut = Some((worker, seq)),
            EventKind::WorkerStopped { worker } => {
                if let Some(i) = told.remove(&worker) {
                    rollouts[i].0.cost.stopped += 1;
                }
            }
            EventKind::WorkerKilled { worker, rule } => {
                let Some(i) = told.remove(&worker) else {
                    continue;
                };
                // Killed by another rule before its grace ended: not this rollout's kill.
                if rollouts[i].0.rule != rule {
                    continue;
                }
                rollouts[i].0.cost.killed += 1;
                if let Some((_, seq)) = cut.filter(|&(w, _)| w == worker) {
                    rollouts[i].0.cost.interrupted += 1;
                    rollouts[i].1.insert(seq);
                }
            }
            EventKind::WorkerCrashed { worker, .. } => {
                told.remove(&worker);
            }
            _ => {}
        }
    }
    if rollouts.is_empty() {
        return Vec::new();
    }
    let accounts = per_message(record);
    rollouts
        .into_iter()
        .map(|(mut cost, seqs)| {
            for seq in seqs {
                let Some(m) = accounts.get((seq - 1) as usize) else {
                    continue;
                };
                let published = record.messages[(seq - 1) as usize].published_at;
                cost.cost.count(m, published, late_after);
            }
            cost
        })
        .collect()
}

impl DeployCost {
    fn new(rule: u32, deploy: u32, at: Nanos) -> DeployCost {
        DeployCost {
            rule,
            deploy,
            started_s: secs_f64(at),
            cost: StopCost::default(),
        }
    }
}

impl StopCost {
    fn count(&mut self, m: &MessageAccount, published_at: Nanos, late_after: Nanos) {
        self.duplicates += u64::from(m.effects > 1);
        self.lost += u64::from(m.is_lost());
        let late = m
            .first_effect
            .is_some_and(|f| f.saturating_sub(published_at) > late_after);
        self.late += u64::from(late);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::testkit::Rec;
    use crate::record::AckOutcome;

    #[test]
    fn a_rollout_is_charged_with_the_messages_its_kills_cut() {
        // Two workers, rule 1 a deploy. At 10 s worker 1 (idle) is told and exits at once;
        // worker 2, handling msg-1 (whose effect came at 9 s), is told at 11 s and killed at
        // 41 s: msg-1 is cut, redelivered to worker 1 at 45 s, effect again at 46 s. msg-2 is
        // handled by worker 1 unharmed. So: told 2, stopped 1, killed 1, interrupted 1, and
        // msg-1 has two effects: 1 duplicate, 0 lost, 0 late (late after 300 s).
        let mut r = Rec::new(30.0, 2);
        let m1 = r.publish(1.0);
        let m2 = r.publish(2.0);
        r.deliver(8.0, m1, 2, 1).effect(9.0, Some(m1), 2, 1);
        r.ev(10.0, EventKind::DeployStarted { rule: 1 });
        r.ev(10.0, EventKind::FaultFired { worker: 1, rule: 1 });
        r.ev(10.0, EventKind::WorkerStopped { worker: 1 });
        r.ev(11.0, EventKind::FaultFired { worker: 2, rule: 1 });
        r.end_handler(41.0, m1, 2, 1, HandlerEnd::Killed);
        r.ev(41.0, EventKind::WorkerKilled { worker: 2, rule: 1 });
        r.deliver(45.0, m1, 1, 2).effect(46.0, Some(m1), 1, 2).ack(
            46.0,
            m1,
            1,
            2,
            AckOutcome::Deleted,
        );
        r.deliver(47.0, m2, 1, 1).effect(48.0, Some(m2), 1, 1).ack(
            48.0,
            m2,
            1,
            1,
            AckOutcome::Deleted,
        );
        let rec = r.finish(50.0);
        let got = costs(&rec, 300_000_000_000);
        let want = DeployCost {
            cost: StopCost {
                told: 2,
                stopped: 1,
                killed: 1,
                interrupted: 1,
                duplicates: 1,
                lost: 0,
                late: 0,
            },
            ..DeployCost::new(1, 1, 10_000_000_000)
        };
        assert_eq!(got, vec![want]);
    }

    #[test]
    fn a_kill_by_another_rule_is_not_the_rollouts() {
        // Worker 1 is told by rule 0's rollout, then killed by rule 1 (a kill_worker) first.
        let mut r = Rec::new(30.0, 1);
        r.ev(1.0, EventKind::DeployStarted { rule: 0 });
        r.ev(1.0, EventKind::FaultFired { worker: 1, rule: 0 });
        r.ev(2.0, EventKind::FaultFired { worker: 1, rule: 1 });
        r.ev(2.0, EventKind::WorkerKilled { worker: 1, rule: 1 });
        let got = costs(&r.finish(5.0), 1);
        let c = &got[0].cost;
        assert_eq!(
            (c.told, c.stopped, c.killed),
            (1, 0, 0),
            "the rule-1 firing names no rollout"
        );
        assert!(costs(&Rec::new(30.0, 1).finish(5.0), 1).is_empty());
    }
}
