//! `ack-before-work`: ack, then call the provider.
//!
//! At-most-once (docs/domain.md, "Ack placement": before the work). Never duplicates, but a handler that dies after
//! the ack (a crash on a poison message, a kill during the call, a provider error) loses the
//! work silently: the broker no longer holds the message and nothing recorded its absence.

use crate::api::{Crash, Delivery, Env};
use crate::options::TargetOptions;
use crate::worker::{read_order, send_with_retries};

pub async fn handle<E: Env>(
    options: &TargetOptions,
    env: &E,
    delivery: Delivery<E::Receipt>,
) -> Result<(), Crash> {
    // The ack goes first: from here on, the broker has forgotten the message.
    let _ = env.ack(&delivery.receipt).await;
    let Some(order) = read_order(options, env, &delivery).await? else {
        return Ok(());
    };
    let _ = send_with_retries(options, env, &order).await;
    Ok(())
}
