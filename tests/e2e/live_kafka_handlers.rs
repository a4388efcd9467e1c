//! Live Kafka's handler latency against the Kafka-protocol broker on this machine (Tansu on
//! 127.0.0.1:9092): librdkafka fetches ahead, so a handler span from one fetch to the next says
//! nothing of the handler. A consumer that commits each record after its 50-100 ms provider
//! call has its handlers timed from each record's hand-over to its commit; one that
//! auto-commits has none timed, and the report says why.

use crate::common::{root, service_up, temp_profile};
use crate::live::run_to_end as run;

#[test]
fn a_commit_after_each_record_times_the_handler_by_its_provider_call() {
    if !service_up("the Kafka broker (Tansu)", 9092) {
        return;
    }
    // The kill profile's run without its kill: 6 records 100 ms apart on 2 partitions, 2
    // workers of the built-in ack-after-work target (a synchronous commit after each record),
    // provider calls of 50 to 100 ms (uniform).
    let text = std::fs::read_to_string(root().join("profiles/brokers/live-kafka-kill.yaml"))
        .expect("the kill profile");
    let chaos =
        "chaos:\n  - kill_worker: { point: call_answered, delivery: 1, worker: 1, times: 1 }\n";
    assert!(text.contains(chaos), "{text}");
    let (_dir, profile) = temp_profile(&text.replace(chaos, ""));
    let (_, code, err, s) = run(&profile, &[]);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(s["effects"], 6, "{s}");
    assert!(s.get("handler_latency_unmeasured").is_none(), "{s}");
    // Each handler: its call (50-100 ms) and its commit's round trip on loopback. The p50 lies
    // in the provider's range, give or take the commit (within 30 ms); not the 0.001 ms of
    // the time from one fetch to the next.
    let p50 = s["handler_latency_ms"]["p50"].as_f64().unwrap();
    assert!((50.0..=130.0).contains(&p50), "handler p50 {p50} ms: {s}");
}

#[test]
fn an_auto_committing_consumer_has_its_handler_latency_said_unmeasurable() {
    if !service_up("the Kafka broker (Tansu)", 9092) {
        return;
    }
    // The shipped auto-commit profile (enable_auto_commit: true, the built-in auto-commit
    // target): no handler latency, the reason in summary.json and summary.md.
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r");
    let profile = root().join("profiles/brokers/live-kafka-auto-commit.yaml");
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_ackbench"))
        .args([
            "run",
            profile.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "--quiet",
        ])
        .current_dir(root())
        .output()
        .expect("ackbench runs");
    assert!(
        o.status.code().is_some_and(|c| c <= 1),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let s = crate::common::summary_of(&out);
    let why = s["handler_latency_unmeasured"].as_str().unwrap_or_default();
    assert!(why.contains("enable.auto.commit"), "{s}");
    assert_eq!(s["handler_latency_ms"]["p50"], 0.0, "{s}");
    let md = std::fs::read_to_string(out.join("summary.md")).unwrap();
    assert!(
        md.contains("Handler latency not measured (see HANDLER LATENCY)"),
        "{md}"
    );
    assert!(md.contains("cannot be measured on this run"), "{md}");
}
