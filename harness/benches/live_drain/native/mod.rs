//! The native side: 32 consumers written with the broker's own crate, each receiving one
//! message at a time, making the built-in targets' HTTP call to ackbench's own provider
//! (the profile's model: the same latency and hold) and acking. One module per broker creates
//! its uniquely named queue, fills it, starts a consumer and deletes the queue whatever
//! happened.

mod nats;
mod rabbitmq;
mod redis;

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use ackbench::internals::profile::Scenario;
use ackbench::internals::run::Nanos;
use ackbench::internals::serve::{HttpProvider, KeySource, LiveClock, NoHooks, ProviderModel};

use crate::common::window::{measure, Rate, Timeline};
use crate::WORKERS;

/// A consumer's loop, running until it is aborted.
pub type Consuming = Pin<Box<dyn Future<Output = ()> + Send>>;

/// Where `kind`'s server listens.
pub fn address(kind: &str) -> &'static str {
    crate::common::server_address(kind).expect("a broker kind with a local server")
}

/// One queue of a native run, on one of the brokers.
enum Queue {
    RabbitMq(rabbitmq::Queue),
    Nats(nats::Queue),
    Redis(redis::Queue),
}

impl Queue {
    async fn open(kind: &str, name: &str) -> Result<Queue, String> {
        Ok(match kind {
            "rabbitmq" => Queue::RabbitMq(rabbitmq::Queue::open(name).await?),
            "nats" => Queue::Nats(nats::Queue::open(name).await?),
            _ => Queue::Redis(redis::Queue::open(name).await?),
        })
    }

    /// A connected consumer: its loop calls the provider at `url` for each message.
    async fn consumer(&self, worker: u32, call: Call) -> Result<Consuming, String> {
        match self {
            Queue::RabbitMq(q) => q.consumer(worker, call).await,
            Queue::Nats(q) => q.consumer(call).await,
            Queue::Redis(q) => q.consumer(worker, call).await,
        }
    }

    /// Publishes messages 1..=n, done when the broker has confirmed every one.
    async fn publish(&self, n: u64) -> Result<(), String> {
        match self {
            Queue::RabbitMq(q) => q.publish(n).await,
            Queue::Nats(q) => q.publish(n).await,
            Queue::Redis(q) => q.publish(n).await,
        }
    }

    async fn delete(self) {
        match self {
            Queue::RabbitMq(q) => q.delete().await,
            Queue::Nats(q) => q.delete().await,
            Queue::Redis(q) => q.delete().await,
        }
    }
}

/// Message `seq`'s body, as an ackbench run's plan writes an order.
pub fn body(seq: u64) -> String {
    format!(
        "{{\"key\":\"{}\",\"seq\":{seq},\"email\":\"{}@example.test\"}}",
        key(seq),
        key(seq)
    )
}

fn key(seq: u64) -> String {
    format!("k-{seq}")
}

/// One consumer's HTTP call: the built-in targets' (`POST <base>send`, `{"key", "to"}`).
#[derive(Clone)]
pub struct Call {
    http: reqwest::Client,
    url: String,
}

impl Call {
    /// Calls the provider for the order in `body`: true when it accepted (202), and the
    /// message is then acked.
    pub async fn send(&self, body: &[u8]) -> bool {
        #[derive(serde::Deserialize)]
        struct Order {
            key: String,
            email: String,
        }
        let Ok(order) = serde_json::from_slice::<Order>(body) else {
            return false;
        };
        let call = self
            .http
            .post(&self.url)
            .json(&serde_json::json!({"key": order.key, "to": order.email}));
        match call.send().await {
            Ok(r) if r.status().as_u16() == 202 => {
                let _: serde_json::Value = r.json().await.unwrap_or_default();
                true
            }
            _ => false,
        }
    }
}

/// One native run of `n` messages on `kind`, with `scenario`'s provider.
pub fn run(kind: &str, scenario: &Scenario, n: u64, hold: u64) -> Result<Rate, String> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    let timeline = rt.block_on(async {
        let name = format!(
            "live-drain-{}-{}",
            std::process::id(),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_millis())
        );
        let queue = Queue::open(kind, &name).await?;
        let timeline = drain(&queue, scenario, n, hold).await;
        queue.delete().await;
        timeline
    })?;
    measure(&timeline, n)
}

/// Starts the provider and the consumers, fills the queue, and waits for every effect.
async fn drain(queue: &Queue, scenario: &Scenario, n: u64, hold: u64) -> Result<Timeline, String> {
    let clock = LiveClock::new(1.0);
    let provider = HttpProvider::bind(
        "127.0.0.1:0".parse().expect("an address"),
        ProviderModel::new(&scenario.provider, scenario.seed),
        clock,
        KeySource::default(),
        WORKERS,
        Arc::new(NoHooks),
    )
    .await
    .map_err(|e| format!("cannot start the provider: {e}"))?;
    let mut consumers = tokio::task::JoinSet::new();
    for w in 1..=WORKERS {
        let call = Call {
            http: reqwest::Client::new(),
            url: format!("{}send", provider.base_url(w)),
        };
        consumers.spawn(queue.consumer(w, call).await?);
    }
    for seq in 1..=n {
        provider.publish_key(&key(seq), seq as ackbench::internals::run::Seq);
    }
    let p0 = clock.now();
    let published = queue.publish(n).await;
    let p1 = clock.now();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(hold + 300);
    while published.is_ok()
        && provider.running_counts().0 < n
        && tokio::time::Instant::now() < deadline
    {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    consumers.abort_all();
    let ledger = provider.shutdown().await;
    published?;
    if (ledger.effects.len() as u64) < n {
        return Err(format!(
            "only {} of {n} effects in time",
            ledger.effects.len()
        ));
    }
    let hold_ns: Nanos = hold * 1_000_000_000;
    Ok(Timeline {
        published: (n as usize, p0, p1),
        hold: (0, hold_ns),
        calls: ledger.calls.iter().map(|c| (c.started, c.ended)).collect(),
        effects: ledger.effects.iter().map(|e| e.at).collect(),
    })
}
