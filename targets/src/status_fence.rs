//! `status-fence`: the effect is a conditional update; its own status column is the fence.
//!
//! Kind 1 of docs/domain.md, "Three kinds of effect": `update seats set status = 'sold' where key = $1 and status = 'held'`.
//! A repeat matches zero rows, and zero rows means success: ack. No dedup table, no window.
//! Declares checkpoint `committed` (after the update, before the ack).

use crate::api::{Crash, Delivery, Env};
use crate::options::TargetOptions;
use crate::store::SeatStatus;
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
        let seat = t.seats.entry(order.key().to_string()).or_default();
        if *seat == SeatStatus::Held {
            *seat = SeatStatus::Sold;
            t.write_effect(order.key());
        }
    })
    .await;
    env.checkpoint("committed").await;
    let _ = env.ack(&delivery.receipt).await;
    Ok(())
}
