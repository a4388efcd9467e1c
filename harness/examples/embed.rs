//! A consumer written in Rust, tested in-process against the reference incident
//! (`profiles/marlow-thursday.yaml`, docs/domain.md "The reference incident"), on virtual
//! time: the same seed gives the same counts on every machine.
//!
//! The consumer acks after the work: it sends the order's email, then acks. The profile has
//! 108 orders (one every 50 s for 90 minutes), 4 workers, a 30 s lease, 3 deliveries at most,
//! stale acks refused, and a provider that answers every email in 31-40 s, later than the
//! lease. So, for each order published at t:
//!
//! - delivery 1 at t sends email 1 (effect 1); its lease ends at t + 30 s, before the answer;
//! - delivery 2 at t + 30 s sends email 2 (effect 2); delivery 1's ack, at t + 31..40 s, is
//!   stale and refused;
//! - delivery 3 at t + 60 s sends email 3 (effect 3); delivery 2's ack is refused;
//! - at t + 90 s the third lease ends: the order goes to the DLQ; delivery 3's ack is refused.
//!
//! At most 4 deliveries are in hand at once (an order's three overlap by up to 10 s and the
//! next order's first starts 50 s in), so no delivery waits for a worker. Hence 108 messages,
//! 324 deliveries, 324 effects of which 108 × 2 = 216 duplicates, 324 stale acks, 108 DLQ
//! entries all with their effect, nothing lost: what the built-in `ack-after-work` target
//! gives, count for count.
//!
//! Run it with `cargo run --example embed` (it is also a doc test of the `ackbench` crate).

use ackbench::targets::{ProviderClient, QueueClient, SendRequest};
use ackbench::{Bench, BenchError, Summary, Verdict};

/// The reference incident's profile, wherever the example is run from.
const THURSDAY: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../profiles/marlow-thursday.yaml"
);

/// The Thursday with an ack-after-work consumer written here.
fn thursday_with_own_consumer() -> Result<Summary, BenchError> {
    Bench::from_profile(THURSDAY)?
        .seed(1)
        .consumer(|env| async move {
            loop {
                // The sim's queue never fails a receive; a real one would be polled again.
                let Ok(delivery) = env.receive().await else {
                    continue;
                };
                let order = delivery
                    .body
                    .order()
                    .expect("every Thursday order is valid");
                let email = SendRequest {
                    key: order.key(),
                    to: order.email(),
                };
                if env.send(email).await.is_ok() {
                    // A stale receipt is refused: the broker counts the attempt.
                    let _ = env.ack(&delivery.receipt).await;
                }
            }
        })
        .run()
}

fn main() -> Result<(), BenchError> {
    let own = thursday_with_own_consumer()?;
    assert_eq!(own.messages, 108);
    assert_eq!(own.deliveries, 324);
    assert_eq!(own.effects, 324);
    assert_eq!(own.duplicate_effects, 216);
    assert_eq!(own.stale_acks, 324);
    assert_eq!((own.dlq, own.dlq_with_effect), (108, 108));
    assert_eq!(own.lost, 0);
    assert_eq!(own.verdict, Verdict::Fail);

    // The built-in target the profile names, same seed: the same counts.
    let builtin = Bench::from_profile(THURSDAY)?.seed(1).run()?;
    let counts = |s: &Summary| {
        (
            s.messages,
            s.deliveries,
            s.effects,
            s.duplicate_effects,
            s.stale_acks,
            s.dlq,
            s.lost,
        )
    };
    assert_eq!(counts(&own), counts(&builtin));

    // Deterministic: the same seed, the same run.
    assert_eq!(counts(&own), counts(&thursday_with_own_consumer()?));
    println!(
        "{} messages, {} effects, {} duplicates, {} in the DLQ: {}",
        own.messages, own.effects, own.duplicate_effects, own.dlq, own.verdict
    );
    Ok(())
}
