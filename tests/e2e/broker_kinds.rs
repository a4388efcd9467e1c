//! The broker kinds: the Thursday on each kind (profiles/brokers/) and the errors of a kind's
//! keys.

use serde_json::Value;

use crate::common::{ackbench, run_profile, stderr, temp_profile, CORE_COUNTS};

/// Runs a profile into a temp folder; returns (exit code, summary.json).
fn run(profile: &str) -> (i32, Value) {
    let r = run_profile(std::path::Path::new(profile), &[]);
    (r.code(), r.summary())
}

fn counts(s: &Value) -> Vec<u64> {
    crate::common::counts(s, &CORE_COUNTS)
}

#[test]
fn the_thursday_on_nats_and_redis_streams_sends_two_emails_per_order() {
    // Delivery 2 at 30 s (AckWait / min idle), delivery 1's late ack accepted: see the
    // profiles' header comments.
    for p in [
        "profiles/brokers/nats.yaml",
        "profiles/brokers/redis-streams.yaml",
    ] {
        let (code, s) = run(p);
        assert_eq!(code, 1, "{p}: duplicate_rate fails");
        assert_eq!(counts(&s), [108, 216, 216, 108, 0, 0], "{p}");
        assert_eq!(s["stale_acks"], 216, "{p}");
        // Delivery 2 comes at 30 s while delivery 1 still calls the provider (31-40 s): one
        // overlapping execution per order; delivery 1's ack then settles the message.
        assert_eq!(s["overlapping_executions"], 108, "{p}");
    }
}

#[test]
fn the_thursday_on_rabbitmq_sends_one_email_per_order() {
    let (code, s) = run("profiles/brokers/rabbitmq.yaml");
    assert_eq!(code, 0, "every budget holds");
    assert_eq!(counts(&s), [108, 108, 108, 0, 0, 0]);
    assert_eq!(s["stale_acks"], 0);
    // The consumer timeout outlasts every call: no message is delivered twice.
    assert_eq!(s["overlapping_executions"], 0);
}

#[test]
fn the_thursday_on_sqs_is_the_reference_incident() {
    let (code, s) = run("profiles/brokers/sqs.yaml");
    assert_eq!(code, 1);
    assert_eq!(counts(&s), [108, 324, 324, 216, 108, 0]);
    // Each order: delivery 2 at 30 s while delivery 1 works until 31-40 s, delivery 3 at 60 s
    // while delivery 2 works until 61-70 s: 2 overlapping executions, 216 in all.
    assert_eq!(s["overlapping_executions"], 216);
}

#[test]
fn the_kafka_thursday_processes_the_batch_past_the_last_commit_twice() {
    // Worker 1 exceeds max.poll.interval.ms in its second batch; orders 13-20 are done again by
    // worker 2 from the committed offset, worker 1's 8 commits fenced: see the profile's header.
    let (code, s) = run("profiles/brokers/kafka-thursday.yaml");
    assert_eq!(code, 1, "duplicate_rate fails");
    assert_eq!(counts(&s), [20, 28, 28, 8, 0, 0]);
    assert_eq!(s["stale_acks"], 8);
    // Worker 2 fetches orders 13-20 while worker 1 still works through its batch of them:
    // 8 overlapping executions.
    assert_eq!(s["overlapping_executions"], 8);
}

/// `ackbench check` on `text`: exit 2 and stderr containing `expected` (`{path}` = the file).
pub(crate) fn refused(text: &str, expected: &str) {
    let (_dir, path) = temp_profile(text);
    let path = path.display().to_string();
    let out = ackbench(&["check", &path]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "stderr: {err}");
    let expected = expected.replace("{path}", &path);
    assert!(
        err.contains(&expected),
        "stderr lacks\n  {expected}\nit is\n  {err}"
    );
}

pub(crate) const BASE: &str = "\
name: e2e
run: { duration: 10m }
workload: { arrival: { every: 50s } }
consumer: { target: ack-after-work }
";

#[test]
fn a_key_of_another_kind_is_refused_naming_the_kinds_keys() {
    refused(
        &format!("{BASE}broker:\n  kind: nats\n  visibility_timeout: 30s\n"),
        "{path}:7:3: broker.visibility_timeout: `visibility_timeout` is a key of broker kind sqs, \
         not of nats; the keys of nats are: kind, url, ack_wait, max_deliver, backoff, max_ack_pending, \
         observe, queue\n",
    );
    refused(
        &format!("{BASE}broker: {{ kind: rabbitmq, min_idle: 30s }}\n"),
        "{path}:5:27: broker.min_idle: `min_idle` is a key of broker kind redis-streams, not of \
         rabbitmq; the keys of rabbitmq are: kind, url, queue_type, consumer_timeout, \
         timeout_check_every, delivery_limit, prefetch, dead_letter",
    );
    refused(
        &format!("{BASE}broker: {{ kind: sqs, url: \"redis://127.0.0.1\" }}\n"),
        "broker.url: `url` is a key of broker kinds rabbitmq, nats, redis-streams, kafka, kafka-share, \
         not of sqs; the keys of sqs are: kind, endpoint, visibility_timeout, max_receives, stale_ack",
    );
    refused(
        &format!("{BASE}broker: {{ stale_ack: delete, kind: redis-streams }}\n"),
        "broker.stale_ack: `stale_ack` is a key of broker kind sqs, not of redis-streams",
    );
}

#[test]
fn a_kinds_keys_are_checked() {
    refused(
        &format!("{BASE}broker: {{ kind: rabbitmq, queue_type: classic, delivery_limit: 3 }}\n"),
        "broker.delivery_limit: a classic queue has no delivery limit",
    );
    refused(
        &format!("{BASE}broker: {{ kind: nats, backoff: [1s, 5s], max_deliver: 2 }}\n"),
        "broker.max_deliver: must be more than the number of backoff values (2)",
    );
    refused(
        &format!("{BASE}broker: {{ kind: kinesis }}\n"),
        "broker.kind: unknown variant `kinesis`, expected one of `embedded`, `sqs`, `rabbitmq`, \
         `nats`, `redis-streams`, `kafka`, `kafka-share`",
    );
}

#[test]
fn every_bad_kafka_value_is_refused_naming_its_field() {
    for (broker, message) in [
        (
            "{ kind: kafka, partitions: 0 }",
            "broker.partitions: must be at least 1, got 0",
        ),
        (
            "{ kind: kafka, max_poll_records: 0 }",
            "broker.max_poll_records: must be at least 1, got 0",
        ),
        (
            "{ kind: kafka, session_timeout: 10s, heartbeat_interval: 10s }",
            "broker.heartbeat_interval: must be less than session_timeout (10s), got 10s",
        ),
        (
            "{ kind: kafka, max_poll_interval: 0s }",
            "broker.max_poll_interval: must be more than 0s",
        ),
        (
            "{ kind: kafka, auto_commit_interval: 0s }",
            "broker.auto_commit_interval: must be more than 0s",
        ),
        (
            "{ kind: kafka, assignment: round-robin }",
            "broker.assignment: unknown variant `round-robin`, expected `range` or \
             `cooperative-sticky`",
        ),
        (
            "{ kind: kafka, url: 'http://127.0.0.1:9092' }",
            "broker.url: must be a URL with scheme kafka",
        ),
        (
            "{ kind: kafka, visibility_timeout: 30s }",
            "broker.visibility_timeout",
        ),
    ] {
        refused(&format!("{BASE}broker: {broker}\n"), message);
    }
    // A live profile of the kind is accepted: live runs go to the broker on this machine
    // (docs/kafka-live.md; tests/e2e/live_kafka.rs runs them).
    let (_dir, live) = temp_profile(&format!("{BASE}mode: live\nbroker: {{ kind: kafka }}\n"));
    let o = ackbench(&["check", live.to_str().expect("utf-8 path")]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
}

#[test]
fn a_sweep_over_kinds_carries_the_lease_over_and_matches_the_per_kind_profiles() {
    let dir = tempfile::tempdir().expect("temp dir");
    let out = dir.path().join("sweep");
    let o = ackbench(&[
        "sweep",
        "profiles/marlow-thursday.yaml",
        "--vary",
        "broker.kind=sqs,rabbitmq,nats,redis-streams,kafka-share",
        "--out",
        out.to_str().expect("utf-8 path"),
    ]);
    assert_eq!(o.status.code(), Some(0), "stderr: {}", stderr(&o));
    let table = crate::common::stdout(&o);
    for kind in ["sqs", "rabbitmq", "nats", "redis-streams", "kafka-share"] {
        assert!(
            table.lines().any(|l| l.starts_with(kind)),
            "a row for {kind}:\n{table}"
        );
    }
    let text = std::fs::read_to_string(out.join("sweep.json")).expect("sweep.json");
    let points: Vec<Value> = serde_json::from_str(&text).expect("sweep.json is JSON");
    // Every kind on the profile's own seed: the same incident, so each row is what the kind's
    // profile in profiles/brokers/ gives (but its name and wall time).
    for (point, kind) in points
        .iter()
        .zip(["sqs", "rabbitmq", "nats", "redis-streams"])
    {
        assert_eq!(point["params"]["broker.kind"], kind);
        let (_, mut per_kind) = run(&format!("profiles/brokers/{kind}.yaml"));
        let mut swept = point["summary"].clone();
        for s in [&mut per_kind, &mut swept] {
            let m = s.as_object_mut().expect("an object");
            m.remove("profile");
            m.remove("wall_s");
        }
        if kind != "rabbitmq" {
            // The rabbitmq profile keeps RabbitMQ's delivery_limit default (20); the sweep
            // carries the Thursday's 3 deliveries over as delivery_limit 2. Nothing returns on
            // the Thursday, so the counts agree anyway.
            assert_eq!(swept, per_kind, "{kind}");
        } else {
            assert_eq!(counts(&swept), counts(&per_kind));
        }
    }
    // A share group keeps its 30 s lock (the Thursday's lease anyway) and takes the 3 receives
    // as a delivery count limit of 3 (its profile has Kafka's default 5): 3 deliveries per
    // order, as on SQS.
    assert_eq!(points[4]["params"]["broker.kind"], "kafka-share");
    assert_eq!(counts(&points[4]["summary"]), [108, 324, 324, 216, 108, 0]);
}

#[test]
fn rabbitmq_without_a_dead_letter_exchange_drops_at_the_limit() {
    // delivery_limit 1: every delivery's worker is killed at `received`; its connection closes
    // and the delivery returns. Return 1 requeues (delivery 2 at once), return 2 is past the
    // limit: with a DLX the message is dead-lettered, without one it is dropped, and a message
    // the broker no longer holds that has no effect is lost.
    for (dead_letter, dlq, lost) in [(true, 1, 0), (false, 0, 1)] {
        let (_dir, path) = temp_profile(&format!(
            "name: drop\nrun: {{ duration: 1s, drain: 10m }}\nbroker: {{ kind: rabbitmq, \
             delivery_limit: 1, dead_letter: {dead_letter} }}\nworkload: {{ arrival: {{ every: \
             1s }}, count: 1 }}\nconsumer: {{ target: ack-after-work, workers: 2 }}\nchaos:\n  - \
             kill_worker: {{ point: received }}\n"
        ));
        let (_, s) = run(path.to_str().expect("utf-8 path"));
        assert_eq!(s["deliveries"], 2, "dead_letter: {dead_letter}");
        assert_eq!(s["dlq"], dlq, "dead_letter: {dead_letter}");
        assert_eq!(s["lost"], lost, "dead_letter: {dead_letter}");
    }
}

#[test]
fn a_sweep_varies_a_kinds_own_lease_key() {
    // The Thursday on NATS: an AckWait of 45 s outlasts every 31-40 s call (one delivery per
    // order, no duplicate); 20 s does not (delivery 2 at 20 s, 2 emails per order).
    let dir = tempfile::tempdir().expect("temp dir");
    let out = dir.path().join("sweep");
    let o = ackbench(&[
        "sweep",
        "profiles/brokers/nats.yaml",
        "--vary",
        "broker.ack_wait=20s,45s",
        "--out",
        out.to_str().expect("utf-8 path"),
    ]);
    assert_eq!(o.status.code(), Some(0), "stderr: {}", stderr(&o));
    let text = std::fs::read_to_string(out.join("sweep.json")).expect("sweep.json");
    let points: Vec<Value> = serde_json::from_str(&text).expect("sweep.json is JSON");
    let rates: Vec<f64> = points
        .iter()
        .map(|p| p["summary"]["duplicate_rate"].as_f64().expect("a rate"))
        .collect();
    assert_eq!(rates, vec![1.0, 0.0]);
}

#[test]
fn a_server_url_of_the_wrong_scheme_or_no_url_at_all_is_refused() {
    refused(
        &format!("{BASE}broker: {{ kind: rabbitmq, url: \"redis://127.0.0.1:6379\" }}\n"),
        "broker.url: must be a URL with scheme amqp or amqps, got `redis` in `redis://127.0.0.1:6379`",
    );
    refused(
        &format!("{BASE}broker: {{ kind: nats, url: \"127.0.0.1:4222\" }}\n"),
        "broker.url: is not a URL (relative URL without a base): `127.0.0.1:4222`",
    );
    refused(
        &format!("{BASE}broker: {{ kind: redis-streams, url: \"redis://\" }}\n"),
        "broker.url: names no host: `redis://`",
    );
    refused(
        &format!("{BASE}broker: {{ kind: sqs, endpoint: \"amqp://127.0.0.1\" }}\n"),
        "broker.endpoint: must be a URL with scheme http or https, got `amqp`",
    );
}
