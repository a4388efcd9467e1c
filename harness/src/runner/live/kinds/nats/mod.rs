//! `broker.kind: nats`: a real NATS JetStream server at `broker.url`.
//!
//! Per run, ackbench creates a stream `<run id>` (subject `<run id>.orders`, memory storage,
//! limits retention: a message stays in the stream after its MaxDeliver, as the sim model has
//! it) and on it a durable pull consumer `workers` with explicit acks and the profile's AckWait,
//! MaxDeliver, BackOff and MaxAckPending (AckWait and BackOff in wall time). It publishes the
//! plan's messages in order and maps each message's stream sequence (from its publish ack) to
//! the run's seq. Workers reach the server through their own proxy port ([`proxy`]); the
//! server's MAX_DELIVERIES advisories for the consumer, on ackbench's own connection, are the
//! run's dead-lettering. Backlog and in-flight come from consumer info (`num_pending`,
//! `num_ack_pending`), read at most every [`INFO_EVERY`]. finish() deletes the stream (and with
//! it the consumer).

mod book;
pub(crate) mod frames;
mod proxy;
mod queue;
mod sample;
mod subject;
mod wire;

use std::net::SocketAddr;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use async_nats::jetstream::{self, consumer, stream};
use futures_util::StreamExt;

use super::{
    BoxFuture, BrokerSampler, Confirmation, Context, Counts, Finished, LiveBroker, LiveQueue,
    OpenError, QueueFactory,
};
use crate::profile::{run_variables, BrokerKind, Scenario};
use crate::provider::http::LiveClock;
use crate::record::{nanos, EventKind, Seq, WorkerId};
use crate::runner::live::proxy::Proxy;
use crate::runner::live::state::LiveState;
use crate::workload::message::Outgoing;
use book::Book;

/// The durable pull consumer's name on the run's stream.
pub const CONSUMER: &str = "workers";
/// How long consumer info is reused before the server is asked again.
const INFO_EVERY: Duration = Duration::from_millis(150);
/// How long ackbench waits for the server when it sets up or tears down.
const SETUP_TIMEOUT: Duration = Duration::from_secs(5);

pub struct NatsBroker {
    url: String,
    client: async_nats::Client,
    js: jetstream::Context,
    stream: String,
    subject: String,
    book: Arc<Mutex<Book>>,
    proxy: Proxy,
    workers: WorkerId,
    advisories: tokio::task::JoinHandle<()>,
    /// The latest consumer info's counts, and when they were read.
    cached: Arc<Mutex<Option<(Instant, u64)>>>,
    clock: LiveClock,
    /// `broker.observe: none`: workers connect to the server itself, not through the proxy.
    direct: bool,
}

impl NatsBroker {
    pub async fn open(cx: Context<'_>) -> Result<NatsBroker, OpenError> {
        let s = cx.scenario;
        let url = s
            .broker
            .url
            .clone()
            .unwrap_or_else(|| "nats://127.0.0.1:4222".to_string());
        let unreachable = |reason: String| OpenError::Unreachable {
            kind: crate::profile::kinds::nats::KIND.name,
            url: url.clone(),
            reason,
        };
        let upstream = upstream(&url).await.map_err(&unreachable)?;
        let client = tokio::time::timeout(
            SETUP_TIMEOUT,
            async_nats::ConnectOptions::new()
                .connection_timeout(SETUP_TIMEOUT)
                .connect(url.as_str()),
        )
        .await
        .map_err(|_| unreachable("no answer in 5 s".to_string()))?
        .map_err(|e| unreachable(e.to_string()))?;
        let mut js = jetstream::new(client.clone());
        js.set_timeout(SETUP_TIMEOUT);
        if let Err(e) = jetstream_enabled(&client).await {
            return Err(OpenError::Settings(format!(
                "the NATS server at {url} does not answer JetStream requests ({e}): a nats \
                 broker needs JetStream enabled (nats-server -js, or `jetstream {{}}` in its \
                 configuration)"
            )));
        }
        let stream = cx.queue.clone();
        if s.broker.queue.name.is_some() && js.get_stream(&stream).await.is_ok() {
            return Err(OpenError::Settings(format!(
                "broker.queue {stream}: a stream of that name already exists on the NATS server \
                 at {url}; a run creates its stream and deletes it at the end: name another, or \
                 delete it (nats stream rm {stream})"
            )));
        }
        let subject = format!("{stream}.orders");
        let book = Arc::new(Mutex::new(Book::default()));
        // The advisories are listened to before the consumer exists: none is missed.
        let advisory = format!("$JS.EVENT.ADVISORY.CONSUMER.MAX_DELIVERIES.{stream}.{CONSUMER}");
        let sub = client
            .subscribe(advisory)
            .await
            .map_err(|e| OpenError::Failed(format!("cannot subscribe to advisories: {e}")))?;
        let advisories = tokio::spawn(listen(sub, book.clone(), cx.state.clone()));
        let created = create(&js, s, cx.state.clock, &stream, &subject).await;
        if let Err(e) = created {
            advisories.abort();
            let _ = js.delete_stream(&stream).await;
            return Err(OpenError::Failed(format!(
                "cannot create stream {stream} and consumer {CONSUMER} on {url}: {e}"
            )));
        }
        let shared = Arc::new(proxy::Shared::new(
            s,
            cx.state.clone(),
            book.clone(),
            &stream,
            CONSUMER,
            &subject,
            cx.wire_scaled,
        ));
        let proxy = match Proxy::start(
            upstream,
            s.consumer.workers,
            Arc::new(proxy::NatsProtocol(shared)),
            cx.state.links(),
        )
        .await
        {
            Ok(p) => p,
            Err(e) => {
                advisories.abort();
                let _ = js.delete_stream(&stream).await;
                return Err(OpenError::Failed(format!(
                    "cannot start the workers' proxy: {e}"
                )));
            }
        };
        Ok(NatsBroker {
            url,
            client,
            js,
            stream,
            subject,
            book,
            proxy,
            workers: s.consumer.workers,
            advisories,
            cached: Arc::new(Mutex::new(None)),
            clock: cx.state.clock,
            direct: s.broker.observe == crate::profile::Observe::Direct,
        })
    }

    fn book(&self) -> std::sync::MutexGuard<'_, Book> {
        self.book.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Worker `w`'s URL: its own proxy port, or the server's with `observe: none`.
    fn proxy_url(&self, w: WorkerId) -> String {
        if self.direct {
            return self.url.clone();
        }
        format!("nats://{}", self.proxy.addr(w))
    }

    /// Messages the consumer still holds: not yet delivered, or delivered and not acked.
    async fn unsettled(&self) -> Result<u64, String> {
        let cached = *self.cached.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some((at, n)) = cached {
            if at.elapsed() < INFO_EVERY {
                return Ok(n);
            }
        }
        let read = Instant::now();
        let info = consumer_info(&self.js, &self.stream, CONSUMER).await?;
        let n = info.num_pending + info.num_ack_pending as u64;
        let mut c = self.cached.lock().unwrap_or_else(PoisonError::into_inner);
        // A publish since the read began made it stale: it is used once, not kept.
        if c.is_none_or(|(at, _)| at <= read) {
            *c = Some((read, n));
        }
        Ok(n)
    }
}

/// The server's info of `consumer` on `stream` (its `num_pending`, `num_ack_pending`), as the
/// run's counts and its sampler read it.
async fn consumer_info(
    js: &jetstream::Context,
    stream: &str,
    consumer: &str,
) -> Result<consumer::Info, String> {
    js.get_stream_no_info(stream)
        .await
        .map_err(|e| format!("cannot read stream {stream}: {e}"))?
        .consumer_info(consumer)
        .await
        .map_err(|e| format!("cannot read consumer {consumer} of {stream}: {e}"))
}

/// The server's address, for the workers' proxy.
async fn upstream(url: &str) -> Result<SocketAddr, String> {
    let parsed = url::Url::parse(url).map_err(|e| e.to_string())?;
    let host = parsed.host_str().unwrap_or("127.0.0.1").to_string();
    let port = parsed.port().unwrap_or(4222);
    let mut addrs = tokio::net::lookup_host((host.as_str(), port))
        .await
        .map_err(|e| e.to_string())?;
    addrs.next().ok_or_else(|| format!("{host} has no address"))
}

/// Whether the server (the account ackbench connects as) has JetStream: `$JS.API.INFO`
/// answers with the account's JetStream info, or an error, or nobody answers it.
async fn jetstream_enabled(client: &async_nats::Client) -> Result<(), String> {
    let answer = tokio::time::timeout(SETUP_TIMEOUT, client.request("$JS.API.INFO", "".into()))
        .await
        .map_err(|_| "no answer in 5 s".to_string())?
        .map_err(|e| e.to_string())?;
    let v: serde_json::Value = serde_json::from_slice(&answer.payload).unwrap_or_default();
    match v.get("error") {
        Some(err) => Err(err["description"]
            .as_str()
            .unwrap_or("an error")
            .to_string()),
        None => Ok(()),
    }
}

/// The run's stream and its durable pull consumer, with the profile's settings in wall time.
async fn create(
    js: &jetstream::Context,
    s: &Scenario,
    clock: LiveClock,
    stream: &str,
    subject: &str,
) -> Result<(), String> {
    let wall = |d: Duration| clock.wall(nanos(d));
    let (backoff, max_ack_pending) = match &s.broker.kind {
        BrokerKind::Nats(n) => (
            n.backoff.iter().map(|&d| wall(d)).collect(),
            n.max_ack_pending,
        ),
        _ => (Vec::new(), 1),
    };
    let st = js
        .create_stream(stream::Config {
            name: stream.to_string(),
            subjects: vec![subject.to_string()],
            storage: stream::StorageType::Memory,
            retention: stream::RetentionPolicy::Limits,
            ..Default::default()
        })
        .await
        .map_err(|e| e.to_string())?;
    st.create_consumer(consumer::pull::Config {
        durable_name: Some(CONSUMER.to_string()),
        ack_policy: consumer::AckPolicy::Explicit,
        ack_wait: wall(s.broker.lease),
        max_deliver: match s.broker.max_deliveries {
            0 => -1,
            n => i64::from(n),
        },
        backoff,
        max_ack_pending: i64::from(max_ack_pending),
        ..Default::default()
    })
    .await
    .map_err(|e| e.to_string())?;
    Ok(())
}

/// MAX_DELIVERIES advisories of the run's consumer: each is the message's dead-lettering.
async fn listen(mut sub: async_nats::Subscriber, book: Arc<Mutex<Book>>, state: Arc<LiveState>) {
    while let Some(m) = sub.next().await {
        let Ok(v) = serde_json::from_slice::<serde_json::Value>(&m.payload) else {
            continue;
        };
        let stream_seq = v["stream_seq"].as_u64().unwrap_or(0);
        let delivery = v["deliveries"].as_u64().unwrap_or(0) as u32;
        let seq = {
            let mut b = book.lock().unwrap_or_else(PoisonError::into_inner);
            b.seq_of(stream_seq).filter(|&q| b.dead_lettered(q))
        };
        if let Some(seq) = seq {
            state.record(EventKind::DeadLettered { seq, delivery });
        }
    }
}

impl LiveBroker for NatsBroker {
    /// Publishes are one at a time, in order, on the run's own subject: message `seq` is the
    /// stream's next sequence. That mapping is in place before the message is sent (a waiting
    /// worker may get it before the publish ack is back), and checked against the publish ack
    /// (corrected when a worker's own copy of a message, its retry, was stored first).
    fn queue_name(&self) -> &str {
        &self.stream
    }

    /// Hands message `seq` to the client, which writes in call order (so stream sequences
    /// follow seqs, as the book expects); the confirmation is the stream's PubAck.
    fn publish(&self, seq: Seq, message: Outgoing) -> BoxFuture<'_, Result<Confirmation, String>> {
        Box::pin(async move {
            let url = self.url.clone();
            let failed = move |e: String| format!("cannot publish message {seq} to {url}: {e}");
            let expected = {
                let mut b = self.book();
                let next = b.next_sequence();
                b.published(next, seq);
                next
            };
            let body = message.body.into_bytes().into();
            let published = if message.headers.is_empty() {
                self.js.publish(self.subject.clone(), body).await
            } else {
                let mut headers = async_nats::HeaderMap::new();
                for (k, v) in &message.headers {
                    let v = crate::workload::message::text_of(v.clone());
                    headers.insert(k.as_str(), v.as_str());
                }
                self.js
                    .publish_with_headers(self.subject.clone(), headers, body)
                    .await
            };
            let ack = published.map_err(|e| failed(e.to_string()))?;
            let cached = self.cached.clone();
            let subject = self.subject.clone();
            let book = self.book.clone();
            let confirmation: Confirmation = Box::pin(async move {
                let ack = ack.await.map_err(|e| failed(e.to_string()))?;
                *cached.lock().unwrap_or_else(PoisonError::into_inner) = None;
                if ack.sequence != expected
                    && !book
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .stored_at(expected, ack.sequence, seq)
                {
                    return Err(failed(format!(
                        "the stream gave it sequence {}, not {expected}: something else \
                         publishes to {subject}",
                        ack.sequence
                    )));
                }
                Ok(())
            });
            Ok(confirmation)
        })
    }

    fn counts(&self) -> BoxFuture<'_, Result<Counts, String>> {
        Box::pin(async move {
            Ok(Counts {
                unsettled: self.unsettled().await?,
                dead_lettered: self.book().dead_count(),
            })
        })
    }

    fn worker_env(&self, worker: WorkerId) -> Vec<(String, String)> {
        [
            (run_variables::NATS_URL, self.proxy_url(worker)),
            (run_variables::STREAM, self.stream.clone()),
            (run_variables::CONSUMER, CONSUMER.to_string()),
            (run_variables::SUBJECT, self.subject.clone()),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect()
    }

    fn queues(&self) -> Arc<dyn QueueFactory> {
        Arc::new(NatsQueues {
            urls: (1..=self.workers).map(|w| self.proxy_url(w)).collect(),
            stream: self.stream.clone(),
            clock: self.clock,
        })
    }

    fn sampler(&self) -> BoxFuture<'_, Option<Result<Box<dyn BrokerSampler>, String>>> {
        Box::pin(async move {
            Some(
                sample::Sampler::open(&self.url, self.stream.clone(), CONSUMER.to_string())
                    .await
                    .map(|s| Box::new(s) as Box<dyn BrokerSampler>),
            )
        })
    }

    fn finish(self: Box<Self>) -> BoxFuture<'static, Finished> {
        Box::pin(async move {
            let NatsBroker {
                client,
                js,
                stream,
                proxy,
                advisories,
                ..
            } = *self;
            proxy.stop().await;
            advisories.abort();
            let mut left_behind = Vec::new();
            // Deleting the stream deletes its consumer.
            match tokio::time::timeout(SETUP_TIMEOUT, js.delete_stream(&stream)).await {
                Ok(Ok(_)) => {}
                Ok(Err(e)) => left_behind.push(format!("stream {stream} ({e})")),
                Err(_) => left_behind.push(format!("stream {stream} (no answer in 5 s)")),
            }
            let _ = client.flush().await;
            Finished {
                events: Vec::new(),
                notes: vec![
                    "NATS JetStream: lease expiries are recorded when the server redelivers \
                     (it does not say when the AckWait ended); dead-lettering from its \
                     MAX_DELIVERIES advisories"
                        .to_string(),
                ],
                left_behind,
                ..Finished::default()
            }
        })
    }
}

/// Each built-in worker's client, through its own proxy port.
struct NatsQueues {
    urls: Vec<String>,
    stream: String,
    clock: LiveClock,
}

impl QueueFactory for NatsQueues {
    fn connect(&self, worker: WorkerId) -> BoxFuture<'_, Result<Box<dyn LiveQueue>, String>> {
        Box::pin(async move {
            let url = self
                .urls
                .get((worker as usize).wrapping_sub(1))
                .ok_or_else(|| format!("no proxy port for worker {worker}"))?;
            let q = queue::NatsQueue::connect(url, &self.stream, CONSUMER, self.clock).await?;
            Ok(Box::new(q) as Box<dyn LiveQueue>)
        })
    }
}
