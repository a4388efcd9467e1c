//! The cost of the protocol proxy between each worker and a real broker: the built-in
//! ack-after-work target, 32 workers, a provider answering in 1 ms, against each real broker
//! (RabbitMQ 127.0.0.1:5672, NATS JetStream 127.0.0.1:4222, Redis 127.0.0.1:6379; an external
//! SQS server too when `ACKBENCH_SQS_ENDPOINT` names one), once through the proxy
//! (`broker.observe: proxy`, the default) and once with every worker connected to the broker
//! itself (`broker.observe: none`), alternately, in the same run.
//!
//! `cargo bench -p ackbench --bench proxy_cost` (release build; needs the `live` feature, a
//! default one); `-- 4000` sets the messages per run (default 3000), `-- rounds=5` the proxy /
//! direct pairs per broker (default 3), `-- hold=12` the provider's hold (default 6 s; the
//! publisher must be done within it), `-- nats` (or `rabbitmq`, `redis-streams`, `sqs`) runs
//! one broker only. A broker that does not answer is skipped with the reason printed.
//!
//! A run publishes every message at once (in order, up to `run.publish_window` unconfirmed)
//! while the provider holds every call arriving in the first 6 s for 6 s: the queue
//! fills, and the rate is the effects at the provider after the window's start over their time.
//! The window starts when the last held call is answered (after the last publish, if later),
//! read from the provider's calls as the run recorded them: the workers draining a backlog,
//! without the hold, the publisher's pace or the workers' start-up. Not from the effects: with
//! the default `provider.effect_at: request` a held call's effect is stamped when it arrives, a
//! hold before its answer, and a window started at the 32nd effect held most of the hold (the
//! figure then followed the hold's length: hold 3 / 6 / 12 s gave 1,229 / 628 / 326 messages/s).
//! The bench panics on a window that contains any of the hold, and checks the window on a
//! made-up run before it starts. Effects are what a run without the proxy still sees; with it,
//! the same figure. Each line also gives the effects counted, the window's start (seconds into
//! the run) and the publisher's rate.
//!
//! Each pair runs proxy first in odd rounds and direct first in even ones; the line per broker
//! gives the median of each mode, their ratio and the proxy's cost (1 - proxy / direct). The
//! machine is shared: compare the two modes of one run, not runs of different days.

#[path = "common/mod.rs"]
mod common;

use ackbench::internals::profile::load_str;
use common::window::{self, secs, Rate};
use common::{median, BenchArgs};

const KINDS: [&str; 4] = ["rabbitmq", "nats", "redis-streams", "sqs"];
/// The provider holds every call started in the first this many seconds for as long (default;
/// `-- hold=12` sets it): the publisher fills the queue meanwhile, and the workers then drain
/// a backlog.
const HOLD_S: u64 = 6;
const WORKERS: usize = 32;

fn main() {
    let args = BenchArgs::parse(3000, HOLD_S, &KINDS);
    let (n, rounds, hold) = (args.n, args.rounds, args.hold);
    window::self_check();
    println!(
        "proxy_cost: built-in ack-after-work, {WORKERS} workers, 1 ms provider, {n} messages per \
         run, {rounds} proxy/direct pairs per broker, provider hold {hold} s, release build"
    );
    for kind in KINDS {
        if !args.runs(kind) {
            continue;
        }
        if let Err(why) = reachable(kind) {
            println!("{kind:>13}: skipped: {why}");
            continue;
        }
        let mut proxy = Vec::new();
        let mut direct = Vec::new();
        for round in 0..rounds {
            let order: [&str; 2] = if round % 2 == 0 {
                ["proxy", "none"]
            } else {
                ["none", "proxy"]
            };
            for observe in order {
                match run(kind, observe, n, hold) {
                    Ok(rate) => {
                        println!(
                            "{kind:>13}: round {} observe {observe:<5} {:>8.0} messages/s \
                             ({} effects from {:.2} s; published at {:.0}/s)",
                            round + 1,
                            rate.consumed,
                            rate.effects,
                            secs(rate.from),
                            rate.published
                        );
                        if observe == "proxy" {
                            proxy.push(rate.consumed);
                        } else {
                            direct.push(rate.consumed);
                        }
                    }
                    Err(e) => println!(
                        "{kind:>13}: round {} observe {observe}: failed: {e}",
                        round + 1
                    ),
                }
            }
        }
        if let (Some(p), Some(d)) = (median(&mut proxy), median(&mut direct)) {
            println!(
                "{kind:>13}: median with the proxy {p:.0} messages/s, direct {d:.0} messages/s: \
                 ratio {:.3}, proxy cost {:.1}%",
                p / d,
                (1.0 - p / d) * 100.0
            );
        }
    }
}

/// Whether `kind`'s server answers on its port: `Err` says why not.
fn reachable(kind: &str) -> Result<(), String> {
    let addr = match common::server_address(kind) {
        Some(addr) => addr.to_string(),
        None => {
            let endpoint = std::env::var("ACKBENCH_SQS_ENDPOINT")
                .map_err(|_| "set ACKBENCH_SQS_ENDPOINT to an SQS server (moto, ElasticMQ)")?;
            let u = url::Url::parse(&endpoint).map_err(|e| format!("{endpoint}: {e}"))?;
            format!(
                "{}:{}",
                u.host_str().unwrap_or("127.0.0.1"),
                u.port_or_known_default().unwrap_or(80)
            )
        }
    };
    common::answers(&addr)
}

/// The profile of one run.
fn profile(kind: &str, observe: &str, n: u64, hold: u64) -> String {
    let broker = match kind {
        "sqs" => format!(
            "{{ kind: sqs, endpoint: \"{}\", visibility_timeout: 30s, observe: {observe} }}",
            std::env::var("ACKBENCH_SQS_ENDPOINT").unwrap_or_default()
        ),
        "rabbitmq" => format!("{{ kind: rabbitmq, observe: {observe} }}"),
        other => format!("{{ kind: {other}, observe: {observe} }}"),
    };
    format!(
        "name: proxy-cost\nmode: live\nseed: 1\nrun: {{ duration: 1s, drain: 5m }}\n\
         broker: {broker}\nworkload: {{ arrival: {{ every: 1us }}, count: {n} }}\n\
         consumer: {{ target: ack-after-work, workers: {WORKERS} }}\n\
         provider:\n  latency: {{ dist: fixed, value: 1ms }}\n  phases:\n    \
         - {{ from: 0s, to: {hold}s, latency: {{ dist: fixed, value: {hold}s }} }}\n"
    )
}

/// Runs one profile live.
fn run(kind: &str, observe: &str, n: u64, hold: u64) -> Result<Rate, String> {
    let scenario = load_str("proxy-cost.yaml", &profile(kind, observe, n, hold), &[])
        .map_err(|e| e.to_string())?;
    let record = ackbench::internals::run::run(&scenario).map_err(|e| e.to_string())?;
    window::of_record(&record, n)
}
