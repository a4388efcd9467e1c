//! `chaos`: fault rules. Today one kind, `kill_worker`: a worker dies at a handler point, at an
//! instant, or periodically, for the deliveries its selectors match.

use crate::profile::defaults;
use crate::profile::path::FieldPath;
use crate::profile::problem::Problem;
use crate::profile::raw::{RawChaosRule, RawKill};
use crate::profile::scenario::{
    ChaosRule, ConsumerSpec, KillPoint, KillRule, KillTrigger, WorkloadSpec,
};

use super::checks::{
    after, at_least_one, exactly_one, non_empty, positive, required, unit_interval,
};
use super::keys::KeyUniverse;

const POINTS: &str =
    "received, call_started, call_answered or a checkpoint the target declares (e.g. claimed)";

pub fn resolve(
    raw: Vec<RawChaosRule>,
    workload: &WorkloadSpec,
    consumer: &ConsumerSpec,
    path: &FieldPath,
) -> Result<Vec<ChaosRule>, Problem> {
    let keys = KeyUniverse::of(workload);
    raw.into_iter()
        .enumerate()
        .map(|(i, rule)| {
            let at = path.index(i);
            let kill = required(
                rule.kill_worker,
                &at.key("kill_worker"),
                "the rule, as in kill_worker: { point: received }",
            )?;
            Ok(ChaosRule::KillWorker(kill_rule(
                kill,
                &keys,
                consumer,
                &at.key("kill_worker"),
            )?))
        })
        .collect()
}

fn kill_rule(
    raw: RawKill,
    keys: &KeyUniverse,
    consumer: &ConsumerSpec,
    path: &FieldPath,
) -> Result<KillRule, Problem> {
    exactly_one(
        path,
        &[
            ("point", raw.point.is_some()),
            ("at", raw.at.is_some()),
            ("every", raw.every.is_some()),
        ],
        "{ point: call_started }, { at: 10m } or { every: 5m }",
    )?;
    let trigger = if let Some(p) = raw.point {
        KillTrigger::Point(point(&p.0, &path.key("point"))?)
    } else if let Some(at) = raw.at {
        KillTrigger::At(at.0)
    } else {
        let every = raw.every.map(|d| d.0).unwrap_or_default();
        KillTrigger::Every(positive(every, &path.key("every"))?)
    };
    let delivery = match raw.delivery {
        Some(n) => Some(at_least_one(
            n,
            &path.key("delivery"),
            "deliveries count from 1",
        )?),
        None => None,
    };
    let worker = match raw.worker {
        Some(w) if w == 0 || w > consumer.workers => {
            return Err(Problem::new(
                path.key("worker"),
                format!(
                    "must be a worker number from 1 to consumer.workers ({}), got {w}",
                    consumer.workers
                ),
            ))
        }
        w => w,
    };
    if let (Some(from), Some(to)) = (raw.from, raw.to) {
        after(to.0, from.0, "from", &path.key("to"))?;
    }
    let times = match raw.times {
        Some(n) => Some(at_least_one(
            n,
            &path.key("times"),
            "leave the rule out instead",
        )?),
        None => None,
    };
    let selected = match raw.keys {
        Some(list) => {
            let keys_path = path.key("keys");
            non_empty(
                &list,
                &keys_path,
                "name the message keys this rule applies to",
            )?;
            for (i, k) in list.iter().enumerate() {
                keys.check(&k.0, &keys_path.index(i))?;
            }
            Some(list.into_iter().map(|k| k.0).collect())
        }
        None => None,
    };
    Ok(KillRule {
        trigger,
        delivery,
        probability: unit_interval(
            raw.probability.unwrap_or(defaults::KILL_PROBABILITY),
            &path.key("probability"),
        )?,
        keys: selected,
        worker,
        from: raw.from.map(|d| d.0),
        to: raw.to.map(|d| d.0),
        times,
        delay: raw.delay.map(|d| d.0).unwrap_or_default(),
    })
}

/// A handler point: a built-in one, or a checkpoint name the target declares.
fn point(name: &str, path: &FieldPath) -> Result<KillPoint, Problem> {
    match name {
        "received" => Ok(KillPoint::Received),
        "call_started" => Ok(KillPoint::CallStarted),
        "call_answered" => Ok(KillPoint::CallAnswered),
        other if is_identifier(other) => Ok(KillPoint::Checkpoint(other.to_string())),
        other => Err(Problem::new(
            path.clone(),
            format!("must be {POINTS}, got {other:?}"),
        )),
    }
}

/// A checkpoint name: a letter, then letters, digits, `_` or `-`.
fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use crate::profile::scenario::{ChaosRule, KillPoint, KillRule, KillTrigger};
    use crate::profile::testutil::{error, scenario, with};

    /// `BASE` with one kill rule (on line 7) written `rule`.
    fn profile(rule: &str) -> String {
        with(&format!("chaos:\n  - kill_worker: {rule}\n"))
    }

    fn rule(text: &str) -> KillRule {
        let s = scenario(&profile(text));
        let [ChaosRule::KillWorker(rule)] = s.chaos.as_slice() else {
            panic!("one rule expected, got {:?}", s.chaos);
        };
        rule.clone()
    }

    #[test]
    fn a_rule_gets_its_defaults() {
        assert_eq!(
            rule("{ point: call_started }"),
            KillRule {
                trigger: KillTrigger::Point(KillPoint::CallStarted),
                delivery: None,
                probability: 1.0,
                keys: None,
                worker: None,
                from: None,
                to: None,
                times: None,
                delay: Duration::ZERO,
            }
        );
    }

    #[test]
    fn every_trigger_and_selector_reads() {
        let r = rule("{ point: claimed, delivery: 2, probability: 0.5, keys: [msg-1], worker: 1, from: 1m, to: 2m, times: 3, delay: 1s }");
        assert_eq!(
            r.trigger,
            KillTrigger::Point(KillPoint::Checkpoint("claimed".into()))
        );
        assert_eq!(
            (r.delivery, r.probability, r.worker, r.times),
            (Some(2), 0.5, Some(1), Some(3))
        );
        assert_eq!(r.keys, Some(vec!["msg-1".into()]));
        assert_eq!(
            (r.from, r.to, r.delay),
            (
                Some(Duration::from_secs(60)),
                Some(Duration::from_secs(120)),
                Duration::from_secs(1)
            )
        );
        assert_eq!(
            rule("{ at: 10m }").trigger,
            KillTrigger::At(Duration::from_secs(600))
        );
        assert_eq!(
            rule("{ every: 5m }").trigger,
            KillTrigger::Every(Duration::from_secs(300))
        );
        assert_eq!(
            rule("{ point: received }").trigger,
            KillTrigger::Point(KillPoint::Received)
        );
        assert_eq!(
            rule("{ point: call_answered }").trigger,
            KillTrigger::Point(KillPoint::CallAnswered)
        );
    }

    #[test]
    fn a_rule_is_kill_worker() {
        assert_eq!(
            error(&with("chaos:\n  - {}\n")),
            "p.yaml:7:5: chaos.0.kill_worker: required: the rule, as in kill_worker: { point: received }"
        );
        assert_eq!(
            error(&with("chaos:\n  - kill_provider: {}\n")),
            "p.yaml:7:5: chaos.0.kill_provider: unknown field `kill_provider`, expected `kill_worker`"
        );
    }

    #[test]
    fn a_rule_has_exactly_one_trigger() {
        assert_eq!(
            error(&profile("{ delivery: 1 }")),
            "p.yaml:7:5: chaos.0.kill_worker: give one of point, at, every, as in \
             { point: call_started }, { at: 10m } or { every: 5m }"
        );
        assert_eq!(
            error(&profile("{ point: received, every: 1m }")),
            "p.yaml:7:5: chaos.0.kill_worker: give only one of point, at, every, got point and every"
        );
    }

    #[test]
    fn a_point_is_a_known_point_or_a_checkpoint_name() {
        assert_eq!(
            error(&profile("{ point: 'after send' }")),
            "p.yaml:7:27: chaos.0.kill_worker.point: must be received, call_started, \
             call_answered or a checkpoint the target declares (e.g. claimed), got \"after send\""
        );
    }

    #[test]
    fn every_must_be_positive() {
        assert_eq!(
            error(&profile("{ every: 0s }")),
            "p.yaml:7:27: chaos.0.kill_worker.every: must be more than 0s, got 0s"
        );
    }

    #[test]
    fn selectors_are_checked() {
        assert_eq!(
            error(&profile("{ point: received, delivery: 0 }")),
            "p.yaml:7:47: chaos.0.kill_worker.delivery: must be at least 1, got 0 (deliveries count from 1)"
        );
        assert_eq!(
            error(&profile("{ point: received, probability: 1.01 }")),
            "p.yaml:7:50: chaos.0.kill_worker.probability: must be between 0 and 1, got 1.01"
        );
        assert_eq!(
            error(&profile("{ point: received, worker: 2 }")),
            "p.yaml:7:45: chaos.0.kill_worker.worker: must be a worker number from 1 to \
             consumer.workers (1), got 2"
        );
        assert_eq!(
            error(&profile("{ point: received, from: 2m, to: 1m }")),
            "p.yaml:7:51: chaos.0.kill_worker.to: must be after from (2m), got 1m"
        );
        assert_eq!(
            error(&profile("{ point: received, times: 0 }")),
            "p.yaml:7:44: chaos.0.kill_worker.times: must be at least 1, got 0 (leave the rule out instead)"
        );
        assert_eq!(
            error(&profile("{ point: received, keys: [order-1] }")),
            "p.yaml:7:44: chaos.0.kill_worker.keys.0: `order-1` is not a message key: without \
             workload.keys, messages are keyed msg-1, msg-2, ... (list your own keys in workload.keys)"
        );
    }
}
