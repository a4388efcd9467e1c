//! Sim throughput: deliveries per second and peak memory of whole runs, from 10k to 1M messages.
//!
//! `cargo bench -p ackbench --bench sim_throughput` (release build). Each size runs in a child
//! process of its own so its peak RSS (VmHWM) is its own. Workload: 64 workers, provider latency
//! a mix of 99% lognormal(240 ms, p99 900 ms) and 1% uniform(31 s, 40 s), lease 30 s, limit 5,
//! 80 messages/s (Poisson). Each size runs on every broker kind, the lease and limit the same by
//! meaning (30 s AckWait / min idle; RabbitMQ has no lease and keeps its 30-minute consumer
//! timeout, its delivery_limit 4 allowing the same 5 deliveries). `-- 100000` runs one size
//! only; `-- nats` one kind only.

use std::process::Command;
use std::time::Instant;

const PROFILE: &str = include_str!("bench-workload.yaml");

/// The workload's broker line, and the same lease and delivery limit on each kind.
const SQS_BROKER: &str = "broker: { visibility_timeout: 30s, max_receives: 5, stale_ack: reject }";
const KINDS: &[(&str, &str)] = &[
    ("sqs", SQS_BROKER),
    ("rabbitmq", "broker: { kind: rabbitmq, delivery_limit: 4 }"),
    (
        "nats",
        "broker: { kind: nats, ack_wait: 30s, max_deliver: 5 }",
    ),
    (
        "redis-streams",
        "broker: { kind: redis-streams, min_idle: 30s, max_deliveries: 5 }",
    ),
];

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    if let Some(n) = std::env::var("ACKBENCH_BENCH_CHILD")
        .ok()
        .and_then(|v| v.parse::<u64>().ok())
    {
        let kind = std::env::var("ACKBENCH_BENCH_KIND").unwrap_or_else(|_| "sqs".into());
        child(n, &kind);
        return;
    }
    let mut sizes: Vec<u64> = args.iter().filter_map(|a| a.parse().ok()).collect();
    if sizes.is_empty() {
        sizes = vec![10_000, 100_000, 1_000_000];
    }
    let named: Vec<&str> = KINDS
        .iter()
        .map(|(k, _)| *k)
        .filter(|k| args.iter().any(|a| a == k))
        .collect();
    let kinds: Vec<&str> = if named.is_empty() {
        KINDS.iter().map(|(k, _)| *k).collect()
    } else {
        named
    };
    println!(
        "{:>14} {:>10} {:>11} {:>9} {:>14} {:>12} {:>13} {:>10}",
        "kind",
        "messages",
        "deliveries",
        "run_s",
        "deliveries/s",
        "ns/message",
        "summarise_s",
        "peak_MiB"
    );
    for n in sizes {
        for kind in &kinds {
            run_child(n, kind);
        }
    }
}

/// Runs one size on one kind in a child process of its own (its peak RSS its own).
fn run_child(n: u64, kind: &str) {
    let exe = std::env::current_exe().expect("own path");
    let out = Command::new(exe)
        .env("ACKBENCH_BENCH_CHILD", n.to_string())
        .env("ACKBENCH_BENCH_KIND", kind)
        .output()
        .expect("child runs");
    print!("{}", String::from_utf8_lossy(&out.stdout));
    if !out.status.success() {
        eprintln!("{}", String::from_utf8_lossy(&out.stderr));
        std::process::exit(1);
    }
}

fn child(n: u64, kind: &str) {
    let broker = KINDS
        .iter()
        .find(|(k, _)| *k == kind)
        .map_or(SQS_BROKER, |(_, b)| *b);
    assert!(PROFILE.contains(SQS_BROKER), "the workload's broker line");
    let text = PROFILE
        .replace("COUNT", &n.to_string())
        .replace(SQS_BROKER, broker);
    let scenario =
        ackbench::profile::load_str("bench.yaml", &text, &[]).expect("bench profile is valid");
    let t = Instant::now();
    let record = ackbench::runner::run(&scenario).expect("run completes");
    let run_s = t.elapsed().as_secs_f64();
    let deliveries = record
        .events
        .iter()
        .filter(|e| matches!(e.kind, ackbench::record::EventKind::Delivered { .. }))
        .count();
    let t = Instant::now();
    let info = ackbench::report::RunInfo {
        profile: "bench".into(),
        mode: "sim".into(),
        seed: 42,
        wall_s: run_s,
    };
    let summary = ackbench::report::summarise(&info, &record, &scenario.budgets);
    let samples =
        ackbench::metrics::timeseries(&record, ackbench::metrics::default_interval(&record));
    let summarise_s = t.elapsed().as_secs_f64();
    assert_eq!(summary.messages, n);
    std::hint::black_box(samples);
    println!(
        "{:>14} {:>10} {:>11} {:>9.3} {:>14.0} {:>12.0} {:>13.3} {:>10.1}",
        kind,
        n,
        deliveries,
        run_s,
        deliveries as f64 / run_s,
        run_s * 1e9 / n as f64,
        summarise_s,
        peak_rss_mib()
    );
}

/// Peak resident set size of this process (VmHWM), in MiB.
fn peak_rss_mib() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .map_or(f64::NAN, |kb| kb / 1024.0)
}
