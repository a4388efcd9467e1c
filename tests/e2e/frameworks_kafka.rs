//! FastStream on Kafka, both of its Kafka brokers (`faststream.kafka` over aiokafka,
//! `faststream.confluent` over confluent-kafka), installed from PyPI by the test (under
//! ACKBENCH_REQUIRE_SERVICES=1; otherwise skipped with a printed reason) and run unmodified
//! (`profiles/frameworks/faststream/kafka_app.py`, its broker chosen by `KAFKA_CLIENT`) by
//! `profiles/frameworks/faststream-kafka.yaml` against the Kafka-protocol broker on this machine
//! (Tansu on 127.0.0.1:9092, docs/kafka-live.md), the two side by side. Each live run is
//! compared with `--mode sim` of the same profile and the built-in target that commits as
//! FastStream does; the run's topic and consumer group are gone afterwards and no worker is left.
//!
//! Measured, not loosened: a live delivery is a fetch, and both clients fetch a partition's
//! records ahead of the handler, so the killed worker's prefetched records count as deliveries
//! where the sim model counts only those handed to the application.

use serde_json::Value;

use crate::common::{python_with, root, service_up};
use crate::live::{run_to_end, workers_left};
use crate::live_kafka::{left_on_broker, SAME};

const PROFILE: &str = "profiles/frameworks/faststream-kafka.yaml";
/// FastStream's Kafka extras (aiokafka, confluent-kafka) and its CLI (`faststream run`, typer);
/// `AckPolicy` came with 0.6.
const FASTSTREAM: &str = "faststream[kafka,confluent,cli]>=0.6";
/// The app's `KAFKA_CLIENT` for each of FastStream's Kafka brokers, by the client under it.
const APPS: [(&str, &str); 2] = [("aiokafka", "aiokafka"), ("confluent-kafka", "confluent")];

/// What the live run and the sim model must agree on: the live Kafka tests' counts (messages,
/// effects, duplicates, lost, unfinished, stale acks, rebalances, fenced commits), then kills.
fn counts(s: &Value) -> Vec<u64> {
    let keys: Vec<&str> = SAME.iter().copied().chain(["worker_kills"]).collect();
    crate::common::counts(s, &keys)
}

/// Tansu answers and python3 has FastStream's Kafka broker (installed when required).
fn ready() -> bool {
    service_up("the Kafka broker (Tansu)", 9092)
        && python_with("faststream.kafka, aiokafka", FASTSTREAM)
        && python_with("faststream.confluent, confluent_kafka", FASTSTREAM)
        && python_with("typer", FASTSTREAM)
}
/// The shipped profile live with `args`, once with each of [`APPS`], the runs side by side;
/// each client's summary, after checking its run's topic, group and workers are gone.
fn live(tag: &str, args: &[&str]) -> Vec<(&'static str, Value)> {
    live_with(&APPS, tag, args)
}

/// [`live`] with the clients of `apps` only.
fn live_with(
    apps: &[(&'static str, &'static str)],
    tag: &str,
    args: &[&str],
) -> Vec<(&'static str, Value)> {
    let runs: Vec<_> = apps
        .iter()
        .map(|&(client, kafka_client)| {
            let marker = format!("faststream-kafka-{tag}-{client}-{}", std::process::id());
            let env = format!(
                "consumer.env={{ KAFKA_CLIENT: {kafka_client}, ACKBENCH_TEST_MARKER: \"{marker}\" }}"
            );
            let mut all = vec!["--set".to_string(), env];
            all.extend(args.iter().map(|a| a.to_string()));
            let run = std::thread::spawn(move || {
                let all: Vec<&str> = all.iter().map(String::as_str).collect();
                run_to_end(&root().join(PROFILE), &all)
            });
            (client, marker, run)
        })
        .collect();
    runs.into_iter()
        .map(|(client, marker, run)| {
            let (pid, code, err, s) = run.join().expect("the live run");
            assert!(
                code.is_some_and(|c| c <= 1),
                "{client}: exit {code:?}: {err}"
            );
            assert!(!err.contains("could not remove"), "{client}: {err}");
            assert_eq!(
                left_on_broker(&[pid]),
                Vec::<String>::new(),
                "{client}: left"
            );
            assert_eq!(
                workers_left(&marker),
                Vec::<String>::new(),
                "{client}: workers"
            );
            (client, s)
        })
        .collect()
}

/// The shipped profile as its sim model (`--mode sim`) with `args`, the built-in `target`
/// standing in for FastStream (`consumer.sim`; the profile's own is ack-after-work).
fn sim(target: &str, args: &[&str]) -> Value {
    let target = format!("consumer.sim.target={target}");
    let mut all = vec!["--mode", "sim", "--set", target.as_str()];
    all.extend_from_slice(args);
    let (_, code, err, s) = run_to_end(&root().join(PROFILE), &all);
    assert!(code.is_some_and(|c| c <= 1), "sim: exit {code:?}: {err}");
    s
}

/// Each live run's counts are `sim`'s, with 2 deliveries more: the client had fetched worker
/// 1's partition, 3 records, and handed out 1 when the kill came (a live delivery is a fetch).
fn like_sim(runs: &[(&str, Value)], sim: &Value) {
    for (client, live) in runs {
        assert_eq!(
            counts(live),
            counts(sim),
            "{client} live against sim: {live}"
        );
        assert_eq!(
            live["deliveries"].as_u64(),
            sim["deliveries"].as_u64().map(|d| d + 2),
            "{client}: a live delivery is a fetch: {live}"
        );
    }
}

#[test]
fn faststream_on_kafka_committing_after_the_handler_duplicates_the_killed_record_like_the_sim() {
    if !ready() {
        return;
    }
    // AckPolicy.ACK (the profile's enable_auto_commit: false): FastStream commits a record's
    // offset after its handler returns, as ack-after-work does. Worker 1 dies after its first
    // email and before that commit; worker 2 takes its partition over from the committed
    // offset and sends the email again: 6 messages, 7 effects, 1 duplicate, 0 lost, 1 kill,
    // 2 rebalances (the group forming, the dead member's removal).
    let runs = live("ack", &[]);
    let sim = sim("ack-after-work", &[]);
    assert_eq!(counts(&sim), [6, 7, 1, 0, 0, 0, 2, 0, 1], "{sim}");
    like_sim(&runs, &sim);
    for (client, live) in &runs {
        assert_eq!(live["verdict"], "pass", "{client}");
    }
}

#[test]
fn faststream_on_kafka_auto_committing_hands_out_one_record_at_a_time_and_loses_none() {
    if !ready() {
        return;
    }
    // FastStream's default, AckPolicy.ACK_FIRST: the client's auto-commit (every 100 ms here)
    // commits the records handed to the handler, which FastStream takes one at a time (aiokafka's
    // getone, one record a poll on confluent-kafka): max_poll_records (3) shapes only batch
    // subscribers. Each call lasts 1 s, so worker 1's first record is committed before the
    // kill at its answer; its partition's other 2 records were never handed out, so worker 2
    // processes them once the dead member is removed: 6 effects, 0 duplicates, 0 lost, 2
    // rebalances. That is the sim model's auto-commit target with max_poll_records 1.
    let auto = [
        "--set",
        "broker.enable_auto_commit=true",
        "--set",
        "broker.auto_commit_interval=100ms",
        "--set",
        "provider.latency={dist: fixed, value: 1s}",
    ];
    let runs = live("auto", &auto);
    let one_at_a_time: Vec<&str> = auto
        .iter()
        .copied()
        .chain(["--set", "broker.max_poll_records=1"])
        .collect();
    let sim_one = sim("auto-commit", &one_at_a_time);
    assert_eq!(counts(&sim_one), [6, 6, 0, 0, 0, 0, 2, 0, 1], "{sim_one}");
    like_sim(&runs, &sim_one);
    // The difference, named: the auto-commit target polls max_poll_records (3) at once and
    // librdkafka commits all 3 before the work, so the kill loses worker 1's other 2 records
    // (4 effects, 2 lost); the run ends before the dead member's removal (1 rebalance).
    let sim_batch = sim("auto-commit", &auto);
    assert_eq!(
        counts(&sim_batch),
        [6, 4, 0, 2, 0, 0, 1, 0, 1],
        "{sim_batch}"
    );
}

#[test]
fn a_group_that_starts_at_the_logs_end_reads_nothing_and_the_report_says_why() {
    if !ready() {
        return;
    }
    // The shipped app with aiokafka's and librdkafka's default, auto_offset_reset="latest":
    // the group forms (about 3 s after the workers start, Tansu's join pause) after all 6
    // records were published (every 100 ms from the start), so its consumers start past them
    // and read none: 6 messages, 0 effects, 6 unfinished; late_group names the 6 unread, and
    // the reports say which setting reads them (the OFFSET RESET note: report/late_group.rs).
    let app = tempfile::tempdir().unwrap();
    let shipped =
        std::fs::read_to_string(root().join("profiles/frameworks/faststream/kafka_app.py"))
            .unwrap();
    let latest = shipped.replace(
        "auto_offset_reset=\"earliest\"",
        "auto_offset_reset=\"latest\"",
    );
    assert_ne!(
        latest, shipped,
        "the shipped app reads from the earliest offset"
    );
    std::fs::write(app.path().join("kafka_app.py"), latest).unwrap();
    let command = format!(
        "consumer.command=[python3, -m, faststream, run, --app-dir, {}, \"kafka_app:app\"]",
        app.path().display()
    );
    // aiokafka's app only: confluent-kafka's group, formed late, was once seen left on Tansu
    // after the run (its deletion raced the group's last member leaving).
    for (client, s) in live_with(&APPS[..1], "latest", &["--set", &command]) {
        assert_eq!(
            crate::common::counts(&s, &["messages", "effects", "unfinished", "deliveries"]),
            [6, 0, 6, 0],
            "{client}: {s}"
        );
        assert_eq!(s["late_group"]["unread"], 6, "{client}: {s}");
        let formed = s["late_group"]["formed_s"].as_f64().unwrap();
        assert!(
            formed > s["late_group"]["first_publish_s"].as_f64().unwrap(),
            "{client}: {s}"
        );
    }
}
