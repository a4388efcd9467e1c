//! ackbench as a library: a profile run in sim mode with a consumer written in Rust, in-process
//! and deterministic, its summary handed back (`examples/embed.rs`).

use std::fmt::Display;
use std::future::Future;
use std::path::Path;
use std::rc::Rc;
use std::time::{Duration, Instant};

use crate::metrics::Recording;
use crate::profile::{self, Mode, ProfileError, Scenario};
use crate::report::{summarise, RunInfo, Summary};
use crate::runner::sim::{self, Consumer, ConsumerFn, SimClient};
use crate::runner::{Interrupt, Recorder, RunError};

/// Why a [`Bench`] could not run.
#[derive(Debug, thiserror::Error)]
pub enum BenchError {
    /// The profile cannot be read or is not valid.
    #[error(transparent)]
    Profile(#[from] ProfileError),
    /// The run could not complete.
    #[error("the run could not complete: {0}")]
    Run(#[from] RunError),
    /// A consumer written in Rust runs in sim mode only.
    #[error(
        "{0}: a consumer given to Bench runs in sim mode only (the profile says `mode: live`)"
    )]
    Live(String),
}

/// One sim run of a profile, its consumer the profile's built-in target or a closure.
///
/// `examples/embed.rs`, run as this doc test:
///
/// ```
#[doc = include_str!("../examples/embed.rs")]
/// ```
///
/// The knobs users turn most ([`Bench::workers`], [`Bench::duration`], [`Bench::lease`],
/// [`Bench::broker_kind`], [`Bench::chaos`], and any field by [`Bench::set`]) change the profile as `ackbench run --set`
/// does, and the profile is validated again: a value `ackbench check` would refuse is an error
/// here too. `examples/sweep.rs` runs a small sweep with them.
#[must_use = "a Bench does nothing until it is run"]
pub struct Bench {
    /// The profile's file name in messages, and its text.
    origin: String,
    text: String,
    /// The knobs turned so far, as `--set` arguments, in order.
    sets: Vec<String>,
    seed: Option<u64>,
    scenario: Scenario,
    consumer: Option<ConsumerFn>,
}

impl Bench {
    /// The profile at `path`, validated as `ackbench run` validates it.
    pub fn from_profile(path: impl AsRef<Path>) -> Result<Bench, BenchError> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path).map_err(|source| ProfileError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        Bench::from_yaml(&path.display().to_string(), &text)
    }

    /// A profile given as YAML text; `origin` names it in error messages.
    pub fn from_yaml(origin: &str, text: &str) -> Result<Bench, BenchError> {
        Ok(Bench {
            scenario: profile::load_str(origin, text, &[])?,
            origin: origin.to_string(),
            text: text.to_string(),
            sets: Vec::new(),
            seed: None,
            consumer: None,
        })
    }

    /// The run's seed (the profile's `seed` otherwise): the same seed, the same run.
    pub fn seed(mut self, seed: u64) -> Bench {
        self.seed = Some(seed);
        self.scenario.seed = seed;
        self
    }

    /// Sets one field of the profile, as `ackbench run --set PATH=VALUE` does (`value` read as
    /// YAML: `90s`, `5`, `{ dist: fixed, value: 1s }`), and validates the profile again.
    ///
    /// `examples/sweep.rs`, run as this doc test:
    ///
    /// ```
    #[doc = include_str!("../examples/sweep.rs")]
    /// ```
    pub fn set(mut self, path: &str, value: impl Display) -> Result<Bench, BenchError> {
        self.sets.push(format!("{path}={value}"));
        self.reload()
    }

    /// `consumer.workers`: how many workers run the consumer.
    pub fn workers(self, workers: u32) -> Result<Bench, BenchError> {
        self.set("consumer.workers", workers)
    }

    /// `run.duration`: how long the workload publishes.
    pub fn duration(self, duration: Duration) -> Result<Bench, BenchError> {
        self.set("run.duration", profile::format_duration(duration))
    }

    /// The broker's lease under the kind's own name (`visibility_timeout` on SQS, `ack_wait` on
    /// NATS, `min_idle` on Redis Streams, `consumer_timeout` on RabbitMQ, `max_poll_interval`
    /// on Kafka).
    pub fn lease(self, lease: Duration) -> Result<Bench, BenchError> {
        let key = self.scenario.broker.kind.descriptor().lease.key;
        self.set(&format!("broker.{key}"), profile::format_duration(lease))
    }

    /// `broker.kind`: the same profile on another broker kind, its lease and delivery limit
    /// carried over by meaning as `ackbench sweep --vary broker.kind=...` carries them (the
    /// other keys of the profile's kind left out: the new kind's defaults).
    pub fn broker_kind(mut self, kind: &str) -> Result<Bench, BenchError> {
        let carried = crate::sizing::kinds::carried_over(&self.scenario.broker, kind);
        self.sets.extend(carried);
        self.set("broker.kind", kind)
    }

    /// Adds a chaos rule after the profile's own, written as in a profile's `chaos` list
    /// (`kill_worker: { point: call_answered, probability: 0.3 }`).
    pub fn chaos(mut self, rule: &str) -> Result<Bench, BenchError> {
        let set = profile::appending_override(&self.origin, &self.text, &self.sets, "chaos", rule)?;
        self.sets.push(set);
        self.reload()
    }

    /// The profile again, with every knob turned so far.
    fn reload(mut self) -> Result<Bench, BenchError> {
        self.scenario = profile::load_str(&self.origin, &self.text, &self.sets)?;
        if let Some(seed) = self.seed {
            self.scenario.seed = seed;
        }
        Ok(self)
    }

    /// Every worker runs `consumer` instead of the profile's `consumer.target`: it is called
    /// with the worker's clients ([`SimClient`]: queue, provider, runtime, store) when the
    /// worker starts and again, as a new incarnation, each time a chaos rule kills it. Its loop
    /// is meant to run until then; a loop that returns is a crash (restarted the same way).
    pub fn consumer<F, Fut>(mut self, consumer: F) -> Bench
    where
        F: Fn(SimClient) -> Fut + 'static,
        Fut: Future<Output = ()> + 'static,
    {
        let f: ConsumerFn = Rc::new(move |client| Box::pin(consumer(client)));
        self.consumer = Some(f);
        self
    }

    /// The scenario as it will run.
    pub fn scenario(&self) -> &Scenario {
        &self.scenario
    }

    /// Runs the profile in sim mode and returns its summary (summary.json's content).
    pub fn run(self) -> Result<Summary, BenchError> {
        let s = &self.scenario;
        if s.mode == Mode::Live {
            return Err(BenchError::Live(s.name.clone()));
        }
        let started = Instant::now();
        let recording = self.record()?;
        let info = RunInfo {
            profile: s.name.clone(),
            mode: "sim".to_string(),
            seed: s.seed,
            wall_s: started.elapsed().as_secs_f64(),
        };
        Ok(summarise(&info, &recording, &s.budgets))
    }

    /// Runs the profile and keeps what it recorded, as `run.record` says.
    fn record(&self) -> Result<Recording, BenchError> {
        let s = &self.scenario;
        let consumer = match &self.consumer {
            Some(f) => Consumer::Closure(f.clone()),
            None => Consumer::Builtin(
                crate::broker::setup::builtin_target(s)
                    .ok_or_else(|| RunError::UnknownTarget(s.consumer.target.clone()))?,
            ),
        };
        let mut recorder = Recorder::new(s);
        sim::run_consumer(s, &consumer, &mut recorder, &mut |_| {}, &Interrupt::new())?;
        Ok(recorder
            .into_recording()
            .expect("a run that ends hands its record to its sink"))
    }
}

#[cfg(test)]
mod tests {
    use ackbench_targets::{ProviderClient, QueueClient, SendRequest};

    use super::*;

    /// One delivery handled after work: receive, send the order's email, ack.
    async fn handle_one(env: &SimClient) {
        let Ok(d) = env.receive().await else { return };
        let order = d.body.order().expect("a valid order");
        let email = SendRequest {
            key: order.key(),
            to: order.email(),
        };
        if env.send(email).await.is_ok() {
            let _ = env.ack(&d.receipt).await;
        }
    }

    /// Ack after work, as a closure: one delivery after another.
    fn ack_after_work(bench: Bench) -> Bench {
        bench.consumer(|env| async move {
            loop {
                handle_one(&env).await;
            }
        })
    }

    fn counts(s: &Summary) -> [u64; 7] {
        [
            s.messages,
            s.deliveries,
            s.effects,
            s.duplicate_effects,
            s.worker_kills,
            s.lost,
            s.dlq,
        ]
    }

    #[test]
    fn a_closure_is_killed_and_restarted_as_the_builtin_target_is() {
        // kill-after-effect: 300 orders, 30% of first deliveries killed at `call_answered`
        // (after the email, before the ack); each killed worker starts again after 1 s and its
        // message comes back when the lease ends, to send a second email. The closure does what
        // `ack-after-work` does, so the run is the built-in target's, kill for kill: every kill
        // one duplicate, nothing lost.
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../profiles/kill-after-effect.yaml"
        );
        let builtin = Bench::from_profile(path).expect("a valid profile").run();
        let closure = ack_after_work(Bench::from_profile(path).expect("a valid profile")).run();
        let (builtin, closure) = (builtin.expect("it runs"), closure.expect("it runs"));
        assert_eq!(counts(&closure), counts(&builtin));
        assert!(closure.worker_kills > 0);
        assert_eq!(closure.duplicate_effects, closure.worker_kills);
        assert_eq!(closure.lost, 0);
    }

    #[test]
    fn a_closure_whose_loop_returns_crashes_and_is_started_again() {
        // One worker, three orders 1 s apart, a 100 ms provider. The loop handles one order
        // (email, ack) and returns: a crash, the worker starting again 1 s later. Order 1: email
        // at 0 s, ack at 0.1 s, crash; restarted at 1.1 s it takes order 2 (published at 1 s),
        // acks at 1.2 s, crashes; restarted at 2.2 s it takes order 3, crashes at 2.3 s. So 3
        // effects, no duplicate, 3 crashes, nothing lost.
        let yaml = "name: returns\nrun: { duration: 10s, drain: 1m }\n\
            broker: { kind: embedded, visibility_timeout: 30s, max_receives: 3 }\n\
            workload: { arrival: { every: 1s }, count: 3 }\n\
            consumer: { target: ack-after-work, workers: 1, restart_after: 1s }\n\
            provider: { effect_at: request, latency: { dist: fixed, value: 100ms } }\n";
        let s = Bench::from_yaml("returns.yaml", yaml)
            .expect("a valid profile")
            .consumer(|env| async move { handle_one(&env).await })
            .run()
            .expect("it runs");
        assert_eq!(
            (
                s.messages,
                s.effects,
                s.duplicate_effects,
                s.worker_crashes,
                s.lost
            ),
            (3, 3, 0, 3, 0)
        );
    }

    #[test]
    fn knobs_change_the_profile_as_set_does_and_keep_the_seed_and_its_own_rules() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../profiles/kill-after-effect.yaml"
        );
        let plain = Bench::from_profile(path).expect("a valid profile");
        let own = plain.scenario().chaos.clone();
        assert_eq!(own.len(), 1, "kill-after-effect has one rule");
        let b = plain
            .seed(7)
            .workers(3)
            .and_then(|b| b.duration(Duration::from_secs(120)))
            .and_then(|b| b.lease(Duration::from_secs(45)))
            .and_then(|b| b.chaos("deploy: { at: 1m }"))
            .expect("every knob is valid");
        let s = b.scenario();
        assert_eq!((s.seed, s.consumer.workers), (7, 3));
        assert_eq!(s.run.duration, Duration::from_secs(120));
        assert_eq!(s.broker.lease, Duration::from_secs(45));
        assert_eq!(s.chaos.len(), 2);
        assert_eq!(s.chaos[0], own[0]);
        assert_eq!(
            s.chaos[1].label(),
            "deploy at 1m (max_unavailable 1, grace 30s, SIGTERM)"
        );
        // Another kind: its lease carried over under its own name.
        let nats = b.broker_kind("nats").expect("a kind");
        assert_eq!(nats.scenario().broker.kind.name(), "nats");
        assert_eq!(nats.scenario().broker.lease, Duration::from_secs(45));
    }

    #[test]
    fn a_knob_the_profile_refuses_is_an_error_naming_the_field() {
        let bench = || Bench::from_yaml("p.yaml", crate::profile::testutil::BASE);
        let err = |r: Result<Bench, BenchError>| r.err().expect("refused").to_string();
        assert_eq!(
            err(bench().and_then(|b| b.workers(0))),
            "--set consumer.workers=0: consumer.workers: must be at least 1, got 0 (a consumer \
             needs a worker)"
        );
        assert!(err(bench().and_then(|b| b.broker_kind("kinesis"))).contains("unknown variant"));
        assert!(
            err(bench().and_then(|b| b.chaos("kill_worker: { point: nowhere }")))
                .contains("chaos.0.kill_worker.point: no handler of target `ack-after-work`")
        );
        assert!(err(bench().and_then(|b| b.chaos("[unclosed"))).contains("is not YAML"));
    }
}
