//! An HTTP ingress load (`workload.ingress`): the system's own front door publishes to the
//! queue, and goose users drive it with one request per planned message.
//!
//! [`service`] starts the system's ingress program with the run's SQS endpoint in its
//! environment; [`load`] runs the goose users against it. The endpoint reports every message
//! the service publishes ([`super::published`]); `metrics::ingress` joins the two by key.
//! [`IngressRun`] ties them together for the live runner.

pub mod load;
pub mod service;

use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;

use super::published::Published;
use crate::profile::IngressSpec;
use crate::provider::http::LiveClock;
use crate::record::{IngressRecord, MessageRecord, Seq};
use crate::workload::{Fill, Plan};

use load::{LoadError, LoadOutcome, Planned};
use service::{Service, ServiceEnv, ServiceError};

/// Why an ingress load could not run to its end.
#[derive(Debug, thiserror::Error)]
pub enum IngressError {
    #[error(transparent)]
    Service(#[from] ServiceError),
    #[error(transparent)]
    Load(#[from] LoadError),
    #[error("the ingress load did not stop within {}s of the run's end", load::GRACE.as_secs())]
    Stuck,
    #[error("cannot find a free port on 127.0.0.1 for the ingress service: {0}")]
    Port(std::io::Error),
}

impl IngressError {
    /// The run was interrupted while the service started (no error of the service's).
    pub fn is_interrupted(&self) -> bool {
        matches!(self, IngressError::Service(ServiceError::Interrupted))
    }
}

/// A running ingress service and the load against it.
pub struct IngressRun {
    spec: IngressSpec,
    service: Service,
    load: tokio::task::JoinHandle<Result<LoadOutcome, LoadError>>,
    published: Arc<Published>,
    planned: u64,
}

/// Where the run's endpoint is, for the service's environment.
pub struct Endpoint<'a> {
    pub endpoint: &'a str,
    pub queue_url: &'a str,
    pub time_scale: f64,
    pub log_dir: &'a Path,
    /// The scaled clock the service runs on; `None`: the machine's.
    pub clock: Option<&'a super::clock::ScaledClock>,
    /// How long requests may start (profile time, `run.duration`), for a load without schedule.
    pub publish_for: crate::record::Nanos,
    /// Starts the service so that it dies with ackbench.
    pub spawner: &'a super::spawn::Spawner,
    /// Ends the service's start-up early.
    pub interrupt: &'a crate::runner::Interrupt,
}

impl IngressRun {
    /// Starts the service, waits until it listens, then starts the load. The plan's instants
    /// count from now (the service's start-up is not held against the schedule).
    pub async fn start(
        spec: &IngressSpec,
        plan: &Plan,
        published: Arc<Published>,
        clock: LiveClock,
        at: Endpoint<'_>,
    ) -> Result<IngressRun, IngressError> {
        let port = service::free_port().map_err(IngressError::Port)?;
        let addr = service_addr(spec, port);
        let env = ServiceEnv {
            argv: &spec.command,
            env: &spec.env,
            endpoint: at.endpoint,
            queue_url: at.queue_url,
            port,
            time_scale: at.time_scale,
            log_dir: at.log_dir,
            clock: at.clock,
        };
        let service = Service::start(&env, addr, at.spawner, at.interrupt).await?;
        let offset = clock.now();
        let planned: Vec<Planned> = (1..=plan.len() as Seq)
            .zip(plan.arrivals())
            .map(|(seq, at)| Planned {
                key: plan.key(seq),
                seq,
                body: plan.body(seq),
                due: offset + at,
            })
            .collect();
        let n = planned.len() as u64;
        let send_until = offset + at.publish_for;
        let load = tokio::spawn({
            let spec = spec.clone();
            async move { load::run(&spec, planned, port, clock, send_until).await }
        });
        Ok(IngressRun {
            spec: spec.clone(),
            service,
            load,
            published,
            planned: n,
        })
    }

    /// Whether every request has been answered (or has failed).
    pub fn load_finished(&self) -> bool {
        self.load.is_finished()
    }

    /// Messages the service has published so far.
    pub fn published(&self) -> usize {
        self.published.len()
    }

    /// Stops the load (if still running), then the service; returns the messages the service
    /// published and what the load recorded. An interrupted run stops the service first, so
    /// it is gone at once and the load's last requests fail fast.
    pub async fn finish(
        self,
        interrupted: bool,
    ) -> Result<(Vec<MessageRecord>, IngressRecord), IngressError> {
        let mut service = Some(self.service);
        if interrupted {
            if let Some(s) = service.take() {
                s.stop().await;
            }
        }
        if !self.load.is_finished() {
            goose::trigger_killswitch(if interrupted {
                "the run was interrupted"
            } else {
                "the run ended (run.duration + run.drain)"
            });
        }
        let grace = load::GRACE + self.spec.timeout;
        let outcome = match tokio::time::timeout(grace, self.load).await {
            Ok(Ok(r)) => r,
            Ok(Err(join)) => Err(LoadError::from_panic(join)),
            Err(_) => {
                if let Some(s) = service {
                    s.stop().await;
                }
                return Err(IngressError::Stuck);
            }
        };
        if let Some(s) = service {
            s.stop().await;
        }
        let outcome = outcome?;
        let (messages, counts) = self.published.take();
        Ok((
            messages,
            IngressRecord {
                requests: outcome.requests,
                planned: self.planned,
                users: self.spec.users,
                scheduled: self.spec.scheduled,
                goose: outcome.goose,
                duplicate_publishes: counts.duplicate_publishes,
                unkeyed: counts.unkeyed,
            },
        ))
    }
}

/// The address the service listens on: the URL's host and port with `{port}` filled in.
fn service_addr(spec: &IngressSpec, port: u16) -> SocketAddr {
    let url = spec.url.render(&Fill {
        key: "k",
        seq: 1,
        body: "",
        port,
        ..Fill::default()
    });
    let parsed = reqwest::Url::parse(&url).ok();
    let port = parsed
        .as_ref()
        .and_then(|u| u.port_or_known_default())
        .unwrap_or(port);
    let ip = parsed
        .as_ref()
        .and_then(|u| u.host_str())
        .map(|h| h.trim_start_matches('[').trim_end_matches(']'))
        .and_then(|h| h.parse().ok())
        .unwrap_or(std::net::IpAddr::from([127, 0, 0, 1]));
    SocketAddr::new(ip, port)
}
