//! The load a live run's own producer offers each broker: 4,000 messages planned at once (1 µs
//! apart) and at 20,000 a second (50 µs apart), the first 3 s into the run (after its
//! start-up, which the run's clock counts: a send planned sooner is late by the start-up),
//! published with the default window of 1,024
//! unconfirmed publishes (`run.publish_window`) and with a window of 1 (each send waits for
//! its confirmation, as the producer did before the window), alternately, in the same run.
//! Brokers: RabbitMQ 127.0.0.1:5672 (its default quorum queue), NATS JetStream 127.0.0.1:4222,
//! Redis Streams 127.0.0.1:6379, and the embedded SQS endpoint; a broker that does not answer
//! is skipped with the reason printed.
//!
//! `cargo bench -p ackbench --bench publish_rate` (release build; needs the `live` feature, a
//! default one); `-- 8000` sets the messages per run (default 4000), `-- rounds=5` the rounds
//! per broker and schedule (default 3), `-- nats` (or `rabbitmq`, `redis-streams`, `sqs`) runs
//! one broker only.
//!
//! Each run is ackbench's own live run (the library's `runner::run`, as `ackbench run` makes
//! it) with the built-in ack-after-work target, 16 workers, whose provider holds every call
//! arriving until a second after the last planned send for a second: the workers take a
//! message each and wait, so the publisher runs without the consumer competing for the
//! machine, and the run then drains. The figures are the run's own (`summary.json`'s `publisher`): sends recorded,
//! offered messages/s (sends over the time from the first to the last hand-over), confirmed
//! messages/s (to the last confirmation), schedule lag p50 / p99 / max (how late sends were
//! handed to the broker against their planned instants) and the sends pushed back (the window
//! full). A run that did not record every send, or did not drain, fails its line. The line per
//! broker and schedule gives the medians of each window and the ratio of the offered rates.
//! The machine is shared: compare the two windows of one run, not runs of different days.

#[path = "common/mod.rs"]
mod common;

use ackbench::internals::profile::load_str;
use ackbench::internals::report::{summarise_publisher as summarise, PublisherSummary};
use common::{median, BenchArgs};

const KINDS: [&str; 4] = ["rabbitmq", "nats", "redis-streams", "sqs"];
/// (label, gap between planned sends in microseconds).
const SCHEDULES: [(&str, u64); 2] = [("at once", 1), ("20k/s", 50)];
/// When the first send is planned: after the run's start-up (the broker opened, the workers
/// connected), which the run's clock already counts, so a send's lag is the publisher's own.
const FIRST_AT_US: u64 = 3_000_000;
const WINDOWS: [u32; 2] = [1024, 1];
const WORKERS: usize = 16;

fn main() {
    let args = BenchArgs::parse(4000, 0, &KINDS);
    let (n, rounds) = (args.n, args.rounds);
    println!(
        "publish_rate: {n} messages per run, windows {WINDOWS:?}, {rounds} rounds per broker \
         and schedule, release build; load average {}",
        std::fs::read_to_string("/proc/loadavg")
            .unwrap_or_default()
            .split_whitespace()
            .take(3)
            .collect::<Vec<_>>()
            .join(" ")
    );
    for kind in KINDS {
        if !args.runs(kind) {
            continue;
        }
        if let Err(why) = reachable(kind) {
            println!("{kind:>13}: skipped: {why}");
            continue;
        }
        for (label, gap) in SCHEDULES {
            let mut offered: [Vec<f64>; 2] = [Vec::new(), Vec::new()];
            let mut p99: [Vec<f64>; 2] = [Vec::new(), Vec::new()];
            for round in 0..rounds {
                let order = if round % 2 == 0 { [0, 1] } else { [1, 0] };
                for w in order {
                    let window = WINDOWS[w];
                    match run(kind, gap, window, n) {
                        Ok(p) => {
                            println!(
                                "{kind:>13}: {label:<7} round {} window {window:>4}: {:>7.0} \
                                 offered/s, {:>7.0} confirmed/s, lag p50 {:.3} p99 {:.3} max \
                                 {:.3} ms, {} late > 1 ms, {} pushed back, {} sends",
                                round + 1,
                                p.offered_per_s,
                                p.confirmed_per_s,
                                p.schedule_lag_ms.p50,
                                p.schedule_lag_ms.p99,
                                p.schedule_lag_ms.max,
                                p.late_sends,
                                p.pushed_back,
                                p.sends
                            );
                            offered[w].push(p.offered_per_s);
                            p99[w].push(p.schedule_lag_ms.p99);
                        }
                        Err(e) => println!(
                            "{kind:>13}: {label:<7} round {} window {window}: failed: {e}",
                            round + 1
                        ),
                    }
                }
            }
            let [o_win, o_one] = offered.map(|mut v| median(&mut v));
            let [l_win, l_one] = p99.map(|mut v| median(&mut v));
            if let (Some(a), Some(b), Some(la), Some(lb)) = (o_win, o_one, l_win, l_one) {
                println!(
                    "{kind:>13}: {label:<7} median offered {a:.0}/s with window {}, {b:.0}/s \
                     with window 1: ratio {:.2}; lag p99 {la:.3} ms against {lb:.3} ms",
                    WINDOWS[0],
                    a / b
                );
            }
        }
    }
}

/// Whether `kind`'s server answers on its port (the embedded SQS endpoint always does).
fn reachable(kind: &str) -> Result<(), String> {
    // The embedded SQS endpoint is ackbench's own: nothing to reach.
    common::server_address(kind).map_or(Ok(()), common::answers)
}

/// The profile of one run: `n` messages `gap` µs apart from [`FIRST_AT_US`], `window`
/// unconfirmed at most; the provider holds the calls arriving until the last send is due and a
/// second after.
fn profile(kind: &str, gap: u64, window: u32, n: u64) -> String {
    let at: Vec<String> = (0..n)
        .map(|i| format!("{}us", FIRST_AT_US + i * gap))
        .collect();
    let hold_s = (FIRST_AT_US + n * gap) / 1_000_000 + 1;
    format!(
        "name: publish-rate\nmode: live\nseed: 1\n\
         run: {{ duration: {}s, drain: 5m, publish_window: {window} }}\n\
         broker: {{ kind: {kind} }}\nworkload: {{ arrival: {{ at: [{}] }} }}\n\
         consumer: {{ target: ack-after-work, workers: {WORKERS} }}\n\
         provider:\n  latency: {{ dist: fixed, value: 1ms }}\n  phases:\n    \
         - {{ from: 0s, to: {hold_s}s, latency: {{ dist: fixed, value: 1s }} }}\n",
        hold_s,
        at.join(", ")
    )
}

/// Runs one profile live and reads its publisher's figures.
fn run(kind: &str, gap: u64, window: u32, n: u64) -> Result<PublisherSummary, String> {
    let scenario = load_str("publish-rate.yaml", &profile(kind, gap, window, n), &[])
        .map_err(|e| e.to_string())?;
    let record = ackbench::internals::run::run(&scenario).map_err(|e| e.to_string())?;
    let p = summarise(&record).ok_or("the run recorded no publisher")?;
    if p.sends != n || record.messages.len() as u64 != n {
        return Err(format!(
            "{} sends and {} messages recorded of {n}",
            p.sends,
            record.messages.len()
        ));
    }
    common::window::every_message_had_its_effect(&record, n)?;
    Ok(p)
}
