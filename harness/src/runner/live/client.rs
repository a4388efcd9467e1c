//! The traits built-in targets are written against, over real sockets: the queue as the run's
//! broker kind serves it ([`super::kinds`]), the provider over HTTP (reqwest), the clock scaled by `run.time_scale`, and
//! the target's store in memory, shared by the run's workers. One client per worker.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use ackbench_targets::message::Order;
use ackbench_targets::{
    Delivery, ProviderClient, ProviderError, QueueClient, QueueError, ReplyId, Runtime,
    SendRequest, Store, Tables,
};
use rand::RngExt;
use rand_chacha::ChaCha8Rng;

use super::kinds::{LiveQueue, QueueFactory};
use super::state::LiveState;
use crate::profile::KillPoint;
use crate::record::{EventKind, WorkerId};

/// What every worker's client shares.
pub struct Shared {
    pub state: Arc<LiveState>,
    /// Each worker's queue client, for the run's broker kind.
    pub queues: Arc<dyn QueueFactory>,
    /// The provider's root URL, `http://ADDR/`.
    pub provider_url: String,
    pub http_timeout: Option<Duration>,
    pub tables: Mutex<Tables>,
    pub seed: u64,
    /// Store effects, recorded by the provider's ledger.
    pub provider: Arc<crate::provider::http::HttpProvider>,
}

/// One worker's clients.
pub struct LiveClient {
    shared: Arc<Shared>,
    worker: WorkerId,
    queue: Box<dyn LiveQueue>,
    http: reqwest::Client,
    rng: Mutex<ChaCha8Rng>,
}

impl LiveClient {
    /// Worker `worker`'s clients, its queue connected as the run's broker kind connects one.
    pub async fn connect(shared: Arc<Shared>, worker: WorkerId) -> Result<LiveClient, String> {
        let queue = shared.queues.connect(worker).await?;
        let rng = crate::seed::stream(shared.seed, &format!("target-{worker}"));
        Ok(LiveClient {
            queue,
            http: reqwest::Client::new(),
            rng: Mutex::new(rng),
            shared,
            worker,
        })
    }
}

impl QueueClient for LiveClient {
    type Receipt = String;

    /// The next message; a worker told to stop (a `deploy`) fetches nothing more and exits,
    /// at once if it is waiting for one, once it has worked through its last poll's batch (as
    /// a consumer that checks its stop flag between polls does).
    async fn receive(&self) -> Result<Delivery<String>, QueueError> {
        let (told, wake) = self.shared.state.stop_request(self.worker);
        if told && self.queue.held_from_poll() > 0 {
            return self.queue.receive().await;
        }
        if !told {
            tokio::select! {
                biased;
                _ = wake.notified() => {}
                got = self.queue.receive() => return got,
            }
        }
        self.shared.state.stop_task(self.worker);
        // The stop aborts this task: nothing follows.
        std::future::pending().await
    }

    async fn ack(&self, receipt: &String) -> Result<(), QueueError> {
        self.queue.ack(receipt).await
    }

    async fn change_visibility(
        &self,
        receipt: &String,
        timeout: Duration,
    ) -> Result<(), QueueError> {
        self.queue.change_visibility(receipt, timeout).await
    }

    async fn release(&self, receipt: &String, delay: Duration) -> Result<(), QueueError> {
        self.queue.release(receipt, delay).await
    }

    async fn extend(&self, receipt: &String, lease: Duration) -> Result<(), QueueError> {
        self.queue.extend(receipt, lease).await
    }

    fn held_from_poll(&self) -> u32 {
        self.queue.held_from_poll()
    }
}

impl ProviderClient for LiveClient {
    async fn send(&self, req: SendRequest<'_>) -> Result<ReplyId, ProviderError> {
        let url = format!("{}w/{}/send", self.shared.provider_url, self.worker);
        let mut call = self
            .http
            .post(url)
            .json(&serde_json::json!({"key": req.key, "to": req.to}));
        if let Some(t) = self.shared.http_timeout {
            call = call.timeout(self.shared.state.clock.wall(crate::record::nanos(t)));
        }
        match call.send().await {
            Ok(r) if r.status().as_u16() == 202 => {
                let body: serde_json::Value = r.json().await.unwrap_or_default();
                // The provider's own ids are `em-<n>`; another answer's id reads as 0.
                Ok(body["id"]
                    .as_str()
                    .and_then(ReplyId::parse)
                    .unwrap_or(ReplyId(0)))
            }
            Ok(r) => Err(ProviderError::Status(r.status().as_u16())),
            Err(e) if e.is_timeout() => Err(ProviderError::Timeout),
            Err(e) => Err(ProviderError::Unavailable(e.to_string())),
        }
    }
}

impl Runtime for LiveClient {
    fn now(&self) -> Duration {
        Duration::from_nanos(self.shared.state.clock.now())
    }

    async fn sleep(&self, d: Duration) {
        tokio::time::sleep(self.shared.state.clock.wall(crate::record::nanos(d))).await;
    }

    async fn checkpoint(&self, name: &'static str) {
        let handling = self.shared.state.worker(self.worker).handling;
        if let Some((seq, delivery)) = handling {
            let point = KillPoint::Checkpoint(name.to_string());
            if self
                .shared
                .state
                .at_point(&point, self.worker, Some(seq), delivery)
            {
                // This worker is being killed: its task ends at this await.
                std::future::pending::<()>().await;
            }
        }
    }

    fn random(&self) -> f64 {
        self.rng
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .random()
    }

    fn record_rejected(&self, body: &str) {
        let held = self
            .shared
            .state
            .worker(self.worker)
            .handling
            .map(|(s, _)| s);
        let seq = held.or_else(|| {
            let key = Order::key_of(body)?;
            self.shared.state.seq_of_key(&key)
        });
        if let Some(seq) = seq {
            self.shared.state.record(EventKind::Rejected {
                seq,
                worker: self.worker,
            });
        }
    }
}

impl Store for LiveClient {
    /// Atomic under one lock; effect rows become Store effects in the provider's ledger.
    async fn transaction<T>(&self, f: impl FnOnce(&mut Tables) -> T) -> T {
        let (out, effects) = {
            let mut t = self
                .shared
                .tables
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            let out = f(&mut t);
            (out, t.take_effects())
        };
        let delivery = self
            .shared
            .state
            .worker(self.worker)
            .handling
            .map_or(0, |(_, d)| d);
        for key in effects {
            self.shared
                .provider
                .record_store_effect(&key, self.worker, delivery);
        }
        out
    }
}
