//! Faults injected into a run. One fault per file, each a `ChaosRule` variant with its schedule:
//!
//! - [`kill_worker`]: kills a worker at a point of its handler (`received`, `call_started`,
//!   `call_answered`, or a checkpoint the target declares), or on a timer (`at`, `every`).
//! - [`deploy`]: a rolling restart: each worker told to stop, killed at the end of its grace.
//! - [`message`]: the ack or the delivery of the deliveries it selects is dropped or delayed.
//! - [`connection`]: a cut, latency or partition between workers and the broker.
//! - [`autoscale`]: the fleet's replica count changed as KEDA and the HPA change it.
//!
//! [`Faults`] holds every schedule of a run; a runner asks it, not one fault's type. Each firing
//! is recorded as `EventKind::FaultFired` (an `autoscale`'s change as `Scaled`) with the rule's
//! index (counted per rule by `metrics::chaos`). Provider faults (slowness, errors, resets,
//! hangs, before or after the effect) are the provider's phases, by time window, key, attempt
//! and delivery (`provider::model`, `provider::select`).

pub mod autoscale;
pub mod connection;
pub mod deploy;
pub mod kill_worker;
pub mod message;

pub use autoscale::AutoscaleSchedule;
pub use connection::ConnectionSchedule;
pub use deploy::DeploySchedule;
pub use kill_worker::{KillSchedule, PointHit};
pub use message::{MessageHit, MessageSchedule};

use crate::profile::{ChaosRule, FaultRule};
use crate::record::{ChaosRuleRecord, Nanos};

/// Every fault schedule of a run.
#[derive(Debug, Clone)]
pub struct Faults {
    pub kills: KillSchedule,
    pub deploys: DeploySchedule,
    pub messages: MessageSchedule,
    pub connections: ConnectionSchedule,
    pub autoscale: AutoscaleSchedule,
}

/// A rule's timed instant: which schedule it belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Timed {
    Kill(u32),
    Deploy(u32),
    Connection(u32),
    /// A look at the queue by the autoscaler's controller.
    Autoscale(autoscale::Controller),
}

impl Faults {
    pub fn new(rules: &[ChaosRule], seed: u64) -> Faults {
        Faults {
            kills: KillSchedule::new(rules, seed),
            deploys: DeploySchedule::new(rules),
            messages: MessageSchedule::new(rules, seed),
            connections: ConnectionSchedule::new(rules),
            autoscale: AutoscaleSchedule::new(rules),
        }
    }

    /// The first instant of every timed rule, in rule order per schedule.
    pub fn timed(&self) -> Vec<(Nanos, Timed)> {
        let kills = self.kills.timed().into_iter();
        let deploys = self.deploys.timed().into_iter();
        let connections = self.connections.timed().into_iter();
        let looks = self.autoscale.timed().into_iter();
        kills
            .map(|(at, r)| (at, Timed::Kill(r)))
            .chain(deploys.map(|(at, r)| (at, Timed::Deploy(r))))
            .chain(connections.map(|(at, r)| (at, Timed::Connection(r))))
            .chain(looks.map(|(at, by)| (at, Timed::Autoscale(by))))
            .collect()
    }
}

/// A run with kill rules only.
impl From<KillSchedule> for Faults {
    fn from(kills: KillSchedule) -> Faults {
        Faults {
            kills,
            deploys: DeploySchedule::default(),
            messages: MessageSchedule::default(),
            connections: ConnectionSchedule::default(),
            autoscale: AutoscaleSchedule::default(),
        }
    }
}

/// The rules of fault `R` with their index in the profile's `chaos` list: what each schedule
/// is made of.
pub(crate) fn rules_of<R: FaultRule>(chaos: &[ChaosRule]) -> impl Iterator<Item = (u32, &R)> {
    chaos
        .iter()
        .enumerate()
        .filter_map(|(i, r)| Some((i as u32, r.get::<R>()?)))
}

/// The run's chaos rules as the record keeps them: a label each and whether it may stay unfired.
pub fn describe(rules: &[ChaosRule]) -> Vec<ChaosRuleRecord> {
    rules
        .iter()
        .map(|rule| ChaosRuleRecord {
            fault: rule.fault(),
            label: rule.label(),
            optional: rule.optional(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::profile::{KillPoint, KillRule, KillTrigger};

    #[test]
    fn a_rule_is_labelled_by_its_trigger_and_selectors() {
        let plain = KillRule::new(KillTrigger::Point(KillPoint::CallStarted));
        let narrow = KillRule {
            delivery: Some(5),
            keys: Some(vec!["a".into(), "b".into(), "c".into(), "d".into()]),
            worker: Some(2),
            from: Some(Duration::from_secs(60)),
            to: Some(Duration::from_secs(120)),
            times: Some(3),
            probability: 0.5,
            delay: Duration::from_secs(1),
            optional: true,
            ..KillRule::new(KillTrigger::Every(Duration::from_secs(300)))
        };
        let got = describe(&[ChaosRule::new(plain), ChaosRule::new(narrow)]);
        assert_eq!(
            got,
            vec![
                ChaosRuleRecord {
                    fault: "kill_worker",
                    label: "kill_worker at call_started".into(),
                    optional: false
                },
                ChaosRuleRecord {
                    fault: "kill_worker",
                    label: "kill_worker every 5m (delivery 5, keys a, b, c, ..., worker 2, \
                            from 1m, to 2m, times 3, probability 0.5, delay 1s)"
                        .into(),
                    optional: true
                },
            ]
        );
        let at = KillRule::new(KillTrigger::At(Duration::from_secs(600)));
        assert_eq!(at.label(), "kill_worker at 10m");
    }
}
