//! `chaos[].deploy`: a rolling restart. Every value a rollout could never act on is refused here
//! (a worker the consumer does not have, a start after the run, a grace the run cannot hold).

use std::time::Duration;

use serde::Deserialize;

use crate::profile::consumer_spec::ConsumerSpec;
use crate::profile::defaults;
use crate::profile::deploy::{DeployRule, DeployTrigger, StopSignal};
use crate::profile::duration::format_duration;
use crate::profile::fault::{ChaosRule, Fault};
use crate::profile::path::FieldPath;
use crate::profile::problem::{read_value, Problem};
use crate::profile::run_spec::RunSpec;
use crate::profile::scalar::{DurationText, Text};

use super::checks::{after, at_least_one, exactly_one, non_empty, positive};

pub const FAULT: Fault = Fault {
    name: "deploy",
    example: "deploy: { at: 10m }",
    // What each rollout cost is read from the record's messages.
    needs_full_record: true,
    resolve: |value, c, path| {
        let raw = read_value(value, path)?;
        Ok(ChaosRule::new(resolve(raw, c.run, c.consumer, path)?))
    },
};

/// `chaos[].deploy`: a rolling restart of the workers.
#[derive(Debug, Default, Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a mapping with keys at, every, from, to, times, max_unavailable, grace, signal, \
                 workers, optional"
)]
struct RawDeploy {
    at: Option<DurationText>,
    every: Option<DurationText>,
    from: Option<DurationText>,
    to: Option<DurationText>,
    times: Option<u64>,
    max_unavailable: Option<u32>,
    grace: Option<DurationText>,
    signal: Option<Text>,
    workers: Option<Vec<u32>>,
    optional: Option<bool>,
}

fn resolve(
    raw: RawDeploy,
    run: &RunSpec,
    consumer: &ConsumerSpec,
    path: &FieldPath,
) -> Result<DeployRule, Problem> {
    exactly_one(
        path,
        &[("at", raw.at.is_some()), ("every", raw.every.is_some())],
        "{ at: 10m } or { every: 1h }",
    )?;
    let end = run.duration + run.drain;
    let trigger = match (raw.at, raw.every) {
        (Some(at), _) => {
            if raw.from.is_some() {
                return Err(Problem::new(
                    path.key("from"),
                    "belongs to a deploy with `every` (a deploy `at` an instant starts then)",
                ));
            }
            DeployTrigger::At(before_end(at.0, end, &path.key("at"))?)
        }
        (None, every) => {
            let every = positive(every.map(|d| d.0).unwrap_or_default(), &path.key("every"))?;
            let from = raw.from.map(|d| d.0).unwrap_or_default();
            before_end(from + every, end, &path.key("every"))?;
            DeployTrigger::Every { every, from }
        }
    };
    if let (Some(to), DeployTrigger::Every { from, .. }) = (raw.to, trigger) {
        after(to.0, from, "from", &path.key("to"))?;
    }
    let grace = positive(
        raw.grace.map_or(defaults::DEPLOY_GRACE, |d| d.0),
        &path.key("grace"),
    )?;
    if grace >= end {
        return Err(Problem::new(
            path.key("grace"),
            format!(
                "must be shorter than the run ({}: run.duration + run.drain), got {}: no worker \
                 could reach the end of its grace",
                format_duration(end),
                format_duration(grace)
            ),
        ));
    }
    let workers = workers(
        raw.workers,
        consumer.workers,
        &path.key("workers"),
        "a rollout replaces at least one worker",
    )?;
    let max_unavailable = raw
        .max_unavailable
        .unwrap_or(defaults::DEPLOY_MAX_UNAVAILABLE);
    let mu_path = path.key("max_unavailable");
    at_least_one(
        max_unavailable,
        &mu_path,
        "a rollout stops at least one worker",
    )?;
    if max_unavailable as usize > workers.len() {
        return Err(Problem::new(
            mu_path,
            format!(
                "must be at most the workers the rollout replaces ({}), got {max_unavailable}",
                workers.len()
            ),
        ));
    }
    let times = raw
        .times
        .map(|n| at_least_one(n, &path.key("times"), "leave the rule out instead"))
        .transpose()?;
    Ok(DeployRule {
        trigger,
        max_unavailable,
        grace,
        signal: signal(
            raw.signal.as_ref().map(|t| t.0.as_str()),
            &path.key("signal"),
        )?,
        workers,
        to: raw.to.map(|d| d.0),
        times,
        optional: raw.optional.unwrap_or(false),
    })
}

/// A start the run reaches: one at or after its end (`run.duration + run.drain`) selects nothing.
fn before_end(at: Duration, end: Duration, path: &FieldPath) -> Result<Duration, Problem> {
    if at >= end {
        return Err(Problem::new(
            path.clone(),
            format!(
                "selects nothing: the first rollout would start at {}, and the run ends at {} \
                 (run.duration + run.drain)",
                format_duration(at),
                format_duration(end)
            ),
        ));
    }
    Ok(at)
}

/// The workers a rule acts on: every worker by default; a list names workers the consumer has,
/// each once (`empty` says why an empty list is refused).
pub(super) fn workers(
    raw: Option<Vec<u32>>,
    count: u32,
    path: &FieldPath,
    empty: &str,
) -> Result<Vec<u32>, Problem> {
    let Some(list) = raw else {
        return Ok((1..=count).collect());
    };
    non_empty(&list, path, empty)?;
    for (i, &w) in list.iter().enumerate() {
        if w == 0 || w > count {
            return Err(Problem::new(
                path.index(i),
                format!(
                    "selects nothing: must be a worker number from 1 to consumer.workers \
                     ({count}), got {w}"
                ),
            ));
        }
        if list[..i].contains(&w) {
            return Err(Problem::new(
                path.index(i),
                format!("worker {w} is listed twice"),
            ));
        }
    }
    Ok(list)
}

pub(super) fn signal(name: Option<&str>, path: &FieldPath) -> Result<StopSignal, Problem> {
    match name {
        None | Some("SIGTERM") | Some("TERM") => Ok(StopSignal::Term),
        Some("SIGINT") | Some("INT") => Ok(StopSignal::Int),
        Some(other) => Err(Problem::new(
            path.clone(),
            format!(
                "must be SIGTERM or SIGINT (the signal that asks a worker to stop; SIGKILL \
                 follows at the end of the grace), got {other:?}"
            ),
        )),
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use crate::profile::testutil::{error, one_chaos_rule, BASE};
    use crate::profile::{DeployRule, DeployTrigger, StopSignal};

    /// `BASE` with three workers and one deploy rule (on line 7) written `rule`.
    fn profile(rule: &str) -> String {
        format!(
            "{}chaos:\n  - deploy: {rule}\n",
            BASE.replace(
                "target: ack-after-work",
                "target: ack-after-work, workers: 3"
            )
        )
    }

    fn rule(text: &str) -> DeployRule {
        let rule = one_chaos_rule(&profile(text));
        rule.get::<crate::profile::DeployRule>()
            .cloned()
            .expect("a deploy")
    }

    #[test]
    fn a_deploy_gets_its_defaults() {
        assert_eq!(
            rule("{ at: 5m }"),
            DeployRule {
                trigger: DeployTrigger::At(Duration::from_secs(300)),
                max_unavailable: 1,
                grace: Duration::from_secs(30),
                signal: StopSignal::Term,
                workers: vec![1, 2, 3],
                to: None,
                times: None,
                optional: false,
            }
        );
        let r = rule("{ every: 2m, from: 1m, to: 9m, times: 2, max_unavailable: 2, grace: 5s, signal: SIGINT, workers: [3, 1], optional: true }");
        assert_eq!(
            r.trigger,
            DeployTrigger::Every {
                every: Duration::from_secs(120),
                from: Duration::from_secs(60)
            }
        );
        assert_eq!(
            (
                r.max_unavailable,
                r.grace,
                r.signal,
                r.workers,
                r.times,
                r.optional
            ),
            (
                2,
                Duration::from_secs(5),
                StopSignal::Int,
                vec![3, 1],
                Some(2),
                true
            )
        );
    }

    #[test]
    fn what_a_rollout_could_never_act_on_is_refused() {
        // The run ends at 10m + 30m (run.drain's default) = 40m.
        assert_eq!(
            error(&profile("{ at: 5m, grace: 40m }")),
            "p.yaml:7:30: chaos.0.deploy.grace: must be shorter than the run (40m: run.duration \
             + run.drain), got 40m: no worker could reach the end of its grace"
        );
        assert_eq!(
            error(&profile("{ at: 41m }")),
            "p.yaml:7:19: chaos.0.deploy.at: selects nothing: the first rollout would start at \
             41m, and the run ends at 40m (run.duration + run.drain)"
        );
        assert_eq!(
            error(&profile("{ at: 5m, workers: [2, 4] }")),
            "p.yaml:7:36: chaos.0.deploy.workers.1: selects nothing: must be a worker number \
             from 1 to consumer.workers (3), got 4"
        );
        assert_eq!(
            error(&profile("{ at: 5m, workers: [] }")),
            "p.yaml:7:23: chaos.0.deploy.workers: must not be empty: a rollout replaces at least \
             one worker"
        );
        assert_eq!(
            error(&profile("{ at: 5m, max_unavailable: 4 }")),
            "p.yaml:7:40: chaos.0.deploy.max_unavailable: must be at most the workers the \
             rollout replaces (3), got 4"
        );
        assert_eq!(
            error(&profile("{ at: 5m, signal: SIGKILL }")),
            "p.yaml:7:31: chaos.0.deploy.signal: must be SIGTERM or SIGINT (the signal that asks \
             a worker to stop; SIGKILL follows at the end of the grace), got \"SIGKILL\""
        );
        assert_eq!(
            error(&profile("{ grace: 5s }")),
            "p.yaml:7:5: chaos.0.deploy: give one of at, every, as in { at: 10m } or { every: 1h }"
        );
    }
}
