//! `dedupe-table`: an effect in the consumer's own database, fenced by a table of handled ids.
//!
//! Kind 2 of docs/domain.md, "Three kinds of effect". In one transaction: insert the message key into `handled_messages`
//! (on conflict do nothing) and, only if the row was new, write the effect row. Then ack.
//! Guarantees exactly-once processing with no window: a redelivery finds its key and only acks;
//! a death before the commit leaves nothing behind, a death after it leaves only the ack to do.
//! Declares checkpoint `committed` (after the commit, before the ack).

use crate::api::{Crash, Delivery, Env};
use crate::options::TargetOptions;
use crate::worker::read_order;

pub async fn handle<E: Env>(
    options: &TargetOptions,
    env: &E,
    delivery: Delivery<E::Receipt>,
) -> Result<(), Crash> {
    let Some(order) = read_order(options, env, &delivery).await? else {
        return Ok(());
    };
    env.transaction(|t| {
        if t.handled.insert(order.key().to_string()) {
            t.write_effect(order.key());
        }
    })
    .await;
    env.checkpoint("committed").await;
    let _ = env.ack(&delivery.receipt).await;
    Ok(())
}
