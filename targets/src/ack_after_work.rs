//! `ack-after-work`: call the provider, then ack.
//!
//! At-least-once (docs/domain.md, "Ack placement": after the work). Any failure between the effect and the ack (a
//! lease that ran out, a death after the provider answered) repeats the work: duplicate effects.
//! Never loses a message whose handler dies. A provider error leaves the message unacked, so the
//! broker redelivers it when the lease ends; with `republish`, the handler publishes it again as
//! a framework's retry does, and out of retries dead-letters or acks it.

use crate::api::{Crash, Delivery, Env};
use crate::options::TargetOptions;
use crate::worker::{read_order, send_with_retries};

pub async fn handle<E: Env>(
    options: &TargetOptions,
    env: &E,
    delivery: Delivery<E::Receipt>,
) -> Result<(), Crash> {
    let Some(order) = read_order(options, env, &delivery).await? else {
        return Ok(());
    };
    if send_with_retries(options, env, &order).await.is_ok() {
        // A stale receipt is refused or ignored by the broker; it counts the attempt either way.
        let _ = env.ack(&delivery.receipt).await;
    } else if let Some(r) = &options.republish {
        crate::worker::retry_or_give_up(r, env, &delivery).await;
    }
    Ok(())
}
