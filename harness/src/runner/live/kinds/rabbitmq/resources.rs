//! The run's own resources on the RabbitMQ server, named after the run: the queue `<run>` (a
//! quorum or classic queue as `queue_type` says, with `x-delivery-limit` for a quorum queue),
//! and with `dead_letter` the dead-letter exchange `<run>-dlx` (direct) and its queue
//! `<run>-dlq`, the queue's `x-dead-letter-exchange` / `x-dead-letter-routing-key`, and beside
//! it `<run>-dlq-seen`, bound with the same key: every dead-lettered message lands in both. The
//! run consumes the second to see each one as it comes; nobody consumes the first, so its depth
//! (a passive declare) is the server's own DLQ count. All are deleted at the end of the run.

use lapin::options::{
    ExchangeDeclareOptions, ExchangeDeleteOptions, QueueBindOptions, QueueDeclareOptions,
    QueueDeleteOptions,
};
use lapin::types::{AMQPValue, FieldTable, LongString};
use lapin::{Channel, ExchangeKind};

use crate::profile::{BrokerSpec, RabbitMqSpec, RabbitQueueType};

#[derive(Debug, Clone)]
pub struct Names {
    pub queue: String,
    /// The dead-letter exchange and its queue, when `dead_letter` is on.
    pub dead_letter: Option<(String, String)>,
    /// The copy of the dead-letter queue the run consumes (with `dead_letter`).
    pub dead_seen: Option<String>,
}

impl Names {
    pub fn new(run_id: &str, spec: &RabbitMqSpec) -> Names {
        Names {
            queue: run_id.to_string(),
            dead_letter: spec
                .dead_letter
                .then(|| (format!("{run_id}-dlx"), format!("{run_id}-dlq"))),
            dead_seen: spec.dead_letter.then(|| format!("{run_id}-dlq-seen")),
        }
    }

    /// Every queue and exchange, as the report names what was left behind.
    pub fn all(&self) -> Vec<String> {
        let mut v = vec![format!("queue {}", self.queue)];
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

/// The queue's arguments for the profile.
pub fn queue_arguments(b: &BrokerSpec, spec: &RabbitMqSpec, names: &Names) -> FieldTable {
    let mut args = FieldTable::default();
    let text = |s: &str| AMQPValue::LongString(LongString::from(s.as_bytes().to_vec()));
    let kind = match spec.queue_type {
        RabbitQueueType::Quorum => "quorum",
        RabbitQueueType::Classic => "classic",
    };
    args.insert("x-queue-type".into(), text(kind));
    let limit = b.limit_value(b.max_receives);
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

/// Deletes everything the run declared; what could not be deleted, named.
pub async fn delete(ch: &Channel, names: &Names) -> Vec<String> {
    let mut left = Vec::new();
    for q in std::iter::once(&names.queue).chain(&names.dead_seen) {
        if let Err(e) = ch
            .queue_delete(q.as_str().into(), QueueDeleteOptions::default())
            .await
        {
            left.push(format!("queue {q} ({e})"));
        }
    }
    if let Some((exchange, queue)) = &names.dead_letter {
        if let Err(e) = ch
            .queue_delete(queue.as_str().into(), QueueDeleteOptions::default())
            .await
        {
            left.push(format!("queue {queue} ({e})"));
        }
        if let Err(e) = ch
            .exchange_delete(exchange.as_str().into(), ExchangeDeleteOptions::default())
            .await
        {
            left.push(format!("exchange {exchange} ({e})"));
        }
    }
    left
}
