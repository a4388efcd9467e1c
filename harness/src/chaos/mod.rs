//! Faults injected into a run. One fault kind per file, each with a probability and a scope.
//!
//! - [`kill_worker`]: kills a worker at a point of its handler (`received`, `call_started`,
//!   `call_answered`, or a checkpoint the target declares), or on a timer (`at`, `every`).
//!
//! Provider faults (slowness, errors) are the provider's timed phases (`provider::model`).

pub mod kill_worker;

pub use kill_worker::{KillSchedule, PointHit};

use crate::profile::{format_duration, ChaosRule, KillRule, KillTrigger};
use crate::record::ChaosRuleRecord;

/// The run's chaos rules as the record keeps them: a label each and whether it may stay unfired.
pub fn describe(rules: &[ChaosRule]) -> Vec<ChaosRuleRecord> {
    rules
        .iter()
        .map(|ChaosRule::KillWorker(r)| ChaosRuleRecord {
            label: kill_label(r),
            optional: r.optional,
        })
        .collect()
}

/// `kill_worker at call_started (delivery 5, probability 0.5)`: the trigger, then every selector
/// that narrows it.
fn kill_label(r: &KillRule) -> String {
    let mut label = match &r.trigger {
        KillTrigger::Point(p) => format!("kill_worker at {}", p.name()),
        KillTrigger::At(t) => format!("kill_worker at {}", format_duration(*t)),
        KillTrigger::Every(p) => format!("kill_worker every {}", format_duration(*p)),
    };
    let mut scope = Vec::new();
    if let Some(d) = r.delivery {
        scope.push(format!("delivery {d}"));
    }
    if let Some(keys) = &r.keys {
        let shown: Vec<&str> = keys.iter().take(3).map(String::as_str).collect();
        let more = if keys.len() > 3 { ", ..." } else { "" };
        scope.push(format!("keys {}{more}", shown.join(", ")));
    }
    if let Some(w) = r.worker {
        scope.push(format!("worker {w}"));
    }
    if let Some(f) = r.from {
        scope.push(format!("from {}", format_duration(f)));
    }
    if let Some(t) = r.to {
        scope.push(format!("to {}", format_duration(t)));
    }
    if let Some(n) = r.times {
        scope.push(format!("times {n}"));
    }
    if r.probability < 1.0 {
        scope.push(format!("probability {}", r.probability));
    }
    if !r.delay.is_zero() {
        scope.push(format!("delay {}", format_duration(r.delay)));
    }
    if !scope.is_empty() {
        label.push_str(&format!(" ({})", scope.join(", ")));
    }
    label
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::profile::KillPoint;

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
        let got = describe(&[ChaosRule::KillWorker(plain), ChaosRule::KillWorker(narrow)]);
        assert_eq!(
            got,
            vec![
                ChaosRuleRecord {
                    label: "kill_worker at call_started".into(),
                    optional: false
                },
                ChaosRuleRecord {
                    label: "kill_worker every 5m (delivery 5, keys a, b, c, ..., worker 2, \
                            from 1m, to 2m, times 3, probability 0.5, delay 1s)"
                        .into(),
                    optional: true
                },
            ]
        );
        let at = KillRule::new(KillTrigger::At(Duration::from_secs(600)));
        assert_eq!(kill_label(&at), "kill_worker at 10m");
    }
}
