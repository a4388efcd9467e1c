//! `kill_worker`: kill a worker at a precise point of its handler, or on a timer.
//!
//! A killed worker's lease is not released (it expires, as with a real dead process); the
//! supervisor restarts the worker after `restart_after`. Selection narrows by `delivery`, `keys`,
//! `worker`, `from`/`to` and `times`; `probability` is drawn (from the seed's `chaos` stream) only
//! for points every other selector matched, so editing one rule never shifts another's draws.

use std::collections::HashSet;

use rand::RngExt;
use rand_chacha::ChaCha8Rng;

use crate::profile::{ChaosRule, KillPoint, KillRule, KillTrigger};
use crate::record::{nanos, Nanos, WorkerId};
use crate::seed;

/// A handler point a worker reached.
#[derive(Debug, Clone, Copy)]
pub struct PointHit<'a> {
    pub point: &'a KillPoint,
    pub worker: WorkerId,
    pub key: &'a str,
    /// Receive count of the worker's delivery.
    pub delivery: u32,
    pub now: Nanos,
}

#[derive(Debug, Clone)]
struct Rule {
    /// Its index in the profile's `chaos` list.
    index: u32,
    rule: KillRule,
    keys: Option<HashSet<String>>,
    kills: u64,
}

/// The kill rules of a run (the `kill_worker` rules of its `chaos` list) and how often each has
/// fired. Rules are named by their index in the whole list.
#[derive(Debug, Clone)]
pub struct KillSchedule {
    rules: Vec<Rule>,
    rng: ChaCha8Rng,
}

impl KillSchedule {
    pub fn new(chaos: &[ChaosRule], seed: u64) -> KillSchedule {
        let rules = super::rules_of::<KillRule>(chaos)
            .map(|(index, r)| Rule {
                index,
                keys: r.keys.as_ref().map(|k| k.iter().cloned().collect()),
                rule: r.clone(),
                kills: 0,
            })
            .collect();
        KillSchedule {
            rules,
            rng: seed::stream(seed, "chaos"),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.rules.is_empty()
    }

    /// A worker reached a point: the first rule that fires, as (rule index, delay).
    pub fn at_point(&mut self, hit: PointHit<'_>) -> Option<(u32, Nanos)> {
        for i in 0..self.rules.len() {
            let r = &self.rules[i];
            let KillTrigger::Point(p) = &r.rule.trigger else {
                continue;
            };
            if p != hit.point || !self.in_scope(i, hit.now, Some(hit.worker)) {
                continue;
            }
            if r.rule.delivery.is_some_and(|d| d != hit.delivery) {
                continue;
            }
            if r.keys.as_ref().is_some_and(|k| !k.contains(hit.key)) {
                continue;
            }
            if self.draw(i) {
                let r = &self.rules[i];
                return Some((r.index, nanos(r.rule.delay)));
            }
        }
        None
    }

    /// The first instant of each timed rule: (instant, rule index).
    pub fn timed(&self) -> Vec<(Nanos, u32)> {
        self.rules
            .iter()
            .filter_map(|r| match r.rule.trigger {
                KillTrigger::At(t) => Some((nanos(t), r.index)),
                KillTrigger::Every(p) => {
                    Some((nanos(r.rule.from.unwrap_or_default()) + nanos(p), r.index))
                }
                KillTrigger::Point(_) => None,
            })
            .collect()
    }

    /// A timed rule's instant came: whether it kills now (scope, `times`, probability), which
    /// worker (its `worker`, else one of `candidates` drawn from the seed), and when it fires next.
    pub fn fire_timed(
        &mut self,
        rule: u32,
        now: Nanos,
        candidates: &[WorkerId],
    ) -> (Option<WorkerId>, Option<Nanos>) {
        let Some(i) = self.rules.iter().position(|r| r.index == rule) else {
            return (None, None);
        };
        let next = match self.rules[i].rule.trigger {
            KillTrigger::Every(p) => Some(now + nanos(p).max(1)),
            _ => None,
        }
        .filter(|&t| self.rules[i].rule.to.is_none_or(|to| t < nanos(to)));
        let fixed = self.rules[i].rule.worker;
        let eligible: Vec<WorkerId> = match fixed {
            Some(w) => candidates.iter().copied().filter(|&c| c == w).collect(),
            None => candidates.to_vec(),
        };
        if eligible.is_empty() || !self.in_scope(i, now, None) || !self.draw(i) {
            return (None, next);
        }
        let w = eligible[self.rng.random_range(0..eligible.len())];
        (Some(w), next)
    }

    /// Window, worker and `times` checks.
    fn in_scope(&self, i: usize, now: Nanos, worker: Option<WorkerId>) -> bool {
        let r = &self.rules[i];
        r.rule.from.is_none_or(|f| now >= nanos(f))
            && r.rule.to.is_none_or(|t| now < nanos(t))
            && r.rule.times.is_none_or(|t| r.kills < t)
            && match (r.rule.worker, worker) {
                (Some(want), Some(w)) => want == w,
                _ => true,
            }
    }

    /// Draws the rule's probability; counts the kill when it fires.
    fn draw(&mut self, i: usize) -> bool {
        let p = self.rules[i].rule.probability;
        let fires = p >= 1.0 || self.rng.random::<f64>() < p;
        if fires {
            self.rules[i].kills += 1;
        }
        fires
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    fn rule(trigger: KillTrigger) -> KillRule {
        KillRule::new(trigger)
    }

    fn hit(point: &KillPoint, delivery: u32) -> PointHit<'_> {
        PointHit {
            point,
            worker: 1,
            key: "msg-1",
            delivery,
            now: 0,
        }
    }

    #[test]
    fn point_rules_match_point_delivery_and_times() {
        let mut r = rule(KillTrigger::Point(KillPoint::CallAnswered));
        r.delivery = Some(1);
        r.times = Some(2);
        let mut s = KillSchedule::new(&[ChaosRule::new(r)], 1);
        assert_eq!(s.at_point(hit(&KillPoint::CallStarted, 1)), None);
        assert_eq!(s.at_point(hit(&KillPoint::CallAnswered, 2)), None);
        assert_eq!(s.at_point(hit(&KillPoint::CallAnswered, 1)), Some((0, 0)));
        assert_eq!(s.at_point(hit(&KillPoint::CallAnswered, 1)), Some((0, 0)));
        assert_eq!(
            s.at_point(hit(&KillPoint::CallAnswered, 1)),
            None,
            "times: 2"
        );
    }

    #[test]
    fn probability_is_drawn_from_the_seed() {
        let mut r = rule(KillTrigger::Point(KillPoint::Received));
        r.probability = 0.3;
        let count = |seed| {
            let mut s = KillSchedule::new(&[ChaosRule::new(r.clone())], seed);
            (0..10_000)
                .filter(|_| s.at_point(hit(&KillPoint::Received, 1)).is_some())
                .count()
        };
        assert_eq!(count(5), count(5));
        assert!((2_800..3_200).contains(&count(5)));
    }

    #[test]
    fn timed_rules_pick_their_worker_and_repeat() {
        let mut r = rule(KillTrigger::Every(Duration::from_secs(10)));
        r.worker = Some(2);
        r.to = Some(Duration::from_secs(25));
        let mut s = KillSchedule::new(&[ChaosRule::new(r)], 1);
        let s10 = 10_000_000_000;
        assert_eq!(s.timed(), vec![(s10, 0)]);
        assert_eq!(s.fire_timed(0, s10, &[1, 2, 3]), (Some(2), Some(2 * s10)));
        assert_eq!(
            s.fire_timed(0, 2 * s10, &[1, 3]),
            (None, None),
            "worker 2 is dead; 30 s is past `to`"
        );
    }
}
