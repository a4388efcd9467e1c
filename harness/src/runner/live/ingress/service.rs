//! The ingress service: the system's own HTTP front door, started once per run in a process
//! group of its own, with the run's SQS endpoint in its environment. It is ready when its port
//! takes connections; it is killed (the whole group) when the run ends, whatever the exit path.

use std::net::SocketAddr;
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use nix::sys::signal::{killpg, Signal};
use nix::unistd::Pid;
use tokio::process::{Child, Command};

use crate::runner::live::clock::ScaledClock;
use crate::runner::live::kinds::client_env;
use crate::runner::live::spawn::Spawner;
use crate::runner::Interrupt;

/// How long the service may take to start listening (wall time).
pub const READY_TIMEOUT: Duration = Duration::from_secs(30);

/// What the service is told.
#[derive(Debug, Clone)]
pub struct ServiceEnv<'a> {
    pub argv: &'a [String],
    pub env: &'a [(String, String)],
    pub endpoint: &'a str,
    pub queue_url: &'a str,
    pub port: u16,
    pub time_scale: f64,
    pub log_dir: &'a Path,
    /// The scaled clock the service runs on; `None`: the machine's.
    pub clock: Option<&'a ScaledClock>,
}

/// Why the ingress service is not serving.
#[derive(Debug, thiserror::Error)]
pub enum ServiceError {
    #[error("cannot start the ingress service ({program}): {source}")]
    Spawn {
        program: String,
        source: std::io::Error,
    },
    #[error(
        "the ingress service exited ({status}) before it listened on {addr}; its output is in {log}"
    )]
    Exited {
        status: std::process::ExitStatus,
        addr: SocketAddr,
        log: String,
    },
    #[error(
        "the ingress service did not listen on {addr} within {}s; its output is in {log}",
        READY_TIMEOUT.as_secs()
    )]
    NotReady { addr: SocketAddr, log: String },
    #[error("the run was interrupted while the ingress service started")]
    Interrupted,
}

/// A running ingress service; dropping it kills its process group.
pub struct Service {
    child: Child,
    pgid: i32,
}

impl Service {
    /// Starts the service (dying with ackbench: [`Spawner`]) and waits until `addr` accepts
    /// connections, or until `interrupt` is triggered. A service that does not get ready is
    /// stopped and reaped before the error returns.
    pub async fn start(
        e: &ServiceEnv<'_>,
        addr: SocketAddr,
        spawner: &Spawner,
        interrupt: &Interrupt,
    ) -> Result<Service, ServiceError> {
        let log = |name: &str| {
            std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(e.log_dir.join(format!("ingress.{name}")))
        };
        let spawn_error = |source| ServiceError::Spawn {
            program: e.argv[0].clone(),
            source,
        };
        let mut c = Command::new(&e.argv[0]);
        c.args(&e.argv[1..])
            .envs(e.env.iter().map(|(k, v)| (k.as_str(), v.as_str())));
        if let Some(clock) = e.clock {
            c.envs(clock.env(e.env));
        }
        let sqs = client_env(e.endpoint, "ingress", e.queue_url);
        c.envs(sqs.iter().map(|(k, v)| (k.as_str(), v.as_str())))
            .env("ACKBENCH_TIME_SCALE", e.time_scale.to_string());
        c.env("ACKBENCH_INGRESS_PORT", e.port.to_string())
            .stdin(Stdio::null())
            .stdout(log("out").map_err(spawn_error)?)
            .stderr(log("err").map_err(spawn_error)?)
            .process_group(0)
            .kill_on_drop(true);
        let child = spawner.spawn(c).await.map_err(spawn_error)?;
        let pgid = child.id().map_or(0, |p| p as i32);
        let mut service = Service { child, pgid };
        let log = e.log_dir.join("ingress.err").display().to_string();
        let started = Instant::now();
        loop {
            if tokio::net::TcpStream::connect(addr).await.is_ok() {
                return Ok(service);
            }
            if let Ok(Some(status)) = service.child.try_wait() {
                // Reaped: never signalled again.
                service.pgid = 0;
                return Err(ServiceError::Exited { status, addr, log });
            }
            let error = if interrupt.requested() {
                ServiceError::Interrupted
            } else if started.elapsed() >= READY_TIMEOUT {
                ServiceError::NotReady { addr, log }
            } else {
                tokio::time::sleep(Duration::from_millis(20)).await;
                continue;
            };
            service.stop().await;
            return Err(error);
        }
    }

    /// Stops the service (SIGKILL to its group) and reaps it.
    pub async fn stop(mut self) {
        self.kill();
        let _ = self.child.wait().await;
        // Reaped: its group id may be reused from now on, so it is never signalled again.
        self.pgid = 0;
    }

    fn kill(&self) {
        if self.pgid > 0 {
            let _ = killpg(Pid::from_raw(self.pgid), Signal::SIGKILL);
        }
    }
}

impl Drop for Service {
    fn drop(&mut self) {
        self.kill();
    }
}

/// A free port on 127.0.0.1 for the service to listen on.
pub fn free_port() -> std::io::Result<u16> {
    Ok(std::net::TcpListener::bind("127.0.0.1:0")?
        .local_addr()?
        .port())
}
