//! Worker processes: start each with its environment in a process group of its own (dying with
//! ackbench: [`super::spawn`]), restart it `restart_after` after it dies (later after quick
//! crashes: [`super::backoff`]), and leave none behind when the run ends.

use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::Stdio;
use std::sync::Arc;
use std::time::{Duration, Instant};

use nix::sys::signal::{killpg, Signal};
use nix::unistd::Pid;
use tokio::process::Command;
use tokio::sync::watch;

use super::backoff::Backoff;
use super::clock::ScaledClock;
use super::spawn::Spawner;
use super::state::LiveState;
use super::worker_logs::WorkerLogs;
use crate::profile::env_value::{EnvValue, MissingVariable};
use crate::profile::run_variables as vars;
use crate::record::{Nanos, WorkerExit, WorkerId};

/// Everything a worker process is told.
#[derive(Debug, Clone)]
pub struct WorkerEnv {
    pub argv: Vec<String>,
    /// `consumer.env`, each value's run variables replaced per worker.
    pub env: Vec<(String, EnvValue)>,
    /// How each worker reaches the broker, by worker number (index `w - 1`).
    pub broker_env: Vec<Vec<(String, String)>>,
    /// The run variables of the broker's kind ([`crate::profile::BrokerKind::run_variables`]):
    /// exactly the `ACKBENCH_*` names a worker is told.
    pub run_variables: Vec<&'static str>,
    pub provider_url: String,
    pub time_scale: f64,
    pub state_dir: std::path::PathBuf,
    /// Where each worker's stdout and stderr go.
    pub logs: Arc<WorkerLogs>,
    /// The scaled clock the workers run on; `None`: the machine's.
    pub clock: Option<Arc<ScaledClock>>,
}

/// Why a worker could not start.
#[derive(Debug, thiserror::Error)]
#[error("cannot start worker {worker} ({program}): {source}")]
pub struct SpawnError {
    pub worker: WorkerId,
    pub program: String,
    pub source: std::io::Error,
}

/// What ackbench tells worker `w`: its broker client's variables and the run variables.
fn told(w: WorkerId, e: &WorkerEnv) -> Vec<(String, String)> {
    let mut told = e
        .broker_env
        .get((w - 1) as usize)
        .cloned()
        .unwrap_or_default();
    told.extend(
        [
            (vars::TIME_SCALE, e.time_scale.to_string()),
            (vars::PROVIDER_URL, format!("{}w/{w}/", e.provider_url)),
            (vars::WORKER, w.to_string()),
            (vars::STATE_DIR, e.state_dir.to_string_lossy().into_owned()),
        ]
        .map(|(k, v)| (k.to_string(), v)),
    );
    debug_assert_eq!(
        {
            let mut named: Vec<&str> = told
                .iter()
                .map(|(k, _)| k.as_str())
                .filter(|k| k.starts_with("ACKBENCH_"))
                .collect();
            named.sort_unstable();
            named
        },
        {
            let mut kind = e.run_variables.clone();
            kind.sort_unstable();
            kind
        },
        "a worker is told exactly its kind's run variables"
    );
    told
}

fn command(w: WorkerId, e: &WorkerEnv) -> Result<Command, SpawnError> {
    let failed = |source| SpawnError {
        worker: w,
        program: e.argv[0].clone(),
        source,
    };
    let log = |path: std::path::PathBuf| -> Result<std::fs::File, SpawnError> {
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .map_err(failed)
    };
    let told = told(w, e);
    let env = e
        .env
        .iter()
        .map(|(k, v)| Ok((k.clone(), v.expand(&told)?)))
        .collect::<Result<Vec<(String, String)>, MissingVariable>>()
        .map_err(|m| failed(std::io::Error::other(m)))?;
    // An argument may name the worker's run variables too (checked with the profile).
    let args = e.argv[1..]
        .iter()
        .map(|a| match EnvValue::parse(a) {
            Ok(v) => v.expand(&told).map_err(std::io::Error::other),
            Err(bad) => Err(std::io::Error::other(bad)),
        })
        .collect::<Result<Vec<String>, std::io::Error>>()
        .map_err(failed)?;
    let mut c = Command::new(&e.argv[0]);
    c.args(&args)
        .envs(env.iter().map(|(k, v)| (k.as_str(), v.as_str())));
    if let Some(clock) = &e.clock {
        c.envs(clock.env(&env));
    }
    c.envs(told.iter().map(|(k, v)| (k.as_str(), v.as_str())))
        .stdin(Stdio::null())
        .stdout(log(e.logs.stdout(w))?)
        .stderr(log(e.logs.stderr(w))?)
        .process_group(0)
        .kill_on_drop(true);
    Ok(c)
}

/// The worker a supervisor keeps running: its number, the replica's making (0 for the fleet
/// the run starts with), and how long after a death it starts it again.
#[derive(Debug, Clone, Copy)]
pub struct Replica {
    pub worker: WorkerId,
    pub made: Nanos,
    pub restart_after: Duration,
}

/// Whether the supervisor of `r` goes on after an incarnation ended: not once a scale-in
/// removed its replica (then the rollouts waiting for it go on).
fn goes_on(r: &Replica, state: &LiveState) -> bool {
    if state.holds(r.worker, r.made) {
        return true;
    }
    state.gone(r.worker);
    false
}

/// Runs worker `w` until `stop` turns true: start, wait for its death, wait (`restart_after`,
/// or longer after quick crashes: [`Backoff`]), start again. A death nobody asked for is a
/// crash, recorded by the state with its exit status or signal. A replica a scale-in removed
/// is not started again.
pub async fn supervise(
    r: Replica,
    env: Arc<WorkerEnv>,
    state: Arc<LiveState>,
    spawner: Spawner,
    mut stop: watch::Receiver<bool>,
) -> Result<(), SpawnError> {
    let (w, restart_after) = (r.worker, r.restart_after);
    let mut first = true;
    let mut backoff = Backoff::default();
    let spawn_error = |source| SpawnError {
        worker: w,
        program: env.argv[0].clone(),
        source,
    };
    while !*stop.borrow() {
        env.logs.started(w);
        let mut child = spawner
            .spawn(command(w, &env)?)
            .await
            .map_err(spawn_error)?;
        let started = Instant::now();
        let pid = child.id().map_or(0, |p| p as i32);
        state.started(w, super::state::Handle::Process(pid));
        state.running(w, !first);
        first = false;
        // The stop first: then the child is not reaped before its group is signalled.
        let status = tokio::select! {
            biased;
            _ = stop.changed() => {
                // The whole group: a worker's own children die with it.
                let _ = killpg(Pid::from_raw(pid), Signal::SIGKILL);
                // Reaped: its group id may be reused from now on, so it is never signalled again.
                // A death by anything but that SIGKILL happened before the stop: a crash.
                if let Ok(status) = child.wait().await {
                    if state.exited(w, exit_of(status)) {
                        env.logs.crashed(w);
                    }
                }
                return Ok(());
            }
            status = child.wait() => status,
        };
        let crashed = match status {
            Ok(status) => state.exited(w, exit_of(status)),
            Err(e) => return Err(spawn_error(e)),
        };
        if crashed {
            env.logs.crashed(w);
        }
        if !goes_on(&r, &state) {
            return Ok(());
        }
        let wait = backoff.next_delay(started.elapsed(), crashed, restart_after);
        tokio::select! {
            biased;
            _ = stop.changed() => return Ok(()),
            _ = tokio::time::sleep(wait) => {}
        }
        if !state.holds(w, r.made) {
            return Ok(());
        }
    }
    Ok(())
}

/// How a worker process ended.
fn exit_of(status: std::process::ExitStatus) -> WorkerExit {
    match (status.code(), status.signal()) {
        (Some(code), _) => WorkerExit::Status(code),
        (None, Some(sig)) => WorkerExit::Signal(sig),
        (None, None) => WorkerExit::Status(-1),
    }
}

/// A folder for the workers' shared state (e.g. a claim table), created fresh.
pub fn fresh_dir(dir: &Path) -> std::io::Result<()> {
    if dir.exists() {
        std::fs::remove_dir_all(dir)?;
    }
    std::fs::create_dir_all(dir)
}

/// Runs built-in target worker `w` as a task until `stop` turns true, restarting it
/// `restart_after` (wall time) after it dies (a crash, or a kill that aborted the task), later
/// after quick crashes ([`Backoff`]).
pub async fn supervise_task(
    r: Replica,
    target: ackbench_targets::BuiltinTarget,
    shared: Arc<super::client::Shared>,
    mut stop: watch::Receiver<bool>,
) -> Result<(), SpawnError> {
    let (w, restart_after) = (r.worker, r.restart_after);
    let mut first = true;
    let mut backoff = Backoff::default();
    while !*stop.borrow() {
        let client = super::client::LiveClient::connect(shared.clone(), w)
            .await
            .map_err(|e| SpawnError {
                worker: w,
                program: "the built-in target".to_string(),
                source: std::io::Error::other(e),
            })?;
        let target = target.clone();
        // The task runs once the state knows this incarnation (a stop it is told is its own).
        let (go, gate) = tokio::sync::oneshot::channel::<()>();
        let task = tokio::spawn(async move {
            let _ = gate.await;
            ackbench_targets::worker::run_worker(&target, &client).await
        });
        shared
            .state
            .started(w, super::state::Handle::Task(task.abort_handle()));
        let _ = go.send(());
        shared.state.running(w, !first);
        first = false;
        let started = Instant::now();
        let abort = task.abort_handle();
        let ended = tokio::select! {
            biased;
            _ = stop.changed() => {
                abort.abort();
                return Ok(());
            }
            ended = task => ended,
        };
        let crashed = match ended {
            // The target gave up (e.g. a poison message with `on_poison: crash`).
            Ok(_crash) => shared.state.exited(w, WorkerExit::TargetCrashed),
            Err(e) if e.is_panic() => shared.state.exited(w, WorkerExit::Panicked),
            // Aborted: only a kill rule or a stop (a `deploy`) aborts a running task.
            Err(_) => {
                shared.state.ended(w);
                false
            }
        };
        if !goes_on(&r, &shared.state) {
            return Ok(());
        }
        let wait = backoff.next_delay(started.elapsed(), crashed, restart_after);
        tokio::select! {
            biased;
            _ = stop.changed() => return Ok(()),
            _ = tokio::time::sleep(wait) => {}
        }
        if !shared.state.holds(w, r.made) {
            return Ok(());
        }
    }
    Ok(())
}
