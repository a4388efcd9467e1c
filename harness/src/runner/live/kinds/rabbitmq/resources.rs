//! The run's own resources on the RabbitMQ server, named after the run: the queue `<run>` (a
//! quorum or classic queue as `queue_type` says, with `x-delivery-limit` for a quorum queue),
//! and with `dead_letter` the dead-letter exchange `<run>-dlx` (direct) and its queue
//! `<run>-dlq`, the queue's `x-dead-letter-exchange` / `x-dead-letter-routing-key`, and beside
//! it `<run>-dlq-seen`, bound with the same key: every dead-lettered message lands in both. The
//! run consumes the second to see each one as it comes; nobody consumes the first, so its depth
//! (a passive declare) is the server's own DLQ count. All are deleted at the end of the run.
//!
//! With `broker.queue` the queue has that name: a queue of that name that exists already
//! refuses the run, unless `broker.reuse` (then it must be empty, and it is left in place). A
//! consumer framework's own resources (`workload.message`'s preset: Celery's exchanges,
//! Dramatiq's delay and dead-letter queues) that did not exist before the run are deleted too.

use lapin::options::{
    ExchangeDeclareOptions, ExchangeDeleteOptions, QueueBindOptions, QueueDeclareOptions,
    QueueDeleteOptions,
};
use lapin::types::{AMQPValue, FieldTable, LongString};
use lapin::{Channel, Connection, ExchangeKind};

use crate::profile::message::Leftover;
use crate::profile::template::Fill;
use crate::profile::{BrokerSpec, RabbitMqSpec, RabbitQueueType, Scenario};

#[derive(Debug, Clone)]
pub struct Names {
    pub queue: String,
    /// The run declared the queue (false: `broker.reuse` found it, and it stays).
    pub own_queue: bool,
    /// What the consumer's framework declares that was not there before the run.
    pub framework: Vec<Framework>,
    /// The dead-letter exchange and its queue, when `dead_letter` is on.
    pub dead_letter: Option<(String, String)>,
    /// The copy of the dead-letter queue the run consumes (with `dead_letter`).
    pub dead_seen: Option<String>,
}

impl Names {
    pub fn new(run_id: &str, queue: &str, spec: &RabbitMqSpec) -> Names {
        Names {
            queue: queue.to_string(),
            own_queue: true,
            framework: Vec::new(),
            dead_letter: spec
                .dead_letter
                .then(|| (format!("{run_id}-dlx"), format!("{run_id}-dlq"))),
            dead_seen: spec.dead_letter.then(|| format!("{run_id}-dlq-seen")),
        }
    }

    /// Every queue and exchange, as the report names what was left behind.
    pub fn all(&self) -> Vec<String> {
        let mut v = Vec::new();
        if self.own_queue {
            v.push(format!("queue {}", self.queue));
        }
        v.extend(self.framework.iter().map(Framework::to_string));
        if let Some((x, q)) = &self.dead_letter {
            v.push(format!("exchange {x}"));
            v.push(format!("queue {q}"));
        }
        if let Some(q) = &self.dead_seen {
            v.push(format!("queue {q}"));
        }
        v
    }
}

/// A resource a consumer framework declares on the server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Framework {
    Queue(String),
    Exchange(String),
}

impl std::fmt::Display for Framework {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Framework::Queue(q) => write!(f, "queue {q}"),
            Framework::Exchange(x) => write!(f, "exchange {x}"),
        }
    }
}

/// Checks the server before the run declares anything: the queue named by `broker.queue`
/// (refused if it exists, unless `broker.reuse` and it is empty), and which of the consumer
/// framework's resources are not there yet (the run removes those at its end). Each passive
/// declare is on a channel of its own: a missing resource closes the channel that asked.
pub async fn check_existing(
    connection: &Connection,
    names: &mut Names,
    s: &Scenario,
) -> Result<(), String> {
    let url = s.broker.url.as_deref().unwrap_or_default();
    if s.broker.queue.name.is_some() {
        if let Some(count) = exists(connection, &Framework::Queue(names.queue.clone())).await? {
            if !s.broker.queue.reuse {
                return Err(format!(
                    "broker.queue {}: the queue already exists on the RabbitMQ server at {url}; a \
                     run declares its queue and deletes it at the end: name another queue, \
                     delete this one, or set broker.reuse: true to use it as it is (empty, and \
                     left in place)",
                    names.queue
                ));
            }
            if count > 0 {
                return Err(format!(
                    "broker.queue {}: reuse needs an empty queue, and it holds {count} messages \
                     that are not the run's (their deliveries could not be counted); purge it \
                     first",
                    names.queue
                ));
            }
            names.own_queue = false;
        }
    }
    let Some(message) = &s.workload.message else {
        return Ok(());
    };
    let fill = Fill {
        queue: &names.queue,
        ..Fill::default()
    };
    for leaf in &message.leaves {
        let r = match leaf {
            Leftover::Queue(t) => Framework::Queue(t.render(&fill)),
            Leftover::Exchange(t) => Framework::Exchange(t.render(&fill)),
        };
        if exists(connection, &r).await?.is_none() {
            names.framework.push(r);
        }
    }
    Ok(())
}

/// `Some(messages)` (0 for an exchange) when `r` exists, `None` when the server says it does not.
async fn exists(connection: &Connection, r: &Framework) -> Result<Option<u64>, String> {
    let ch = connection
        .create_channel()
        .await
        .map_err(|e| format!("cannot open a channel: {e}"))?;
    let passive = match r {
        Framework::Queue(q) => ch
            .queue_declare(
                q.as_str().into(),
                QueueDeclareOptions {
                    passive: true,
                    ..QueueDeclareOptions::default()
                },
                FieldTable::default(),
            )
            .await
            .map(|q| u64::from(q.message_count())),
        Framework::Exchange(x) => ch
            .exchange_declare(
                x.as_str().into(),
                ExchangeKind::Direct,
                ExchangeDeclareOptions {
                    passive: true,
                    ..ExchangeDeclareOptions::default()
                },
                FieldTable::default(),
            )
            .await
            .map(|()| 0),
    };
    match passive {
        Ok(n) => {
            let _ = ch.close(200, "checked".into()).await;
            Ok(Some(n))
        }
        // 404 NOT_FOUND closes the channel: the resource is not there.
        Err(e) if e.to_string().contains("NOT_FOUND") => Ok(None),
        Err(e) => Err(format!("cannot check {r} on the server: {e}")),
    }
}

/// The queue's arguments for the profile.
pub fn queue_arguments(b: &BrokerSpec, spec: &RabbitMqSpec, names: &Names) -> FieldTable {
    let mut args = FieldTable::default();
    let text = |s: &str| AMQPValue::LongString(LongString::from(s.as_bytes().to_vec()));
    let kind = match spec.queue_type {
        RabbitQueueType::Quorum => "quorum",
        RabbitQueueType::Classic => "classic",
    };
    args.insert("x-queue-type".into(), text(kind));
    let limit = b.limit_value(b.max_deliveries);
    if spec.queue_type == RabbitQueueType::Quorum && limit > 0 {
        args.insert(
            "x-delivery-limit".into(),
            AMQPValue::LongLongInt(i64::from(limit)),
        );
    }
    if let Some((exchange, queue)) = &names.dead_letter {
        args.insert("x-dead-letter-exchange".into(), text(exchange));
        args.insert("x-dead-letter-routing-key".into(), text(queue));
    }
    let fill = Fill {
        queue: &names.queue,
        ..Fill::default()
    };
    for (name, node) in &spec.arguments {
        let v = crate::workload::message::value(node, &fill);
        args.insert(name.as_str().into(), super::headers::amqp_value(&v));
    }
    args
}

/// Declares the dead-letter exchange and queue (first, so nothing dead-letters into nothing),
/// then the queue.
pub async fn declare(
    ch: &Channel,
    b: &BrokerSpec,
    spec: &RabbitMqSpec,
    names: &Names,
) -> lapin::Result<()> {
    let durable = QueueDeclareOptions {
        durable: true,
        ..QueueDeclareOptions::default()
    };
    if let Some((exchange, queue)) = &names.dead_letter {
        ch.exchange_declare(
            exchange.as_str().into(),
            ExchangeKind::Direct,
            ExchangeDeclareOptions {
                durable: true,
                ..ExchangeDeclareOptions::default()
            },
            FieldTable::default(),
        )
        .await?;
        for q in std::iter::once(queue).chain(&names.dead_seen) {
            ch.queue_declare(q.as_str().into(), durable, FieldTable::default())
                .await?;
            ch.queue_bind(
                q.as_str().into(),
                exchange.as_str().into(),
                queue.as_str().into(),
                QueueBindOptions::default(),
                FieldTable::default(),
            )
            .await?;
        }
    }
    ch.queue_declare(
        names.queue.as_str().into(),
        durable,
        queue_arguments(b, spec, names),
    )
    .await?;
    Ok(())
}

/// Messages ready in `queue` (a passive declare).
pub async fn ready(ch: &Channel, queue: &str) -> lapin::Result<u64> {
    let q = ch
        .queue_declare(
            queue.into(),
            QueueDeclareOptions {
                passive: true,
                ..QueueDeclareOptions::default()
            },
            FieldTable::default(),
        )
        .await?;
    Ok(u64::from(q.message_count()))
}

/// What removing the run's resources left behind, and the messages the removed queues held.
#[derive(Debug, Default)]
pub struct Removed {
    /// What could not be removed, named with the reason.
    pub left: Vec<String>,
    /// Each queue removed that still held messages, with their number (they were counted by
    /// the run before: its end waited for what was in flight, up to the drain limit).
    pub held: Vec<(String, u32)>,
}

/// Deletes everything the run declared (and what its consumer's framework declared that was
/// not there before): the queues, whose messages are counted as they go, then the exchanges.
pub async fn delete(ch: &Channel, names: &Names) -> Removed {
    let mut out = Removed::default();
    let queue = |q: &str, deleted: Result<u32, lapin::Error>, out: &mut Removed| match deleted {
        Ok(0) => {}
        Ok(n) => out.held.push((q.to_string(), n)),
        Err(e) => out.left.push(format!("queue {q} ({e})")),
    };
    let own = names.own_queue.then_some(&names.queue);
    for q in own.into_iter().chain(&names.dead_seen) {
        let deleted = ch
            .queue_delete(q.as_str().into(), QueueDeleteOptions::default())
            .await;
        queue(q, deleted, &mut out);
    }
    for r in &names.framework {
        match r {
            Framework::Queue(q) => {
                let deleted = ch
                    .queue_delete(q.as_str().into(), QueueDeleteOptions::default())
                    .await;
                queue(q, deleted, &mut out);
            }
            Framework::Exchange(x) => {
                if let Err(e) = ch
                    .exchange_delete(x.as_str().into(), ExchangeDeleteOptions::default())
                    .await
                {
                    out.left.push(format!("{r} ({e})"));
                }
            }
        }
    }
    if let Some((exchange, dlq)) = &names.dead_letter {
        let deleted = ch
            .queue_delete(dlq.as_str().into(), QueueDeleteOptions::default())
            .await;
        queue(dlq, deleted, &mut out);
        if let Err(e) = ch
            .exchange_delete(exchange.as_str().into(), ExchangeDeleteOptions::default())
            .await
        {
            out.left.push(format!("exchange {exchange} ({e})"));
        }
    }
    out
}
