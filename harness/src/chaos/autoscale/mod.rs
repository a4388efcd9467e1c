//! `autoscale`: the fleet's replica count changed as KEDA and the HPA change it. KEDA polls the
//! queue every `polling_interval` for activation (wake from zero, back to zero after the
//! cooldown, [`keda`]); the HPA syncs every `sync_period` and sets the count from the queue's
//! length ([`hpa`]); the ReplicaSet makes the fleet that count, removing the replicas it ranks
//! first ([`replica_set`]).
//!
//! This is the schedule alone (what count, when, and who goes); a runner starts a worker for a
//! scale-out after the rule's `startup`, and stops one for a scale-in as `deploy` does (the
//! stop signal, `grace`, then the kill), without bringing it back.

pub mod hpa;
pub mod keda;
pub mod replica_set;

use crate::profile::{AutoscaleRule, ChaosRule, QueueMetric, StopSignal};
use crate::record::{nanos, EventKind, Nanos, WorkerId};

pub use replica_set::Replica;

/// Which controller looks at the queue: KEDA's poll or the HPA's sync.
pub use crate::record::ScaledBy as Controller;

/// The queue as a scaler reads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct QueueLength {
    /// Waiting to be delivered.
    pub ready: u64,
    /// Delivered and not yet settled.
    pub in_flight: u64,
}

/// A change of the replica count.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Scale {
    pub from: u32,
    pub to: u32,
    pub by: Controller,
    /// The metric the controller read.
    pub metric: u64,
}

impl Scale {
    /// The change as the record keeps it, made by rule `rule`.
    pub fn event(&self, rule: u32) -> EventKind {
        EventKind::Scaled {
            rule,
            from: self.from,
            to: self.to,
            by: self.by,
            metric: self.metric,
        }
    }
}

/// A run's `autoscale` rule and its controllers' state (none without the rule).
#[derive(Debug, Clone, Default)]
pub struct AutoscaleSchedule {
    scaler: Option<Autoscaler>,
}

#[derive(Debug, Clone)]
struct Autoscaler {
    /// Its index in the profile's `chaos` list.
    index: u32,
    rule: AutoscaleRule,
    keda: keda::Keda,
    hpa: hpa::Hpa,
}

impl AutoscaleSchedule {
    /// The rule of `chaos` (a profile has at most one).
    pub fn new(chaos: &[ChaosRule]) -> AutoscaleSchedule {
        let scaler = super::rules_of::<AutoscaleRule>(chaos)
            .next()
            .map(|(index, rule)| Autoscaler {
                index,
                keda: keda::Keda::new(rule),
                hpa: hpa::Hpa::new(rule),
                rule: rule.clone(),
            });
        AutoscaleSchedule { scaler }
    }

    /// The rule's index in `chaos`.
    pub fn rule(&self) -> Option<u32> {
        self.scaler.as_ref().map(|s| s.index)
    }

    /// Each controller's first look: KEDA's poll, the HPA's sync.
    pub fn timed(&self) -> Vec<(Nanos, Controller)> {
        let Some(s) = &self.scaler else {
            return Vec::new();
        };
        vec![
            (nanos(s.rule.polling_interval), Controller::Keda),
            (nanos(s.rule.sync_period), Controller::Hpa),
        ]
    }

    /// `by` looks at the queue at `now` with the Deployment at `replicas` (the workers the
    /// fleet has, starting ones included, those told to go left out): the change it makes, if
    /// any, and its next look.
    pub fn look(
        &mut self,
        by: Controller,
        now: Nanos,
        queue: QueueLength,
        replicas: u32,
    ) -> (Option<Scale>, Nanos) {
        let Some(s) = &mut self.scaler else {
            return (None, Nanos::MAX);
        };
        let metric = match s.rule.metric {
            QueueMetric::Ready => queue.ready,
            QueueMetric::ReadyAndInFlight => queue.ready + queue.in_flight,
        };
        let from = replicas;
        let (to, next) = match by {
            Controller::Keda => (
                s.keda.poll(now, from, metric).unwrap_or(from),
                now + nanos(s.rule.polling_interval),
            ),
            Controller::Hpa => (
                s.hpa.sync(now, from, metric),
                now + nanos(s.rule.sync_period),
            ),
        };
        let scale = (to != from).then_some(Scale {
            from,
            to,
            by,
            metric,
        });
        (scale, next)
    }

    /// The replicas a scale-in by `n` removes, first removed first, from the fleet's
    /// (worker, made, ready), each with the rule's pod-deletion-cost for it.
    pub fn to_remove(
        &self,
        fleet: impl IntoIterator<Item = (WorkerId, Nanos, Option<Nanos>)>,
        n: usize,
    ) -> Vec<WorkerId> {
        let cost_of = |w| self.scaler.as_ref().map_or(0, |s| s.rule.cost_of(w));
        let replicas: Vec<Replica> = (fleet.into_iter())
            .map(|(worker, made, ready)| Replica {
                worker,
                made,
                ready,
                cost: cost_of(worker),
            })
            .collect();
        replica_set::to_remove(&replicas, n)
    }

    /// From a scale-out to the new worker's start.
    pub fn startup(&self) -> Nanos {
        self.scaler.as_ref().map_or(0, |s| nanos(s.rule.startup))
    }

    /// From a scale-in's stop signal to its kill.
    pub fn grace(&self) -> Nanos {
        self.scaler.as_ref().map_or(0, |s| nanos(s.rule.grace))
    }

    /// The signal a scale-in stops a replica with.
    #[cfg_attr(not(feature = "live"), allow(dead_code))] // read by the live runner only
    pub fn signal(&self) -> StopSignal {
        self.scaler
            .as_ref()
            .map_or(StopSignal::Term, |s| s.rule.signal)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: Nanos = 1_000_000_000;

    #[test]
    fn keda_wakes_the_fleet_and_the_hpa_takes_it_to_the_queue_s_count() {
        // min 0, max 8, target 100, one worker at the start and 1,000 messages waiting.
        // The HPA at 15s: 1 → 5; KEDA's poll at 30s finds the queue active with 5 replicas:
        // nothing; the HPA at 30s: 5 → 8.
        let rule = AutoscaleRule {
            max: 8,
            ..AutoscaleRule::new(100)
        };
        let mut a = AutoscaleSchedule::new(&[ChaosRule::new(rule)]);
        let q = QueueLength {
            ready: 1000,
            in_flight: 0,
        };
        let (s1, next) = a.look(Controller::Hpa, 15 * S, q, 1);
        assert_eq!((s1.map(|s| (s.from, s.to)), next), (Some((1, 5)), 30 * S));
        assert_eq!(a.look(Controller::Keda, 30 * S, q, 5).0, None);
        let (s2, _) = a.look(Controller::Hpa, 30 * S, q, 5);
        assert_eq!(
            s2.map(|s| (s.from, s.to, s.by)),
            Some((5, 8, Controller::Hpa))
        );
    }

    #[test]
    fn the_metric_is_the_queue_as_the_scaler_reads_it() {
        // 50 ready and 250 in flight, target 100, 1 replica: `Ready` reads 50 (ratio 0.5:
        // ceil(0.5) = 1, no change); `ReadyAndInFlight` reads 300: 3.
        let q = QueueLength {
            ready: 50,
            in_flight: 250,
        };
        let mut ready = AutoscaleSchedule::new(&[ChaosRule::new(AutoscaleRule::new(100))]);
        assert_eq!(ready.look(Controller::Hpa, 15 * S, q, 1).0, None);
        let both = AutoscaleRule {
            metric: QueueMetric::ReadyAndInFlight,
            ..AutoscaleRule::new(100)
        };
        let mut both = AutoscaleSchedule::new(&[ChaosRule::new(both)]);
        let (s, _) = both.look(Controller::Hpa, 15 * S, q, 1);
        assert_eq!(s.map(|s| (s.to, s.metric)), Some((3, 300)));
    }

    #[test]
    fn a_scale_in_applies_the_rule_s_deletion_costs() {
        // Workers 1-3 ready since 0s: equal, the highest goes first (3). With worker 2's
        // pod-deletion-cost at -5, it goes first instead; then 3.
        let fleet = || (1..=3).map(|w| (w, 0, Some(0)));
        let plain = AutoscaleSchedule::new(&[ChaosRule::new(AutoscaleRule::new(1))]);
        assert_eq!(plain.to_remove(fleet(), 1), [3]);
        let cheap = AutoscaleRule {
            deletion_cost: vec![(2, -5)],
            ..AutoscaleRule::new(1)
        };
        let cheap = AutoscaleSchedule::new(&[ChaosRule::new(cheap)]);
        assert_eq!(cheap.to_remove(fleet(), 2), [2, 3]);
    }
}
