//! `claim-then-send`: a third party that cannot forget, fenced by a claim row.
//!
//! Kind 3 of docs/domain.md, "Three kinds of effect". Before calling the provider, claim a row `(key, claimed_at, sent_at
//! null)`; after the provider accepts, stamp `sent_at`, then ack. A delivery that finds:
//! - a stamped row: the work is done; ack.
//! - an unstamped claim younger than `claim_window`: the first attempt may still be in flight;
//!   hand the message back with visibility `claim_window`.
//! - an unstamped claim older than that: the first attempt died; claim again and send.
//!
//! Trades a rare duplicate (a provider slower than the window) for a late but never lost
//! effect. The window interacts with the lease and the delivery limit: a death just after the
//! claim recovers only once the window has passed, which may be the broker's last delivery.
//! Declares checkpoint `claimed` (after the claim, before the call).

use std::time::Duration;

use crate::api::{Crash, Delivery, Env};
use crate::options::TargetOptions;
use crate::store::Claim;
use crate::worker::{read_order, send_with_retries};

/// The default `claim_window`.
pub const DEFAULT_CLAIM_WINDOW: Duration = Duration::from_secs(120);

enum Next {
    Send,
    Done,
    InFlight,
}

pub async fn handle<E: Env>(
    options: &TargetOptions,
    env: &E,
    delivery: Delivery<E::Receipt>,
) -> Result<(), Crash> {
    let Some(order) = read_order(options, env, &delivery).await? else {
        return Ok(());
    };
    let window = options.claim_window.unwrap_or(DEFAULT_CLAIM_WINDOW);
    let now = env.now();
    let next = env
        .transaction(|t| match t.claims.get(order.key()).copied() {
            Some(Claim {
                sent_at: Some(_), ..
            }) => Next::Done,
            Some(Claim {
                claimed_at,
                sent_at: None,
            }) if now.saturating_sub(claimed_at) < window => Next::InFlight,
            _ => {
                t.claims.insert(
                    order.key().to_string(),
                    Claim {
                        claimed_at: now,
                        sent_at: None,
                    },
                );
                Next::Send
            }
        })
        .await;
    match next {
        Next::Done => {
            let _ = env.ack(&delivery.receipt).await;
        }
        Next::InFlight => {
            let _ = env.release(&delivery.receipt, window).await;
        }
        Next::Send => {
            env.checkpoint("claimed").await;
            match send_with_retries(options, env, &order).await {
                Ok(_) => {
                    let sent = env.now();
                    env.transaction(|t| {
                        if let Some(c) = t.claims.get_mut(order.key()) {
                            c.sent_at = Some(sent);
                        }
                    })
                    .await;
                    let _ = env.ack(&delivery.receipt).await;
                }
                // Not sent: drop the claim so the next delivery sends at once.
                Err(_) => {
                    env.transaction(|t| {
                        if t.claims
                            .get(order.key())
                            .is_some_and(|c| c.sent_at.is_none())
                        {
                            t.claims.remove(order.key());
                        }
                    })
                    .await;
                }
            }
        }
    }
    Ok(())
}
