//! Sim throughput: deliveries per second (of wall time), CPU seconds (all threads: a streamed
//! run's accounting folds on a thread of its own), instructions per delivery, peak memory and
//! bytes per message of whole runs, beside the floor (a minimal event-loop model of the same scenario,
//! `floor.rs`) in the same run.
//!
//! `cargo bench -p ackbench --bench sim_throughput` (release build): 10k, 100k, 1M and 10M
//! messages on the SQS model and the floor, then callgrind's instruction count of the 100k run
//! of each (`valgrind --tool=callgrind`; skipped with a note when valgrind is absent). Flags
//! after `--`: sizes (`-- 100000 100000000` runs those sizes only; 100M is not in the default
//! set, it takes minutes), kinds (`sqs`, `rabbitmq`, `nats`, `redis-streams`, `kafka`, `kafka-share`; `all-kinds`:
//! every kind), `no-callgrind`, `no-floor`.
//!
//! The SQS model and the other kinds run as `ackbench run` runs them: above 50 messages their
//! accounting streams as the run goes, so the run's time includes the metrics and its memory
//! is what is in flight (`ACKBENCH_BENCH_RECORD=full` keeps the full record instead, for a
//! comparison). The floor keeps its event log.
//!
//! Each size runs in a child process of its own so its peak RSS (VmHWM) is its own; bytes per
//! message is that peak over the messages. Workload: 64 workers, provider latency a mix of 99%
//! lognormal(240 ms, p99 900 ms) and 1% uniform(31 s, 40 s), lease 30 s, limit 5, 80 messages/s
//! (Poisson). Each kind gets the same lease and limit by meaning (30 s AckWait / min idle;
//! RabbitMQ has no lease and keeps its 30-minute consumer timeout, its delivery_limit 4 allowing
//! the same 5 deliveries). Kafka has neither: one partition per worker, its 5-minute
//! `max_poll_interval`, commits after each record (auto-commit off), and `max_poll_records` 50
//! so that a batch fits in the interval: each partition is busy about 80% of the time, and with
//! the default 500 a backlogged member's batch (500 x 0.64 s on average) outlives 5 minutes, so
//! the group falls into the Thursday's rebalance storm after about 2.5 virtual hours (at 3M
//! messages: 160 rebalances, 210,895 records processed twice, records hours old), and the run
//! measures a backlog that grows with its length rather than the model's steady cost. Its streamed run keeps a
//! record a fetched batch holds after its commit (a member removed by its poll interval works
//! through its batch) open until it is handed out.

mod floor;

use std::process::Command;
use std::time::Instant;

const PROFILE: &str = include_str!("../bench-workload.yaml");

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
    (
        "kafka",
        "broker: { kind: kafka, partitions: 64, enable_auto_commit: false, max_poll_records: 50 }",
    ),
    (
        "kafka-share",
        "broker: { kind: kafka-share, record_lock_duration: 30s, delivery_count_limit: 5 }",
    ),
];
const FLOOR: &str = "floor";
const CALLGRIND_SIZE: u64 = 100_000;

fn main() {
    if let Some(n) = std::env::var("ACKBENCH_BENCH_CHILD")
        .ok()
        .and_then(|v| v.parse::<u64>().ok())
    {
        let kind = std::env::var("ACKBENCH_BENCH_KIND").unwrap_or_else(|_| "sqs".into());
        let run_only = std::env::var_os("ACKBENCH_BENCH_RUN_ONLY").is_some();
        child(n, &kind, run_only);
        return;
    }
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    let has = |flag: &str| args.iter().any(|a| a == flag);
    let mut sizes: Vec<u64> = args.iter().filter_map(|a| a.parse().ok()).collect();
    if sizes.is_empty() {
        sizes = vec![10_000, 100_000, 1_000_000, 10_000_000];
    }
    let mut kinds: Vec<&str> = KINDS
        .iter()
        .map(|(k, _)| *k)
        .filter(|k| has("all-kinds") || has(k))
        .collect();
    if kinds.is_empty() {
        kinds.push("sqs");
    }
    if !has("no-floor") {
        kinds.push(FLOOR);
    }
    println!(
        "{:>14} {:>10} {:>11} {:>9} {:>9} {:>14} {:>12} {:>10} {:>10}",
        "model",
        "messages",
        "deliveries",
        "run_s",
        "cpu_s",
        "deliveries/s",
        "ns/message",
        "peak_MiB",
        "B/message"
    );
    for &n in &sizes {
        for kind in &kinds {
            run_child(n, kind);
        }
    }
    if !has("no-callgrind") {
        callgrind(&kinds);
    }
}

/// Runs one size on one model in a child process of its own (its peak RSS its own).
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

/// Instructions per delivery of the 100k run of each model, counted by callgrind (the whole
/// child process: loading the profile and planning included, the summary not).
fn callgrind(kinds: &[&str]) {
    let exe = std::env::current_exe().expect("own path");
    println!("\ncallgrind, {CALLGRIND_SIZE} messages (instructions of the whole child process):");
    println!(
        "{:>14} {:>11} {:>16} {:>14}",
        "model", "deliveries", "instructions", "instr/delivery"
    );
    for kind in kinds {
        let out = Command::new("valgrind")
            .args(["--tool=callgrind", "--callgrind-out-file=/dev/null"])
            .arg(&exe)
            .env("ACKBENCH_BENCH_CHILD", CALLGRIND_SIZE.to_string())
            .env("ACKBENCH_BENCH_KIND", kind)
            .env("ACKBENCH_BENCH_RUN_ONLY", "1")
            .output();
        let Ok(out) = out else {
            println!("(valgrind not found: no instruction counts)");
            return;
        };
        let stderr = String::from_utf8_lossy(&out.stderr);
        let collected = stderr
            .lines()
            .find_map(|l| l.split("Collected :").nth(1))
            .and_then(|v| v.trim().parse::<u64>().ok());
        let deliveries = String::from_utf8_lossy(&out.stdout)
            .trim()
            .parse::<u64>()
            .ok();
        match (collected, deliveries) {
            (Some(i), Some(d)) => println!(
                "{:>14} {:>11} {:>16} {:>14.0}",
                kind,
                d,
                i,
                i as f64 / d as f64
            ),
            _ => println!(
                "{kind:>14} (callgrind failed: {})",
                stderr.lines().last().unwrap_or("")
            ),
        }
    }
}

/// The profile of `n` messages on `kind`: long enough for all of them at 80 messages/s.
fn profile_text(n: u64, kind: &str) -> String {
    let broker = KINDS
        .iter()
        .find(|(k, _)| *k == kind)
        .map_or(SQS_BROKER, |(_, b)| *b);
    assert!(PROFILE.contains(SQS_BROKER), "the workload's broker line");
    assert!(
        PROFILE.contains("duration: 100h"),
        "the workload's duration"
    );
    let hours = (n as f64 / 80.0 / 3600.0 * 1.2).ceil() as u64 + 1;
    PROFILE
        .replace("COUNT", &n.to_string())
        .replace("duration: 100h", &format!("duration: {}h", hours.max(100)))
        .replace(SQS_BROKER, broker)
}

fn child(n: u64, kind: &str, run_only: bool) {
    let t = Instant::now();
    let mut floor_elapsed = None;
    let deliveries = if kind == FLOOR {
        let out = floor::run(u32::try_from(n).expect("fewer than 2^32 messages"), 42);
        // Every message published and settled (acked or dead-lettered), checked after the clock.
        let t_end = t.elapsed();
        let count = |kinds: &[u8]| out.log.iter().filter(|e| kinds.contains(&e.2)).count() as u64;
        if !run_only {
            // (Not under callgrind: its count is the model's alone.)
            assert_eq!(
                (count(&[6]), count(&[2, 5])),
                (n, n),
                "the floor settles every message"
            );
        }
        floor_elapsed = Some(t_end);
        out.deliveries
    } else {
        let text = profile_text(n, kind);
        let mut scenario = ackbench::internals::profile::load_str("bench.yaml", &text, &[])
            .expect("bench profile is valid");
        if std::env::var("ACKBENCH_BENCH_RECORD").as_deref() == Ok("full") {
            scenario.run.record = ackbench::internals::profile::Record::Full;
        }
        // As `ackbench run` runs it: above 50 messages the accounting streams as the run goes
        // (`--record auto`), so the metrics are part of the run; the analysis reads them.
        let record = ackbench::internals::run::run(&scenario).expect("run completes");
        let m = ackbench::internals::report::analyse(
            &record,
            ackbench::internals::run::nanos(scenario.budgets.late_after),
        );
        assert_eq!(m.messages, n);
        std::hint::black_box(&record);
        m.deliveries
    };
    let run_s = floor_elapsed.unwrap_or_else(|| t.elapsed()).as_secs_f64();
    if run_only {
        println!("{deliveries}");
        return;
    }
    let peak = peak_rss_bytes();
    // The process's CPU time over all its threads (the run's accounting has one of its own),
    // from its start: a few ms of it are the process's own start.
    let cpu_s = cpu_seconds();
    println!(
        "{:>14} {:>10} {:>11} {:>9.3} {:>9.3} {:>14.0} {:>12.0} {:>10.1} {:>10.0}",
        kind,
        n,
        deliveries,
        run_s,
        cpu_s,
        deliveries as f64 / run_s,
        run_s * 1e9 / n as f64,
        peak / 1048576.0,
        peak / n as f64
    );
}

/// User and system CPU time of this process so far, all threads, in seconds.
fn cpu_seconds() -> f64 {
    use nix::sys::resource::{getrusage, UsageWho};
    use nix::sys::time::TimeValLike;
    getrusage(UsageWho::RUSAGE_SELF).map_or(f64::NAN, |u| {
        (u.user_time().num_microseconds() + u.system_time().num_microseconds()) as f64 / 1e6
    })
}

/// Peak resident set size of this process (VmHWM), in bytes.
fn peak_rss_bytes() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .map_or(f64::NAN, |kb| kb * 1024.0)
}
