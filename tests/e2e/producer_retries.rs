//! A retrying producer against a FIFO queue's deduplication window, on the real binary: the
//! shipped profile's minute-7 duplicate in summary.json, the 10-minute window that drops every
//! retry, summaries of runs without a producer unchanged, and `ackbench size` naming the attempt
//! that falls outside the window.

use serde_json::Value;

use crate::common::{ackbench, run_profile, stderr, stdout};

const PROFILE: &str = "profiles/producer-retry-window.yaml";

/// `ackbench run PROFILE --out TMP ARGS...`: (exit code, summary.json, stdout).
fn run(profile: &str, args: &[&str]) -> (i32, Value, String) {
    let r = run_profile(std::path::Path::new(profile), args);
    (r.code(), r.summary(), r.stdout())
}

/// The counts of a retrying producer's run, in the order the tests list them.
pub const PRODUCER_COUNTS: &[&str] = &[
    "messages",
    "deliveries",
    "redeliveries",
    "effects",
    "messages_with_effect",
    "duplicate_effects",
    "lost",
    "dlq",
    "unfinished",
    "duplicate_publishes",
    "publishes_deduplicated",
];

pub fn counts(s: &Value, names: &[&str]) -> Vec<Value> {
    names.iter().map(|n| s[*n].clone()).collect()
}

#[test]
fn the_shipped_profile_sends_a_second_email_per_order_at_minute_seven() {
    // 20 orders; per order sends at 0, 1, 3, 7 minutes; 5-minute window: attempts 2 and 3
    // dropped (40 in all), attempt 4 accepted (20 duplicate publishes): 40 broker messages, each
    // delivered once and emailed once: 40 effects, 20 duplicates (1 per order), rate 1.0.
    let (code, s, out) = run(PROFILE, &[]);
    assert_eq!(code, 1, "the duplicate_effects budget fails: {out}");
    assert_eq!(
        counts(&s, PRODUCER_COUNTS),
        [20, 40, 0, 40, 20, 20, 0, 0, 0, 20, 40]
            .map(Value::from)
            .to_vec(),
        "{s}"
    );
    assert_eq!(s["duplicate_rate"].as_f64(), Some(1.0));
    assert!(
        out.contains("duplicate publishes")
            && out.contains("a retry accepted as another message; 40 dropped as duplicates"),
        "{out}"
    );
    assert!(
        out.contains(
            "DUPLICATE PUBLISHES: the producer's retries reached the queue as 20 more messages"
        ),
        "{out}"
    );
    // Same profile, same seed: the same bytes but wall_s.
    let (_, again, _) = run(PROFILE, &[]);
    let strip = |mut v: Value| {
        v["wall_s"] = Value::Null;
        v
    };
    assert_eq!(strip(s), strip(again));
}

#[test]
fn a_ten_minute_window_drops_every_retry_and_the_run_passes() {
    // Every retry (the last 7 minutes after its order's first send) is inside 10 minutes: 20
    // broker messages, 60 sends dropped, 20 emails, no duplicate.
    let (code, s, out) = run(PROFILE, &["--set", "broker.dedup_window=10m"]);
    assert_eq!(code, 0, "{out}");
    assert_eq!(
        counts(
            &s,
            &[
                "messages",
                "deliveries",
                "effects",
                "duplicate_effects",
                "duplicate_publishes",
                "publishes_deduplicated",
            ]
        ),
        [20, 20, 20, 0, 0, 60].map(Value::from).to_vec(),
        "{s}"
    );
}

#[test]
fn a_consumer_that_deduplicates_by_key_absorbs_the_second_message() {
    // The queue still carries 40 messages; dedupe-table writes one effect per order.
    let (code, s, out) = run(PROFILE, &["--set", "consumer.target=dedupe-table"]);
    assert_eq!(code, 0, "{out}");
    assert_eq!(
        counts(
            &s,
            &[
                "deliveries",
                "effects",
                "duplicate_effects",
                "duplicate_publishes"
            ]
        ),
        [40, 20, 0, 20].map(Value::from).to_vec(),
        "{s}"
    );
}

#[test]
fn a_run_without_producer_or_fifo_writes_no_publish_fields() {
    let (_, s, _) = run("profiles/healthy.yaml", &[]);
    assert!(s.get("duplicate_publishes").is_none(), "{s}");
    assert!(s.get("publishes_deduplicated").is_none(), "{s}");
    // A FIFO queue alone records its sends: nothing to drop with one send per message.
    let (_, s, _) = run("profiles/healthy.yaml", &["--set", "broker.fifo=true"]);
    assert_eq!(s["duplicate_publishes"], 0, "{s}");
    assert_eq!(s["publishes_deduplicated"], 0, "{s}");
}

#[test]
fn size_names_the_attempt_outside_the_window() {
    let dir = tempfile::tempdir().expect("temp dir");
    let out = dir.path().join("sizing");
    let o = ackbench(&["size", PROFILE, "--out", out.to_str().expect("utf-8 path")]);
    let text = std::fs::read_to_string(out.join("sizing.json"))
        .unwrap_or_else(|e| panic!("sizing.json ({e}): {}", stderr(&o)));
    let v: Value = serde_json::from_str(&text).expect("JSON");
    let check = v["checks"]
        .as_array()
        .and_then(|c| {
            c.iter()
                .find(|c| c["name"] == "dedup_window_outlives_retries")
        })
        .cloned()
        .unwrap_or_default();
    assert_eq!(check["current"], "fail", "{check}");
    let detail = check["detail_current"].as_str().unwrap_or("");
    assert_eq!(
        detail,
        "attempt 4 of the producer (at 7m: backoff 1m + 2m + 4m) falls outside the 5m \
         deduplication window: the broker accepts it as a second message"
    );
    assert!(stdout(&o).contains(detail), "{}", stdout(&o));
    // A 10-minute window holds every attempt.
    let o = ackbench(&[
        "size",
        PROFILE,
        "--out",
        out.to_str().expect("utf-8 path"),
        "--dedup-window",
        "10m",
    ]);
    let text = std::fs::read_to_string(out.join("sizing.json")).expect("sizing.json");
    assert!(
        text.contains("every attempt of the producer falls inside the 10m deduplication window"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn a_poison_head_blocks_its_message_group_only() {
    // Four messages 1 s apart in two groups (msg-1, msg-3 in group-1; msg-2, msg-4 in group-2);
    // msg-1 is poison: delivered at 0, 30, 60 s, dead-lettered at 90 s. group-1 is blocked from
    // msg-3's publish at 2 s to 90 s (88 s); group-2 never waits. 3 emails, 1 DLQ entry.
    let (_dir, path) = crate::common::temp_profile(
        "name: groups
run: { duration: 4s, drain: 1h }
broker: { kind: sqs, visibility_timeout: 30s, max_receives: 3, fifo: true }
workload: { arrival: { every: 1s }, count: 4, poison: { keys: [msg-1] }, groups: 2 }
consumer: { target: ack-after-work, workers: 2, restart_after: 1s }
provider: { effect_at: request, latency: { dist: fixed, value: 1s } }
",
    );
    let (code, s, out) = run(path.to_str().expect("utf-8 path"), &[]);
    assert_eq!(code, 0, "{out}");
    assert_eq!(
        counts(&s, &["messages", "deliveries", "effects", "dlq"]),
        [4, 6, 3, 1].map(Value::from).to_vec(),
        "{s}"
    );
    assert_eq!(s["virtual_s"].as_f64(), Some(91.0));
    assert_eq!(
        s["message_groups"],
        serde_json::json!([
            { "group": "group-1", "messages": 2, "max_backlog": 2, "blocked_s": 88.0 },
            { "group": "group-2", "messages": 2, "max_backlog": 1, "blocked_s": 0.0 }
        ])
    );
    assert!(out.contains("Message groups (FIFO)"), "{out}");
    assert!(
        out.contains("group-1")
            && out.contains("88.000 s  blocked behind its head; 2 messages, backlog at most 2"),
        "{out}"
    );
}

#[test]
fn a_run_with_message_groups_charts_their_blocking_in_report_html() {
    // The two-group scenario above: the chart shows group-1 blocked 88 s, group-2 not at all.
    let (_pdir, path) = crate::common::temp_profile(
        "name: groups
run: { duration: 4s, drain: 1h }
broker: { kind: sqs, visibility_timeout: 30s, max_receives: 3, fifo: true }
workload: { arrival: { every: 1s }, count: 4, poison: { keys: [msg-1] }, groups: 2 }
consumer: { target: ack-after-work, workers: 2, restart_after: 1s }
provider: { effect_at: request, latency: { dist: fixed, value: 1s } }
",
    );
    let dir = tempfile::tempdir().expect("temp dir");
    let out = dir.path().to_str().expect("utf-8 path");
    let o = ackbench(&["run", path.to_str().expect("utf-8 path"), "--out", out]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    for f in ["charts/groups.svg", "charts/groups.png"] {
        assert!(dir.path().join(f).exists(), "{f}");
    }
    let svg = std::fs::read_to_string(dir.path().join("charts/groups.svg")).expect("svg");
    assert!(
        svg.contains(
            "1 of 2 groups blocked at some point; the most, group-1, for 88 s (backlog up to 2)"
        ),
        "{svg}"
    );
    let html = std::fs::read_to_string(dir.path().join("report.html")).expect("report.html");
    assert!(
        html.contains("id=\"chart-groups\""),
        "the chart is in report.html"
    );
    assert!(
        html.contains("Message groups (FIFO)"),
        "the table is in report.html"
    );
    // A run without groups has no such chart.
    let plain = tempfile::tempdir().expect("temp dir");
    let o = ackbench(&[
        "run",
        "profiles/healthy.yaml",
        "--out",
        plain.path().to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(!plain.path().join("charts/groups.svg").exists());
}
