//! A built-in target's queue over async-nats: a pull request for one message at a time on the
//! run's durable consumer, through the worker's own proxy port; acks as double acks (AckSync),
//! so each waits for the server's confirmation; `release` is `-NAK` with the delay, `extend` is
//! `+WPI`. The receipt is the delivery's ack reply subject.

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use ackbench_targets::{Delivery, QueueError};
use async_nats::jetstream::{self, consumer::PullConsumer, AckKind};
use futures_util::StreamExt;

use super::super::{BoxFuture, LiveQueue};
use crate::provider::http::LiveClock;

/// How long one pull request waits for a message (wall time) before the client asks again.
const PULL_EXPIRES: Duration = Duration::from_secs(5);

pub struct NatsQueue {
    consumer: PullConsumer,
    /// The deliveries this worker holds, by receipt.
    held: Mutex<HashMap<String, jetstream::Message>>,
    clock: LiveClock,
}

fn unavailable(e: impl std::fmt::Display) -> QueueError {
    QueueError::Unavailable(e.to_string())
}

impl NatsQueue {
    /// Connects to `url` (the worker's proxy port) and binds the run's consumer.
    pub async fn connect(
        url: &str,
        stream: &str,
        consumer: &str,
        clock: LiveClock,
    ) -> Result<NatsQueue, String> {
        let client = async_nats::connect(url)
            .await
            .map_err(|e| format!("cannot connect to NATS at {url}: {e}"))?;
        let js = jetstream::new(client);
        let consumer: PullConsumer = js
            .get_consumer_from_stream(consumer, stream)
            .await
            .map_err(|e| format!("cannot bind consumer {consumer} of stream {stream}: {e}"))?;
        Ok(NatsQueue {
            consumer,
            held: Mutex::new(HashMap::new()),
            clock,
        })
    }

    fn held(&self) -> std::sync::MutexGuard<'_, HashMap<String, jetstream::Message>> {
        self.held.lock().unwrap_or_else(PoisonError::into_inner)
    }

    async fn receive_one(&self) -> Result<Delivery<String>, QueueError> {
        loop {
            let mut batch = self
                .consumer
                .batch()
                .max_messages(1)
                .expires(PULL_EXPIRES)
                .messages()
                .await
                .map_err(unavailable)?;
            // The batch ends empty when the pull request expires: ask again.
            if let Some(m) = batch.next().await {
                let m = m.map_err(unavailable)?;
                let receive_count = m.info().map_or(1, |i| i.delivered.max(1) as u32);
                let receipt = m.reply.as_ref().map(|r| r.to_string()).unwrap_or_default();
                let body = String::from_utf8_lossy(&m.payload).into_owned();
                self.held().insert(receipt.clone(), m);
                return Ok(Delivery {
                    receipt,
                    body: body.into(),
                    receive_count,
                });
            }
        }
    }

    /// Sends `kind` for the delivery `receipt` and waits for the server's confirmation; `done`:
    /// the delivery is no longer this worker's to answer for.
    async fn answer(&self, receipt: &str, kind: AckKind, done: bool) -> Result<(), QueueError> {
        let m = if done {
            self.held().remove(receipt)
        } else {
            self.held().get(receipt).cloned()
        };
        let m = m.ok_or(QueueError::StaleReceipt)?;
        m.double_ack_with(kind).await.map_err(unavailable)
    }

    fn nak(&self, delay: Duration) -> AckKind {
        let wall = self.clock.wall(crate::record::nanos(delay));
        AckKind::Nak((!wall.is_zero()).then_some(wall))
    }
}

impl LiveQueue for NatsQueue {
    fn receive(&self) -> BoxFuture<'_, Result<Delivery<String>, QueueError>> {
        Box::pin(self.receive_one())
    }

    fn ack<'a>(&'a self, receipt: &'a str) -> BoxFuture<'a, Result<(), QueueError>> {
        Box::pin(self.answer(receipt, AckKind::Ack, true))
    }

    /// Zero hands the message back at once (`-NAK`); anything else is a heartbeat (`+WPI`: the
    /// server restarts a full AckWait whatever the timeout asked for).
    fn change_visibility<'a>(
        &'a self,
        receipt: &'a str,
        timeout: Duration,
    ) -> BoxFuture<'a, Result<(), QueueError>> {
        if timeout.is_zero() {
            self.release(receipt, timeout)
        } else {
            self.extend(receipt, timeout)
        }
    }

    fn release<'a>(
        &'a self,
        receipt: &'a str,
        delay: Duration,
    ) -> BoxFuture<'a, Result<(), QueueError>> {
        Box::pin(self.answer(receipt, self.nak(delay), true))
    }

    fn extend<'a>(
        &'a self,
        receipt: &'a str,
        _lease: Duration,
    ) -> BoxFuture<'a, Result<(), QueueError>> {
        Box::pin(self.answer(receipt, AckKind::Progress, false))
    }
}
