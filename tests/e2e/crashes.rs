//! Worker crashes in live runs: a consumer that exits at once is restarted with a back-off
//! (bounded restarts, every exit counted and named), and a healthy run has no crash at all (the
//! run's own stop of its workers is none), with summary.json and timeseries.csv agreeing.

use std::time::Duration;

use serde_json::Value;

use crate::common::run_text;

/// The last row's `worker_crashes` of a report folder's timeseries.csv.
fn crashes_in_timeseries(dir: &std::path::Path) -> u64 {
    let csv = std::fs::read_to_string(dir.join("timeseries.csv")).unwrap();
    let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    let col = header.iter().position(|h| *h == "worker_crashes").unwrap();
    let last = csv.lines().last().unwrap();
    last.split(',').nth(col).unwrap().parse().unwrap()
}

/// Runs a profile quietly: exit code, summary.json, the time series' crash count and summary.md.
fn run(profile: &str) -> (Option<i32>, Value, u64, String) {
    let r = run_text(profile, &["--quiet"]);
    let out = r.dir.path();
    (
        Some(r.code()),
        r.summary(),
        crashes_in_timeseries(out),
        std::fs::read_to_string(out.join("summary.md")).unwrap(),
    )
}

#[test]
fn a_consumer_that_exits_at_once_is_restarted_with_a_back_off_and_every_exit_counted() {
    // Two workers running /bin/true, restart_after 0s, for 5 s of wall time (time scale 1,
    // nothing is ever received, so the run lasts duration + drain). Each exit within 1 s of its
    // start is a quick exit; the n-th waits 100 ms x 2^(n-1) before the next start, so a
    // worker starts at about 0, 0.1, 0.3, 0.7, 1.5 and 3.1 s (the next would be at 6.3 s): at
    // most 6 starts, each one exit, so at most 12 crashes for both (without the back-off, tens
    // of thousands). Every start takes some time of its own, which only lowers the count; at
    // least the first 3 starts of each worker fit in 5 s whatever the machine: 6 crashes.
    let profile = r#"
name: restart-storm
mode: live
seed: 1
run: { duration: 4s, drain: 1s, time_scale: 1 }
broker: { visibility_timeout: 30s, max_receives: 3 }
workload: { arrival: { every: 100ms }, count: 10 }
consumer: { command: [/bin/true], workers: 2, restart_after: 0s }
provider: { latency: { dist: fixed, value: 10ms } }
"#;
    let started = std::time::Instant::now();
    let (code, s, in_timeseries, md) = run(profile);
    assert!(started.elapsed() < Duration::from_secs(60));
    let crashes = s["worker_crashes"].as_u64().unwrap();
    assert!((6..=12).contains(&crashes), "worker_crashes {crashes}");
    // Every crash is named, and the time series counts the same.
    let named = s["crashes"].as_array().unwrap();
    assert_eq!(named.len() as u64, crashes);
    assert!(
        named.iter().all(|c| c["exit"] == "exit status 0"),
        "{named:?}"
    );
    let at: Vec<f64> = named.iter().map(|c| c["at_s"].as_f64().unwrap()).collect();
    assert!(at.iter().all(|&t| t <= s["virtual_s"].as_f64().unwrap()));
    assert_eq!(in_timeseries, crashes, "timeseries.csv agrees");
    // Nothing was ever received.
    assert_eq!(
        (s["deliveries"].as_u64(), s["unfinished"].as_u64()),
        (Some(0), Some(10))
    );
    // The verdict fails, on the default `unfinished` budget (10 left against 0), and the report
    // names the cause.
    assert_eq!(code, Some(1), "{s}");
    assert_eq!(s["verdict"], "fail");
    let unfinished = s["budgets"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["name"] == "unfinished")
        .unwrap_or_else(|| panic!("no unfinished budget: {s}"));
    assert_eq!(
        (unfinished["actual"].as_f64(), unfinished["pass"].as_bool()),
        (Some(10.0), Some(false))
    );
    assert!(md.contains("the consumer never ran"), "{md}");
}

#[test]
fn a_healthy_live_run_has_no_phantom_crash() {
    // The built-in ack-after-work, 8 workers, 20 orders at 1 s at time scale 0.1 (2 s of
    // publishing): nothing crashes, so 0 crashes, none named, and timeseries.csv agrees. The
    // run's end stops every worker (their tasks aborted): that is not a crash.
    let profile = r#"
name: live-healthy
mode: live
seed: 2
run: { duration: 20s, drain: 1m, time_scale: 0.1 }
broker: { visibility_timeout: 30s, max_receives: 3 }
workload: { arrival: { every: 1s }, count: 20 }
consumer: { target: ack-after-work, workers: 8, restart_after: 1s }
provider:
  effect_at: request
  latency: { dist: lognormal, median: 240ms, p99: 900ms }
budgets: { lost: 0, duplicate_rate: 0 }
"#;
    for _ in 0..3 {
        let (code, s, in_timeseries, _) = run(profile);
        assert_eq!(code, Some(0), "{s}");
        assert_eq!(s["effects"], 20);
        assert_eq!(s["worker_crashes"], 0, "{s}");
        assert_eq!(s["crashes"], serde_json::json!([]));
        assert_eq!(in_timeseries, 0);
    }
}
