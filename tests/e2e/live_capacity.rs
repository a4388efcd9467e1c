//! A capacity run against the real RabbitMQ on 127.0.0.1:5672
//! (profiles/brokers/live-rabbitmq-capacity.yaml): the rate it finds, bracketed by two
//! fixed-rate live runs 10% under and over it, and ackbench's own CPU share in the report.

use std::path::Path;

use serde_json::Value;

use crate::common::{service_up, stderr, summary_of};
use crate::live_rabbitmq::{left_on_server, run_ackbench};

const PROFILE: &str = "profiles/brokers/live-rabbitmq-capacity.yaml";

/// Runs the profile with `sets` into a fresh folder: its summary and timeseries.csv; checks
/// the run passed and left nothing on the server.
fn run(sets: &[&str]) -> (Value, String) {
    let dir = tempfile::tempdir().expect("temp dir");
    let out = dir.path().join("run");
    let mut args = vec![
        "run",
        PROFILE,
        "--out",
        out.to_str().expect("utf-8"),
        "--quiet",
    ];
    for s in sets {
        args.extend(["--set", s]);
    }
    let (pid, o) = run_ackbench(&args);
    assert_eq!(o.status.code(), Some(0), "{args:?}: {}", stderr(&o));
    assert_eq!(
        left_on_server(pid),
        Vec::<String>::new(),
        "left on the server"
    );
    let csv = std::fs::read_to_string(out.join("timeseries.csv")).expect("timeseries.csv");
    (summary_of(&out), csv)
}

/// The backlog age (timeseries.csv's `oldest_age_s`) at `t` seconds.
fn age_at(csv: &str, t: u64) -> f64 {
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().expect("a header").split(',').collect();
    let (ti, ai) = (
        header.iter().position(|h| *h == "t_s").expect("t_s"),
        header
            .iter()
            .position(|h| *h == "oldest_age_s")
            .expect("oldest_age_s"),
    );
    lines
        .map(|l| l.split(',').collect::<Vec<_>>())
        .find(|row| row[ti] == t.to_string())
        .map(|row| row[ai].parse().expect("a number"))
        .unwrap_or_else(|| panic!("no sample at {t} s: {csv}"))
}

#[test]
fn a_live_capacity_run_on_rabbitmq_is_bracketed_by_fixed_rate_runs() {
    if !service_up("RabbitMQ", 5672) {
        return;
    }
    assert!(Path::new(&crate::common::root().join(PROFILE)).exists());
    let (s, _) = run(&[]);
    let c = &s["capacity"];
    let sustainable = c["sustainable_per_s"]
        .as_f64()
        .unwrap_or_else(|| panic!("a sustainable rate within the ramp: {c}"));
    assert!(
        c["first_behind_per_s"].as_f64().is_some(),
        "the ramp goes past the consumer: {c}"
    );
    // W / L = 4 / 50 ms = 80/s is the most it can be; each message's own costs (confirmed
    // publish, proxy, ack, HTTP call) take some of it.
    assert!((40.0..=80.0).contains(&sustainable), "{c}");
    // ackbench's own share is measured, per step too, and far from a core at these rates.
    let cpu = s["harness_cpu"]["share"]
        .as_f64()
        .expect("harness_cpu.share");
    assert!(cpu > 0.0 && cpu < 0.8, "{}", s["harness_cpu"]);
    assert!(c["steps"][1]["harness_cpu_share"].as_f64().is_some(), "{c}");
    assert_eq!(
        (s["lost"].as_u64(), s["duplicate_effects"].as_u64()),
        (Some(0), Some(0))
    );

    // 10% under and over the rate found, 20 s each: over the second half of publishing (10 s
    // to 20 s), the backlog age stays within the slack under it and grows past it over it
    // (at 1.1 x 65/s = 71.5/s against ~66/s done: 10 s x (1 - 66 / 71.5) = 0.8 s). The first
    // half is not read: a live publisher starts a second or two late and catches up at once.
    let slack = c["slack_s"].as_f64().expect("slack_s");
    let fixed = |per_s: f64| {
        let arrival = format!("workload.arrival={{rate_per_s: {per_s}, process: uniform}}");
        let (s, csv) = run(&[&arrival, "run.duration=20s", "run.sample_every=1s"]);
        assert!(
            s.get("capacity").is_none(),
            "a fixed rate has no capacity section"
        );
        age_at(&csv, 20) - age_at(&csv, 10)
    };
    let (lower, upper) = (0.9 * sustainable, 1.1 * sustainable);
    let below = fixed(lower);
    let above = fixed(upper);
    assert!(
        below <= slack,
        "{lower}/s grew by {below} s (slack {slack} s)"
    );
    assert!(
        above > slack,
        "{upper}/s grew by {above} s only (slack {slack} s)"
    );
}
