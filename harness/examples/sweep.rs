//! A small sweep written in code, without a broker or a consumer program: the reference
//! incident (`profiles/marlow-thursday.yaml`: an order every 50 s, 4 workers acking after the
//! email, a provider answering in 31-40 s, a 30 s lease, 3 deliveries at most) shortened to
//! 30 minutes, on three broker kinds and three leases, then with one worker killed.
//!
//! What each point must give, worked out by hand:
//!
//! - 30 minutes of one order every 50 s, from 0 s: orders at 0, 50, ..., 1750 s, so 36.
//! - Lease 30 s on SQS: every delivery outlives its lease, so each order is delivered 3 times,
//!   sends 3 emails (2 duplicates) and goes to the DLQ: 72 duplicates, 36 DLQ entries.
//! - Lease 45 s or 60 s, on any of the three kinds: the slowest answer (40 s) comes before the
//!   lease ends (SQS's visibility timeout, NATS's AckWait, Redis Streams' `min_idle`), so each
//!   order is delivered once and acked: 36 effects, no duplicate, nothing in the DLQ or lost.
//! - Lease 60 s with `kill_worker: { point: call_answered, times: 1 }`: the first worker to get
//!   its answer dies after the email and before the ack; its order comes back when the lease
//!   ends and is sent again: exactly 1 duplicate, still nothing lost.
//!
//! Run it with `cargo run --example sweep` (it is also a doc test of `Bench::set`).

use std::time::Duration;

use ackbench::{Bench, BenchError, Summary};

/// The reference incident's profile, wherever the example is run from.
const THURSDAY: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../profiles/marlow-thursday.yaml"
);

/// One point: the Thursday for 30 minutes on `kind` with a lease of `lease_s` seconds (under
/// the kind's own name for it: visibility timeout, AckWait, `min_idle`).
fn point(kind: &str, lease_s: u64) -> Result<Bench, BenchError> {
    Bench::from_profile(THURSDAY)?
        .seed(1)
        .duration(Duration::from_secs(30 * 60))?
        .broker_kind(kind)?
        .lease(Duration::from_secs(lease_s))
}

fn main() -> Result<(), BenchError> {
    let row = |s: &Summary| (s.messages, s.effects, s.duplicate_effects, s.dlq, s.lost);

    let thursday = point("sqs", 30)?.run()?;
    assert_eq!(row(&thursday), (36, 108, 72, 36, 0));

    for kind in ["sqs", "nats", "redis-streams"] {
        for lease in [45, 60] {
            let s = point(kind, lease)?.run()?;
            println!("{kind:>13} lease {lease} s: {:?}", row(&s));
            assert_eq!(row(&s), (36, 36, 0, 0, 0), "{kind}, lease {lease}");
        }
        let killed = point(kind, 60)?
            .chaos("kill_worker: { point: call_answered, times: 1 }")?
            .run()?;
        println!("{kind:>13} lease 60 s, one kill: {:?}", row(&killed));
        assert_eq!(killed.worker_kills, 1);
        assert_eq!(row(&killed), (36, 37, 1, 0, 0), "{kind}, one kill");
    }

    // A knob the profile would refuse is refused here too, naming the field.
    let refused = Bench::from_profile(THURSDAY)?.workers(0).err();
    assert!(refused.is_some_and(|e| e.to_string().contains("consumer.workers")));
    Ok(())
}
