//! `ackbench size`: the reference incident, the claim-then-send limit, sizing from a recorded
//! latency file, and bad input refused with exit code 2.

use std::path::Path;
use std::time::Duration;

use ackbench::internals::report::analyse;
use ackbench::internals::{profile, run};
use hdrhistogram::serialization::interval_log::{IntervalLogWriterBuilder, Tag};
use hdrhistogram::serialization::V2DeflateSerializer;
use serde_json::Value;

use crate::common::{self, ackbench, root, stderr, stdout};

/// Runs `ackbench size PROFILE EXTRA...` into a temp folder; returns (exit code, sizing.json,
/// stdout).
fn size(profile: &str, extra: &[&str]) -> (i32, Value, String) {
    let dir = tempfile::tempdir().expect("temp dir");
    let out = dir.path().join("sizing");
    let out_s = out.to_str().expect("utf-8 path");
    let mut args = vec!["size", profile, "--out", out_s];
    args.extend_from_slice(extra);
    let o = ackbench(&args);
    let text = std::fs::read_to_string(out.join("sizing.json"))
        .unwrap_or_else(|e| panic!("sizing.json written ({e}); stderr: {}", stderr(&o)));
    for f in ["sizing.md", "sizing.png", "sizing.svg"] {
        assert!(out.join(f).exists(), "{f}");
    }
    let v = serde_json::from_str(&text).expect("sizing.json is JSON");
    (o.status.code().expect("exit code"), v, stdout(&o))
}

#[test]
fn the_reference_incident_gets_a_lease_above_forty_seconds_and_no_duplicates() {
    let (code, v, out) = size("profiles/marlow-thursday.yaml", &[]);
    assert_eq!(code, 0, "{out}");
    let lease = &v["lease"];
    let kind = lease["kind"].as_str().unwrap_or("");
    let timeout = lease["visibility_timeout"].as_f64().unwrap_or(0.0);
    assert!(kind == "heartbeat" || timeout > 40.0, "{lease}");
    let after = &v["verification"]["after"];
    assert_eq!(after["duplicate_effects"], 0, "{after}");
    assert_eq!(after["dlq"], 0);
    assert_eq!(after["lost"], 0);
    let before = &v["verification"]["before"];
    assert_eq!(before["duplicate_effects"], 216);
    assert_eq!(v["duplicates"]["predicted_current"].as_f64(), Some(2.0));
    assert_eq!(v["duplicates"]["observed_current"].as_f64(), Some(2.0));
    assert!(v["alert"]["would_have_fired"].as_bool().unwrap_or(false));
    assert!(out.starts_with("# Sizing: marlow-thursday"), "{out}");
    assert!(out.contains("## Verification"), "{out}");
}

#[test]
fn the_claim_profile_has_no_spare_delivery_after_a_kill_following_the_claim() {
    let (code, v, out) = size("profiles/marlow-thursday-claim.yaml", &[]);
    assert_eq!(code, 0, "{out}");
    let checks = v["checks"].as_array().expect("checks");
    let spare = checks
        .iter()
        .find(|c| c["name"] == "limit_leaves_a_spare")
        .expect("the spare-delivery check");
    assert_eq!(spare["current"], "fail", "{spare}");
    let why = spare["detail_current"].as_str().unwrap_or("");
    for words in [
        "no room for one more try",
        "a limit of 3 leaves no spare delivery",
        "30s lease",
        "2m window",
    ] {
        assert!(why.contains(words), "{words}: {why}");
    }
    let limit = &v["delivery_limit"];
    assert!(limit["recommended"].as_u64().unwrap_or(0) >= 4, "{limit}");
    assert_eq!(spare["recommended"], "pass", "{spare}");
    // Simulated: the kill after the claim ends on the last delivery before, with room after.
    assert_eq!(limit["probe_current"]["fate"], "dead-lettered", "{limit}");
    assert_eq!(limit["probe_recommended"]["fate"], "acked", "{limit}");
    assert_eq!(v["verification"]["after"]["duplicate_effects"], 0);
    assert!(out.contains("no room for one more try"), "{out}");
}

#[test]
fn the_kafka_thursday_gets_six_records_a_poll_instead_of_five_hundred() {
    // 28 handlers of 35 s: the tail is the top of 35 s's HDR bucket, 35,028,991 µs; x1.25 =
    // 43.786 s a record. 500 records a poll: 21,893 s between two polls, past the 5m
    // max.poll.interval.ms; 300 / 43.786 = 6.85, so 6 records fit (262.7 s); 500 would need
    // 21,893 s, rounded up to 8h. The rule changes max_poll_records and keeps the interval.
    let (code, v, out) = size("profiles/brokers/kafka-thursday.yaml", &[]);
    assert_eq!(code, 0, "{out}");
    let poll = &v["poll"];
    assert_eq!(poll["records_current"], 500, "{poll}");
    assert_eq!(poll["records_that_fit"], 6, "{poll}");
    assert_eq!(poll["records_recommended"], 6, "{poll}");
    assert_eq!(poll["change"], "max_poll_records", "{poll}");
    assert_eq!(poll["interval_current_s"].as_f64(), Some(300.0), "{poll}");
    assert_eq!(
        poll["interval_recommended_s"].as_f64(),
        Some(300.0),
        "{poll}"
    );
    assert_eq!(poll["interval_needed_s"].as_f64(), Some(28_800.0), "{poll}");
    assert_eq!(poll["tail_ms"].as_f64(), Some(35_028.991), "{poll}");
    assert_eq!(v["lease"]["visibility_timeout"].as_f64(), Some(300.0));
    assert_eq!(v["recommended"]["poll_records"], 6);
    assert_eq!(v["current"]["poll_records"], 500);
    let sets: Vec<&str> = v["set"]
        .as_array()
        .expect("set")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert!(sets.contains(&"broker.max_poll_records=6"), "{sets:?}");
    assert!(
        !sets
            .iter()
            .any(|s| s.starts_with("broker.max_poll_interval")),
        "{sets:?}"
    );
    // Before: the 8 records past the last commit done twice (the profile's header); after,
    // each poll's 6 records take 210 s, inside the 5 minutes: none.
    assert_eq!(v["verification"]["before"]["duplicate_effects"], 8);
    assert_eq!(v["verification"]["after"]["duplicate_effects"], 0);
    // What the console prints: the row, the section, and what to change.
    assert!(out.contains("| max.poll.records | 500 | **6** |"), "{out}");
    assert!(
        out.contains("## Records per poll (max.poll.records)"),
        "{out}"
    );
    assert!(out.contains("Change max.poll.records to 6"), "{out}");
    assert!(out.contains("--set broker.max_poll_records=6"), "{out}");
    // Workers: 1 order/s x 35.013 s mean handler time (the profile with 6 records a poll) =
    // 35.013 busy, / 0.7 = 50.02: 51 workers. A consumer group keeps one member per partition
    // busy: 51 workers need 51 partitions (now 1, where 2 - 1 = 1 worker already sits idle).
    assert_eq!(v["recommended"]["workers"], 51, "{}", v["workers"]);
    let part = &v["partitions"];
    assert_eq!(
        (
            &part["current"],
            &part["recommended"],
            &part["idle_current"]
        ),
        (&Value::from(1), &Value::from(51), &Value::from(1)),
        "{part}"
    );
    assert_eq!(v["current"]["partitions"], 1);
    assert_eq!(v["recommended"]["partitions"], 51);
    assert!(sets.contains(&"broker.partitions=51"), "{sets:?}");
    let checks = v["checks"].as_array().expect("checks");
    let idle = checks
        .iter()
        .find(|c| c["name"] == "workers_within_partitions")
        .expect("the partitions check");
    assert_eq!(
        (&idle["current"], &idle["recommended"]),
        (&Value::from("fail"), &Value::from("pass"))
    );
    assert_eq!(
        idle["detail_current"],
        "2 workers on 1 partition: a consumer group gives each partition to one member, so 1 \
         of them sits idle"
    );
    assert!(out.contains("| partitions | 1 | **51** |"), "{out}");
    assert!(
        out.contains("## Partitions (consumer group)\n\n**51**."),
        "{out}"
    );
    // No delivery limit to recommend on Kafka, none shown before and after.
    assert_eq!(v["delivery_limit"]["recommended"], 0);
    assert!(out.contains("kafka has no delivery limit to size"), "{out}");
    assert!(out.contains("| max.poll.interval.ms | 5m | 5m |"), "{out}");
    assert!(!out.contains("| p99 / lease |"), "{out}");
    // Another kind's sizing has no poll section, no partitions and no partitions check.
    let (_, sqs, _) = size("profiles/brokers/sqs.yaml", &[]);
    assert!(sqs.get("poll").is_none() && sqs["current"].get("poll_records").is_none());
    assert!(sqs.get("partitions").is_none() && sqs["current"].get("partitions").is_none());
    let sqs_checks = sqs["checks"].as_array().expect("checks");
    assert!(sqs_checks
        .iter()
        .all(|c| c["name"] != "workers_within_partitions"));
}

/// Writes the handler latency of a sim run of `profile` as an HDR interval log, as a report
/// folder's handler-latency.hlog is written.
fn record_latency(profile: &str, to: &Path) {
    let scenario = profile::load(&root().join(profile), &[]).expect("profile loads");
    let record = run::run(&scenario).expect("run completes");
    let m = analyse(&record, 300_000_000_000);
    let mut bytes = Vec::new();
    let mut serializer = V2DeflateSerializer::new();
    let mut log = IntervalLogWriterBuilder::new()
        .add_comment("handler latency, microseconds")
        .begin_log_with(&mut bytes, &mut serializer)
        .expect("log header");
    log.write_histogram(
        &m.latencies.handler.histogram,
        Duration::ZERO,
        Duration::from_nanos(record.end),
        Tag::new("handler"),
    )
    .expect("interval written");
    drop(log);
    std::fs::write(to, bytes).expect("log written");
}

#[test]
fn sizing_from_a_recorded_latency_file_gives_the_same_lease_as_the_profile() {
    for profile in ["profiles/marlow-thursday.yaml", "profiles/healthy.yaml"] {
        let dir = tempfile::tempdir().expect("temp dir");
        let log = dir.path().join("handler-latency.hlog");
        record_latency(profile, &log);
        let (_, from_profile, _) = size(profile, &[]);
        let (code, from_file, out) = size(profile, &["--latency-from", log.to_str().unwrap_or("")]);
        assert_eq!(code, 0, "{out}");
        assert_eq!(from_file["latency_source"]["kind"], "file");
        assert_eq!(from_file["lease"], {
            let mut l = from_profile["lease"].clone();
            l["reason"] = from_file["lease"]["reason"].clone();
            l
        });
        assert_eq!(
            from_file["lease"]["visibility_timeout"], from_profile["lease"]["visibility_timeout"],
            "{profile}"
        );
        assert_eq!(
            from_file["lease"]["tail_ms"], from_profile["lease"]["tail_ms"],
            "{profile}"
        );
    }
}

fn refused(args: &[&str]) -> String {
    common::refused(
        &[
            "size",
            "profiles/marlow-thursday.yaml",
            "--out",
            "/nonexistent/never",
        ],
        args,
    )
}

#[test]
fn bad_latency_files_and_flags_exit_2_and_say_why() {
    let e = refused(&["--latency-from", "no/such/file.hlog"]);
    assert!(
        e.contains("--latency-from no/such/file.hlog: cannot read it"),
        "{e}"
    );
    let e = refused(&["--latency-from", "profiles/healthy.yaml"]);
    assert!(
        e.contains("--latency-from profiles/healthy.yaml: not an HDR histogram interval log"),
        "{e}"
    );
    let e = refused(&["--target-risk", "2"]);
    assert!(
        e.contains("--target-risk 2: must be between 0 and 1"),
        "{e}"
    );
    let e = refused(&["--max-lease", "13h"]);
    assert!(e.contains("at most 12h"), "{e}");
    let e = refused(&["--set", "broker.visibility_timeout=13h"]);
    assert!(e.contains("--set broker.visibility_timeout=13h"), "{e}");
}

#[test]
fn the_help_teaches_with_examples() {
    let h = stdout(&ackbench(&["size", "--help"]));
    assert!(
        h.contains("Examples:") && h.contains("--latency-from handler-latency.hlog"),
        "{h}"
    );
    assert!(h.contains("--target-risk"), "{h}");
}
