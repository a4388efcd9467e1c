//! `deploy`: a rolling restart, as a release does it. A rollout tells up to `max_unavailable` of
//! its workers to stop (`signal`), each killed at the end of its `grace` if it has not exited;
//! once a replaced worker is back (restarted), the next one is told. A rollout that comes while
//! the rule's previous one still goes is skipped, as a deploy tool waits for the one running.
//!
//! This is the schedule alone (which worker is told when); how a worker stops is the runner's.

use std::collections::VecDeque;

use crate::profile::{ChaosRule, DeployRule, DeployTrigger, StopSignal};
use crate::record::{nanos, Nanos, WorkerId};

#[derive(Debug, Clone)]
struct Rule {
    /// Its index in the profile's `chaos` list.
    index: u32,
    rule: DeployRule,
    /// Rollouts started.
    started: u64,
    current: Option<Rollout>,
}

/// A rollout under way: the workers still to tell, and those told and not yet back.
#[derive(Debug, Clone)]
struct Rollout {
    pending: VecDeque<WorkerId>,
    out: Vec<WorkerId>,
}

/// A rollout that starts now: its number (1 for the rule's first) and the workers told first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Started {
    pub deploy: u32,
    pub stop: Vec<WorkerId>,
}

/// The deploy rules of a run and their rollouts.
#[derive(Debug, Clone, Default)]
pub struct DeploySchedule {
    rules: Vec<Rule>,
}

impl DeploySchedule {
    pub fn new(chaos: &[ChaosRule]) -> DeploySchedule {
        let rules = super::rules_of::<DeployRule>(chaos)
            .map(|(index, r)| Rule {
                index,
                rule: r.clone(),
                started: 0,
                current: None,
            })
            .collect();
        DeploySchedule { rules }
    }

    /// The first rollout instant of each rule: (instant, rule index).
    pub fn timed(&self) -> Vec<(Nanos, u32)> {
        self.rules
            .iter()
            .map(|r| match r.rule.trigger {
                DeployTrigger::At(t) => (nanos(t), r.index),
                DeployTrigger::Every { every, from } => (nanos(from + every), r.index),
            })
            .collect()
    }

    /// The rule's grace: from the stop signal to the kill.
    pub fn grace(&self, rule: u32) -> Nanos {
        self.rule(rule).map_or(0, |r| nanos(r.rule.grace))
    }

    /// The rule's stop signal.
    #[cfg_attr(not(feature = "live"), allow(dead_code))] // read by the live runner only
    pub fn signal(&self, rule: u32) -> StopSignal {
        self.rule(rule).map_or(StopSignal::Term, |r| r.rule.signal)
    }

    /// A rollout instant of `rule` came: the rollout that starts (none past `to` or `times`, or
    /// while the previous one goes), and the rule's next instant.
    pub fn start(&mut self, rule: u32, now: Nanos) -> (Option<Started>, Option<Nanos>) {
        let Some(r) = self.rules.iter_mut().find(|r| r.index == rule) else {
            return (None, None);
        };
        let next = match r.rule.trigger {
            DeployTrigger::Every { every, .. } => Some(now + nanos(every).max(1)),
            DeployTrigger::At(_) => None,
        }
        .filter(|&t| r.rule.to.is_none_or(|to| t < nanos(to)));
        let spent = r.rule.times.is_some_and(|n| r.started >= n);
        if r.current.is_some() || spent {
            return (None, next.filter(|_| !spent));
        }
        r.started += 1;
        let mut pending: VecDeque<WorkerId> = r.rule.workers.iter().copied().collect();
        let first = pending.len().min(r.rule.max_unavailable as usize);
        let stop: Vec<WorkerId> = pending.drain(..first).collect();
        r.current = Some(Rollout {
            pending,
            out: stop.clone(),
        });
        let started = Started {
            deploy: r.started as u32,
            stop,
        };
        (Some(started), next)
    }

    /// Worker `w` is back (restarted): for each rollout it was replaced in, the next worker to
    /// tell, as (rule index, worker). A rollout with no worker left out is over.
    pub fn back(&mut self, w: WorkerId) -> Vec<(u32, WorkerId)> {
        let mut next = Vec::new();
        for r in &mut self.rules {
            let Some(rollout) = &mut r.current else {
                continue;
            };
            let Some(i) = rollout.out.iter().position(|&o| o == w) else {
                continue;
            };
            rollout.out.swap_remove(i);
            if let Some(n) = rollout.pending.pop_front() {
                rollout.out.push(n);
                next.push((r.index, n));
            }
            if rollout.out.is_empty() {
                r.current = None;
            }
        }
        next
    }

    /// Which rollout (rule index, rollout number) is replacing `w` now, if any.
    #[cfg_attr(not(feature = "live"), allow(dead_code))] // read by the live runner only
    #[cfg(test)]
    pub fn replacing(&self, w: WorkerId) -> Option<(u32, u32)> {
        self.rules.iter().find_map(|r| {
            let out = r.current.as_ref()?.out.contains(&w);
            out.then_some((r.index, r.started as u32))
        })
    }

    fn rule(&self, index: u32) -> Option<&Rule> {
        self.rules.iter().find(|r| r.index == index)
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::profile::FaultRule;

    fn rule(trigger: DeployTrigger, workers: u32, max_unavailable: u32) -> DeployRule {
        DeployRule {
            trigger,
            max_unavailable,
            grace: Duration::from_secs(30),
            signal: StopSignal::Term,
            workers: (1..=workers).collect(),
            to: None,
            times: None,
            optional: false,
        }
    }

    const S: Nanos = 1_000_000_000;

    #[test]
    fn a_rollout_tells_max_unavailable_workers_then_one_per_worker_back() {
        // Three workers, two at a time: 1 and 2 told first; 2 back tells 3; 1 back tells
        // nobody (none pending); 3 back ends the rollout.
        let at = DeployTrigger::At(Duration::from_secs(60));
        let kill = ChaosRule::new(crate::profile::KillRule::new(
            crate::profile::KillTrigger::At(Duration::from_secs(1)),
        ));
        let mut s = DeploySchedule::new(&[kill, ChaosRule::new(rule(at, 3, 2))]);
        assert_eq!(s.timed(), vec![(60 * S, 1)]);
        assert_eq!(s.grace(1), 30 * S);
        let (started, next) = s.start(1, 60 * S);
        let want = Started {
            deploy: 1,
            stop: vec![1, 2],
        };
        assert_eq!((started, next), (Some(want), None));
        assert_eq!(s.replacing(2), Some((1, 1)));
        assert_eq!(s.back(2), vec![(1, 3)]);
        assert_eq!(s.back(1), vec![]);
        assert_eq!(s.replacing(1), None, "worker 1 is back");
        assert_eq!(s.back(3), vec![]);
        assert_eq!(s.replacing(3), None, "the rollout is over");
        assert_eq!(
            s.back(3),
            vec![],
            "a restart outside a rollout tells nobody"
        );
    }

    #[test]
    fn a_rollout_due_while_the_last_goes_is_skipped_and_times_ends_the_rule() {
        let every = DeployTrigger::Every {
            every: Duration::from_secs(10),
            from: Duration::ZERO,
        };
        let mut r = rule(every, 1, 1);
        r.times = Some(2);
        let mut s = DeploySchedule::new(&[ChaosRule::new(r)]);
        assert_eq!(s.timed(), vec![(10 * S, 0)]);
        let (first, next) = s.start(0, 10 * S);
        assert_eq!(first.map(|f| f.deploy), Some(1));
        assert_eq!(next, Some(20 * S));
        // Worker 1 is not back at 20 s: that rollout is skipped, the rule goes on.
        assert_eq!(s.start(0, 20 * S), (None, Some(30 * S)));
        s.back(1);
        let (second, _) = s.start(0, 30 * S);
        assert_eq!(second.map(|f| f.deploy), Some(2));
        s.back(1);
        assert_eq!(s.start(0, 40 * S), (None, None), "times: 2");
    }

    #[test]
    fn a_deploy_is_labelled_by_its_trigger_and_how_it_rolls() {
        let mut r = rule(DeployTrigger::At(Duration::from_secs(600)), 3, 1);
        assert_eq!(
            r.label(),
            "deploy at 10m (max_unavailable 1, grace 30s, SIGTERM)"
        );
        r.workers = vec![3, 1];
        r.times = Some(2);
        r.trigger = DeployTrigger::Every {
            every: Duration::from_secs(3600),
            from: Duration::from_secs(60),
        };
        assert_eq!(
            r.label(),
            "deploy every 1h (from 1m) (max_unavailable 1, grace 30s, SIGTERM, workers 3, 1, \
             times 2)"
        );
    }
}
