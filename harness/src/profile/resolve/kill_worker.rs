//! `chaos[].kill_worker`: when a worker dies, and which deliveries it applies to (the rule:
//! [`crate::profile::kill_worker`]).

use serde::Deserialize;

use crate::profile::consumer_spec::ConsumerSpec;
use crate::profile::defaults;
use crate::profile::fault::{ChaosRule, Context, Fault};
use crate::profile::kill_worker::{KillPoint, KillRule, KillTrigger};
use crate::profile::path::FieldPath;
use crate::profile::problem::{read_value, Problem};
use crate::profile::scalar::{DurationText, Text};

use super::checks::{after, at_least_one, exactly_one, positive, unit_interval};
use super::keys::KeyUniverse;

use ackbench_targets::options::target_info;

pub const FAULT: Fault = Fault {
    name: "kill_worker",
    example: "kill_worker: { point: received }",
    needs_full_record: false,
    resolve,
};

/// The points every consumer reaches: ackbench sees them at the broker and the provider.
const BUILT_IN_POINTS: [&str; 3] = ["received", "call_started", "call_answered"];

/// `chaos[].kill_worker` as written.
#[derive(Debug, Default, Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a mapping with keys point, at, every, delivery, probability, keys, worker, \
                 from, to, times, delay, optional"
)]
struct RawKill {
    point: Option<Text>,
    at: Option<DurationText>,
    every: Option<DurationText>,
    delivery: Option<u32>,
    probability: Option<f64>,
    keys: Option<Vec<Text>>,
    worker: Option<u32>,
    from: Option<DurationText>,
    to: Option<DurationText>,
    times: Option<u64>,
    delay: Option<DurationText>,
    optional: Option<bool>,
}

fn resolve(value: &yaml_serde::Value, c: &Context, path: &FieldPath) -> Result<ChaosRule, Problem> {
    let raw = read_value(value, path)?;
    Ok(ChaosRule::new(kill_rule(raw, c.keys, c.consumer, path)?))
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
        KillTrigger::Point(point(&p.0, consumer, &path.key("point"))?)
    } else if let Some(at) = raw.at {
        KillTrigger::At(at.0)
    } else {
        let every = raw.every.map(|d| d.0).unwrap_or_default();
        KillTrigger::Every(positive(every, &path.key("every"))?)
    };
    let delivery = raw
        .delivery
        .map(|n| at_least_one(n, &path.key("delivery"), "deliveries count from 1"))
        .transpose()?;
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
    let selected = keys.selected(raw.keys, &path.key("keys"))?;
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
        optional: raw.optional.unwrap_or(false),
    })
}

/// A handler point: a built-in one, or a checkpoint the consumer's target declares. A point no
/// handler of this consumer reaches could never fire, so it is refused with the valid ones.
fn point(name: &str, consumer: &ConsumerSpec, path: &FieldPath) -> Result<KillPoint, Problem> {
    match name {
        "received" => return Ok(KillPoint::Received),
        "call_started" => return Ok(KillPoint::CallStarted),
        "call_answered" => return Ok(KillPoint::CallAnswered),
        _ => {}
    }
    let quoted = |names: &[&str]| {
        names
            .iter()
            .map(|n| format!("`{n}`"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let builtin = quoted(&BUILT_IN_POINTS);
    let message = match (&consumer.command, target_info(&consumer.target)) {
        (None, Some(info)) if info.checkpoints.contains(&name) => {
            return Ok(KillPoint::Checkpoint(name.to_string()))
        }
        (None, Some(info)) if info.checkpoints.is_empty() => format!(
            "no handler of target `{}` reaches {name:?}: the points are {builtin} (it declares \
             no checkpoint)",
            info.name
        ),
        (None, Some(info)) => format!(
            "no handler of target `{}` reaches {name:?}: the points are {builtin} and the \
             checkpoints it declares, {}",
            info.name,
            quoted(info.checkpoints)
        ),
        _ => format!(
            "ackbench cannot see {name:?} in a consumer program (consumer.command): it sees \
             {builtin}, at the broker and the provider; checkpoints exist only in built-in \
             targets"
        ),
    };
    Err(Problem::new(path.clone(), message))
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use crate::profile::testutil::{error, one_chaos_rule, scenario, with};
    use crate::profile::{ChaosRule, KillPoint, KillRule, KillTrigger};

    /// `BASE` with one kill rule (on line 7) written `rule`.
    fn profile(rule: &str) -> String {
        with(&format!("chaos:\n  - kill_worker: {rule}\n"))
    }

    fn rule(text: &str) -> KillRule {
        kill_of(&profile(text))
    }

    fn kill_of(text: &str) -> KillRule {
        let rule = one_chaos_rule(text);
        rule.get::<crate::profile::KillRule>()
            .cloned()
            .expect("a kill_worker")
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
                optional: false,
            }
        );
        assert!(rule("{ point: received, optional: true }").optional);
    }

    #[test]
    fn every_trigger_and_selector_reads() {
        let text = profile("{ point: claimed, delivery: 2, probability: 0.5, keys: [msg-1], worker: 1, from: 1m, to: 2m, times: 3, delay: 1s }")
            .replace("target: ack-after-work", "target: claim-then-send");
        let r = kill_of(&text);
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
    fn a_point_is_a_built_in_point_or_a_checkpoint_the_target_declares() {
        // A misspelt point could never fire: refused, naming the points this target reaches.
        assert_eq!(
            error(&profile("{ point: call_startd, probability: 1 }")),
            "p.yaml:7:27: chaos.0.kill_worker.point: no handler of target `ack-after-work` \
             reaches \"call_startd\": the points are `received`, `call_started`, \
             `call_answered` (it declares no checkpoint)"
        );
        // Another target's checkpoint is not this one's.
        assert_eq!(
            error(&profile("{ point: claimed }").replace("ack-after-work", "dedupe-table")),
            "p.yaml:7:27: chaos.0.kill_worker.point: no handler of target `dedupe-table` \
             reaches \"claimed\": the points are `received`, `call_started`, `call_answered` \
             and the checkpoints it declares, `committed`"
        );
        let committed =
            scenario(&profile("{ point: committed }").replace("ack-after-work", "status-fence"));
        assert_eq!(
            committed.chaos,
            vec![ChaosRule::new(KillRule::new(KillTrigger::Point(
                KillPoint::Checkpoint("committed".into())
            )))]
        );
    }

    #[test]
    fn a_consumer_program_reaches_only_the_points_ackbench_sees() {
        let live = "name: t\nmode: live\nrun: { duration: 10m }\nworkload:\n  arrival: { every: 50s }\n\
                    consumer: { command: [python3, c.py] }\nchaos:\n  - kill_worker: { point: claimed }\n";
        assert_eq!(
            error(live),
            "p.yaml:8:27: chaos.0.kill_worker.point: ackbench cannot see \"claimed\" in a consumer \
             program (consumer.command): it sees `received`, `call_started`, `call_answered`, at \
             the broker and the provider; checkpoints exist only in built-in targets"
        );
        assert!(
            scenario(&live.replace("claimed", "call_answered"))
                .chaos
                .len()
                == 1
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
