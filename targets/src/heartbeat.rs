//! `heartbeat`: ack after the work, extending the lease while the work runs.
//!
//! At-least-once like `ack-after-work`, but every `extend_every` (default a third of the
//! visibility timeout) while the provider call runs it sets the lease to end a full visibility
//! timeout later (SQS `ChangeMessageVisibility`, JetStream `AckProgress`), up to `max_extension`
//! of extra time in all if set. Cures slow handlers; without `max_extension` it also keeps a
//! wedged handler's message hidden for as long as the handler lives.

use std::time::Duration;

use futures::future::{select, Either};
use futures::pin_mut;

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
    let lease = options.visibility_timeout;
    let every = options
        .extend_every
        .unwrap_or(lease / 3)
        .max(Duration::from_millis(1));
    let started = env.now();
    let beats = async {
        loop {
            env.sleep(every).await;
            let extra = (env.now() + lease).saturating_sub(started + lease);
            if options.max_extension.is_some_and(|max| extra > max) {
                // Stop extending: the lease runs out on its own.
                std::future::pending::<()>().await;
            }
            if env.extend(&delivery.receipt, lease).await.is_err() {
                // The lease is gone already (ran out, or the message moved on): stop beating.
                std::future::pending::<()>().await;
            }
        }
    };
    let call = send_with_retries(options, env, &order);
    pin_mut!(beats, call);
    let sent = match select(call, beats).await {
        Either::Left((result, _)) => result.is_ok(),
        Either::Right(((), _)) => unreachable!("heartbeats never end by themselves"),
    };
    if sent {
        let _ = env.ack(&delivery.receipt).await;
    }
    Ok(())
}
