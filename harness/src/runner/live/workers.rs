//! The workers stage of a live run: one supervisor per worker (the profile's program as a
//! process, or a built-in target as a task), and the timed kill rules.

use std::sync::{Arc, Mutex};
use std::time::Duration;

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
use crate::record::{Nanos, WorkerId};
use crate::runner::RunError;

/// The run's workers, each under its supervisor.
pub struct Workers {
    stop: watch::Sender<bool>,
    /// The worker processes' logs; `None` for built-in targets.
    pub logs: Option<Arc<WorkerLogs>>,
    /// Starts the supervisor of each replica an `autoscale` rule's scale-out makes.
    pub launcher: Launcher,
}

type Supervisors = Arc<Mutex<JoinSet<Result<(), SpawnError>>>>;

/// What a worker runs as: the profile's program, or a built-in target.
#[derive(Clone)]
enum Program {
    Process {
        env: Arc<WorkerEnv>,
        spawner: Spawner,
    },
    Task {
        target: ackbench_targets::BuiltinTarget,
        shared: Arc<client::Shared>,
    },
}

/// Starts a worker's supervisor: one for each worker of the fleet the run starts with, and one
/// for each replica a scale-out makes, until the run stops its workers.
#[derive(Clone)]
pub struct Launcher {
    program: Program,
    state: Arc<LiveState>,
    restart_after: Duration,
    stop: watch::Receiver<bool>,
    supervisors: Supervisors,
    /// Why the run fails, when something beside the supervisors failed it (an `autoscale`
    /// rule's look that cannot read the queue).
    failure: Arc<Mutex<Option<RunError>>>,
}

impl Launcher {
    /// Supervises worker `w` for the replica made at `made` (0: the starting fleet); nothing
    /// once the run stops its workers.
    pub fn launch(&self, w: WorkerId, made: Nanos) {
        if *self.stop.borrow() {
            return;
        }
        let (state, stop) = (self.state.clone(), self.stop.clone());
        let replica = supervisor::Replica {
            worker: w,
            made,
            restart_after: self.restart_after,
        };
        let mut supervisors = self.supervisors.lock().unwrap_or_else(|e| e.into_inner());
        match self.program.clone() {
            Program::Process { env, spawner } => {
                supervisors.spawn(supervisor::supervise(replica, env, state, spawner, stop));
            }
            Program::Task { target, shared } => {
                supervisors.spawn(supervisor::supervise_task(replica, target, shared, stop));
            }
        }
    }

    /// Fails the run: the run's loop ends it as it ends a run whose worker cannot start.
    pub fn fail(&self, why: RunError) {
        let mut failure = self.failure.lock().unwrap_or_else(|e| e.into_inner());
        failure.get_or_insert(why);
    }

    /// Whether the run has told its workers to stop.
    pub fn stopped(&self) -> watch::Receiver<bool> {
        self.stop.clone()
    }
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
    let restart_after = state
        .clock
        .wall(crate::record::nanos(s.consumer.restart_after));
    let provider_url = format!("http://{}/", provider.local_addr());
    let slots = s.worker_slots();
    let mut logs = None;
    let program = match &s.consumer.command {
        // The user's program, one process per worker.
        Some(argv) => {
            let worker_logs = Arc::new(WorkerLogs::new(&scratch.log_dir, slots));
            logs = Some(worker_logs.clone());
            let env = Arc::new(WorkerEnv {
                argv: argv.clone(),
                env: s.consumer.env.clone(),
                broker_env: (1..=slots).map(|w| broker.worker_env(w)).collect(),
                run_variables: s.broker.kind.run_variables(),
                provider_url,
                time_scale: s.run.time_scale,
                state_dir: scratch.state_dir.clone(),
                logs: worker_logs,
                clock: clock.clone(),
            });
            Program::Process {
                env,
                spawner: spawner.clone(),
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
            Program::Task { target, shared }
        }
    };
    let launcher = Launcher {
        program,
        state: state.clone(),
        restart_after,
        stop: stop_rx.clone(),
        supervisors: Supervisors::default(),
        failure: Arc::default(),
    };
    state.open_slots(slots);
    for w in 1..=s.consumer.workers {
        launcher.launch(w, 0);
    }
    start_timed_faults(state, &stop_rx);
    super::connection_faults::start(s, state, &stop_rx);
    Ok(Workers {
        stop,
        logs,
        launcher,
    })
}

/// Timed rules (kills `at`, `every`; deploys): each sleeps to its next instant, fires (a kill,
/// a rollout), and sleeps again.
fn start_timed_faults(state: &Arc<LiveState>, stop: &watch::Receiver<bool>) {
    for (at, timed) in state.timed_faults() {
        // A `connection` rule acts on the workers' links: [`super::connection_faults`]; an
        // `autoscale` rule's looks read the broker: [`super::autoscale`].
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
    /// What failed the run, if something did: the first supervisor that failed (a worker that
    /// cannot start), or an `autoscale` rule's look.
    pub fn failed(&mut self) -> Option<RunError> {
        let failure = self
            .launcher
            .failure
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        if failure.is_some() {
            return failure;
        }
        let ended = (self.launcher.supervisors.lock())
            .unwrap_or_else(|e| e.into_inner())
            .try_join_next();
        match ended {
            Some(Ok(Err(e))) => Some(RunError::Live(e.to_string())),
            _ => None,
        }
    }

    /// Stops every worker (each supervisor kills its own and reaps it) and waits for them.
    pub async fn stop(self) {
        let _ = self.stop.send(true);
        // No supervisor starts from now on ([`Launcher::launch`]).
        let mut supervisors = std::mem::take(
            &mut *self
                .launcher
                .supervisors
                .lock()
                .unwrap_or_else(|e| e.into_inner()),
        );
        while supervisors.join_next().await.is_some() {}
    }
}
