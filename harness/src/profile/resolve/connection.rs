//! `chaos[].connection`: a fault on the workers' connections to the broker (`cut`, `latency`,
//! `partition`). Each fault takes its own keys; a key of another fault, a time the run never
//! reaches and a worker the consumer does not have are refused here, naming the field.

use std::time::Duration;

use serde::Deserialize;

use crate::profile::connection::{
    ConnectionFault, ConnectionRule, CutSchedule, CutTrigger, Direction, HeldFrames, Window,
};
use crate::profile::consumer_spec::ConsumerSpec;
use crate::profile::duration::format_duration;
use crate::profile::fault::{ChaosRule, Fault};
use crate::profile::path::FieldPath;
use crate::profile::problem::{read_value, Problem};
use crate::profile::run_spec::RunSpec;
use crate::profile::scalar::{DurationText, Text};

use super::checks::{after, at_least_one, exactly_one, positive, required};

/// The faults, as messages list them.
const FAULTS: &str = "cut, latency, partition";

/// The keys each fault takes (besides `fault`, `workers`, `optional`), as messages list them.
const CUT_KEYS: &str = "at or every (with from, to, times)";
const LATENCY_KEYS: &str = "delay, from, for, direction";
const PARTITION_KEYS: &str = "from, for, frames";

pub const FAULT: Fault = Fault {
    name: "connection",
    example: "connection: { fault: cut, at: 30s }",
    needs_full_record: false,
    resolve: |value, c, path| {
        let raw = read_value(value, path)?;
        Ok(ChaosRule::new(resolve(raw, c.run, c.consumer, path)?))
    },
};

/// `chaos[].connection`: a fault on the workers' connections to the broker. Every fault's keys
/// are read here; which belong to the chosen `fault` is checked when resolving.
#[derive(Debug, Default, Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a mapping with keys fault, at, every, from, to, times, for, delay, direction, \
                 frames, workers, optional"
)]
struct RawConnection {
    fault: Option<Text>,
    // cut
    at: Option<DurationText>,
    every: Option<DurationText>,
    to: Option<DurationText>,
    times: Option<u64>,
    /// A cut's first `every` counts from it; a latency's or partition's window opens at it.
    from: Option<DurationText>,
    // latency, partition
    #[serde(rename = "for")]
    length: Option<DurationText>,
    // latency
    delay: Option<DurationText>,
    direction: Option<Text>,
    // partition
    frames: Option<Text>,
    workers: Option<Vec<u32>>,
    optional: Option<bool>,
}

fn resolve(
    raw: RawConnection,
    run: &RunSpec,
    consumer: &ConsumerSpec,
    path: &FieldPath,
) -> Result<ConnectionRule, Problem> {
    let fault = required(
        raw.fault.as_ref(),
        &path.key("fault"),
        "one of cut, latency, partition",
    )?;
    let end = run.duration + run.drain;
    let fault = match fault.0.as_str() {
        "cut" => {
            foreign(
                &raw,
                &["for", "delay", "direction", "frames"],
                "a cut",
                CUT_KEYS,
                path,
            )?;
            ConnectionFault::Cut(cut(&raw, end, path)?)
        }
        "latency" => {
            foreign(
                &raw,
                &["at", "every", "to", "times", "frames"],
                "a latency",
                LATENCY_KEYS,
                path,
            )?;
            let delay = required(
                raw.delay.as_ref(),
                &path.key("delay"),
                "the time added to each frame, e.g. 200ms",
            )?;
            ConnectionFault::Latency {
                window: window(&raw, end, path)?,
                delay: positive(delay.0, &path.key("delay"))?,
                direction: direction(raw.direction.as_ref().map(|t| t.0.as_str()), path)?,
            }
        }
        "partition" => {
            foreign(
                &raw,
                &["at", "every", "to", "times", "delay", "direction"],
                "a partition",
                PARTITION_KEYS,
                path,
            )?;
            ConnectionFault::Partition {
                window: window(&raw, end, path)?,
                frames: frames(raw.frames.as_ref().map(|t| t.0.as_str()), path)?,
            }
        }
        other => {
            return Err(Problem::new(
                path.key("fault"),
                format!("must be one of {FAULTS}, got {other:?}"),
            ))
        }
    };
    Ok(ConnectionRule {
        fault,
        workers: super::deploy::workers(
            raw.workers,
            consumer.workers,
            &path.key("workers"),
            "a connection fault acts on at least one worker",
        )?,
        optional: raw.optional.unwrap_or(false),
    })
}

/// A key the profile set that belongs to another fault.
fn foreign(
    raw: &RawConnection,
    keys: &[&str],
    fault: &str,
    takes: &str,
    path: &FieldPath,
) -> Result<(), Problem> {
    let set = [
        ("at", raw.at.is_some()),
        ("every", raw.every.is_some()),
        ("to", raw.to.is_some()),
        ("times", raw.times.is_some()),
        ("for", raw.length.is_some()),
        ("delay", raw.delay.is_some()),
        ("direction", raw.direction.is_some()),
        ("frames", raw.frames.is_some()),
    ];
    match set.iter().find(|(k, on)| *on && keys.contains(k)) {
        Some((key, _)) => Err(Problem::at_key(
            path.key(key),
            format!("is not a key of {fault}: {fault} takes {takes}, workers, optional"),
        )),
        None => Ok(()),
    }
}

fn cut(raw: &RawConnection, end: Duration, path: &FieldPath) -> Result<CutSchedule, Problem> {
    exactly_one(
        path,
        &[("at", raw.at.is_some()), ("every", raw.every.is_some())],
        "{ fault: cut, at: 30s } or { fault: cut, every: 5m }",
    )?;
    let trigger = match (raw.at, raw.every) {
        (Some(at), _) => {
            for (key, set) in [
                ("from", raw.from.is_some()),
                ("to", raw.to.is_some()),
                ("times", raw.times.is_some()),
            ] {
                if set {
                    return Err(Problem::at_key(
                        path.key(key),
                        "belongs to a cut with `every` (a cut `at` an instant comes once)",
                    ));
                }
            }
            CutTrigger::At(before_end(
                at.0,
                end,
                "the cut would come",
                &path.key("at"),
            )?)
        }
        (None, every) => {
            let every = positive(every.map(|d| d.0).unwrap_or_default(), &path.key("every"))?;
            let from = raw.from.map(|d| d.0).unwrap_or_default();
            before_end(
                from + every,
                end,
                "the first cut would come",
                &path.key("every"),
            )?;
            if let Some(to) = raw.to {
                after(to.0, from, "from", &path.key("to"))?;
            }
            CutTrigger::Every { every, from }
        }
    };
    Ok(CutSchedule {
        trigger,
        to: raw.to.map(|d| d.0),
        times: raw
            .times
            .map(|n| at_least_one(n, &path.key("times"), "leave the rule out instead"))
            .transpose()?,
    })
}

/// A latency's or a partition's window: `from` required and before the run's end, `for` more
/// than 0s and closing by the run's end.
fn window(raw: &RawConnection, end: Duration, path: &FieldPath) -> Result<Window, Problem> {
    let from = required(
        raw.from,
        &path.key("from"),
        "the instant the fault starts, e.g. 30s",
    )?;
    let from = before_end(from.0, end, "the window would open", &path.key("from"))?;
    let length = match raw.length {
        None => None,
        Some(l) => {
            let at = path.key("for");
            let l = positive(l.0, &at)?;
            if from + l > end {
                return Err(Problem::new(
                    at,
                    format!(
                        "the window would close at {}, after the run's end at {} (run.duration \
                         + run.drain): shorten it, or leave `for` out to last to the end",
                        format_duration(from + l),
                        format_duration(end)
                    ),
                ));
            }
            Some(l)
        }
    };
    Ok(Window { from, length })
}

/// An instant the run reaches: one at or after its end (`run.duration + run.drain`) selects
/// nothing.
fn before_end(
    at: Duration,
    end: Duration,
    what: &str,
    path: &FieldPath,
) -> Result<Duration, Problem> {
    if at >= end {
        return Err(Problem::new(
            path.clone(),
            format!(
                "selects nothing: {what} at {}, and the run ends at {} (run.duration + \
                 run.drain)",
                format_duration(at),
                format_duration(end)
            ),
        ));
    }
    Ok(at)
}

fn direction(name: Option<&str>, path: &FieldPath) -> Result<Direction, Problem> {
    match name {
        None | Some("both") => Ok(Direction::Both),
        Some("to_broker") => Ok(Direction::ToBroker),
        Some("to_worker") => Ok(Direction::ToWorker),
        Some(other) => Err(Problem::new(
            path.key("direction"),
            format!("must be one of both, to_broker, to_worker, got {other:?}"),
        )),
    }
}

fn frames(name: Option<&str>, path: &FieldPath) -> Result<HeldFrames, Problem> {
    match name {
        None | Some("hold") => Ok(HeldFrames::Hold),
        Some("drop") => Ok(HeldFrames::Drop),
        Some(other) => Err(Problem::new(
            path.key("frames"),
            format!(
                "must be hold (delivered when the partition ends) or drop (lost), got {other:?}"
            ),
        )),
    }
}

#[cfg(test)]
#[path = "connection_tests.rs"]
mod tests;
