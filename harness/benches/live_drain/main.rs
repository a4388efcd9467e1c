//! Direct live drain against a native consumer: how fast an ackbench live run's built-in
//! ack-after-work target drains a full queue, connected to the broker itself (`broker.observe:
//! none`, no proxy), beside a native Rust consumer of the same pattern written here with the
//! broker's own crate, per real broker (RabbitMQ 127.0.0.1:5672 with lapin, NATS JetStream
//! 127.0.0.1:4222 with async-nats, Redis Streams 127.0.0.1:6379 with redis), alternately, in
//! the same run.
//!
//! `cargo bench -p ackbench --bench live_drain` (release build; needs the `live` feature, a
//! default one); `-- 4000` sets the messages per run (default 3000), `-- rounds=5` the
//! ackbench / native pairs per broker (default 3), `-- hold=12` the provider's hold (default
//! 6 s; the publisher must be done within it), `-- nats` (or `rabbitmq`, `redis-streams`) runs
//! one broker only. A broker that does not answer is skipped with the reason printed. The
//! figures in docs/benchmarks.md come from `-- 3000 rounds=5`. A run whose publisher outlasts
//! the hold leaves too few effects and is refused: on a loaded machine give a longer `hold=`.
//!
//! Both sides: 32 consumers, each receiving one message at a time, making one HTTP POST
//! (reqwest, `{"key", "to"}` as the built-in targets send it) to ackbench's own provider
//! (`HttpProvider`, the same model: 1 ms, holding every call that arrives in the first 6 s for
//! 6 s), then acking, and the server confirming the ack where the built-in client waits for it
//! (NATS: a double ack). The native consumers ([`native`]): RabbitMQ `basic_consume` with
//! prefetch 1 (a profile's default prefetch); NATS a persistent pull (`consumer.stream()`) of
//! one message per request on the durable consumer; Redis Streams `XREADGROUP ... COUNT 1
//! BLOCK` then `XACK`. Each side's queue fills during the hold; the rate is the effects after
//! the last held call's answer (and the last publish, if later) over their time
//! ([`window`], shared with `proxy_cost.rs`), so the figure is the drain of a full queue.
//!
//! Each pair runs ackbench first in odd rounds and native first in even ones; the line per
//! broker gives the median of each, and their ratio (ackbench / native; the aim is at least
//! 0.9). The machine is shared: compare the two sides of one run, not runs of different days.

#[path = "../common/mod.rs"]
mod common;
mod native;

use ackbench::internals::profile::{load_str, Scenario};
use common::window::{self, secs, Rate};
use common::{median, BenchArgs};

const KINDS: [&str; 3] = ["rabbitmq", "nats", "redis-streams"];
const HOLD_S: u64 = 6;
pub const WORKERS: u32 = 32;

fn main() {
    let args = BenchArgs::parse(3000, HOLD_S, &KINDS);
    let (n, rounds, hold) = (args.n, args.rounds, args.hold);
    window::self_check();
    println!(
        "live_drain: built-in ack-after-work direct (observe: none) against a native consumer, \
         {WORKERS} consumers, 1 ms provider, {n} messages per run, {rounds} pairs per broker, \
         provider hold {hold} s, release build"
    );
    for kind in KINDS {
        if !args.runs(kind) {
            continue;
        }
        if let Err(why) = common::answers(native::address(kind)) {
            println!("{kind:>13}: skipped: {why}");
            continue;
        }
        let mut ours = Vec::new();
        let mut theirs = Vec::new();
        for round in 0..rounds {
            let order = if round % 2 == 0 {
                ["ackbench", "native"]
            } else {
                ["native", "ackbench"]
            };
            for side in order {
                let scenario = match load_str("live-drain.yaml", &profile(kind, n, hold), &[]) {
                    Ok(s) => s,
                    Err(e) => panic!("live_drain: the bench's profile: {e}"),
                };
                let rate = match side {
                    "ackbench" => ackbench_run(&scenario, n),
                    _ => native::run(kind, &scenario, n, hold),
                };
                match rate {
                    Ok(rate) => {
                        println!(
                            "{kind:>13}: round {} {side:<8} {:>8.0} messages/s ({} effects \
                             from {:.2} s; published at {:.0}/s)",
                            round + 1,
                            rate.consumed,
                            rate.effects,
                            secs(rate.from),
                            rate.published
                        );
                        match side {
                            "ackbench" => ours.push(rate.consumed),
                            _ => theirs.push(rate.consumed),
                        }
                    }
                    Err(e) => println!("{kind:>13}: round {} {side}: failed: {e}", round + 1),
                }
            }
        }
        if let (Some(a), Some(b)) = (median(&mut ours), median(&mut theirs)) {
            println!(
                "{kind:>13}: median ackbench direct {a:.0} messages/s, native {b:.0} \
                 messages/s: ratio {:.3}",
                a / b
            );
        }
    }
}

/// The profile of one run: the ackbench side runs it; the native side takes its provider.
fn profile(kind: &str, n: u64, hold: u64) -> String {
    format!(
        "name: live-drain\nmode: live\nseed: 1\nrun: {{ duration: 1s, drain: 5m }}\n\
         broker: {{ kind: {kind}, observe: none }}\n\
         workload: {{ arrival: {{ every: 1us }}, count: {n} }}\n\
         consumer: {{ target: ack-after-work, workers: {WORKERS} }}\n\
         provider:\n  latency: {{ dist: fixed, value: 1ms }}\n  phases:\n    \
         - {{ from: 0s, to: {hold}s, latency: {{ dist: fixed, value: {hold}s }} }}\n"
    )
}

/// One ackbench live run of the profile.
fn ackbench_run(scenario: &Scenario, n: u64) -> Result<Rate, String> {
    let record = ackbench::internals::run::run(scenario).map_err(|e| e.to_string())?;
    window::of_record(&record, n)
}
