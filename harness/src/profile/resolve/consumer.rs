//! `consumer`: the target under test, its workers and its options. Options are checked against
//! what the chosen target declares it accepts (`ackbench_targets::TARGETS`).

use std::time::Duration;

use ackbench_targets::options::{target_info, TargetInfo};
use ackbench_targets::TARGETS;
use yaml_serde::{Mapping, Value};

use crate::profile::defaults;
use crate::profile::duration::format_duration;
use crate::profile::path::FieldPath;
use crate::profile::problem::{read_value, Problem};
use crate::profile::raw::{
    ClockName, ExhaustedName, OnPoisonName, RawConsumer, RawConsumerSim, RawRepublish, RawRetry,
};
use crate::profile::scalar::{DurationText, Text};
use crate::profile::scenario::{
    BrokerSpec, ConsumerClock, ConsumerSpec, Exhausted, Mode, OnPoison, RepublishSpec, RetrySpec,
    TargetOptions,
};

use super::checks::{at_least_one, positive, required, unit_interval};

pub fn resolve(
    raw: Option<RawConsumer>,
    broker: &BrokerSpec,
    mode: Mode,
    path: &FieldPath,
) -> Result<ConsumerSpec, Problem> {
    let mut raw = raw.unwrap_or_default();
    // `sim`: validated in either mode, run only in sim mode.
    let stand_in = match raw.sim.take() {
        Some(_) if raw.command.is_none() => {
            return Err(Problem::at_key(
                path.key("sim"),
                "the built-in target that stands in for consumer.command in sim mode: give \
                 consumer.command too (a consumer.target runs in both modes)",
            ))
        }
        Some(sim) => Some(stand_in(sim, broker, &path.key("sim"))?),
        None => None,
    };
    let command = match raw.command {
        Some(argv) => Some(command(
            argv,
            raw.target.is_some(),
            raw.options.is_some(),
            path,
        )?),
        None => None,
    };
    let env = raw.env.unwrap_or_default();
    if command.is_none() && !env.is_empty() {
        return Err(Problem::at_key(
            path.key("env"),
            "env is the environment of a consumer command: give consumer.command too",
        ));
    }
    let env = super::consumer_env::resolve(env, broker, &path.key("env"))?;
    if let Some(argv) = &command {
        super::consumer_env::check_arguments(argv, broker, &path.key("command"))?;
    }
    let clock = raw.clock.map(|c| match c {
        ClockName::Scaled => ConsumerClock::Scaled,
        ClockName::Real => ConsumerClock::Real,
    });
    if command.is_none() && clock.is_some() {
        return Err(Problem::at_key(
            path.key("clock"),
            "clock is the clock of a consumer command's processes (a built-in target runs on \
             the run's own clock): give consumer.command too",
        ));
    }
    let workers = at_least_one(
        raw.workers.unwrap_or(defaults::WORKERS),
        &path.key("workers"),
        "a consumer needs a worker",
    )?;
    let restart_after = raw.restart_after.map_or(defaults::RESTART_AFTER, |d| d.0);
    if let Some(argv) = command {
        // In sim mode the stand-in runs; the command, its env and clock are live mode's.
        if let (Mode::Sim, Some((target, options))) = (mode, stand_in) {
            return Ok(ConsumerSpec {
                target,
                workers,
                restart_after,
                options,
                command: None,
                env: Vec::new(),
                clock: None,
            });
        }
        return Ok(ConsumerSpec {
            target: "command".to_string(),
            workers,
            restart_after,
            options: TargetOptions {
                visibility_timeout: broker.lease,
                ..TargetOptions::default()
            },
            command: Some(argv),
            env,
            clock,
        });
    }
    let (target, options) = builtin(
        raw.target,
        raw.options,
        broker,
        &path.key("target"),
        &path.key("options"),
        &format!(
            "the consumer under test, one of {}, or a command: [program, args...] in live mode",
            target_names()
        ),
    )?;
    Ok(ConsumerSpec {
        target,
        workers,
        restart_after,
        options,
        command: None,
        env: Vec::new(),
        clock: None,
    })
}

/// The built-in targets, as messages list them.
fn target_names() -> String {
    TARGETS
        .iter()
        .map(|t| t.name)
        .collect::<Vec<_>>()
        .join(", ")
}

/// `consumer.sim`: the stand-in's target and options, read as `consumer.target` and
/// `consumer.options` are.
fn stand_in(
    raw: RawConsumerSim,
    broker: &BrokerSpec,
    path: &FieldPath,
) -> Result<(String, TargetOptions), Problem> {
    builtin(
        raw.target,
        raw.options,
        broker,
        &path.key("target"),
        &path.key("options"),
        &format!(
            "the built-in target that stands in for consumer.command in sim mode, one of {}",
            target_names()
        ),
    )
}

/// A built-in target (`target`, required: `what` says what it is for, when it is missing)
/// and its options.
fn builtin(
    target: Option<Text>,
    options: Option<Mapping>,
    broker: &BrokerSpec,
    target_path: &FieldPath,
    options_path: &FieldPath,
    what: &str,
) -> Result<(String, TargetOptions), Problem> {
    let names = target_names();
    let target = required(target, target_path, what)?.0;
    let Some(info) = target_info(&target) else {
        return Err(Problem::new(
            target_path.clone(),
            format!("unknown target `{target}`; built-in targets: {names}"),
        ));
    };
    if target == "auto-commit" && !broker.auto_commits() {
        return Err(Problem::new(
            target_path.clone(),
            format!(
                "auto-commit never commits itself: it needs a consumer that auto-commits \
                 (broker.kind: kafka with broker.enable_auto_commit: true); broker.kind: {} {}",
                broker.kind.name(),
                if broker.kind.descriptor().can.settle == crate::profile::kinds::Settle::Offsets {
                    "has broker.enable_auto_commit: false"
                } else {
                    "has no auto-commit"
                }
            ),
        ));
    }
    let options = self::options(options.unwrap_or_default(), info, broker, options_path)?;
    Ok((target, options))
}

/// `consumer.command`: a program and its arguments, instead of a built-in target.
fn command(
    argv: Vec<Text>,
    has_target: bool,
    has_options: bool,
    path: &FieldPath,
) -> Result<Vec<String>, Problem> {
    let at = path.key("command");
    if has_target {
        return Err(Problem::at_key(
            at,
            "give either target (a built-in consumer) or command (your own program), not both",
        ));
    }
    if has_options {
        return Err(Problem::at_key(path.key("options"), "options belong to built-in targets; a command reads its own settings (pass them in consumer.env)"));
    }
    let argv: Vec<String> = argv.into_iter().map(|t| t.0).collect();
    if argv.first().is_none_or(|p| p.trim().is_empty()) {
        return Err(Problem::new(
            at,
            "a program and its arguments, e.g. [python3, targets/python/ack_after_work.py]",
        ));
    }
    Ok(argv)
}

/// A command runs only in live mode; sim mode runs built-in targets on virtual time, the
/// command's stand-in (`consumer.sim`) when the profile gives one.
pub fn check_mode(consumer: &ConsumerSpec, mode: Mode, path: &FieldPath) -> Result<(), Problem> {
    match (mode, &consumer.command) {
        (Mode::Sim, Some(_)) => Err(Problem::new(
            path.key("command"),
            format!(
                "a consumer command runs only in live mode (mode: live); to run this profile in \
                 sim mode, give consumer.sim: the built-in target that stands in for the \
                 command there, e.g. `sim: {{ target: ack-after-work }}` under consumer (built-in \
                 targets: {})",
                target_names()
            ),
        )),
        _ => Ok(()),
    }
}

/// `consumer.options.republish` stands in for a framework's retry on virtual time; live, the
/// consumer's own framework retries (its republishes are followed by key: docs/retries.md).
pub fn check_republish(
    consumer: &ConsumerSpec,
    mode: crate::profile::scenario::Mode,
    path: &FieldPath,
) -> Result<(), Problem> {
    use crate::profile::scenario::Mode;
    if mode == Mode::Live && consumer.command.is_none() && consumer.options.republish.is_some() {
        return Err(Problem::new(
            path.key("options").key("republish"),
            "a built-in target republishes only in sim mode, where it stands in for a \
             framework's retry; live, run the framework itself (consumer.command): its retries \
             are followed by their key",
        ));
    }
    Ok(())
}

/// Why a consumer on `broker` cannot run on the scaled clock, or `None` when it can: a scaled
/// consumer's durations on the wire (leases, waits, delays) are in profile time, so the broker
/// side must convert them. The embedded SQS endpoint does; each real broker kind's proxy says
/// here whether it does.
pub fn scaled_clock_unsupported(broker: &BrokerSpec) -> Option<String> {
    use crate::profile::kinds::ScaledClock;
    use crate::profile::scenario::Observe;
    match broker.kind.descriptor().scaled_clock {
        ScaledClock::Embedded { .. } if broker.url.is_none() => None,
        ScaledClock::Embedded { external } => Some(external.to_string()),
        // Each real broker's proxy converts them (`runner/live/kinds/<kind>/`: RabbitMQ's
        // `wire_time.rs`, NATS's and Redis's `wire.rs`); without it the workers talk to the
        // server itself.
        ScaledClock::Proxy { .. } if broker.observe == Observe::Proxy => None,
        ScaledClock::Proxy { server, converts } => Some(format!(
            "with broker.observe: none the workers reach {server} directly, and only ackbench's \
             {converts}"
        )),
        ScaledClock::Unconverted { why } => Some(why.to_string()),
    }
}

/// `consumer.clock: scaled` needs a broker side that reads the durations a consumer sends in
/// profile time ([`scaled_clock_unsupported`]).
pub fn check_clock(
    consumer: &ConsumerSpec,
    broker: &BrokerSpec,
    path: &FieldPath,
) -> Result<(), Problem> {
    if consumer.clock != Some(ConsumerClock::Scaled) {
        return Ok(());
    }
    match scaled_clock_unsupported(broker) {
        None => Ok(()),
        Some(why) => Err(Problem::new(
            path.key("clock"),
            format!(
                "a scaled consumer clock is not available here: {why}; set consumer.clock: real \
                 (the consumer scales its own durations by ACKBENCH_TIME_SCALE)"
            ),
        )),
    }
}

/// Reads `consumer.options` for `info`'s target, with that target's defaults.
fn options(
    raw: Mapping,
    info: &TargetInfo,
    broker: &BrokerSpec,
    path: &FieldPath,
) -> Result<TargetOptions, Problem> {
    let mut o = TargetOptions::default();
    let accepts = |name: &str| info.options.contains(&name);
    if accepts("claim_window") {
        o.claim_window = Some(defaults::CLAIM_WINDOW);
    }
    if accepts("extend_every") {
        o.extend_every = Some(broker.lease / defaults::EXTEND_EVERY_DIVISOR);
    }
    for (key, value) in raw {
        let Value::String(name) = key else {
            return Err(Problem::new(
                path.clone(),
                format!(
                    "option names are words, such as on_poison; {}",
                    not_a_name(&key)
                ),
            ));
        };
        let at = path.key(&name);
        if !accepts(&name) {
            return Err(Problem::at_key(at, not_an_option(&name, info)));
        }
        if value.is_null() {
            continue;
        }
        match name.as_str() {
            "on_poison" => {
                o.on_poison = match read_value::<OnPoisonName>(&value, &at)? {
                    OnPoisonName::Crash => OnPoison::Crash,
                    OnPoisonName::DeadLetter => OnPoison::DeadLetter,
                    OnPoisonName::Release => OnPoison::Release,
                }
            }
            "http_timeout" => o.http_timeout = Some(duration(&value, &at)?),
            "retry" => o.retry = Some(retry(read_value(&value, &at)?, &at)?),
            "republish" => o.republish = Some(republish(read_value(&value, &at)?, &at)?),
            "claim_window" => o.claim_window = Some(duration(&value, &at)?),
            "extend_every" => o.extend_every = Some(duration(&value, &at)?),
            "max_extension" => o.max_extension = Some(duration(&value, &at)?),
            _ => {
                return Err(Problem::at_key(
                    at,
                    format!("target {} declares option `{name}`, but this version of ackbench cannot read it", info.name),
                ))
            }
        }
    }
    if let Some(every) = o.extend_every {
        if every >= broker.lease {
            return Err(Problem::new(
                path.key("extend_every"),
                format!(
                    "must be less than broker.{} ({}), or the lease runs out before \
                     the first extension; got {}",
                    broker.lease_key(),
                    format_duration(broker.lease),
                    format_duration(every)
                ),
            ));
        }
    }
    Ok(o)
}

/// How a key that is not text reads back in a message.
fn not_a_name(key: &Value) -> String {
    match yaml_serde::to_string(key) {
        Ok(text) => format!("got {}", text.trim()),
        Err(_) => "got a key that is not text".to_string(),
    }
}

/// What to say about an option `info`'s target does not take.
fn not_an_option(name: &str, info: &TargetInfo) -> String {
    let elsewhere: Vec<&str> = TARGETS
        .iter()
        .filter(|t| t.options.contains(&name))
        .map(|t| t.name)
        .collect();
    let mut message = format!(
        "target {} has no option `{name}`; it accepts {}",
        info.name,
        info.options.join(", ")
    );
    if !elsewhere.is_empty() {
        message.push_str(&format!(
            " (`{name}` is an option of {})",
            elsewhere.join(", ")
        ));
    }
    message
}

fn duration(value: &Value, at: &FieldPath) -> Result<Duration, Problem> {
    positive(read_value::<DurationText>(value, at)?.0, at)
}

/// `retry` (`consumer.options.retry`, `workload.producer.retry`): attempts, base, cap, jitter.
pub(super) fn retry(raw: RawRetry, path: &FieldPath) -> Result<RetrySpec, Problem> {
    let max_attempts = at_least_one(
        raw.max_attempts.unwrap_or(defaults::RETRY_MAX_ATTEMPTS),
        &path.key("max_attempts"),
        "it counts every call, the first included",
    )?;
    let base = positive(
        raw.base.map_or(defaults::RETRY_BASE, |d| d.0),
        &path.key("base"),
    )?;
    let cap = raw.cap.map_or(defaults::RETRY_CAP.max(base), |d| d.0);
    if cap < base {
        return Err(Problem::new(
            path.key("cap"),
            format!(
                "must be at least base ({}), got {}",
                format_duration(base),
                format_duration(cap)
            ),
        ));
    }
    let jitter = unit_interval(
        raw.jitter.unwrap_or(defaults::RETRY_JITTER),
        &path.key("jitter"),
    )?;
    Ok(RetrySpec {
        max_attempts,
        base,
        cap,
        jitter,
    })
}

/// `consumer.options.republish`: retries, their backoff (as `retry`'s), what comes after.
fn republish(raw: RawRepublish, path: &FieldPath) -> Result<RepublishSpec, Problem> {
    let backoff = retry(
        RawRetry {
            max_attempts: Some(1),
            base: raw.base,
            cap: raw.cap,
            jitter: raw.jitter,
        },
        path,
    )?;
    Ok(RepublishSpec {
        max_retries: raw.max_retries.unwrap_or(defaults::REPUBLISH_MAX_RETRIES),
        backoff,
        exhausted: match raw.exhausted.unwrap_or(ExhaustedName::DeadLetter) {
            ExhaustedName::DeadLetter => Exhausted::DeadLetter,
            ExhaustedName::Ack => Exhausted::Ack,
        },
    })
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use ackbench_targets::TARGETS;

    use crate::profile::scenario::{ConsumerClock, OnPoison, RetrySpec};
    use crate::profile::testutil::{error, scenario};

    /// A profile whose consumer section (from line 3) is `consumer`.
    fn profile(consumer: &str) -> String {
        format!("run: {{ duration: 10m }}\nworkload: {{ arrival: {{ every: 1s }} }}\nconsumer:\n{consumer}")
    }

    /// The built-in targets, as messages list them.
    fn target_names() -> String {
        TARGETS
            .iter()
            .map(|t| t.name)
            .collect::<Vec<_>>()
            .join(", ")
    }

    #[test]
    fn target_is_required_and_lists_the_targets() {
        assert_eq!(
            error(&profile("  workers: 2\n")),
            format!(
                "p.yaml:3:1: consumer.target: required: the consumer under test, one of {}, or a \
                 command: [program, args...] in live mode",
                target_names()
            )
        );
        assert!(target_names().starts_with("ack-after-work, ack-before-work"));
    }

    #[test]
    fn an_unknown_target_lists_the_built_in_ones() {
        assert_eq!(
            error(&profile("  target: ack-maybe\n")),
            format!(
                "p.yaml:4:11: consumer.target: unknown target `ack-maybe`; built-in targets: {}",
                target_names()
            )
        );
    }

    #[test]
    fn workers_must_be_at_least_one() {
        assert_eq!(
            error(&profile("  target: ack-after-work\n  workers: 0\n")),
            "p.yaml:5:12: consumer.workers: must be at least 1, got 0 (a consumer needs a worker)"
        );
    }

    #[test]
    fn an_option_the_target_does_not_take_is_named_with_the_ones_it_does() {
        let mut expected = "p.yaml:6:5: consumer.options.claim_window: target ack-after-work has \
                            no option `claim_window`; it accepts on_poison, http_timeout, retry, \
                            republish"
            .to_string();
        let takers: Vec<&str> = TARGETS
            .iter()
            .filter(|t| t.options.contains(&"claim_window"))
            .map(|t| t.name)
            .collect();
        if !takers.is_empty() {
            expected.push_str(&format!(
                " (`claim_window` is an option of {})",
                takers.join(", ")
            ));
        }
        assert_eq!(
            error(&profile(
                "  target: ack-after-work\n  options:\n    claim_window: 2m\n"
            )),
            expected
        );
    }

    #[test]
    fn republish_is_read_with_its_defaults_and_refused_live_or_malformed() {
        // Defaults: 3 retries (Celery's), retry's backoff, then the dead-letter queue.
        let s = scenario(&profile(
            "  target: ack-after-work\n  options: { republish: { base: 2s } }\n",
        ));
        let r = s.consumer.options.republish.expect("republish");
        assert_eq!(r.max_retries, 3);
        assert_eq!(r.backoff.base, Duration::from_secs(2));
        assert_eq!(r.exhausted, ackbench_targets::Exhausted::DeadLetter);
        let err = |options: &str| {
            error(&profile(&format!(
                "  target: ack-after-work\n  options: {options}\n"
            )))
        };
        assert!(
            err("{ republish: { exhausted: retry } }")
                .contains("consumer.options.republish.exhausted"),
            "{}",
            err("{ republish: { exhausted: retry } }")
        );
        assert!(err("{ republish: { base: 0s } }").contains("consumer.options.republish.base"));
        assert!(err("{ republish: { tries: 2 } }").contains("consumer.options.republish"));
        // Another target does not take it.
        assert!(error(&profile(
            "  target: ack-before-work\n  options: { republish: {} }\n"
        ))
        .contains("target ack-before-work has no option `republish`"));
        // Live, a built-in target does not republish: the framework does.
        let live = format!(
            "mode: live\n{}",
            profile("  target: ack-after-work\n  options: { republish: {} }\n")
        );
        assert!(
            error(&live).contains(
                "consumer.options.republish: a built-in target republishes only in sim mode"
            ),
            "{}",
            error(&live)
        );
    }

    #[test]
    fn options_are_read_with_their_types() {
        let s = scenario(&profile(
            "  target: ack-before-work\n  options:\n    on_poison: dead_letter\n    http_timeout: 5s\n    \
             retry: { max_attempts: 4, base: 100ms, cap: 2s, jitter: 0 }\n",
        ));
        assert_eq!(s.consumer.options.on_poison, OnPoison::DeadLetter);
        assert_eq!(
            s.consumer.options.http_timeout,
            Some(Duration::from_secs(5))
        );
        assert_eq!(
            s.consumer.options.retry,
            Some(RetrySpec {
                max_attempts: 4,
                base: Duration::from_millis(100),
                cap: Duration::from_secs(2),
                jitter: 0.0
            })
        );
        let s = scenario(&profile(
            "  target: ack-after-work\n  options: { on_poison: release, retry: {} }\n",
        ));
        assert_eq!(s.consumer.options.on_poison, OnPoison::Release);
        assert_eq!(
            s.consumer.options.retry,
            Some(RetrySpec {
                max_attempts: 3,
                base: Duration::from_secs(1),
                cap: Duration::from_secs(30),
                jitter: 0.5
            })
        );
    }

    #[test]
    fn option_values_are_checked() {
        assert_eq!(
            error(&profile(
                "  target: ack-after-work\n  options:\n    on_poison: ignore\n"
            )),
            "p.yaml:6:16: consumer.options.on_poison: unknown variant `ignore`, expected one of \
             `crash`, `dead_letter`, `release`"
        );
        assert_eq!(
            error(&profile(
                "  target: ack-after-work\n  options:\n    http_timeout: 0s\n"
            )),
            "p.yaml:6:19: consumer.options.http_timeout: must be more than 0s, got 0s"
        );
        assert_eq!(
            error(&profile(
                "  target: ack-after-work\n  options:\n    retry: { max_attempts: 0 }\n"
            )),
            "p.yaml:6:28: consumer.options.retry.max_attempts: must be at least 1, got 0 (it \
             counts every call, the first included)"
        );
        assert_eq!(
            error(&profile(
                "  target: ack-after-work\n  options:\n    retry: { base: 2s, cap: 1s }\n"
            )),
            "p.yaml:6:29: consumer.options.retry.cap: must be at least base (2s), got 1s"
        );
        assert_eq!(
            error(&profile(
                "  target: ack-after-work\n  options:\n    retry: { jitter: 2 }\n"
            )),
            "p.yaml:6:22: consumer.options.retry.jitter: must be between 0 and 1, got 2"
        );
        assert_eq!(
            error(&profile(
                "  target: ack-after-work\n  options:\n    retry: { tries: 2 }\n"
            )),
            "p.yaml:6:14: consumer.options.retry.tries: unknown field `tries`, expected one of \
             `max_attempts`, `base`, `cap`, `jitter`"
        );
    }

    #[test]
    fn a_base_above_the_default_cap_raises_the_cap() {
        let s = scenario(&profile(
            "  target: ack-after-work\n  options: { retry: { base: 1m } }\n",
        ));
        assert_eq!(
            s.consumer.options.retry.map(|r| r.cap),
            Some(Duration::from_secs(60))
        );
    }

    #[test]
    fn a_null_option_is_left_at_its_default() {
        let s = scenario(&profile(
            "  target: ack-after-work\n  options: { on_poison: }\n",
        ));
        assert_eq!(s.consumer.options.on_poison, OnPoison::Crash);
    }

    #[test]
    fn clock_is_scaled_or_real_and_left_to_the_run_when_absent() {
        let command = "  command: [python3, c.py]\n";
        assert_eq!(scenario(&live(command)).consumer.clock, None);
        assert_eq!(
            scenario(&live(&format!("{command}  clock: scaled\n")))
                .consumer
                .clock,
            Some(ConsumerClock::Scaled)
        );
        assert_eq!(
            scenario(&live(&format!("{command}  clock: real\n")))
                .consumer
                .clock,
            Some(ConsumerClock::Real)
        );
        assert_eq!(
            error(&live(&format!("{command}  clock: fast\n"))),
            "p.yaml:6:10: consumer.clock: unknown variant `fast`, expected `scaled` or `real`"
        );
    }

    #[test]
    fn clock_belongs_to_a_command() {
        assert_eq!(
            error(&live("  target: ack-after-work\n  clock: scaled\n")),
            "p.yaml:6:3: consumer.clock: clock is the clock of a consumer command's processes (a \
             built-in target runs on the run's own clock): give consumer.command too"
        );
    }

    #[test]
    fn a_scaled_clock_on_rabbitmq_needs_the_amqp_proxy() {
        let on = |broker: &str| {
            format!(
                "mode: live\nbroker: {broker}\n{}",
                profile("  command: [python3, c.py]\n  clock: scaled\n")
            )
        };
        // Through ackbench's AMQP proxy (observe: proxy, the default) the durations the
        // consumer sends are converted; straight to the server they cannot be.
        assert_eq!(
            scenario(&on("{ kind: rabbitmq }")).consumer.clock,
            Some(ConsumerClock::Scaled)
        );
        assert_eq!(
            error(&on("{ kind: rabbitmq, observe: none }")),
            "p.yaml:7:10: consumer.clock: a scaled consumer clock is not available here: with \
             broker.observe: none the workers reach RabbitMQ directly, and only ackbench's AMQP \
             proxy converts the durations a consumer sends (its heartbeat, TTLs); set \
             consumer.clock: real (the consumer scales its own durations by ACKBENCH_TIME_SCALE)"
        );
    }

    #[test]
    fn a_scaled_clock_on_nats_needs_the_proxy() {
        let nats = |broker: &str| {
            format!(
                "mode: live\nbroker: {broker}\n{}",
                profile("  command: [python3, c.py]\n  clock: scaled\n")
            )
        };
        // Through the proxy (the default): the proxy converts the consumer's durations.
        let s = scenario(&nats("{ kind: nats }"));
        assert_eq!(s.consumer.clock, Some(ConsumerClock::Scaled));
        assert_eq!(super::scaled_clock_unsupported(&s.broker), None);
        // Straight to the server: nothing converts them (line 7: `clock` under `consumer`).
        assert_eq!(
            error(&nats("{ kind: nats, observe: none }")),
            "p.yaml:7:10: consumer.clock: a scaled consumer clock is not available here: with \
             broker.observe: none the workers reach the NATS server directly, and only \
             ackbench's proxy converts the durations a consumer sends (pull expiries, NAK \
             delays, AckWait) between profile and wall time; set consumer.clock: real (the \
             consumer scales its own durations by ACKBENCH_TIME_SCALE)"
        );
    }

    #[test]
    fn a_kafka_consumer_cannot_take_the_scaled_clock_whatever_broker_observe_says() {
        // The Kafka proxy converts no duration on the wire: a scaled consumer would send its
        // session timeout in profile time to a broker that reads wall time.
        for observe in ["", ", observe: none"] {
            let text = live("  command: [python3, c.py]\n  clock: scaled\n").replace(
                "mode: live\n",
                &format!("mode: live\nbroker: {{ kind: kafka{observe} }}\n"),
            );
            let e = error(&text);
            assert!(
                e.contains(
                    "consumer.clock: a scaled consumer clock is not available here: \
                     ackbench's Kafka protocol proxy observes a consumer's requests but converts \
                     none"
                ),
                "{e}"
            );
        }
    }

    #[test]
    fn redis_streams_takes_a_scaled_clock_through_its_proxy_only() {
        use crate::profile::scaled_clock_unsupported;
        let redis = |observe: &str| {
            let text = live("  command: [python3, c.py]\n").replace(
                "mode: live\n",
                &format!("mode: live\nbroker: {{ kind: redis-streams, min_idle: 30s{observe} }}\n"),
            );
            scaled_clock_unsupported(&scenario(&text).broker)
        };
        assert_eq!(redis(""), None);
        assert_eq!(redis(", observe: proxy"), None);
        assert_eq!(
            redis(", observe: none").as_deref(),
            Some(
                "with broker.observe: none the workers reach the Redis server directly, and only \
                 ackbench's RESP proxy converts the durations a consumer sends"
            )
        );
    }

    /// A live profile whose consumer section (from line 4) is `consumer`.
    fn live(consumer: &str) -> String {
        format!("mode: live\n{}", profile(consumer))
    }

    /// A live profile whose consumer is a command with `more` after it (from line 5), run in
    /// `mode`.
    fn command_with(more: &str, mode: &str) -> String {
        format!(
            "mode: {mode}\n{}",
            profile(&format!(
                "  command: [python3, c.py]\n  env: {{ Q: \"${{ACKBENCH_QUEUE_URL}}\" }}\n{more}"
            ))
        )
    }

    #[test]
    fn in_sim_mode_consumer_sim_stands_in_for_the_command() {
        let sim = "  workers: 3\n  sim: { target: heartbeat, options: { extend_every: 10s } }\n";
        // Sim mode: the stand-in with its options, the command's workers; no command, no env.
        let s = scenario(&command_with(sim, "sim"));
        assert_eq!(s.consumer.target, "heartbeat");
        assert_eq!(s.consumer.workers, 3);
        assert_eq!(
            s.consumer.options.extend_every,
            Some(Duration::from_secs(10))
        );
        assert_eq!((s.consumer.command, s.consumer.env.len()), (None, 0));
        // Live mode: the command and its env; the stand-in is not run.
        let s = scenario(&command_with(sim, "live"));
        assert_eq!(s.consumer.target, "command");
        assert_eq!(s.consumer.command.map(|c| c.len()), Some(2));
        assert_eq!(s.consumer.env.len(), 1);
    }

    #[test]
    fn consumer_sim_is_checked_in_either_mode_as_a_target_and_its_options_are() {
        for mode in ["sim", "live"] {
            // Line 7: `sim` under consumer, after command and env.
            assert_eq!(
                error(&command_with("  sim: { target: ack-maybe }\n", mode)),
                format!(
                    "p.yaml:7:18: consumer.sim.target: unknown target `ack-maybe`; built-in \
                     targets: {}",
                    target_names()
                ),
                "{mode}"
            );
            let e = error(&command_with(
                "  sim: { target: ack-after-work, options: { claim_window: 2m } }\n",
                mode,
            ));
            assert!(
                e.starts_with(
                    "p.yaml:7:45: consumer.sim.options.claim_window: target ack-after-work has no \
                     option `claim_window`; it accepts on_poison, http_timeout, retry"
                ),
                "{mode}: {e}"
            );
            assert_eq!(
                error(&command_with("  sim: { options: {} }\n", mode)),
                format!(
                    "p.yaml:7:3: consumer.sim.target: required: the built-in target that stands \
                     in for consumer.command in sim mode, one of {}",
                    target_names()
                ),
                "{mode}"
            );
            assert_eq!(
                error(&command_with(
                    "  sim: { target: ack-after-work, when: always }\n",
                    mode
                )),
                "p.yaml:7:34: consumer.sim.when: unknown field `when`, expected `target` or \
                 `options`",
                "{mode}"
            );
        }
    }

    #[test]
    fn consumer_sim_goes_with_a_command() {
        assert_eq!(
            error(&profile(
                "  target: ack-after-work\n  sim: { target: ack-before-work }\n"
            )),
            "p.yaml:5:3: consumer.sim: the built-in target that stands in for consumer.command \
             in sim mode: give consumer.command too (a consumer.target runs in both modes)"
        );
    }

    #[test]
    fn a_command_without_a_stand_in_is_refused_in_sim_mode_naming_consumer_sim() {
        assert_eq!(
            error(&command_with("", "sim")),
            format!(
                "p.yaml:5:3: consumer.command: a consumer command runs only in live mode (mode: \
                 live); to run this profile in sim mode, give consumer.sim: the built-in target \
                 that stands in for the command there, e.g. `sim: {{ target: ack-after-work }}` \
                 under consumer (built-in targets: {})",
                target_names()
            )
        );
    }

    #[test]
    fn an_option_name_is_a_word() {
        assert_eq!(
            error(&profile(
                "  target: ack-after-work\n  options: { 7: crash }\n"
            )),
            "p.yaml:5:3: consumer.options: option names are words, such as on_poison; got 7"
        );
    }
}
