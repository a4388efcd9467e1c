//! The consumer loop the built-in targets share: receive, handle, repeat, until the handler dies.

use std::time::Duration;

use crate::api::{Crash, Delivery, ProviderClient, ProviderError, QueueClient, Runtime, SendRequest};
use crate::message::Order;
use crate::options::{OnPoison, TargetOptions};
use crate::{ack_after_work, ack_before_work};

pub use crate::options::TargetInfo;

/// A built-in target, chosen by name.
#[derive(Debug, Clone)]
pub enum BuiltinTarget {
    AckAfterWork(TargetOptions),
    AckBeforeWork(TargetOptions),
}

impl BuiltinTarget {
    /// The target named `name` (see [`crate::TARGETS`]), or `None`.
    pub fn new(name: &str, options: TargetOptions) -> Option<BuiltinTarget> {
        match name {
            "ack-after-work" => Some(BuiltinTarget::AckAfterWork(options)),
            "ack-before-work" => Some(BuiltinTarget::AckBeforeWork(options)),
            _ => None,
        }
    }

    /// Handles one delivery. `Err` means the worker died.
    pub async fn handle<Q, P, R>(
        &self,
        queue: &Q,
        provider: &P,
        rt: &R,
        delivery: Delivery<Q::Receipt>,
    ) -> Result<(), Crash>
    where
        Q: QueueClient,
        P: ProviderClient,
        R: Runtime,
    {
        match self {
            BuiltinTarget::AckAfterWork(o) => {
                ack_after_work::handle(o, queue, provider, rt, delivery).await
            }
            BuiltinTarget::AckBeforeWork(o) => {
                ack_before_work::handle(o, queue, provider, rt, delivery).await
            }
        }
    }
}

/// One worker: receives and handles messages until its handler dies.
pub async fn run_worker<Q, P, R>(target: &BuiltinTarget, queue: &Q, provider: &P, rt: &R) -> Crash
where
    Q: QueueClient,
    P: ProviderClient,
    R: Runtime,
{
    loop {
        match queue.receive().await {
            Ok(d) => {
                if let Err(crash) = target.handle(queue, provider, rt, d).await {
                    return crash;
                }
            }
            // A queue that cannot be reached: back off and poll again, as a real consumer does.
            Err(_) => rt.sleep(Duration::from_secs(1)).await,
        }
    }
}

/// Deals with a body that does not parse, as `on_poison` says.
pub(crate) async fn on_poison<Q, R>(
    policy: OnPoison,
    queue: &Q,
    rt: &R,
    delivery: &Delivery<Q::Receipt>,
    error: serde_json::Error,
) -> Result<(), Crash>
where
    Q: QueueClient,
    R: Runtime,
{
    match policy {
        OnPoison::Crash => Err(Crash { reason: format!("cannot read message: {error}") }),
        OnPoison::DeadLetter => {
            rt.record_rejected(&delivery.body);
            // A refused (stale) ack leaves the message to the broker; nothing else to do.
            let _ = queue.ack(&delivery.receipt).await;
            Ok(())
        }
        OnPoison::Release => {
            let _ = queue.change_visibility(&delivery.receipt, Duration::ZERO).await;
            Ok(())
        }
    }
}

/// Calls the provider for `order`, retrying transient errors as `options.retry` says.
pub(crate) async fn send_with_retries<P, R>(
    options: &TargetOptions,
    provider: &P,
    rt: &R,
    order: &Order,
) -> Result<String, ProviderError>
where
    P: ProviderClient,
    R: Runtime,
{
    let req = SendRequest { key: &order.key, to: &order.email };
    let max_attempts = options.retry.as_ref().map_or(1, |r| r.max_attempts.max(1));
    let mut attempt = 1;
    loop {
        match provider.send(req).await {
            Ok(id) => return Ok(id),
            Err(e) if e.is_transient() && attempt < max_attempts => {
                let retry = options.retry.as_ref().expect("max_attempts > 1 implies retry");
                rt.sleep(retry.delay(attempt, rt.random())).await;
                attempt += 1;
            }
            Err(e) => return Err(e),
        }
    }
}
