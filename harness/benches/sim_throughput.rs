//! Sim throughput: deliveries per second and peak memory of whole runs, from 10k to 1M messages.
//!
//! `cargo bench -p ackbench --bench sim_throughput` (release build). Each size runs in a child
//! process of its own so its peak RSS (VmHWM) is its own. Workload: 64 workers, provider latency
//! a mix of 99% lognormal(240 ms, p99 900 ms) and 1% uniform(31 s, 40 s), lease 30 s, limit 5,
//! 80 messages/s (Poisson). `-- 100000` runs one size only.

use std::process::Command;
use std::time::Instant;

const PROFILE: &str = include_str!("bench-workload.yaml");

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    if let Some(n) = std::env::var("ACKBENCH_BENCH_CHILD")
        .ok()
        .and_then(|v| v.parse::<u64>().ok())
    {
        child(n);
        return;
    }
    let sizes: Vec<u64> = if args.is_empty() {
        vec![10_000, 100_000, 1_000_000]
    } else {
        args.iter().filter_map(|a| a.parse().ok()).collect()
    };
    println!(
        "{:>10} {:>11} {:>9} {:>14} {:>12} {:>13} {:>10}",
        "messages", "deliveries", "run_s", "deliveries/s", "ns/message", "summarise_s", "peak_MiB"
    );
    for n in sizes {
        let exe = std::env::current_exe().expect("own path");
        let out = Command::new(exe)
            .env("ACKBENCH_BENCH_CHILD", n.to_string())
            .output()
            .expect("child runs");
        print!("{}", String::from_utf8_lossy(&out.stdout));
        if !out.status.success() {
            eprintln!("{}", String::from_utf8_lossy(&out.stderr));
            std::process::exit(1);
        }
    }
}

fn child(n: u64) {
    let text = PROFILE.replace("COUNT", &n.to_string());
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
        "{:>10} {:>11} {:>9.3} {:>14.0} {:>12.0} {:>13.3} {:>10.1}",
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
