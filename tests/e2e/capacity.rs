//! A capacity run (`workload.arrival: ramp`, profiles/capacity.yaml): the sustainable rate it
//! finds against the built-in target's W / L, and two fixed-rate runs that bracket it.

use std::path::Path;

use serde_json::Value;

use crate::common::{refused, run_profile};

const PROFILE: &str = "profiles/capacity.yaml";

/// The profile's consumer: 8 workers of ack-after-work, a provider answering in 30 ms.
const WORKERS: f64 = 8.0;
const LATENCY_S: f64 = 0.030;

fn capacity_of(s: &Value) -> &Value {
    let c = &s["capacity"];
    assert!(c.is_object(), "a ramp run has a capacity: {s}");
    c
}

fn rate(c: &Value, key: &str) -> f64 {
    c[key].as_f64().unwrap_or_else(|| panic!("{key}: {c}"))
}

/// A fixed-rate run of the profile at `per_s` (uniform gaps) for 120 s: its summary.
fn fixed_rate(per_s: f64) -> Value {
    let arrival = format!("workload.arrival={{rate_per_s: {per_s}, process: uniform}}");
    let r = run_profile(
        Path::new(PROFILE),
        &["--set", &arrival, "--set", "run.duration=120s"],
    );
    assert_eq!(r.code(), 0, "{}", r.stderr());
    r.summary()
}

#[test]
fn the_capacity_run_finds_w_over_l_and_fixed_rate_runs_bracket_it() {
    let r = run_profile(Path::new(PROFILE), &[]);
    assert_eq!(r.code(), 0, "{}", r.stderr());
    let s = r.summary();
    let c = capacity_of(&s);
    // W / L = 8 / 0.030 s = 266.7/s. The ramp's steps are 100, 120, ..., 340/s: 260/s is kept
    // up with, 280/s falls behind (the oldest message waits 20 s x (1 - 266.7 / 280) = 0.95 s
    // longer over the step, past the 0.4 s slack).
    let capacity = WORKERS / LATENCY_S;
    let sustainable = rate(c, "sustainable_per_s");
    assert!(
        (sustainable - capacity).abs() <= 0.10 * capacity,
        "sustainable {sustainable}/s, W / L {capacity:.1}/s"
    );
    assert_eq!(sustainable, 260.0, "{c}");
    assert_eq!(rate(c, "first_behind_per_s"), 280.0, "{c}");
    // Offered 280/s, the consumer completes what it can: W / L within 1%.
    let done = rate(c, "completed_when_behind_per_s");
    assert!((done - capacity).abs() <= 0.01 * capacity, "{done}");
    // Every step ran: (340 - 100) / 20 + 1 = 13, and nothing was lost on the way.
    assert_eq!(c["steps"].as_array().map(Vec::len), Some(13));
    assert_eq!(
        (s["lost"].as_u64(), s["duplicate_effects"].as_u64()),
        (Some(0), Some(0))
    );
    // The reports show it too.
    let md = std::fs::read_to_string(r.dir.path().join("summary.md")).expect("summary.md");
    assert!(md.contains("| sustainable rate | 260/s |"), "{md}");
    assert!(r
        .stdout()
        .contains("Capacity (arrival rate ramped in steps)"));

    // The acceptance check: fixed-rate runs 5% under and over the rate found. Under it
    // (247/s), the oldest message is never older than one handler and a gap: about 30 ms.
    // Over it (273/s), the consumer completes 266.7 of 273 each second: the oldest message
    // waits 120 s x (1 - 266.7 / 273) = 2.8 s by the end of publishing. The rate where the
    // backlog starts to grow lies between them, within 5% of the rate found.
    let (lower, upper) = (0.95 * sustainable, 1.05 * sustainable);
    let below = fixed_rate(lower);
    let above = fixed_rate(upper);
    let age = |s: &Value| s["max_oldest_age_s"].as_f64().expect("max_oldest_age_s");
    let slack = rate(c, "slack_s");
    assert!(
        age(&below) <= 0.1,
        "{lower}/s: the backlog stays bounded: {}",
        age(&below)
    );
    assert!(
        age(&above) > slack,
        "{upper}/s: the backlog grows: {}",
        age(&above)
    );
    assert!(age(&above) > 2.0, "{}", age(&above));
    // A fixed rate has no capacity section: summary.json is as before.
    assert!(below.get("capacity").is_none());
}

#[test]
fn a_broken_ramp_is_refused_naming_its_field() {
    let e = refused(
        &["check", PROFILE],
        &["--set", "workload.arrival.ramp.to=50"],
    );
    assert!(
        e.contains("workload.arrival.ramp.to: must be at least from (100), got 50"),
        "{e}"
    );
    // 13 steps of 20 s do not fit in 200 s.
    let e = refused(&["run", PROFILE], &["--set", "run.duration=200s"]);
    assert!(
        e.contains(
            "workload.arrival.ramp: lasts 13 steps of 20s = 4m20s, longer than run.duration \
             (3m20s)"
        ),
        "{e}"
    );
    let e = refused(
        &["check", PROFILE],
        &["--set", "workload.arrival.rate_per_s=5"],
    );
    assert!(
        e.contains("workload.arrival: give only one of every, rate_per_s, at, ramp"),
        "{e}"
    );
}
