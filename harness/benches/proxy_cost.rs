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
//! A run publishes every message at once (one after the other, as fast as the broker confirms
//! them) while the provider holds the calls of the first 6 s for 6 s: the queue fills, and the
//! rate is the effects at the provider after the held ones (after the last publish, if later) over
//! their time: the workers draining a backlog, without the publisher's pace or the workers'
//! start-up. Effects are what a run without the proxy still sees; with it, the same figure.
//! Each line also gives the publisher's rate.
//!
//! Each pair runs proxy first in odd rounds and direct first in even ones; the line per broker
//! gives the median of each mode, their ratio and the proxy's cost (1 - proxy / direct). The
//! machine is shared: compare the two modes of one run, not runs of different days.

use std::net::TcpStream;
use std::time::Duration;

use ackbench::profile::load_str;
use ackbench::record::RunRecord;

const KINDS: [&str; 4] = ["rabbitmq", "nats", "redis-streams", "sqs"];
/// The provider holds every call started in the first this many seconds for as long (default;
/// `-- hold=12` sets it): the publisher fills the queue meanwhile, and the workers then drain
/// a backlog.
const HOLD_S: u64 = 6;
const WORKERS: usize = 32;

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .collect();
    let n: u64 = args.iter().find_map(|a| a.parse().ok()).unwrap_or(3000);
    let rounds: usize = args
        .iter()
        .find_map(|a| a.strip_prefix("rounds=")?.parse().ok())
        .unwrap_or(3);
    let hold: u64 = args
        .iter()
        .find_map(|a| a.strip_prefix("hold=")?.parse().ok())
        .unwrap_or(HOLD_S);
    let only: Vec<&str> = KINDS
        .iter()
        .copied()
        .filter(|k| args.iter().any(|a| a == k))
        .collect();
    println!(
        "proxy_cost: built-in ack-after-work, 32 workers, 1 ms provider, {n} messages per run, \
         {rounds} proxy/direct pairs per broker, release build"
    );
    for kind in KINDS {
        if !only.is_empty() && !only.contains(&kind) {
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
                             (published at {:.0}/s)",
                            round + 1,
                            rate.consumed,
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
    let addr = match kind {
        "rabbitmq" => "127.0.0.1:5672".to_string(),
        "nats" => "127.0.0.1:4222".to_string(),
        "redis-streams" => "127.0.0.1:6379".to_string(),
        _ => {
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
    let parsed = addr.parse().map_err(|e| format!("{addr}: {e}"))?;
    TcpStream::connect_timeout(&parsed, Duration::from_secs(1))
        .map(|_| ())
        .map_err(|e| format!("nothing answers on {addr} ({e})"))
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
         consumer: {{ target: ack-after-work, workers: 32 }}\n\
         provider:\n  latency: {{ dist: fixed, value: 1ms }}\n  phases:\n    \
         - {{ from: 0s, to: {hold}s, latency: {{ dist: fixed, value: {hold}s }} }}\n"
    )
}

/// One run's figures: messages per second the workers drained once the queue was full (after
/// the provider's hold and the last publish), and the publisher's own rate.
struct Rate {
    consumed: f64,
    published: f64,
}

/// Runs one profile live.
fn run(kind: &str, observe: &str, n: u64, hold: u64) -> Result<Rate, String> {
    let scenario = load_str("proxy-cost.yaml", &profile(kind, observe, n, hold), &[])
        .map_err(|e| e.to_string())?;
    let record = ackbench::runner::run(&scenario).map_err(|e| e.to_string())?;
    rate(&record, n)
}

fn rate(record: &RunRecord, n: u64) -> Result<Rate, String> {
    let effected: std::collections::HashSet<_> =
        record.ledger.effects.iter().filter_map(|e| e.seq).collect();
    if (effected.len() as u64) < n {
        return Err(format!(
            "only {} of {n} messages had their effect",
            effected.len()
        ));
    }
    // Each publish as the run recorded it, at the instant it was sent.
    let published: Vec<u64> = record
        .events
        .iter()
        .filter_map(|e| match e.kind {
            ackbench::record::EventKind::Published { .. } => Some(e.at),
            _ => None,
        })
        .collect();
    let (p0, p1) = (
        published.iter().copied().min().unwrap_or(0),
        published.iter().copied().max().unwrap_or(0),
    );
    // The first calls (one per worker) are the held ones: once the last of them has had its
    // effect, and the last message is published, the workers drain what is left.
    let mut effects: Vec<u64> = record.ledger.effects.iter().map(|e| e.at).collect();
    effects.sort_unstable();
    let held_end = effects.get(WORKERS - 1).copied().unwrap_or(0);
    let from = p1.max(held_end);
    let after: Vec<u64> = record
        .ledger
        .effects
        .iter()
        .map(|e| e.at)
        .filter(|&at| at > from)
        .collect();
    if (after.len() as u64) < n / 4 {
        return Err(format!(
            "only {} of {n} effects came after the queue was full (the publisher kept up with \
             the workers): raise the message count",
            after.len()
        ));
    }
    let last = after.iter().copied().max().unwrap_or(from);
    let per_s =
        |count: usize, a: u64, b: u64| count as f64 / (b.saturating_sub(a) as f64 / 1e9).max(1e-9);
    Ok(Rate {
        consumed: per_s(after.len(), from, last),
        published: per_s(published.len().saturating_sub(1), p0, p1),
    })
}

fn median(v: &mut [f64]) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    Some(v[v.len() / 2])
}
