//! A built-in target's queue over AMQP (lapin), connected to its worker's proxy port so it is
//! observed as any worker process is: a consumer with manual acks and the profile's prefetch.
//!
//! A receipt is `<channel generation>.<delivery tag>.<seq>.<delivery>`: a delivery tag means
//! something only on the channel it came on. When the broker closes that channel (406 after
//! `consumer_timeout`) the client opens a new one, and an ack of the old channel's tag cannot be
//! sent at all: lapin refuses it, as every AMQP client does. Since it never reaches the proxy,
//! this client reports that stale ack to the run itself.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use ackbench_targets::{Delivery, QueueError};
use futures::StreamExt;
use lapin::options::{BasicAckOptions, BasicConsumeOptions, BasicNackOptions, BasicQosOptions};
use lapin::types::FieldTable;
use lapin::{Channel, Connection, ConnectionProperties, Consumer};

use super::ledger::Ledger;
use crate::record::{Seq, WorkerId};
use crate::runner::live::kinds::{BoxFuture, LiveQueue};
use crate::runner::live::state::LiveState;

/// Where and how a worker's client consumes.
#[derive(Clone)]
pub struct Consuming {
    pub queue: String,
    pub prefetch: u16,
    pub state: Arc<LiveState>,
    pub ledger: Arc<Ledger>,
}

/// One worker's AMQP client.
pub struct AmqpQueue {
    url: String,
    worker: WorkerId,
    how: Consuming,
    connection: tokio::sync::Mutex<Option<Connection>>,
    consumer: tokio::sync::Mutex<Option<Consumer>>,
    /// The channel of the current consumer and its generation.
    channel: Mutex<Option<(u64, Channel)>>,
    generation: Mutex<u64>,
}

struct Receipt {
    generation: u64,
    tag: u64,
    seq: Seq,
    delivery: u32,
}

fn parse_receipt(r: &str) -> Option<Receipt> {
    let mut it = r.split('.').map(str::parse::<u64>);
    let (g, t, s, d) = (it.next()?, it.next()?, it.next()?, it.next()?);
    Some(Receipt {
        generation: g.ok()?,
        tag: t.ok()?,
        seq: Seq::try_from(s.ok()?).ok()?,
        delivery: u32::try_from(d.ok()?).ok()?,
    })
}

fn unavailable(e: impl std::fmt::Display) -> QueueError {
    QueueError::Unavailable(e.to_string())
}

impl AmqpQueue {
    pub async fn connect(
        url: String,
        worker: WorkerId,
        how: Consuming,
    ) -> Result<AmqpQueue, String> {
        let q = AmqpQueue {
            url,
            worker,
            how,
            connection: tokio::sync::Mutex::new(None),
            consumer: tokio::sync::Mutex::new(None),
            channel: Mutex::new(None),
            generation: Mutex::new(0),
        };
        // Connect now (a broker that cannot be reached fails the worker's start), consume at
        // the first receive: a delivery must not reach a worker before it has started.
        let c = Connection::connect(&q.url, ConnectionProperties::default())
            .await
            .map_err(|e| e.to_string())?;
        *q.connection.lock().await = Some(c);
        Ok(q)
    }

    /// A new channel (on the connection, reconnecting it if it is gone) consuming the queue.
    async fn open_consumer(&self) -> Result<Consumer, QueueError> {
        let mut conn = self.connection.lock().await;
        if !conn.as_ref().is_some_and(|c| c.status().connected()) {
            let c = Connection::connect(&self.url, ConnectionProperties::default())
                .await
                .map_err(unavailable)?;
            *conn = Some(c);
        }
        let ch = conn
            .as_ref()
            .expect("connected")
            .create_channel()
            .await
            .map_err(unavailable)?;
        ch.basic_qos(self.how.prefetch, BasicQosOptions::default())
            .await
            .map_err(unavailable)?;
        let consumer = ch
            .basic_consume(
                self.how.queue.as_str().into(),
                format!("ackbench-worker-{}", self.worker).into(),
                BasicConsumeOptions::default(),
                FieldTable::default(),
            )
            .await
            .map_err(unavailable)?;
        let generation = {
            let mut g = self
                .generation
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            *g += 1;
            *g
        };
        *self.channel.lock().unwrap_or_else(PoisonError::into_inner) = Some((generation, ch));
        Ok(consumer)
    }

    async fn receive_one(&self) -> Result<Delivery<String>, QueueError> {
        let mut slot = self.consumer.lock().await;
        loop {
            if slot.is_none() {
                *slot = Some(self.open_consumer().await?);
            }
            let next = slot.as_mut().expect("a consumer").next().await;
            let d = match next {
                Some(Ok(d)) => d,
                // The channel (or the connection) closed: consume on a new one.
                Some(Err(_)) | None => {
                    *slot = None;
                    tokio::time::sleep(Duration::from_millis(20)).await;
                    continue;
                }
            };
            let generation = self.current().map_or(0, |(g, _)| g);
            let seq: Option<Seq> = d
                .properties
                .message_id()
                .as_ref()
                .and_then(|id| id.as_str().parse().ok());
            let Some(seq) = seq else {
                // Not a message of this run: give it back.
                let _ = d.nack(BasicNackOptions::default()).await;
                continue;
            };
            // The proxy counted this delivery before forwarding it.
            let delivery = self.how.ledger.deliveries(seq).max(1);
            return Ok(Delivery {
                receipt: format!("{generation}.{}.{seq}.{delivery}", d.delivery_tag),
                body: String::from_utf8_lossy(&d.data).into_owned().into(),
                receive_count: delivery,
            });
        }
    }

    fn current(&self) -> Option<(u64, Channel)> {
        self.channel
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// The channel `r` was delivered on, if it is still open.
    fn channel_of(&self, r: &Receipt) -> Option<Channel> {
        self.current()
            .filter(|(g, ch)| *g == r.generation && ch.status().connected())
            .map(|(_, ch)| ch)
    }

    /// An ack the client cannot send (its channel is closed): a stale ack.
    fn stale(&self, r: &Receipt) -> QueueError {
        let outcome = self.how.ledger.stale_outcome(r.seq);
        self.how
            .state
            .observed_ack(self.worker, r.seq, r.delivery, outcome);
        QueueError::StaleReceipt
    }

    async fn ack_one(&self, receipt: &str) -> Result<(), QueueError> {
        let r = parse_receipt(receipt).ok_or(QueueError::StaleReceipt)?;
        let Some(ch) = self.channel_of(&r) else {
            return Err(self.stale(&r));
        };
        match ch.basic_ack(r.tag, BasicAckOptions::default()).await {
            Ok(()) => Ok(()),
            Err(_) if !ch.status().connected() => Err(self.stale(&r)),
            Err(e) => Err(unavailable(e)),
        }
    }

    async fn nack_one(&self, receipt: &str) -> Result<(), QueueError> {
        let r = parse_receipt(receipt).ok_or(QueueError::StaleReceipt)?;
        let ch = self.channel_of(&r).ok_or(QueueError::StaleReceipt)?;
        ch.basic_nack(
            r.tag,
            BasicNackOptions {
                requeue: true,
                ..BasicNackOptions::default()
            },
        )
        .await
        .map_err(|_| QueueError::StaleReceipt)
    }

    fn still_held(&self, receipt: &str) -> Result<(), QueueError> {
        let r = parse_receipt(receipt).ok_or(QueueError::StaleReceipt)?;
        self.channel_of(&r)
            .map(|_| ())
            .ok_or(QueueError::StaleReceipt)
    }
}

impl LiveQueue for AmqpQueue {
    fn receive(&self) -> BoxFuture<'_, Result<Delivery<String>, QueueError>> {
        Box::pin(self.receive_one())
    }

    fn ack<'a>(&'a self, receipt: &'a str) -> BoxFuture<'a, Result<(), QueueError>> {
        Box::pin(self.ack_one(receipt))
    }

    /// Zero hands the message back (nack with requeue); anything else is a heartbeat, which on
    /// RabbitMQ only checks the delivery is still held (there is no lease to move).
    fn change_visibility<'a>(
        &'a self,
        receipt: &'a str,
        timeout: Duration,
    ) -> BoxFuture<'a, Result<(), QueueError>> {
        if timeout.is_zero() {
            Box::pin(self.nack_one(receipt))
        } else {
            Box::pin(std::future::ready(self.still_held(receipt)))
        }
    }

    /// Nack with requeue, at once whatever the delay: RabbitMQ has no delayed redelivery.
    fn release<'a>(
        &'a self,
        receipt: &'a str,
        _delay: Duration,
    ) -> BoxFuture<'a, Result<(), QueueError>> {
        Box::pin(self.nack_one(receipt))
    }

    fn extend<'a>(
        &'a self,
        receipt: &'a str,
        _lease: Duration,
    ) -> BoxFuture<'a, Result<(), QueueError>> {
        Box::pin(std::future::ready(self.still_held(receipt)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_receipt_names_its_channel_tag_message_and_delivery() {
        let r = parse_receipt("3.17.42.2").unwrap();
        assert_eq!((r.generation, r.tag, r.seq, r.delivery), (3, 17, 42, 2));
        assert!(parse_receipt("3.17").is_none());
        assert!(parse_receipt("a.b.c.d").is_none());
    }
}
