//! `auto-commit`: call the provider and never commit: the consumer's auto-commit does
//! (`broker.enable_auto_commit` on a Kafka broker; refused elsewhere).
//!
//! Offsets are stored when a poll returns its records and committed on a timer, whatever the
//! work did: a death after a commit that ran ahead of the work loses the rest of the batch; a
//! death before the next commit has the records since the last one processed twice.

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
    let _ = send_with_retries(options, env, &order).await;
    Ok(())
}
