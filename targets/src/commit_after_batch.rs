//! `commit-after-batch`: call the provider for each record of a poll's batch, commit once the
//! batch is done (the last record's offset, which covers the batch).
//!
//! At-least-once, with more to repeat than `ack-after-work`: everything since the last batch's
//! commit is processed again after a death or a lost partition. A record whose call failed
//! earlier in the batch is committed past with the rest (its work is lost), as a consumer that
//! commits per batch does; a failed last record leaves the batch uncommitted. On a broker that
//! settles per message (no batch held: `held_from_poll` is 0) it acks each message, as
//! `ack-after-work` does.

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
    let sent = send_with_retries(options, env, &order).await.is_ok();
    if sent && env.held_from_poll() == 0 {
        // A fenced commit is refused; it counts the attempt either way.
        let _ = env.ack(&delivery.receipt).await;
    }
    Ok(())
}
