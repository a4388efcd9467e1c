//! Live mode: wall-clock time, real sockets, the consumer as N worker processes.
//!
//! The embedded broker is served over the SQS API ([`crate::broker::sqs`]) and the provider over
//! HTTP ([`crate::provider::http`]), both on 127.0.0.1. Each worker is the profile's
//! `consumer.command`, started in a process group of its own with its environment (endpoint,
//! queue URL, its own provider base URL, worker number, time scale); a worker that dies is
//! restarted after `restart_after`. Kills are SIGKILL to the worker's process group, decided
//! before the reply leaves: the endpoint leases the message and kills the worker before its
//! `ReceiveMessage` answer is written (`received`); the provider records the call (and the
//! effect) and kills before its answer is written (`call_started`, `call_answered`). So no ack
//! races a kill and counts are exact, as in sim mode.
//!
//! `run.time_scale` compresses every duration of the profile (lease, latencies, arrivals,
//! restart delay, drain); the record is kept in profile time, so a live summary reads like a sim
//! one. A worker's handler is taken to run from a hand-out to its next `ReceiveMessage`.
//!
//! Every exit path stops the workers: the run kills every process group it started, and the
//! processes are also killed when their handles drop (an early return or a panic), and by the
//! kernel when ackbench itself dies, even by SIGKILL ([`spawn`]). SIGINT, SIGTERM and SIGHUP
//! end the run like its end does, and what was recorded up to then is the record, marked
//! incomplete.

mod assemble;
mod backoff;
mod client;
mod clock;
mod clock_probe;
mod ingress;
mod published;
mod spawn;
mod state;
mod supervisor;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::broker::setup;
use crate::broker::sqs::{Hooks as SqsHooksHandle, QueueSpec, SqsConfig, SqsServer, WireTime};
use crate::chaos::KillSchedule;
use crate::profile::Scenario;
use crate::provider::http::{HttpProvider, LiveClock};
use crate::provider::ProviderModel;
use crate::record::{nanos, MessageRecord, RunRecord, Seq};
use crate::runner::{interrupt, Interrupt, Progress, RunError};
use crate::workload;

use assemble::{merge, Timebase};
use ingress::IngressRun;
use published::Published;
use spawn::Spawner;
use state::{Hooks, LiveState};
use supervisor::{supervise, WorkerEnv};

const QUEUE: &str = "ackbench";

/// Runs `scenario` live and returns what it recorded (in profile time); stops early, with the
/// record marked incomplete, when `interrupt` is triggered.
pub fn run(
    scenario: &Scenario,
    progress: &mut dyn FnMut(Progress),
    interrupt: &Interrupt,
) -> Result<RunRecord, RunError> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| RunError::Live(format!("cannot start the async runtime: {e}")))?;
    rt.block_on(run_live(scenario, progress, interrupt))
}

async fn run_live(
    s: &Scenario,
    progress: &mut dyn FnMut(Progress),
    interrupt: &Interrupt,
) -> Result<RunRecord, RunError> {
    let scale = s.run.time_scale;
    let wall = |d: Duration| d.mul_f64(scale);
    let plan = workload::plan(s);
    let loopback: SocketAddr = "127.0.0.1:0".parse().expect("a socket address");
    // An interruption ends the run the same way as its end does: every worker stopped first.
    let mut interruptions = interrupt.subscribe();
    let mut interrupted = interrupt.requested();
    // Every program the run starts is started from this one thread, and dies with ackbench.
    let spawner = Spawner::new(tokio::runtime::Handle::current())
        .map_err(|e| RunError::Live(format!("cannot start the spawning thread: {e}")))?;

    let scratch = std::env::temp_dir().join(format!("ackbench-live-{}", std::process::id()));
    let clock = clock::for_run(s, &scratch.join("clock")).map_err(RunError::Live)?;

    // The broker over the SQS API, its queue configured from the profile in wall time.
    let b = &s.broker;
    let broker = setup::sqs_config(b, wall);
    let dead_letter_queue = (b.max_receives > 0).then(|| format!("{QUEUE}-dlq"));
    let state = LiveState::new(
        LiveClock::new(scale),
        QUEUE,
        s.consumer.workers,
        KillSchedule::new(&s.chaos, s.seed),
    );
    let hooks = Hooks(state.clone());
    let config = SqsConfig {
        queues: vec![(
            QUEUE.to_string(),
            QueueSpec {
                broker,
                dead_letter_queue,
            },
        )],
        hooks: SqsHooksHandle(Some(Arc::new(hooks.clone()))),
        wire_time: clock
            .as_ref()
            .map_or(WireTime::REAL, |_| WireTime::scaled(scale)),
        ..SqsConfig::default()
    };
    let sqs = SqsServer::bind(loopback, config)
        .await
        .map_err(|e| RunError::Live(format!("cannot serve the SQS endpoint on 127.0.0.1: {e}")))?;

    // The provider over HTTP, on the run's clock.
    // The endpoint's time base, aligned with the run's clock (started a moment earlier).
    let t0 = sqs
        .elapsed()
        .saturating_sub(state.clock.wall(state.clock.now()).as_nanos() as u64);
    let timebase = Timebase { t0, scale };
    let model = ProviderModel::new(&s.provider, s.seed);
    let provider = Arc::new(
        HttpProvider::bind(
            loopback,
            model,
            state.clock,
            s.provider.key.clone(),
            s.consumer.workers,
            Arc::new(hooks.clone()),
        )
        .await
        .map_err(|e| RunError::Live(format!("cannot serve the provider on 127.0.0.1: {e}")))?,
    );
    // With an ingress load, the messages are whatever the system's ingress service publishes.
    let published = s.workload.ingress.as_ref().map(|i| {
        let planned = (1..=plan.len() as Seq).map(|q| (plan.key(q), plan.poison[(q - 1) as usize]));
        let p = Arc::new(Published::new(&i.message_key, planned, state.clock));
        p.set_provider(provider.clone());
        state.set_published(p.clone());
        p
    });

    // The workers.
    let state_dir = scratch.join("state");
    let log_dir = scratch.join("logs");
    for d in [&state_dir, &log_dir] {
        supervisor::fresh_dir(d)
            .map_err(|e| RunError::Live(format!("cannot make {}: {e}", d.display())))?;
    }
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    let mut supervisors = tokio::task::JoinSet::new();
    let restart_after = wall(s.consumer.restart_after);
    match &s.consumer.command {
        // The user's program, one process per worker.
        Some(argv) => {
            let env = Arc::new(WorkerEnv {
                argv: argv.clone(),
                env: s.consumer.env.clone(),
                endpoint: sqs.endpoint_url(),
                queue_url: sqs.queue_url(QUEUE),
                provider_url: format!("http://{}/", provider.local_addr()),
                time_scale: scale,
                state_dir,
                log_dir: log_dir.clone(),
                clock: clock.clone(),
            });
            for w in 1..=s.consumer.workers {
                let (env, state, stop) = (env.clone(), state.clone(), stop_rx.clone());
                let spawner = spawner.clone();
                supervisors.spawn(supervise(w, env, state, spawner, restart_after, stop));
            }
        }
        // A built-in target, one task per worker, over aws-sdk-sqs and reqwest.
        None => {
            let target = setup::builtin_target(s)
                .ok_or_else(|| RunError::UnknownTarget(s.consumer.target.clone()))?;
            let shared = Arc::new(client::Shared {
                state: state.clone(),
                endpoint: sqs.endpoint_url(),
                queue_url: sqs.queue_url(QUEUE),
                provider_url: format!("http://{}/", provider.local_addr()),
                http_timeout: s.consumer.options.http_timeout,
                tables: std::sync::Mutex::new(ackbench_targets::Tables::default()),
                seed: s.seed,
                provider: provider.clone(),
            });
            for w in 1..=s.consumer.workers {
                let (target, shared, stop) = (target.clone(), shared.clone(), stop_rx.clone());
                supervisors.spawn(supervisor::supervise_task(
                    w,
                    target,
                    shared,
                    restart_after,
                    stop,
                ));
            }
        }
    }
    if let Some(c) = &clock {
        tokio::spawn(clock_probe::check(c.clone(), spawner.clone()));
    }
    for (at, rule) in state.timed_kills() {
        let (state, mut stop) = (state.clone(), stop_rx.clone());
        tokio::spawn(async move {
            let mut next = Some(at);
            while let Some(at) = next {
                let due = state.clock.wall(at.saturating_sub(state.clock.now()));
                tokio::select! {
                    _ = tokio::time::sleep(due) => next = state.fire_timed(rule),
                    _ = stop.changed() => return,
                }
            }
        });
    }

    let mut failure = None;
    // An ingress load: the system's service, then goose users sending it the plan.
    let mut ingress = None;
    if let (Some(spec), Some(p)) = (&s.workload.ingress, &published) {
        let at = ingress::Endpoint {
            endpoint: &sqs.endpoint_url(),
            queue_url: &sqs.queue_url(QUEUE),
            time_scale: scale,
            log_dir: &log_dir,
            clock: clock.as_deref(),
            publish_for: nanos(s.run.duration),
            spawner: &spawner,
            interrupt,
        };
        // An interruption while the service starts stops it there (killed and reaped).
        if !interrupted {
            match IngressRun::start(spec, &plan, p.clone(), state.clock, at).await {
                Ok(run) => ingress = Some(run),
                Err(e) if e.is_interrupted() => interrupted = true,
                Err(e) => failure = Some(RunError::Live(e.to_string())),
            }
        }
    }

    // Publish on the plan's schedule (or let the ingress load publish); stop when drained or at
    // the drain limit.
    let started = Instant::now();
    let hard_end = wall(s.run.duration + s.run.drain);
    let mut messages = Vec::with_capacity(plan.len());
    let mut next = if s.workload.ingress.is_some() {
        plan.len()
    } else {
        0
    };
    let mut last_progress = Instant::now();
    while failure.is_none() && !interrupted {
        let now = state.clock.now();
        while next < plan.len() && plan.at[next] <= now {
            let seq = (next + 1) as u32;
            let key = plan.key(seq);
            state
                .keys
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .push(key.clone());
            provider.publish_key(&key, seq);
            if let Err(e) = sqs.send_message(QUEUE, plan.body(seq)) {
                failure = Some(RunError::Live(format!("cannot publish message {seq}: {e}")));
                break;
            }
            messages.push(MessageRecord {
                key,
                published_at: now,
                poison: plan.poison[next],
            });
            next += 1;
        }
        if failure.is_some() {
            break;
        }
        if let Some(Ok(Err(e))) = supervisors.try_join_next() {
            failure = Some(RunError::Live(e.to_string()));
            break;
        }
        let counts = sqs.counts(QUEUE).unwrap_or_default();
        if last_progress.elapsed() >= Duration::from_millis(200) {
            let ledger = provider.ledger();
            let with_effect: std::collections::HashSet<_> =
                ledger.effects.iter().map(|e| e.seq).collect();
            progress(Progress {
                now_s: crate::record::secs_f64(now),
                published: ingress.as_ref().map_or(next, |i| i.published()) as u64,
                effects: ledger.effects.len() as u64,
                duplicate_effects: (ledger.effects.len() - with_effect.len()) as u64,
                dlq: counts.dead_lettered,
            });
            last_progress = Instant::now();
        }
        let publishing = next < plan.len() || ingress.as_ref().is_some_and(|i| !i.load_finished());
        let drained = !publishing && counts.in_queue() == 0 && !state.busy();
        if drained || started.elapsed() >= hard_end {
            break;
        }
        let until_publish = plan
            .at
            .get(next)
            .map(|&t| state.clock.wall(t.saturating_sub(now)))
            .unwrap_or(Duration::MAX);
        tokio::select! {
            _ = tokio::time::sleep(until_publish.min(Duration::from_millis(5))) => {}
            _ = interruptions.changed() => {
                interrupted = true;
                break;
            }
        }
    }
    let end = state.clock.now();

    // Stop every worker, then the servers; assemble the record in profile time.
    state.stopping(end);
    let _ = stop_tx.send(true);
    while supervisors.join_next().await.is_some() {}
    let mut ingress_record = None;
    if let Some(run) = ingress {
        match run.finish(interrupted).await {
            Ok((published, record)) => {
                messages = published;
                ingress_record = Some(record);
            }
            Err(e) => failure = failure.or(Some(RunError::Live(e.to_string()))),
        }
    }
    let ledger = provider.shutdown().await;
    let broker_events: Vec<_> = sqs
        .take_events(QUEUE)
        .unwrap_or_default()
        .into_iter()
        .map(|e| timebase.event(e))
        .collect();
    sqs.shutdown().await;
    if let Some(e) = failure {
        return Err(e);
    }
    // The workers' shared state goes; their logs stay for whoever debugs the consumer.
    let _ = std::fs::remove_dir_all(scratch.join("state"));
    Ok(RunRecord {
        messages,
        events: merge(broker_events, state.take_events()),
        ledger,
        end,
        publish_end: nanos(s.run.duration),
        visibility_timeout: nanos(b.visibility_timeout),
        workers: s.consumer.workers,
        phases: s
            .provider
            .phases
            .iter()
            .map(|p| (nanos(p.from), nanos(p.to), crate::runner::phase_label(p)))
            .collect(),
        ingress: ingress_record,
        incomplete: interrupted.then(|| interrupt::REASON.to_string()),
        chaos: crate::chaos::describe(&s.chaos),
        broker_kind: s.broker.kind.name().to_string(),
    })
}
