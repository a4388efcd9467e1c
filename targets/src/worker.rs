//! The consumer loop the built-in targets share: receive, handle, repeat, until the handler dies.

use std::borrow::Cow;
use std::time::Duration;

use crate::api::{Crash, Delivery, Env, ProviderError, ReplyId, SendRequest};
use crate::message::Order;
use crate::options::{OnPoison, TargetOptions};
use crate::{
    ack_after_work, ack_before_work, auto_commit, claim_then_send, commit_after_batch,
    dedupe_table, heartbeat, status_fence,
};

pub use crate::options::TargetInfo;

/// A built-in target, chosen by name.
#[derive(Debug, Clone)]
pub enum BuiltinTarget {
    AckAfterWork(TargetOptions),
    AckBeforeWork(TargetOptions),
    DedupeTable(TargetOptions),
    StatusFence(TargetOptions),
    ClaimThenSend(TargetOptions),
    Heartbeat(TargetOptions),
    CommitAfterBatch(TargetOptions),
    AutoCommit(TargetOptions),
}

impl BuiltinTarget {
    /// The target named `name` (see [`crate::TARGETS`]), or `None`.
    pub fn new(name: &str, options: TargetOptions) -> Option<BuiltinTarget> {
        match name {
            "ack-after-work" => Some(BuiltinTarget::AckAfterWork(options)),
            "ack-before-work" => Some(BuiltinTarget::AckBeforeWork(options)),
            "dedupe-table" => Some(BuiltinTarget::DedupeTable(options)),
            "status-fence" => Some(BuiltinTarget::StatusFence(options)),
            "claim-then-send" => Some(BuiltinTarget::ClaimThenSend(options)),
            "heartbeat" => Some(BuiltinTarget::Heartbeat(options)),
            "commit-after-batch" => Some(BuiltinTarget::CommitAfterBatch(options)),
            "auto-commit" => Some(BuiltinTarget::AutoCommit(options)),
            _ => None,
        }
    }

    /// Handles one delivery. `Err` means the worker died.
    pub async fn handle<E: Env>(
        &self,
        env: &E,
        delivery: Delivery<E::Receipt>,
    ) -> Result<(), Crash> {
        match self {
            BuiltinTarget::AckAfterWork(o) => ack_after_work::handle(o, env, delivery).await,
            BuiltinTarget::AckBeforeWork(o) => ack_before_work::handle(o, env, delivery).await,
            BuiltinTarget::DedupeTable(o) => dedupe_table::handle(o, env, delivery).await,
            BuiltinTarget::StatusFence(o) => status_fence::handle(o, env, delivery).await,
            BuiltinTarget::ClaimThenSend(o) => claim_then_send::handle(o, env, delivery).await,
            BuiltinTarget::Heartbeat(o) => heartbeat::handle(o, env, delivery).await,
            BuiltinTarget::CommitAfterBatch(o) => {
                commit_after_batch::handle(o, env, delivery).await
            }
            BuiltinTarget::AutoCommit(o) => auto_commit::handle(o, env, delivery).await,
        }
    }
}

/// One worker: receives and handles messages until its handler dies.
pub async fn run_worker<E: Env>(target: &BuiltinTarget, env: &E) -> Crash {
    loop {
        match env.receive().await {
            Ok(d) => {
                if let Err(crash) = target.handle(env, d).await {
                    return crash;
                }
            }
            // A queue that cannot be reached: back off and poll again, as a real consumer does.
            Err(_) => env.sleep(Duration::from_secs(1)).await,
        }
    }
}

/// The order a delivery carries; a body that does not parse (a poison message) is dealt with as
/// `on_poison` says: `Ok(None)` when it was dead-lettered or released, `Err` when the worker
/// dies of it.
pub(crate) async fn read_order<'d, E: Env>(
    options: &TargetOptions,
    env: &E,
    delivery: &'d Delivery<E::Receipt>,
) -> Result<Option<Cow<'d, Order>>, Crash> {
    match delivery.body.order() {
        Ok(order) => Ok(Some(order)),
        Err(e) => on_poison(options.on_poison, env, delivery, e)
            .await
            .map(|()| None),
    }
}

/// Deals with a body that does not parse, as `on_poison` says.
async fn on_poison<E: Env>(
    policy: OnPoison,
    env: &E,
    delivery: &Delivery<E::Receipt>,
    error: serde_json::Error,
) -> Result<(), Crash> {
    match policy {
        OnPoison::Crash => Err(Crash {
            reason: format!("cannot read message: {error}"),
        }),
        OnPoison::DeadLetter => {
            env.record_rejected(&delivery.body.text());
            // A refused (stale) ack leaves the message to the broker; nothing else to do.
            let _ = env.ack(&delivery.receipt).await;
            Ok(())
        }
        OnPoison::Release => {
            let _ = env.release(&delivery.receipt, Duration::ZERO).await;
            Ok(())
        }
    }
}

/// A framework's retry of a delivery whose work failed: the message published again after its
/// backoff while retries are left, else dead-lettered or acked as `r.exhausted` says. A refused
/// step (a stale receipt) leaves the message to the broker.
pub(crate) async fn retry_or_give_up<E: Env>(
    r: &crate::options::RepublishSpec,
    env: &E,
    delivery: &Delivery<E::Receipt>,
) {
    let done = env.retries(&delivery.receipt);
    let _ = if done < r.max_retries {
        let delay = r.backoff.delay(done + 1, env.random());
        env.republish(&delivery.receipt, delay).await
    } else {
        match r.exhausted {
            crate::options::Exhausted::DeadLetter => env.dead_letter(&delivery.receipt).await,
            crate::options::Exhausted::Ack => env.ack(&delivery.receipt).await,
        }
    };
}

/// Calls the provider for `order`, retrying transient errors as `options.retry` says.
pub(crate) async fn send_with_retries<E: Env>(
    options: &TargetOptions,
    env: &E,
    order: &Order,
) -> Result<ReplyId, ProviderError> {
    let req = SendRequest {
        key: order.key(),
        to: order.email(),
    };
    let max_attempts = options.retry.as_ref().map_or(1, |r| r.max_attempts.max(1));
    let mut attempt = 1;
    loop {
        match env.send(req).await {
            Ok(id) => return Ok(id),
            Err(e) if e.is_transient() && attempt < max_attempts => {
                let retry = options
                    .retry
                    .as_ref()
                    .expect("max_attempts > 1 implies retry");
                env.sleep(retry.delay(attempt, env.random())).await;
                attempt += 1;
            }
            Err(e) => return Err(e),
        }
    }
}
