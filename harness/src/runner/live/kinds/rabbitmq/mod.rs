//! `broker.kind: rabbitmq` in live mode: the real RabbitMQ server at `broker.url`.
//!
//! Per run, ackbench declares its own queue (and dead-letter exchange and queue) named after
//! the run ([`resources`]), checks the server-wide `consumer_timeout` against the profile
//! ([`settings`]), publishes the plan's messages itself (publisher confirms; each message's
//! `message_id` is its seq), consumes a copy of the dead-letter queue itself ([`dlq`]; the
//! queue proper is left alone, its depth read by the run's sampler, [`sample`]) and starts one
//! proxy port per worker ([`proxy`]): every worker, a program or a built-in target
//! ([`queue`]), reaches the server through its own port, where its deliveries and acks are
//! read. At the end everything it declared is deleted.

mod dlq;
mod headers;
mod heartbeat;
mod ledger;
pub(crate) mod proxy;
mod queue;
mod resources;
mod sample;
mod settings;
#[cfg(test)]
mod test_frames;
mod wire_time;

use std::net::SocketAddr;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use lapin::options::{BasicPublishOptions, ConfirmSelectOptions};
use lapin::{
    BasicProperties, Channel, Confirmation as AmqpConfirmation, Connection, ConnectionProperties,
};

use super::{
    BoxFuture, BrokerSampler, Confirmation, Context, Counts, Finished, LiveBroker, LiveQueue,
    OpenError, QueueFactory, QueueLength,
};
use crate::profile::{run_variables, BrokerKind, RabbitMqSpec};
use crate::record::{Seq, WorkerId};
use crate::runner::live::proxy::Proxy;
use crate::workload::message::Outgoing;
use ledger::Ledger;
use resources::Names;

const KIND: &str = crate::profile::kinds::rabbitmq::KIND.name;
/// How long the server's queue count is reused by `counts()`.
const READY_EVERY: Duration = Duration::from_millis(150);
/// How long after a return (a nack with requeue, a closed channel or connection) the server may
/// still not count the message in its queue: it requeues asynchronously, later on a loaded
/// machine. A count of the queue read sooner does not show the message.
const REQUEUE_GRACE: Duration = Duration::from_millis(500);

pub struct RabbitMq {
    url: String,
    names: Names,
    connection: Connection,
    admin: Channel,
    publisher: Channel,
    ledger: Arc<Ledger>,
    proxy: Proxy,
    dlq: Option<tokio::task::JoinHandle<()>>,
    consuming: queue::Consuming,
    dead_letter: bool,
    workers: u32,
    ready: Mutex<Option<(Instant, u64)>>,
    /// `broker.observe: none`: workers connect to the server itself, not through the proxy.
    direct: bool,
    /// With `connection` faults: the heartbeat (wall seconds) the built-in targets ask for.
    heartbeat: Option<u64>,
}

fn spec(s: &crate::profile::Scenario) -> &RabbitMqSpec {
    match &s.broker.kind {
        BrokerKind::RabbitMq(r) => r,
        _ => unreachable!("opened for broker.kind rabbitmq"),
    }
}

/// The run's queue `queue` and its framework's own queues, for the proxies to follow a message
/// a consumer publishes again.
fn places(
    s: &crate::profile::Scenario,
    spec: &RabbitMqSpec,
    queue: &str,
) -> proxy::republish::RunQueues {
    let fill = crate::profile::template::Fill {
        queue,
        ..Default::default()
    };
    let message = s.workload.message.as_ref();
    let named = |ts: Option<&Vec<crate::profile::template::Template>>| -> Vec<String> {
        ts.map(|v| v.iter().map(|t| t.render(&fill)).collect())
            .unwrap_or_default()
    };
    proxy::republish::RunQueues {
        queue: queue.to_string(),
        delay: named(message.map(|m| &m.delay_queues)),
        dead_letter: named(message.map(|m| &m.dead_letter_queues)),
        reader: crate::workload::key_reader::KeyReader::of(message),
        rejects_dead_letter: !spec.dead_letter
            && spec
                .arguments
                .iter()
                .any(|(k, _)| k == "x-dead-letter-exchange"),
    }
}

/// The server's host and port in `url` (AMQP's default port 5672).
async fn upstream(url: &str) -> Result<SocketAddr, String> {
    let u = url::Url::parse(url).map_err(|e| e.to_string())?;
    let host = u.host_str().unwrap_or("127.0.0.1").to_string();
    let port = u
        .port()
        .unwrap_or(if u.scheme() == "amqps" { 5671 } else { 5672 });
    let mut found = tokio::net::lookup_host((host.as_str(), port))
        .await
        .map_err(|e| format!("cannot resolve {host}: {e}"))?;
    found.next().ok_or_else(|| format!("{host} has no address"))
}

/// `url` with its host and port replaced by `addr` (credentials and vhost kept).
fn via(url: &str, addr: SocketAddr) -> String {
    let mut u = url::Url::parse(url).expect("broker.url was validated as a URL");
    let _ = u.set_host(Some(&addr.ip().to_string()));
    let _ = u.set_port(Some(addr.port()));
    u.to_string()
}

impl RabbitMq {
    pub async fn open(cx: Context<'_>) -> Result<RabbitMq, OpenError> {
        let s = cx.scenario;
        let spec = spec(s);
        let url = s
            .broker
            .url
            .clone()
            .expect("broker.url is defaulted for rabbitmq");
        let unreachable = |reason: String| OpenError::Unreachable {
            kind: KIND,
            url: url.clone(),
            reason,
        };
        let addr = upstream(&url).await.map_err(unreachable)?;
        // rabbitmqctl takes seconds (it starts an Erlang node): read the setting while the
        // connection is made, as the run's clock is already going.
        let (connected, server) = tokio::join!(
            tokio::time::timeout(
                Duration::from_secs(10),
                Connection::connect(&url, ConnectionProperties::default()),
            ),
            settings::server_consumer_timeout()
        );
        let connection = connected
            .map_err(|_| unreachable("no answer within 10 s".into()))?
            .map_err(|e| unreachable(e.to_string()))?;
        let server = server.map_err(|e| {
            OpenError::Settings(format!(
                "cannot read the consumer_timeout of the RabbitMQ server at {url} (a server-wide \
                 setting the profile's broker.consumer_timeout must match): {e}"
            ))
        })?;
        settings::check(server, s.broker.lease, s.run.time_scale, &url)
            .map_err(OpenError::Settings)?;
        let failed = |what: &str, e: lapin::Error| OpenError::Failed(format!("{what}: {e}"));
        let admin = connection
            .create_channel()
            .await
            .map_err(|e| failed("cannot open a channel", e))?;
        let mut names = Names::new(&cx.run_id, &cx.queue, spec);
        resources::check_existing(&connection, &mut names, s)
            .await
            .map_err(OpenError::Settings)?;
        if let Err(e) = resources::declare(&admin, &s.broker, spec, &names).await {
            let cleanup = connection.create_channel().await;
            if let Ok(ch) = cleanup {
                resources::delete(&ch, &names).await;
            }
            return Err(failed(
                &format!("cannot declare {}", names.all().join(", ")),
                e,
            ));
        }
        let ledger = Arc::new(Ledger::default());
        let mut broker = RabbitMq {
            url: url.clone(),
            names: names.clone(),
            publisher: admin.clone(),
            admin,
            ledger: ledger.clone(),
            proxy: Proxy::start(
                addr,
                s.worker_slots(),
                Arc::new(proxy::Amqp {
                    state: cx.state.clone(),
                    ledger: ledger.clone(),
                    consumer_timeout: crate::record::nanos(s.broker.lease),
                    wire: cx
                        .wire_scaled
                        .then(|| wire_time::WireTime::new(s.run.time_scale)),
                    places: Arc::new(places(s, spec, &names.queue)),
                }),
                cx.state.links(),
            )
            .await
            .map_err(|e| OpenError::Failed(format!("cannot listen on 127.0.0.1: {e}")))?,
            connection,
            dlq: None,
            consuming: queue::Consuming {
                queue: names.queue.clone(),
                prefetch: u16::try_from(spec.prefetch).unwrap_or(u16::MAX),
                state: cx.state.clone(),
                ledger,
            },
            dead_letter: spec.dead_letter,
            workers: s.worker_slots(),
            ready: Mutex::new(None),
            direct: s.broker.observe == crate::profile::Observe::Direct,
            heartbeat: cx
                .state
                .links()
                .map(|_| heartbeat::wall_seconds(spec.heartbeat, s.run.time_scale)),
        };
        // From here on, a failure still deletes what was declared.
        if let Err(e) = broker.start(&cx).await {
            Box::new(broker).finish().await;
            return Err(e);
        }
        Ok(broker)
    }

    /// The publishing channel (with confirms) and the dead-letter queue's consumer.
    async fn start(&mut self, cx: &Context<'_>) -> Result<(), OpenError> {
        let failed = |what: &str, e: lapin::Error| OpenError::Failed(format!("{what}: {e}"));
        self.publisher = self
            .connection
            .create_channel()
            .await
            .map_err(|e| failed("cannot open a channel", e))?;
        self.publisher
            .confirm_select(ConfirmSelectOptions::default())
            .await
            .map_err(|e| failed("cannot select publisher confirms", e))?;
        if let Some(dlq) = &self.names.dead_seen {
            let ch = self
                .connection
                .create_channel()
                .await
                .map_err(|e| failed("cannot open a channel", e))?;
            let task = dlq::consume(&ch, dlq, cx.state.clone(), self.ledger.clone())
                .await
                .map_err(|e| failed(&format!("cannot consume {dlq}"), e))?;
            self.dlq = Some(task);
        }
        Ok(())
    }

    /// Hands message `seq` to the publisher channel (lapin writes its frames in call order);
    /// the confirmation is the server's publisher confirm.
    async fn publish_one(&self, seq: Seq, message: Outgoing) -> Result<Confirmation, String> {
        // The run records the publish before this call ([`super::LiveBroker::records_its_events`]).
        // The proxy knows a delivery's message by its `message_id`, the seq.
        let content_type = message
            .content_type
            .as_deref()
            .unwrap_or("application/json");
        let mut props = BasicProperties::default()
            .with_message_id(seq.to_string().into())
            .with_content_type(content_type.into())
            .with_delivery_mode(2);
        if let Some(e) = &message.content_encoding {
            props = props.with_content_encoding(e.as_str().into());
        }
        if let Some(c) = &message.correlation_id {
            props = props.with_correlation_id(c.as_str().into());
        }
        if !message.headers.is_empty() {
            props = props.with_headers(headers::table(message.headers.iter().map(|(k, v)| (k, v))));
        }
        let body = message.body;
        let confirm = self
            .publisher
            .basic_publish(
                "".into(),
                self.names.queue.as_str().into(),
                BasicPublishOptions::default(),
                body.as_bytes(),
                props,
            )
            .await
            .map_err(|e| format!("cannot publish message {seq}: {e}"))?;
        let ledger = self.ledger.clone();
        Ok(Box::pin(async move {
            match confirm
                .await
                .map_err(|e| format!("message {seq} was not confirmed: {e}"))?
            {
                AmqpConfirmation::Ack(_) => {
                    ledger.published();
                    Ok(())
                }
                other => Err(format!("the server refused message {seq}: {other:?}")),
            }
        }))
    }

    /// Messages ready in the queue, from the server at most every [`READY_EVERY`], never from a
    /// count read before the latest confirmed publish or within [`REQUEUE_GRACE`] of the latest
    /// return; `None` while that return is so recent that no count can show it yet.
    async fn ready(&self) -> Result<Option<u64>, String> {
        let returned = self.ledger.last_return();
        if returned.is_some_and(|r| r.elapsed() < REQUEUE_GRACE) {
            return Ok(None);
        }
        let published = self.ledger.last_publish();
        let shows = |at: Instant| {
            returned.is_none_or(|r| at >= r + REQUEUE_GRACE) && published.is_none_or(|p| at >= p)
        };
        let cached = *self.ready.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some((_, n)) = cached.filter(|&(at, _)| at.elapsed() < READY_EVERY && shows(at)) {
            return Ok(Some(n));
        }
        let n = resources::ready(&self.admin, &self.names.queue)
            .await
            .map_err(|e| format!("cannot read the queue {}: {e}", self.names.queue))?;
        *self.ready.lock().unwrap_or_else(PoisonError::into_inner) = Some((Instant::now(), n));
        Ok(Some(n))
    }

    /// Without a dead-letter exchange the server drops a message past its delivery limit,
    /// unseen. Once the run's connections are closed, an empty queue means every message
    /// neither acked nor dead-lettered was dropped, at its last return. Without the proxies
    /// (`observe: none`) no ack is seen, so nothing is said.
    async fn dropped(
        admin: &Channel,
        names: &Names,
        ledger: &Ledger,
        direct: bool,
    ) -> Vec<crate::record::Event> {
        if names.dead_letter.is_some() || direct {
            return Vec::new();
        }
        // The server requeues a closed connection's deliveries a moment after the close, and the
        // proxies may still be closing theirs: the count is read a grace after both.
        tokio::time::sleep(REQUEUE_GRACE).await;
        if let Some(r) = ledger.last_return() {
            tokio::time::sleep_until((r + REQUEUE_GRACE).into()).await;
        }
        match resources::ready(admin, &names.queue).await {
            Ok(0) => ledger
                .unsettled_messages()
                .into_iter()
                .map(|(at, seq, delivery)| crate::record::Event {
                    at,
                    kind: crate::record::EventKind::Dropped { seq, delivery },
                })
                .collect(),
            _ => Vec::new(),
        }
    }

    /// Worker `w`'s URL: its own proxy port, or the server's with `observe: none`.
    fn worker_url(&self, w: WorkerId) -> String {
        if self.direct {
            self.url.clone()
        } else {
            via(&self.url, self.proxy.addr(w))
        }
    }

    async fn counts_now(&self) -> Result<Counts, String> {
        let unsettled = if self.direct {
            // No proxy sees the acks: the server's ready count (the run also waits for every
            // message's effect, [`crate::runner::live::drive`]). No proxy sees a return either,
            // so the count is always read.
            self.ready().await?.unwrap_or(1)
        } else if self.dead_letter {
            // Every message ends acked or in the dead-letter queue, both seen by the run.
            self.ledger.unsettled()
        } else {
            // A message past its delivery limit is dropped unseen: ask the server what is left.
            // A return not yet requeued counts (it is in neither the queue nor a worker's hands):
            // an empty queue read then does not end the run with that message unaccounted for.
            // So does a message never seen delivered: the server may have sent it to a worker
            // whose proxy has not read it yet (out of the queue, not yet held).
            // A copy a consumer published again (a retry) counts until a worker takes it from
            // the queue: in a delay queue or a framework's hold the queue's count cannot see it.
            let ready = self.ready().await?.unwrap_or(1);
            ready.max(self.ledger.never_delivered())
                + self.ledger.held()
                + self.ledger.copies_waiting()
        };
        Ok(Counts {
            unsettled,
            dead_lettered: self.ledger.dead_count(),
        })
    }
}

impl LiveBroker for RabbitMq {
    fn publish(&self, seq: Seq, message: Outgoing) -> BoxFuture<'_, Result<Confirmation, String>> {
        Box::pin(self.publish_one(seq, message))
    }

    fn queue_name(&self) -> &str {
        &self.names.queue
    }

    fn counts(&self) -> BoxFuture<'_, Result<Counts, String>> {
        Box::pin(self.counts_now())
    }

    /// `messages_ready` from the server (a passive declare, never the cached count), and the
    /// deliveries the proxies saw and no ack or return settled yet: what the management API's
    /// `messages_unacknowledged` counts. Without the proxies (`observe: none`) nothing counts
    /// the deliveries.
    fn queue_length(&self) -> BoxFuture<'_, Option<Result<QueueLength, String>>> {
        Box::pin(async {
            if self.direct {
                return Some(Err(
                    "with broker.observe: none no proxy counts the deliveries in flight, which \
                     an autoscale rule's looks read"
                        .to_string(),
                ));
            }
            let ready = resources::ready(&self.admin, &self.names.queue).await;
            Some(
                ready
                    .map(|ready| QueueLength {
                        ready,
                        in_flight: self.ledger.held(),
                    })
                    .map_err(|e| format!("cannot read the queue {}: {e}", self.names.queue)),
            )
        })
    }

    fn worker_env(&self, worker: WorkerId) -> Vec<(String, String)> {
        vec![
            (run_variables::AMQP_URL.to_string(), self.worker_url(worker)),
            (run_variables::QUEUE.to_string(), self.names.queue.clone()),
        ]
    }

    fn queues(&self) -> Arc<dyn QueueFactory> {
        Arc::new(AmqpQueues {
            urls: (1..=self.workers)
                .map(|w| match self.heartbeat {
                    Some(secs) => heartbeat::asking(&self.worker_url(w), secs),
                    None => self.worker_url(w),
                })
                .collect(),
            consuming: self.consuming.clone(),
        })
    }

    fn sampler(&self) -> BoxFuture<'_, Option<Result<Box<dyn BrokerSampler>, String>>> {
        Box::pin(async move {
            Some(
                sample::Sampler::open(self.url.clone(), self.names.clone())
                    .await
                    .map(|s| Box::new(s) as Box<dyn BrokerSampler>),
            )
        })
    }

    fn finish(self: Box<Self>) -> BoxFuture<'static, Finished> {
        Box::pin(async move {
            let me = *self;
            me.proxy.stop().await;
            if let Some(task) = me.dlq {
                task.abort();
            }
            let dropped = RabbitMq::dropped(&me.admin, &me.names, &me.ledger, me.direct).await;
            let not_removed = || resources::Removed {
                left: me.names.all(),
                held: Vec::new(),
            };
            let removed = match me.connection.create_channel().await {
                Ok(ch) => resources::delete(&ch, &me.names).await,
                Err(_) => match Connection::connect(&me.url, ConnectionProperties::default()).await
                {
                    Ok(c) => match c.create_channel().await {
                        Ok(ch) => resources::delete(&ch, &me.names).await,
                        Err(_) => not_removed(),
                    },
                    Err(_) => not_removed(),
                },
            };
            let mut left_behind = removed.left;
            let _ = me
                .connection
                .close(200, "ackbench run finished".into())
                .await;
            left_behind.sort();
            let notes = vec![
                "RabbitMQ: deliveries and acks are read by the AMQP proxy between each worker \
                 and the server; dead-lettering when the entry reaches the dead-letter queue"
                    .to_string(),
            ];
            let removed_queues = removed
                .held
                .into_iter()
                .map(|(queue, n)| crate::record::RemovedQueue {
                    queue,
                    messages: u64::from(n),
                })
                .collect();
            Finished {
                events: dropped,
                notes,
                left_behind,
                commit_handlers: None,
                removed: removed_queues,
            }
        })
    }
}

/// Each worker's AMQP client, through its own proxy port.
struct AmqpQueues {
    urls: Vec<String>,
    consuming: queue::Consuming,
}

impl QueueFactory for AmqpQueues {
    fn connect(&self, worker: WorkerId) -> BoxFuture<'_, Result<Box<dyn LiveQueue>, String>> {
        Box::pin(async move {
            let url = self.urls[(worker - 1) as usize].clone();
            let q = queue::AmqpQueue::connect(url, worker, self.consuming.clone()).await?;
            Ok(Box::new(q) as Box<dyn LiveQueue>)
        })
    }
}
