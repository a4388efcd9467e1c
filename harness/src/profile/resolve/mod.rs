//! The second stage: a raw profile, as written, to the [`Scenario`] the runner reads. Fills in
//! defaults and checks every rule the types cannot express; a broken rule is a [`Problem`]
//! naming the field.

pub(super) mod autoscale;
pub(super) mod broker;
mod broker_keys;
mod budgets;
pub(super) mod checks;
pub(super) mod connection;
mod consumer;
mod consumer_env;
pub(super) mod deploy;
mod footprint;
mod ingress;
pub(super) mod keys;
pub(super) mod kill_worker;
mod latency;
pub(super) mod message;
pub(super) mod message_rule;
pub(super) mod node;
mod producer;
mod provider;
mod ramp;
mod workload;

use std::time::Duration;

use crate::profile::defaults;
use crate::profile::duration::format_duration;
use crate::profile::path::FieldPath;
use crate::profile::problem::Problem;
use crate::profile::raw::{ModeName, RawBroker, RawProfile, RawRedrive, RawRun};
use crate::profile::scalar::number_text;
use crate::profile::scenario::{Mode, RunSpec, Scenario};

use checks::{positive, required};

#[cfg(feature = "live")]
pub use consumer::scaled_clock_unsupported;

/// A sim run that streams by default, asked to keep its full record (`ackbench run --record
/// full`, `--trace`), holds 400 B a message rather than 16: the estimate again, at that size.
pub fn check_full_record(s: &Scenario) -> Result<(), String> {
    let top = FieldPath::root();
    footprint::Footprint::of(&s.run, &s.workload, &s.consumer, false)
        .check(&s.workload, &top.key("workload"), &top.key("consumer"))
        .map_err(|p| format!("{}: {}", p.path, p.message))
}

/// Resolves a raw profile; `default_name` is used when it has no `name`.
pub fn resolve(raw: RawProfile, default_name: &str) -> Result<Scenario, Problem> {
    let top = FieldPath::root();
    let name = match raw.name {
        Some(n) => check_name(n.0, &top.key("name"))?,
        None => check_name(default_name.to_string(), &top.key("name")).map_err(|p| {
            Problem::new(
                p.path,
                format!(
                    "the profile has no name, so it is named after its file, and the file's name \
                     gives {default_name:?}, which cannot name the report folder: add a name \
                     (name: my-scenario) or rename the file; a name {NAME_RULE}"
                ),
            )
        })?,
    };
    let run = run(raw.run.unwrap_or_default(), &top.key("run"))?;
    // The broker keys the profile sets: a framework preset declares the queue where the
    // profile does not.
    let broker_sets = raw.broker.as_ref().map_or(Vec::new(), RawBroker::keys_set);
    let mut broker = broker::resolve(raw.broker.unwrap_or_default(), &top.key("broker"))?;
    let mut raw_workload = raw.workload;
    let raw_message = raw_workload.as_mut().and_then(|w| w.message.take());
    let mut workload = workload::resolve(raw_workload, &run, &top.key("workload"))?;
    if let Some(m) = raw_message {
        let at = top.key("workload");
        if workload.ingress.is_some() {
            return Err(Problem::at_key(
                at.key("message"),
                "shapes what ackbench publishes; with workload.ingress the system under test \
                 publishes its own messages",
            ));
        }
        let poison = !matches!(workload.poison, crate::profile::scenario::Poison::None);
        let m = message::resolve(
            m,
            &broker.kind,
            poison,
            &at.key("message"),
            &at.key("poison"),
        )?;
        let by_framework = broker.kind.descriptor().queue_by_framework.as_ref();
        if let (Some(f), Some(arguments)) = (by_framework, &m.declares) {
            if !f.keys.iter().any(|k| broker_sets.iter().any(|s| s == k)) {
                (f.declare)(&mut broker, arguments);
            }
        }
        workload.message = Some(m);
    }
    if workload.groups.is_some() && broker.fifo.is_none() {
        return Err(Problem::at_key(
            top.key("workload").key("groups"),
            "message groups belong to a FIFO queue: set broker.fifo: true (a standard queue has \
             no message groups)",
        ));
    }
    let mode = match raw.mode {
        None | Some(ModeName::Sim) => Mode::Sim,
        Some(ModeName::Live) => Mode::Live,
    };
    let consumer = consumer::resolve(raw.consumer, &broker, mode, &top.key("consumer"))?;
    // A sim run streams its accounting (`--record auto`) unless it models the producer's sends
    // or has a deploy.
    let sim = !matches!(raw.mode, Some(ModeName::Live));
    let full_record_faults = (raw.chaos.iter().flatten()).any(|r| r.needs_full_record());
    let streams =
        sim && workload.producer.is_none() && broker.fifo.is_none() && !full_record_faults;
    footprint::Footprint::of(&run, &workload, &consumer, streams).check(
        &workload,
        &top.key("workload"),
        &top.key("consumer"),
    )?;
    let provider = provider::resolve(
        raw.provider.unwrap_or_default(),
        &workload,
        &top.key("provider"),
    )?;
    let keys = keys::KeyUniverse::of(&workload);
    let faults = crate::profile::fault::Context {
        run: &run,
        consumer: &consumer,
        broker: &broker,
        keys: &keys,
    };
    let chaos =
        crate::profile::faults::resolve(raw.chaos.unwrap_or_default(), &faults, &top.key("chaos"))?;
    let redrive = match raw.redrive {
        Some(r) => Some(redrive(r, &run, &top.key("redrive"))?),
        None => None,
    };
    let budgets = budgets::resolve(raw.budgets.unwrap_or_default(), &top.key("budgets"))?;
    broker::check_mode(
        &broker,
        mode,
        workload.ingress.is_some(),
        &top.key("broker"),
    )?;
    broker::check_observe(&broker, mode, chaos.len(), &top.key("broker"))?;
    crate::profile::faults::check(&chaos, &broker, mode, &top.key("chaos"))?;
    consumer::check_mode(&consumer, mode, &top.key("consumer"))?;
    consumer::check_republish(&consumer, mode, &top.key("consumer"))?;
    consumer::check_clock(&consumer, &broker, &top.key("consumer"))?;
    ingress::check_mode(&workload, mode, &top.key("workload").key("ingress"))?;
    Ok(Scenario {
        name,
        description: raw.description.map(|d| d.0).unwrap_or_default(),
        mode,
        seed: raw.seed.unwrap_or(defaults::SEED),
        run,
        broker,
        workload,
        consumer,
        provider,
        chaos,
        redrive,
        budgets,
    })
}

/// The longest profile name, in bytes: the report folder's name adds to it, and a file
/// system's limit for one name is 255 bytes.
pub const MAX_NAME_BYTES: usize = 100;

/// What a name must be, for messages.
const NAME_RULE: &str = "must be one plain folder name: no /, \\ or control characters, not \
                         empty, . or .., at most 100 bytes";

/// A profile's name names its report folder, so it must be one plain folder name.
fn check_name(name: String, path: &FieldPath) -> Result<String, Problem> {
    let bad = name.trim().is_empty()
        || name == "."
        || name == ".."
        || name.len() > MAX_NAME_BYTES
        || name
            .chars()
            .any(|c| c == '/' || c == '\\' || c.is_control());
    if bad {
        return Err(Problem::new(
            path.clone(),
            format!("{NAME_RULE} (it names the report folder), got {name:?}"),
        ));
    }
    Ok(name)
}

fn run(raw: RawRun, path: &FieldPath) -> Result<RunSpec, Problem> {
    let duration_path = path.key("duration");
    let duration = required(
        raw.duration,
        &duration_path,
        "how long the workload publishes, e.g. 10m",
    )?;
    let duration = positive(duration.0, &duration_path)?;
    let drain = raw.drain.map_or(defaults::DRAIN, |d| d.0);
    let sample_every = match raw.sample_every {
        Some(d) => {
            let at = path.key("sample_every");
            let every = positive(d.0, &at)?;
            footprint::check_samples(every, duration, drain, &at)?;
            Some(every)
        }
        None => None,
    };
    let time_scale = match raw.time_scale {
        None => 1.0,
        Some(x) if (defaults::MIN_TIME_SCALE..=1.0).contains(&x) => x,
        Some(x) => {
            return Err(Problem::new(
                path.key("time_scale"),
                format!(
                    "wall seconds per profile second: from {} to 1 (0.05 runs 90 minutes in \
                     4.5; below {0} a profile second lasts less than a millisecond of wall \
                     time, finer than the live run's timers), got {}",
                    defaults::MIN_TIME_SCALE,
                    number_text(x)
                ),
            ))
        }
    };
    let publish_window = match raw.publish_window {
        None => defaults::PUBLISH_WINDOW,
        Some(n) if (1..=u64::from(defaults::MAX_PUBLISH_WINDOW)).contains(&n) => n as u32,
        Some(n) => {
            return Err(Problem::new(
                path.key("publish_window"),
                format!(
                    "publishes left unconfirmed at once: from 1 (each send waits for its \
                     confirmation) to {}, got {n}",
                    defaults::MAX_PUBLISH_WINDOW
                ),
            ))
        }
    };
    Ok(RunSpec {
        duration,
        drain,
        sample_every,
        time_scale,
        publish_window,
        record: Default::default(),
    })
}

/// When an operator redrives the DLQ: an instant before the run's end (duration + drain).
fn redrive(raw: RawRedrive, run: &RunSpec, path: &FieldPath) -> Result<Duration, Problem> {
    let at_path = path.key("at");
    let at = required(
        raw.at,
        &at_path,
        "when the DLQ is redriven, as in { at: 2h }",
    )?
    .0;
    let end = run.duration.saturating_add(run.drain);
    if at >= end {
        return Err(Problem::new(
            at_path,
            format!(
                "must be before the run ends at run.duration + run.drain ({}), got {}",
                format_duration(end),
                format_duration(at)
            ),
        ));
    }
    Ok(at)
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use crate::profile::testutil::{error, scenario, with, BASE};

    #[test]
    fn run_duration_is_required() {
        assert_eq!(
            error(&BASE.replace("run: { duration: 10m }", "run: { drain: 5m }")),
            "p.yaml:2:1: run.duration: required: how long the workload publishes, e.g. 10m"
        );
    }

    #[test]
    fn run_duration_must_be_positive() {
        assert_eq!(
            error(&BASE.replace("duration: 10m", "duration: 0s")),
            "p.yaml:2:18: run.duration: must be more than 0s, got 0s"
        );
    }

    #[test]
    fn sample_every_must_be_positive() {
        assert_eq!(
            error(&BASE.replace("duration: 10m", "duration: 10m, sample_every: 0ms")),
            "p.yaml:2:37: run.sample_every: must be more than 0s, got 0s"
        );
    }

    #[test]
    fn time_scale_is_from_a_thousandth_to_one() {
        let s = scenario(&BASE.replace("duration: 10m", "duration: 10m, time_scale: 0.001"));
        assert_eq!(s.run.time_scale, 0.001);
        let e = |x: &str| {
            error(&BASE.replace("duration: 10m", &format!("duration: 10m, time_scale: {x}")))
        };
        assert_eq!(
            e("1e-300"),
            "p.yaml:2:35: run.time_scale: wall seconds per profile second: from 0.001 to 1 (0.05 \
             runs 90 minutes in 4.5; below 0.001 a profile second lasts less than a millisecond \
             of wall time, finer than the live run's timers), got 1e-300"
        );
        assert!(e("0.0009").ends_with("got 0.0009"));
        assert!(e("2").ends_with("got 2"));
        assert!(e(".nan").ends_with("got NaN"));
    }

    #[test]
    fn publish_window_is_from_one_to_4096() {
        assert_eq!(scenario(BASE).run.publish_window, 1024);
        let set = |n: &str| {
            BASE.replace(
                "duration: 10m",
                &format!("duration: 10m, publish_window: {n}"),
            )
        };
        assert_eq!(scenario(&set("1")).run.publish_window, 1);
        assert_eq!(scenario(&set("4096")).run.publish_window, 4096);
        assert_eq!(
            error(&set("0")),
            "p.yaml:2:39: run.publish_window: publishes left unconfirmed at once: from 1 (each \
             send waits for its confirmation) to 4096, got 0"
        );
        assert!(error(&set("4097")).ends_with("to 4096, got 4097"));
    }

    #[test]
    fn drain_may_be_zero() {
        let s = scenario(&BASE.replace("duration: 10m", "duration: 10m, drain: 0s"));
        assert_eq!(s.run.drain, Duration::ZERO);
    }

    #[test]
    fn a_redrive_happens_before_the_run_ends() {
        let s = scenario(&with("redrive: { at: 15m }\n"));
        assert_eq!(s.redrive, Some(Duration::from_secs(900)));
        assert_eq!(
            error(&with("redrive:\n  at: 40m\n")),
            "p.yaml:7:7: redrive.at: must be before the run ends at run.duration + run.drain \
             (40m), got 40m"
        );
        assert_eq!(
            error(&with("redrive: {}\n")),
            "p.yaml:6:1: redrive.at: required: when the DLQ is redriven, as in { at: 2h }"
        );
    }

    #[test]
    fn visibility_timeout_must_be_positive() {
        assert_eq!(
            error(&with("broker:\n  visibility_timeout: 0s\n")),
            "p.yaml:7:23: broker.visibility_timeout: must be more than 0s, got 0s"
        );
    }

    #[test]
    fn visibility_timeout_is_at_most_sqs_maximum() {
        assert_eq!(
            error(&with("broker:\n  visibility_timeout: 12h1s\n")),
            "p.yaml:7:23: broker.visibility_timeout: must be at most 12h (SQS's maximum), got 12h1s"
        );
        let s = scenario(&with("broker:\n  visibility_timeout: 12h\n"));
        assert_eq!(s.broker.lease, Duration::from_secs(12 * 3600));
    }
}
