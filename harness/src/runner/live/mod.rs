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
mod autoscale;
mod backoff;
mod client;
mod clock;
mod clock_probe;
mod connection_faults;
mod drive;
mod error_line;
mod harness_cpu;
mod ingress;
pub mod kinds;
mod proxy;
mod published;
mod publisher;
mod sampling;
mod sends;
mod spawn;
mod state;
mod supervisor;
#[cfg(test)]
mod tests_publisher;
mod worker_logs;
mod workers;

use std::net::SocketAddr;
use std::sync::Arc;

use crate::chaos::Faults;
use crate::profile::Scenario;
use crate::provider::http::{HttpProvider, LiveClock};
use crate::provider::ProviderModel;
use crate::record::{nanos, ConsumerClockRecord, RunRecord, Seq};
use crate::runner::{interrupt, Interrupt, Progress, RunError};
use crate::workload;

use assemble::merge;
use drive::Drive;
use ingress::IngressRun;
use kinds::{Context, LiveBroker, OpenError};
use published::Published;
use sampling::Sampling;
use spawn::Spawner;
use state::{LiveState, StateHooks};
use workers::Scratch;

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

/// The run, in stages: the run's state, the broker (its kind's module opens it), then
/// everything that uses it; whatever that ends with, the broker is finished (the run's
/// resources removed) before the record is assembled.
async fn run_live(
    s: &Scenario,
    progress: &mut dyn FnMut(Progress),
    interrupt: &Interrupt,
) -> Result<RunRecord, RunError> {
    let plan = workload::plan(s);
    // Every program the run starts is started from this one thread, and dies with ackbench.
    let spawner = Spawner::new(tokio::runtime::Handle::current())
        .map_err(|e| RunError::Live(format!("cannot start the spawning thread: {e}")))?;
    let state = LiveState::new(
        LiveClock::new(s.run.time_scale),
        &kinds::queue_name(s).0,
        s.consumer.workers,
        Faults::new(&s.chaos, s.seed),
    );
    if let Some(links) = connection_faults::links_for(s) {
        state.set_links(links);
    }
    // A body a worker sends that names a message of the run is that message's copy: its retry
    // (each kind's proxy or endpoint reads the worker's sends).
    state.follow_copies(workload::key_reader::KeyReader::of(
        s.workload.message.as_ref(),
    ));
    // With an ingress load, the messages are whatever the system's ingress service publishes.
    let published = s.workload.ingress.as_ref().map(|i| {
        let planned = (1..=plan.len() as Seq).map(|q| (plan.key(q), plan.poison(q)));
        let p = Arc::new(Published::new(&i.message_key, planned, state.clock));
        state.set_published(p.clone());
        p
    });
    // The consumer's clock: scaled by libfaketime, or the machine's.
    let (clock, consumer_clock) =
        clock::for_run(s, &workers::scratch_root().join("clock")).map_err(RunError::Live)?;
    let run_id = kinds::run_id();
    let broker = kinds::open(Context {
        scenario: s,
        state: state.clone(),
        queue: s
            .broker
            .queue
            .name
            .clone()
            .unwrap_or_else(|| run_id.clone()),
        run_id,
        wire_scaled: clock.is_some(),
        clock_start_ms: clock.as_ref().map(|c| c.start_unix_ms()),
    })
    .await
    .map_err(|e| match e {
        OpenError::Settings(m) => RunError::BrokerSettings(m),
        other => RunError::Live(other.to_string()),
    })?;
    // The broker's own counts, on `run.sample_every` (or the interval the time series would
    // pick for the longest run), on a connection of the sampler's own.
    let every = s.run.sample_every.map(nanos).unwrap_or_else(|| {
        crate::metrics::timeseries::default_interval_over(nanos(s.run.duration + s.run.drain))
    });
    let sampling = Sampling::start(&*broker, state.clock, every).await;
    let open = Open {
        scenario: s,
        plan: &plan,
        broker: &*broker,
        state: &state,
        published,
        spawner: &spawner,
        clock,
        consumer_clock,
        sampling,
    };
    let ran = use_broker(open, progress, interrupt).await;
    let finished = broker.finish().await;
    let ran = ran?;
    if !finished.left_behind.is_empty() {
        eprintln!(
            "warning: could not remove from the broker: {}",
            finished.left_behind.join(", ")
        );
    }
    Ok(RunRecord {
        messages: ran.messages,
        events: merge(finished.events, ran.events),
        ledger: ran.ledger,
        end: ran.end,
        publish_end: nanos(s.run.duration),
        ingress: ran.ingress,
        incomplete: ran.interrupted.then(|| interrupt::REASON.to_string()),
        publishes: ran.publishes,
        publisher: ran.publisher,
        broker_samples: ran.broker_samples,
        consumer_clock: ran.consumer_clock,
        worker_logs: ran.worker_logs,
        unattributed_calls: ran.unattributed_calls,
        broken_connections: ran.broken_connections,
        harness_cpu: ran.harness_cpu,
        commit_handlers: finished.commit_handlers,
        removed: finished.removed,
        broker_notes: finished.notes,
        ..RunRecord::described(s)
    })
}

/// What the run recorded outside the broker.
struct Ran {
    messages: Vec<crate::record::MessageRecord>,
    publishes: Option<Vec<crate::record::PublishRecord>>,
    publisher: Option<crate::record::PublisherRecord>,
    events: Vec<crate::record::Event>,
    ledger: crate::record::Ledger,
    end: crate::record::Nanos,
    ingress: Option<crate::record::IngressRecord>,
    interrupted: bool,
    broker_samples: Option<crate::record::BrokerSamples>,
    consumer_clock: Option<ConsumerClockRecord>,
    worker_logs: Option<crate::record::WorkerLogsRecord>,
    unattributed_calls: Vec<crate::record::UnattributedCall>,
    broken_connections: Vec<crate::record::BrokenConnection>,
    harness_cpu: Option<crate::record::HarnessCpu>,
}

/// A run with its broker open: what [`use_broker`] runs against.
struct Open<'a> {
    scenario: &'a Scenario,
    plan: &'a workload::Plan,
    broker: &'a dyn LiveBroker,
    state: &'a Arc<LiveState>,
    /// The run publishes its messages itself (not an ingress load's service).
    published: Option<Arc<Published>>,
    spawner: &'a Spawner,
    /// The consumers' scaled clock, and what is known of it so far.
    clock: Option<Arc<clock::ScaledClock>>,
    consumer_clock: Option<ConsumerClockRecord>,
    /// The broker's own counts, sampled (when the kind has a sampler).
    sampling: Option<Sampling>,
}

/// The provider, the workers and the ingress load against an open broker; publish, drive,
/// stop. Every worker and program is stopped before this returns, whatever happened.
async fn use_broker(
    open: Open<'_>,
    progress: &mut dyn FnMut(Progress),
    interrupt: &Interrupt,
) -> Result<Ran, RunError> {
    let Open {
        scenario: s,
        plan,
        broker,
        state,
        published,
        spawner,
        clock,
        mut consumer_clock,
        sampling,
    } = open;
    // An interruption ends the run the same way as its end does: every worker stopped first.
    let mut interruptions = interrupt.subscribe();
    let mut interrupted = interrupt.requested();
    let loopback: SocketAddr = "127.0.0.1:0".parse().expect("a socket address");
    // The provider over HTTP, on the run's clock.
    let provider = Arc::new(
        HttpProvider::bind(
            loopback,
            ProviderModel::new(&s.provider, s.seed),
            state.clock,
            s.provider.key.clone(),
            s.worker_slots(),
            Arc::new(StateHooks(state.clone())),
        )
        .await
        .map_err(|e| RunError::Live(format!("cannot serve the provider on 127.0.0.1: {e}")))?,
    );
    if let Some(p) = &published {
        p.set_provider(provider.clone());
    }
    let scratch = Scratch::make()?;
    let mut workers = workers::start(s, broker, state, &provider, spawner, &scratch, &clock)?;
    let probe = clock
        .as_ref()
        .map(|c| tokio::spawn(clock_probe::check(c.clone(), spawner.clone())));

    // ackbench's own CPU time, read on the broker samples' interval.
    let cpu_watch = harness_cpu::CpuWatch::start(
        state.clock,
        s.run.sample_every.map(nanos).unwrap_or_else(|| {
            crate::metrics::timeseries::default_interval_over(nanos(s.run.duration + s.run.drain))
        }),
    );
    let mut failure = None;
    // An ingress load: the system's service, then goose users sending it the plan.
    let mut ingress = None;
    if let (Some(spec), Some(p)) = (&s.workload.ingress, &published) {
        match broker.ingress() {
            None => {
                failure = Some(RunError::Live(format!(
                    "an ingress load publishes through ackbench's embedded broker (broker \
                     kind {} without broker.endpoint), which this run's broker ({}) is not",
                    crate::profile::kinds::embedded_names(),
                    s.broker.kind.name()
                )))
            }
            // An interruption while the service starts stops it there (killed and reaped).
            Some(target) if !interrupted => {
                let at = ingress::Endpoint {
                    endpoint: &target.endpoint,
                    queue_url: &target.queue_url,
                    time_scale: s.run.time_scale,
                    log_dir: &scratch.log_dir,
                    clock: clock.as_deref(),
                    publish_for: nanos(s.run.duration),
                    spawner,
                    interrupt,
                };
                match IngressRun::start(spec, plan, p.clone(), state.clock, at).await {
                    Ok(run) => ingress = Some(run),
                    Err(e) if e.is_interrupted() => interrupted = true,
                    Err(e) => failure = Some(RunError::Live(e.to_string())),
                }
            }
            Some(_) => {}
        }
    }

    let mut messages = Vec::new();
    let mut publishes = None;
    let mut publisher = None;
    if failure.is_none() && !interrupted {
        // An `autoscale` rule's controllers run beside the loop, and end with it.
        let launcher = workers.launcher.clone();
        let drive = Drive {
            scenario: s,
            plan,
            broker,
            state,
            provider: &provider,
            ingress: ingress.as_ref(),
            workers: &mut workers,
        }
        .run(progress, &mut interruptions);
        let driven = tokio::select! {
            driven = drive => driven,
            never = autoscale::control(broker, state, &launcher) => match never {},
        };
        messages = driven.messages;
        publishes = driven.publishes;
        publisher = driven.publisher;
        interrupted = driven.interrupted;
        failure = driven.failure;
    }
    // The broker's last sample: what it holds as the run stops.
    let broker_samples = match sampling {
        Some(s) => Some(s.finish().await),
        None => None,
    };
    let harness_cpu = match cpu_watch {
        Some(w) => w.finish().await,
        None => None,
    };
    let end = state.clock.now();

    // Stop every worker, then the ingress load and the provider.
    state.stopping(end);
    let logs = workers.logs.take();
    workers.stop().await;
    // Every worker process has exited: what each wrote to stderr is there to read.
    let worker_logs = logs.map(|logs| logs.record());
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
    if let (Some(probe), Some(record)) = (probe, consumer_clock.as_mut()) {
        record_probe(probe, record).await;
    }
    if let Some(e) = failure {
        return Err(e);
    }
    // The workers' shared state goes; their logs stay for whoever debugs the consumer.
    let _ = std::fs::remove_dir_all(&scratch.state_dir);
    Ok(Ran {
        messages,
        publishes,
        publisher,
        events: state.take_events(),
        unattributed_calls: state.take_unattributed(),
        broken_connections: state.take_broken(),
        ledger,
        end,
        ingress: ingress_record,
        interrupted,
        broker_samples,
        consumer_clock,
        worker_logs,
        harness_cpu,
    })
}

/// What the clock probe measured, into the run's record of the consumer's clock; a probe that
/// has not answered by the end of the run (it takes a few wall seconds) is stopped and said so.
async fn record_probe(
    probe: tokio::task::JoinHandle<(Option<f64>, Option<String>)>,
    record: &mut ConsumerClockRecord,
) {
    if !probe.is_finished() {
        probe.abort();
        record.note = Some("the run ended before the clock probe measured it".to_string());
        return;
    }
    match probe.await {
        Ok((measured, warning)) => {
            record.measured = measured;
            record.note = warning;
        }
        Err(e) => record.note = Some(format!("the clock probe failed: {e}")),
    }
}
