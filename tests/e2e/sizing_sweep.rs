//! `ackbench sweep`: the reference incident under five leases, determinism across job counts,
//! and bad input refused with exit code 2.

use serde_json::Value;

use crate::common::{self, ackbench, stderr, stdout};

const LEASES: &str = "broker.visibility_timeout=20s,30s,45s,60s,90s";

/// Runs a sweep into a temp folder; returns (exit code, sweep.json, the folder's guard, stdout).
fn sweep(extra: &[&str]) -> (i32, Value, tempfile::TempDir, String) {
    let dir = tempfile::tempdir().expect("temp dir");
    let out = dir.path().join("sweep");
    let out_s = out.to_str().expect("utf-8 path").to_string();
    let mut args = vec!["sweep", "profiles/marlow-thursday.yaml", "--out", &out_s];
    args.extend_from_slice(extra);
    let o = ackbench(&args);
    let text = std::fs::read_to_string(out.join("sweep.json"))
        .unwrap_or_else(|e| panic!("sweep.json written ({e}); stderr: {}", stderr(&o)));
    let v: Value = serde_json::from_str(&text).expect("sweep.json is JSON");
    // Each point's `summary` is the run's summary.json object.
    for (i, p) in v.as_array().into_iter().flatten().enumerate() {
        crate::common::assert_schema(&p["summary"], &format!("sweep point {i}"));
    }
    (o.status.code().expect("exit code"), v, dir, stdout(&o))
}

fn lease_s(p: &Value) -> f64 {
    p["summary"]["visibility_timeout_s"]
        .as_f64()
        .expect("visibility_timeout_s")
}

#[test]
fn duplicates_stop_above_the_providers_forty_seconds_and_recovery_grows_with_the_lease() {
    let (code, v, dir, out) = sweep(&["--vary", LEASES]);
    assert_eq!(code, 0, "{out}");
    let points = v.as_array().expect("a list of points");
    assert_eq!(points.len(), 5);
    let leases: Vec<&str> = points
        .iter()
        .map(|p| {
            p["params"]["broker.visibility_timeout"]
                .as_str()
                .unwrap_or("")
        })
        .collect();
    assert_eq!(leases, ["20s", "30s", "45s", "60s", "90s"]);
    for p in points {
        let s = &p["summary"];
        if lease_s(p) > 40.0 {
            assert_eq!(s["duplicate_effects"], 0, "{}", p["params"]);
            assert_eq!(s["dlq"], 0, "{}", p["params"]);
        } else {
            assert_eq!(s["dlq"], 108, "{}", p["params"]);
            assert_eq!(s["dlq_with_effect"], 108);
            assert_eq!(s["duplicate_effects"], 216);
        }
        assert_eq!(s["messages"], 108);
        // No kills in this profile: the worst case is the lease itself.
        assert_eq!(p["derived"]["recovery_time_source"], "lease");
        assert_eq!(p["derived"]["recovery_time_s"].as_f64(), Some(lease_s(p)));
    }
    let recovery: Vec<f64> = points
        .iter()
        .map(|p| p["derived"]["recovery_time_s"].as_f64().unwrap_or(0.0))
        .collect();
    assert!(recovery.windows(2).all(|w| w[0] < w[1]), "{recovery:?}");

    let csv = std::fs::read_to_string(dir.path().join("sweep/sweep.csv")).expect("sweep.csv");
    let mut lines = csv.lines();
    assert_eq!(
        lines.next(),
        Some(
            "point,seed,broker.visibility_timeout,duplicate_rate,lost,dlq,time_to_done_ms.p99,\
             max_oldest_age_s,worker_busy_fraction,recovery_time_s,recovery_time_source,verdict"
        )
    );
    assert_eq!(lines.count(), 5);
    for chart in [
        "sweep-dlq.png",
        "sweep-dlq.svg",
        "sweep-recovery_time_s.png",
    ] {
        assert!(dir.path().join("sweep").join(chart).exists(), "{chart}");
    }
    assert!(out.contains("broker.visibility_timeout"), "{out}");
}

/// sweep.json without the wall-clock seconds, which differ from run to run.
fn without_wall(mut v: Value) -> Value {
    if let Some(points) = v.as_array_mut() {
        for p in points {
            if let Some(s) = p["summary"].as_object_mut() {
                s.remove("wall_s");
            }
        }
    }
    v
}

#[test]
fn the_same_sweep_gives_the_same_points_whatever_the_scheduling() {
    let args = [
        "--vary",
        "broker.visibility_timeout=30s,60s",
        "--vary",
        "consumer.workers=1,2,4",
        "--metric",
        "duplicate_effects",
    ];
    let (_, one, _d1, _) = sweep(&[&args[..], &["--jobs", "1"]].concat());
    let (_, many, _d2, _) = sweep(&[&args[..], &["--jobs", "3"]].concat());
    let (one, many) = (without_wall(one), without_wall(many));
    assert_eq!(one, many);
    let first = &one[0];
    assert_eq!(first["params"]["broker.visibility_timeout"], "30s");
    assert_eq!(first["params"]["consumer.workers"], "1");
    assert_ne!(
        one[0]["seed"], one[1]["seed"],
        "each point has its own seed"
    );
}

fn refused(args: &[&str]) -> String {
    common::refused(
        &[
            "sweep",
            "profiles/marlow-thursday.yaml",
            "--out",
            "/nonexistent/never",
        ],
        args,
    )
}

#[test]
fn bad_varies_exit_2_and_say_why() {
    let e = refused(&["--vary", "broker.visibility_timeout"]);
    assert!(
        e.contains("--vary broker.visibility_timeout: expected PATH=V1,V2"),
        "{e}"
    );
    let e = refused(&["--vary", "broker.visibility_timeout="]);
    assert!(
        e.contains("no values after `broker.visibility_timeout=`"),
        "{e}"
    );
    let e = refused(&["--vary", "broker.lease=30s,60s"]);
    assert!(
        e.contains("--vary broker.lease=30s,60s: value `30s`: broker.lease"),
        "{e}"
    );
    let e = refused(&["--vary", "broker.visibility_timeout=20s,13h"]);
    assert!(
        e.contains("--vary broker.visibility_timeout=20s,13h: value `13h`"),
        "{e}"
    );
    assert!(e.contains("at most 12h"), "{e}");
    let seeds: Vec<String> = (1..=40).map(|i| i.to_string()).collect();
    let workers: Vec<String> = (1..=30).map(|i| i.to_string()).collect();
    let e = refused(&[
        "--vary",
        &format!("seed={}", seeds.join(",")),
        "--vary",
        &format!("consumer.workers={}", workers.join(",")),
    ]);
    assert!(
        e.contains("1200 points (40 x 30), more than the 1000"),
        "{e}"
    );
    let e = refused(&["--vary", "consumer.workers=1,2", "--metric", "dupes"]);
    assert!(
        e.contains("--metric dupes: not a metric of the summary"),
        "{e}"
    );
}

#[test]
fn the_help_teaches_with_examples() {
    let o = ackbench(&["sweep", "--help"]);
    let h = stdout(&o);
    assert!(
        h.contains("Examples:") && h.contains("--vary broker.visibility_timeout=20s"),
        "{h}"
    );
    assert!(h.contains("at most 1000 points"), "{h}");
}
