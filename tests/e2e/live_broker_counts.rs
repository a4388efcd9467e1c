//! The broker's own counts in live mode (summary.json's `broker_counts`, broker-samples.csv):
//! on each real broker, a short run of 20 orders whose first 2 are poison (the built-in target
//! crashes on each delivery of one, so the broker gives both up at its delivery limit) ends
//! with the broker's own DLQ depth equal to the run's accounted `dlq` (2) and its backlog at 0.
//! Each run creates its own uniquely named resources and deletes them; the RabbitMQ run is
//! also rendered again from its folder.

use std::path::Path;
use std::process::{Command, Stdio};

use serde_json::Value;

use crate::common::{ackbench, root, service_up, stderr, summary_of};
use crate::live_sqs_endpoint::moto;

/// 20 orders every 5 s at time scale 0.05 (a run of a few wall seconds), the first 2 poison,
/// 3 built-in ack-after-work workers, sampled every 2 s of profile time.
fn profile(broker: &str) -> String {
    format!(
        "name: live-broker-counts\nmode: live\nseed: 5\n\
         run: {{ duration: 100s, drain: 30m, time_scale: 0.05, sample_every: 2s }}\n\
         broker: {broker}\n\
         workload: {{ arrival: {{ every: 5s }}, count: 20, poison: {{ first: 2 }} }}\n\
         consumer: {{ target: ack-after-work, workers: 3, restart_after: 1s }}\n\
         provider: {{ effect_at: request, latency: {{ dist: fixed, value: 200ms }} }}\n"
    )
}

/// Runs `profile` live into `dir/r`; the run's pid (its resources are named
/// `ackbench-<pid>-...`) and its summary.
fn run(dir: &Path, profile: &str) -> (u32, Value) {
    let path = dir.join("profile.yaml");
    std::fs::write(&path, profile).unwrap();
    let out = dir.join("r");
    let child = Command::new(env!("CARGO_BIN_EXE_ackbench"))
        .args([
            "run",
            path.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "--quiet",
        ])
        .current_dir(root())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("ackbench starts");
    let pid = child.id();
    let o = child.wait_with_output().expect("ackbench runs");
    assert!(o.status.code().is_some_and(|c| c <= 1), "{}", stderr(&o));
    (pid, summary_of(&out))
}

/// The broker's final DLQ depth is the run's `dlq` (2: the poison orders), its backlog ends at
/// 0, and every other order was sent once.
fn check(s: &Value) -> &Value {
    let b = &s["broker_counts"];
    assert!(b.is_object(), "broker_counts in {s}");
    assert_eq!(s["dlq"].as_u64(), Some(2), "{s}");
    assert_eq!(s["effects"].as_u64(), Some(18), "{s}");
    assert_eq!(b["dlq"]["final"], s["dlq"], "the broker's DLQ depth: {b}");
    assert_eq!(b["dlq"]["peak"].as_u64(), Some(2), "{b}");
    assert_eq!(b["backlog"]["final"].as_u64(), Some(0), "{b}");
    assert!(b["samples"].as_u64().unwrap_or(0) >= 2, "{b}");
    b
}

#[test]
fn rabbitmq_gives_its_dlq_depth_and_backlog_and_says_why_not_in_flight() {
    if !service_up("RabbitMQ", 5672) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (pid, s) = run(
        dir.path(),
        &profile("{ kind: rabbitmq, consumer_timeout: 600m, delivery_limit: 1 }"),
    );
    let b = check(&s);
    // A passive declare does not count unacked messages: null, and the reason.
    assert!(b["in_flight"].is_null(), "{b}");
    let why = b["unavailable"][0]["reason"].as_str().unwrap_or_default();
    assert!(why.contains("passive declare"), "{b}");
    // Nothing named after the run is left on the server (the DLQ's consumed copy included).
    let left = crate::live_rabbitmq::left_on_server(pid);
    assert_eq!(left, Vec::<String>::new(), "left on the server");
    // The folder renders again from its recorded data, broker samples included.
    let out = dir.path().join("r");
    let csv = std::fs::read_to_string(out.join("broker-samples.csv")).unwrap();
    assert!(csv.starts_with("t_s,dlq,backlog,in_flight\n"), "{csv}");
    assert!(
        csv.lines().skip(1).all(|l| l.ends_with(',')),
        "in-flight cells empty: {csv}"
    );
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    let o = ackbench(&["report", out.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(
        std::fs::read_to_string(out.join("report.html")).unwrap(),
        html
    );
    assert!(
        html.contains("From the broker") && html.contains("chart-broker"),
        "report.html"
    );
    assert!(out.join("charts/broker.svg").exists());
}

#[test]
fn nats_gives_consumer_info_and_max_deliveries_advisories() {
    if !service_up("NATS JetStream", 4222) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (_, s) = run(
        dir.path(),
        &profile("{ kind: nats, ack_wait: 10s, max_deliver: 2 }"),
    );
    let b = check(&s);
    assert_eq!(b["in_flight"]["final"].as_u64(), Some(0), "{b}");
    assert_eq!(b["unavailable"], Value::Array(Vec::new()), "{b}");
}

#[test]
fn redis_streams_gives_xinfo_groups_and_the_dead_streams_length() {
    if !service_up("Redis", 6379) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (_, s) = run(
        dir.path(),
        &profile("{ kind: redis-streams, min_idle: 10s, max_deliveries: 2 }"),
    );
    let b = check(&s);
    assert_eq!(b["in_flight"]["final"].as_u64(), Some(0), "{b}");
}

#[test]
fn an_sqs_endpoint_gives_its_queue_attributes() {
    let Some(m) = moto() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    // A lease of 20 s at time scale 0.05 is 1 s of wall time (SQS takes whole seconds).
    let (_, s) = run(
        dir.path(),
        &profile(&format!(
            "{{ kind: sqs, endpoint: \"http://127.0.0.1:{}\", visibility_timeout: 20s, \
             max_receives: 2 }}",
            m.port
        )),
    );
    let b = check(&s);
    // In flight is given; its last value is not checked: the attributes are approximate, and
    // under load moto's ApproximateNumberOfMessagesNotVisible was once not 0 at the run's
    // last sample.
    assert!(b["in_flight"]["final"].is_u64(), "{b}");
}

#[test]
fn without_the_proxy_a_run_still_counts_effects_and_the_brokers_own_counts() {
    if !service_up("NATS JetStream", 4222) {
        return;
    }
    // `observe: none`: the workers connect to the server itself. No delivery is seen (0, and
    // every message not given up on reads as unfinished: 18), but the provider's effects (18) and the server's
    // MAX_DELIVERIES advisories (2) and counts are.
    let dir = tempfile::tempdir().unwrap();
    let (_, s) = run(
        dir.path(),
        &profile("{ kind: nats, ack_wait: 10s, max_deliver: 2, observe: none }"),
    );
    check(&s);
    assert_eq!(s["deliveries"].as_u64(), Some(0), "{s}");
    assert_eq!(s["unfinished"].as_u64(), Some(18), "{s}");
}
