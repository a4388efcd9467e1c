//! The server: binds, serves, drives the brokers' clock, and shuts down gracefully.

use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::watch;
use tokio::task::JoinHandle;

use super::clock::Clock;
use super::config::{QueueSpec, SqsConfig};
use super::error::SqsError;
use super::http::{router, Front};
use super::registry::Registry;
use super::service::Service;
use crate::broker::Counts;
use crate::record::{Event, Nanos, WorkerId};

/// A running SQS endpoint over the embedded broker.
#[derive(Debug)]
pub struct SqsServer {
    addr: SocketAddr,
    service: Arc<Service>,
    shutdown: watch::Sender<bool>,
    serve: JoinHandle<()>,
    driver: JoinHandle<()>,
}

impl SqsServer {
    /// Binds `addr` (port 0: any free port) and starts serving on the current tokio runtime,
    /// with the queues of `config.queues` created.
    pub async fn bind(addr: SocketAddr, config: SqsConfig) -> io::Result<SqsServer> {
        let listener = crate::serving::listen(addr)?;
        let addr = listener.local_addr()?;
        let clock = Clock::start();
        let mut registry = Registry::new(
            format!("http://{addr}"),
            config.region.clone(),
            config.account_id.clone(),
            config.default_broker,
        );
        registry.record_events = config.record_events;
        registry.forget_settled = config.forget_settled;
        registry.wire_time = config.wire_time;
        let epoch_s = clock.epoch_ms(0) / 1000;
        for (name, spec) in &config.queues {
            registry
                .create_with_spec(name, spec, epoch_s)
                .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
        }
        let (shutdown, shutdown_rx) = watch::channel(false);
        let service = Service::new(registry, clock, shutdown_rx.clone(), config.hooks.clone());
        let driver = tokio::spawn(service.clone().drive());
        let app = router(Front::new(service.clone(), config.max_request_bytes));
        let mut stop = shutdown_rx;
        let serve = tokio::spawn(crate::serving::serve(
            listener,
            app,
            config.limits,
            async move {
                // Stops on shutdown(), or when the server handle is dropped.
                let _ = stop.wait_for(|&s| s).await;
            },
        ));
        Ok(SqsServer {
            addr,
            service,
            shutdown,
            serve,
            driver,
        })
    }

    /// The address the server listens on.
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http://host:port`: the endpoint URL to give SDKs.
    pub fn endpoint_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The URL of queue `name` (whether or not it exists).
    pub fn queue_url(&self, name: &str) -> String {
        self.service.state().url(name)
    }

    /// Creates queue `name` with ackbench's broker settings (or re-configures it if it exists),
    /// and its dead-letter queue if named. Returns its URL.
    pub fn create_queue(&self, name: &str, spec: QueueSpec) -> Result<String, SqsError> {
        let epoch_s = self.service.clock.epoch_ms(self.service.clock.now()) / 1000;
        self.service
            .with_state(|st, _| st.create_with_spec(name, &spec, epoch_s))
    }

    /// Takes the broker events queue `name` recorded since the last call (times are
    /// [`SqsServer::elapsed`]-based). `None` if there is no such queue.
    pub fn take_events(&self, name: &str) -> Option<Vec<Event>> {
        self.service
            .with_state(|st, _| st.get(name).ok().map(|q| std::mem::take(&mut q.events)))
    }

    /// Sends a message to queue `name` as a producer would (`SendMessage`), waking long polls.
    /// Returns the message's number in the queue.
    pub fn send_message(&self, name: &str, body: String) -> Result<crate::record::Seq, SqsError> {
        self.send_with_attributes(name, body, Default::default())
    }

    /// [`SqsServer::send_message`] with message attributes.
    pub fn send_with_attributes(
        &self,
        name: &str,
        body: String,
        attributes: super::message_attributes::MessageAttributes,
    ) -> Result<crate::record::Seq, SqsError> {
        self.send(name, body, attributes, None)?.ok_or_else(|| {
            SqsError::invalid("MessageDeduplicationId", "a repeat within the interval")
        })
    }

    /// Sends a message to FIFO queue `name` in message group `group_id` with deduplication id
    /// `dedup_id`, as a producer would (`SendMessage`). Returns the message's number in the
    /// queue, or `None` when the queue dropped it as a repeat of a send it accepted within its
    /// deduplication interval.
    pub fn send_fifo_message(
        &self,
        name: &str,
        body: String,
        group_id: &str,
        dedup_id: &str,
    ) -> Result<Option<crate::record::Seq>, SqsError> {
        self.send(name, body, Default::default(), Some((group_id, dedup_id)))
    }

    fn send(
        &self,
        name: &str,
        body: String,
        attributes: super::message_attributes::MessageAttributes,
        fifo: Option<(&str, &str)>,
    ) -> Result<Option<crate::record::Seq>, SqsError> {
        self.service.with_state(|st, now| {
            let epoch_ms = self.service.clock.epoch_ms(now);
            let message = super::NewMessage {
                body,
                delay_s: fifo.is_none().then_some(0),
                attributes,
                group_id: fifo.map(|(g, _)| g.to_string()),
                dedup_id: fifo.map(|(_, d)| d.to_string()),
            };
            let (seq, _) = st.get(name)?.send(now, epoch_ms, message)?;
            Ok(seq)
        })
    }

    /// How many messages of queue `name` are in each state, now.
    pub fn counts(&self, name: &str) -> Option<Counts> {
        self.service
            .with_state(|st, _| st.get(name).ok().map(|q| q.counts()))
    }

    /// Every access key id seen so far and the worker id it maps to.
    pub fn workers(&self) -> Vec<(String, WorkerId)> {
        self.service.state().workers.all()
    }

    /// Nanoseconds since the server started: the time base of its events.
    pub fn elapsed(&self) -> Nanos {
        self.service.clock.now()
    }

    /// Stops accepting requests, answers open long polls (empty), and waits up to 5 s for
    /// in-flight requests to finish.
    pub async fn shutdown(self) {
        let _ = self.shutdown.send(true);
        let mut serve = self.serve;
        if tokio::time::timeout(Duration::from_secs(5), &mut serve)
            .await
            .is_err()
        {
            serve.abort();
        }
        let _ = self.driver.await;
    }
}

/// Serves the SQS endpoint on `listen` until Ctrl-C or SIGTERM: what `ackbench broker --listen
/// 127.0.0.1:PORT` runs. Prints the endpoint and the URL of each configured queue. Builds its own
/// tokio runtime; call it from synchronous code.
pub fn run_standalone(listen: SocketAddr, config: SqsConfig) -> io::Result<()> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    rt.block_on(async move {
        let names: Vec<String> = config.queues.iter().map(|(n, _)| n.clone()).collect();
        let server = SqsServer::bind(listen, config).await?;
        crate::stdout::outln!("ackbench broker: SQS endpoint at {}", server.endpoint_url());
        for n in &names {
            crate::stdout::outln!("  queue {n}: {}", server.queue_url(n));
        }
        let trimmer = tokio::spawn(crate::serving::trim::keep_trimming(Duration::from_secs(1)));
        crate::serving::stop::stop_signal().await;
        trimmer.abort();
        server.shutdown().await;
        Ok(())
    })
}
