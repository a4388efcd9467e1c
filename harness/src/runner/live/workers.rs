//! The workers stage of a live run: one supervisor per worker (the profile's program as a
//! process, or a built-in target as a task), and the timed kill rules.

use std::sync::Arc;

use tokio::sync::watch;
use tokio::task::JoinSet;

use super::client;
use super::clock::ScaledClock;
use super::kinds::LiveBroker;
use super::spawn::Spawner;
use super::state::LiveState;
use super::supervisor::{self, SpawnError, WorkerEnv};
use super::worker_logs::WorkerLogs;
use crate::broker::setup;
use crate::chaos::Timed;
use crate::profile::Scenario;
use crate::provider::http::HttpProvider;
use crate::runner::RunError;

/// The run's workers, each under its supervisor.
pub struct Workers {
    pub supervisors: JoinSet<Result<(), SpawnError>>,
    stop: watch::Sender<bool>,
    /// The worker processes' logs; `None` for built-in targets.
    pub logs: Option<Arc<WorkerLogs>>,
}

/// Where the run's scratch folders are: the workers' shared state and their logs.
pub struct Scratch {
    pub state_dir: std::path::PathBuf,
    pub log_dir: std::path::PathBuf,
}

/// The run's scratch folder, `$TMPDIR/ackbench-live-<pid>`.
pub fn scratch_root() -> std::path::PathBuf {
    std::env::temp_dir().join(format!("ackbench-live-{}", std::process::id()))
}

impl Scratch {
    pub fn make() -> Result<Scratch, RunError> {
        let root = scratch_root();
        let s = Scratch {
            state_dir: root.join("state"),
            log_dir: root.join("logs"),
        };
        for d in [&s.state_dir, &s.log_dir] {
            supervisor::fresh_dir(d)
                .map_err(|e| RunError::Live(format!("cannot make {}: {e}", d.display())))?;
        }
        Ok(s)
    }
}

/// Starts every worker, the timed kill rules and the `connection` rules.
pub fn start(
    s: &Scenario,
    broker: &dyn LiveBroker,
    state: &Arc<LiveState>,
    provider: &Arc<HttpProvider>,
    spawner: &Spawner,
    scratch: &Scratch,
    clock: &Option<Arc<ScaledClock>>,
) -> Result<Workers, RunError> {
    let (stop, stop_rx) = watch::channel(false);
    let mut supervisors = JoinSet::new();
    let restart_after = state
        .clock
        .wall(crate::record::nanos(s.consumer.restart_after));
    let provider_url = format!("http://{}/", provider.local_addr());
    let mut logs = None;
    match &s.consumer.command {
        // The user's program, one process per worker.
        Some(argv) => {
            let worker_logs = Arc::new(WorkerLogs::new(&scratch.log_dir, s.consumer.workers));
            logs = Some(worker_logs.clone());
            let env = Arc::new(WorkerEnv {
                argv: argv.clone(),
                env: s.consumer.env.clone(),
                broker_env: (1..=s.consumer.workers)
                    .map(|w| broker.worker_env(w))
                    .collect(),
                run_variables: s.broker.kind.run_variables(),
                provider_url,
                time_scale: s.run.time_scale,
                state_dir: scratch.state_dir.clone(),
                logs: worker_logs,
                clock: clock.clone(),
            });
            for w in 1..=s.consumer.workers {
                let (env, state, stop) = (env.clone(), state.clone(), stop_rx.clone());
                let spawner = spawner.clone();
                supervisors.spawn(supervisor::supervise(
                    w,
                    env,
                    state,
                    spawner,
                    restart_after,
                    stop,
                ));
            }
        }
        // A built-in target, one task per worker, over the kind's client and reqwest.
        None => {
            let target = setup::builtin_target(s)
                .ok_or_else(|| RunError::UnknownTarget(s.consumer.target.clone()))?;
            let shared = Arc::new(client::Shared {
                state: state.clone(),
                queues: broker.queues(),
                provider_url,
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
    start_timed_faults(state, &stop_rx);
    super::connection_faults::start(s, state, &stop_rx);
    Ok(Workers {
        supervisors,
        stop,
        logs,
    })
}

/// Timed rules (kills `at`, `every`; deploys): each sleeps to its next instant, fires (a kill,
/// a rollout), and sleeps again.
fn start_timed_faults(state: &Arc<LiveState>, stop: &watch::Receiver<bool>) {
    for (at, timed) in state.timed_faults() {
        // A `connection` rule acts on the workers' links: [`super::connection_faults`]; an
        // `autoscale` rule is refused in a live profile (its check).
        if matches!(timed, Timed::Connection(_) | Timed::Autoscale(_)) {
            continue;
        }
        let (state, mut stop) = (state.clone(), stop.clone());
        tokio::spawn(async move {
            let mut next = Some(at);
            while let Some(at) = next {
                let due = state.clock.wall(at.saturating_sub(state.clock.now()));
                tokio::select! {
                    _ = tokio::time::sleep(due) => next = match timed {
                        Timed::Kill(rule) => state.fire_timed(rule),
                        Timed::Deploy(rule) => state.rollout(rule),
                        Timed::Connection(_) | Timed::Autoscale(_) => None,
                    },
                    _ = stop.changed() => return,
                }
            }
        });
    }
}

impl Workers {
    /// The first supervisor that failed (a worker that cannot start), if one did.
    pub fn failed(&mut self) -> Option<RunError> {
        match self.supervisors.try_join_next() {
            Some(Ok(Err(e))) => Some(RunError::Live(e.to_string())),
            _ => None,
        }
    }

    /// Stops every worker (each supervisor kills its own and reaps it) and waits for them.
    pub async fn stop(mut self) {
        let _ = self.stop.send(true);
        while self.supervisors.join_next().await.is_some() {}
    }
}
