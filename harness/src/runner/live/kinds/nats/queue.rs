//! A built-in target's queue over async-nats: a persistent pull on the run's durable consumer,
//! through the worker's own proxy port. The client subscribes to its own inbox once; each
//! receive sends one pull request for one message to it, and only when the worker asks and no
//! request of its is outstanding: the server never delivers a message the worker has not asked
//! for, so a delivery's AckWait starts when the worker receives it, as with a new one-message
//! fetch per receive (which subscribed to a new inbox and unsubscribed again every time). A
//! request that expires (408 after [`PULL_EXPIRES`]) is sent again. Acks are double acks
//! (AckSync): a request on the client's shared reply inbox, answered by the server's
//! confirmation; `release` is `-NAK` with the delay, `extend` is `+WPI`. The receipt is the
//! delivery's ack reply subject.

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use ackbench_targets::{Delivery, QueueError};
use async_nats::jetstream::consumer::pull::BatchConfig;
use async_nats::jetstream::{self, consumer::PullConsumer, AckKind};
use async_nats::{RequestErrorKind, StatusCode, Subject, Subscriber};
use futures_util::StreamExt;

use super::super::{BoxFuture, LiveQueue};
use crate::provider::http::LiveClock;

/// How long one pull request waits for a message (wall time) before the client asks again.
const PULL_EXPIRES: Duration = Duration::from_secs(5);
/// How long past [`PULL_EXPIRES`] the client waits for the server's 408 before it asks again.
const EXPIRY_GRACE: Duration = Duration::from_secs(5);
/// How long a double ack waits for the server's confirmation.
const ACK_TIMEOUT: Duration = Duration::from_secs(5);

/// The client's inbox and whether a pull request to it is outstanding.
struct Puller {
    inbox: Subject,
    subscriber: Subscriber,
    outstanding: bool,
}

pub struct NatsQueue {
    client: async_nats::Client,
    js: jetstream::Context,
    consumer: PullConsumer,
    puller: tokio::sync::Mutex<Puller>,
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
        let js = jetstream::new(client.clone());
        let consumer: PullConsumer = js
            .get_consumer_from_stream(consumer, stream)
            .await
            .map_err(|e| format!("cannot bind consumer {consumer} of stream {stream}: {e}"))?;
        let inbox = Subject::from(client.new_inbox());
        let subscriber = client
            .subscribe(inbox.clone())
            .await
            .map_err(|e| format!("cannot subscribe to the pull inbox: {e}"))?;
        Ok(NatsQueue {
            client,
            js,
            consumer,
            puller: tokio::sync::Mutex::new(Puller {
                inbox,
                subscriber,
                outstanding: false,
            }),
            held: Mutex::new(HashMap::new()),
            clock,
        })
    }

    fn held(&self) -> std::sync::MutexGuard<'_, HashMap<String, jetstream::Message>> {
        self.held.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Asks for one message (unless a request is already outstanding) and waits for it; a
    /// request that expired is sent again.
    async fn receive_one(&self) -> Result<Delivery<String>, QueueError> {
        let mut p = self.puller.lock().await;
        loop {
            if !p.outstanding {
                let request = BatchConfig {
                    batch: 1,
                    expires: Some(PULL_EXPIRES),
                    ..BatchConfig::default()
                };
                self.consumer
                    .request_batch(request, p.inbox.clone())
                    .await
                    .map_err(unavailable)?;
                p.outstanding = true;
            }
            let m = match tokio::time::timeout(PULL_EXPIRES + EXPIRY_GRACE, p.subscriber.next())
                .await
            {
                Ok(Some(m)) => m,
                // The subscription ended: subscribe to a new inbox and ask again there.
                Ok(None) => {
                    p.outstanding = false;
                    let inbox = Subject::from(self.client.new_inbox());
                    p.subscriber = self
                        .client
                        .subscribe(inbox.clone())
                        .await
                        .map_err(unavailable)?;
                    p.inbox = inbox;
                    continue;
                }
                // The server's 408 never came: ask again.
                Err(_) => {
                    p.outstanding = false;
                    continue;
                }
            };
            match m.status.unwrap_or(StatusCode::OK) {
                StatusCode::IDLE_HEARTBEAT => continue,
                // The request expired without a message (408), or found none (404): ask again.
                StatusCode::TIMEOUT | StatusCode::NOT_FOUND => {
                    p.outstanding = false;
                    continue;
                }
                StatusCode::OK => p.outstanding = false,
                status => {
                    p.outstanding = false;
                    return Err(unavailable(format!(
                        "pull request answered {status}: {:?}",
                        m.description
                    )));
                }
            }
            let m = jetstream::Message {
                message: m,
                context: self.js.clone(),
            };
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

    /// Sends `kind` for the delivery `receipt` and waits for the server's confirmation; `done`:
    /// the delivery is no longer this worker's to answer for.
    async fn answer(&self, receipt: &str, kind: AckKind, done: bool) -> Result<(), QueueError> {
        let m = if done {
            self.held().remove(receipt)
        } else {
            self.held().get(receipt).cloned()
        };
        let m = m.ok_or(QueueError::StaleReceipt)?;
        let reply = m.reply.clone().ok_or(QueueError::StaleReceipt)?;
        let confirmed = tokio::time::timeout(ACK_TIMEOUT, self.client.request(reply, kind.into()))
            .await
            .map_err(|_| unavailable("double ack response timed out"))?;
        match confirmed {
            // Any answer is the server's (a 503 included, as a double ack reads it).
            Ok(_) => Ok(()),
            Err(e) if e.kind() == RequestErrorKind::NoResponders => Ok(()),
            Err(e) => Err(unavailable(e)),
        }
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
