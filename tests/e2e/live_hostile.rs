//! A hostile consumer against each real broker's proxy: worker 1 sends its proxy bytes no
//! broker takes (tests/e2e/hostile_worker.py), worker 2 is the example consumer. The run ends
//! on time with its report, which names worker 1's broken connection and why; it deletes what
//! it created, exits with its verdict, and worker 2's counts are whole. A panic injected in a
//! proxy task (`ACKBENCH_TEST_PROXY_PANIC`, honoured by debug builds only) ends one connection
//! the same way.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::common::{have_python_module, root, service_up, stderr, summary_of, temp_profile};
use crate::live::workers_left;

/// A short run of `kind` (`broker` is its YAML), 8 messages over 4 s to 2 workers: worker 1
/// hostile (`mode`), worker 2 the example consumer `normal`.
fn profile(kind: &str, broker: &str, mode: &str, normal: &str, marker: &str) -> String {
    let hostile = root().join("tests/e2e/hostile_worker.py");
    let normal = root().join("targets/python").join(normal);
    format!(
        r#"
name: live-hostile-{kind}
mode: live
seed: 1
run: {{ duration: 4s, drain: 40s }}
broker: {broker}
workload: {{ arrival: {{ every: 500ms }}, count: 8 }}
consumer:
  command: [python3, "{}", {mode}, {kind}, "{}"]
  workers: 2
  restart_after: 1s
  env: {{ ACKBENCH_TEST_MARKER: "{marker}" }}
provider:
  effect_at: request
  latency: {{ dist: uniform, min: 20ms, max: 50ms }}
budgets: {{ duplicate_rate: 0, lost: 0 }}
"#,
        hostile.display(),
        normal.display()
    )
}

/// Runs `text` live (with `env` set for ackbench), within 3 minutes: its pid, exit code,
/// stderr, summary.
fn run(text: &str, env: &[(&str, &str)]) -> (u32, Option<i32>, String, Value) {
    let (_dir, path) = temp_profile(text);
    let out = tempfile::tempdir().expect("temp dir");
    let started = Instant::now();
    let child = Command::new(env!("CARGO_BIN_EXE_ackbench"))
        .args(["run", path.to_str().unwrap(), "--out"])
        .arg(out.path())
        .arg("--quiet")
        .envs(env.iter().copied())
        .current_dir(root())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("ackbench starts");
    let pid = child.id();
    let o = child.wait_with_output().expect("ackbench runs");
    assert!(
        started.elapsed() < Duration::from_secs(180),
        "the run ended on time"
    );
    let summary = summary_of(out.path());
    let md = std::fs::read_to_string(out.path().join("summary.md")).unwrap_or_default();
    assert!(
        md.contains("BROKEN CONNECTIONS"),
        "summary.md notes it: {md}"
    );
    (pid, o.status.code(), stderr(&o), summary)
}

/// Every broken connection was worker 1's, and the first says `why`; the 8 messages were
/// all done once by worker 2; the verdict passed (exit 0); no worker is left.
fn check(code: Option<i32>, err: &str, s: &Value, why: &str, marker: &str) {
    assert_eq!(code, Some(0), "the run's verdict, not a crash: {err}");
    let broken = s["broken_connections"]
        .as_array()
        .expect("broken connections");
    assert!(!broken.is_empty(), "{s}");
    assert!(broken.iter().all(|b| b["worker"] == 1), "{s}");
    let first = broken[0]["why"].as_str().unwrap_or_default();
    assert!(first.contains(why), "{first}");
    let counts: Vec<_> = [
        "messages",
        "effects",
        "duplicate_effects",
        "lost",
        "unfinished",
    ]
    .iter()
    .map(|k| s[*k].as_u64())
    .collect();
    assert_eq!(
        counts,
        [Some(8), Some(8), Some(0), Some(0), Some(0)],
        "{err}"
    );
    assert_eq!(workers_left(marker), Vec::<String>::new(), "no worker left");
}

fn marker(kind: &str) -> String {
    format!("hostile-{kind}-{}", std::process::id())
}

#[test]
fn a_reply_nested_10000_deep_and_nested_commands_break_one_redis_connection_each() {
    if !service_up("Redis", 6379) || !have_python_module("redis", "redis") {
        return;
    }
    let m = marker("redis");
    let text = profile(
        "redis-streams",
        "{ kind: redis-streams, min_idle: 30s, max_deliveries: 3 }",
        "bomb",
        "redis_streams_ack_after_work.py",
        &m,
    );
    let (pid, code, err, s) = run(&text, &[]);
    check(code, &err, &s, "nested deeper than 128", &m);
    // The EVAL's reply, then the 200,000 `*1`: two connections.
    let broken = s["broken_connections"].as_array().unwrap();
    assert_eq!(broken.len(), 2, "{s}");
    assert!(broken[1]["why"]
        .as_str()
        .unwrap()
        .contains("where a bulk string goes"));
    assert_eq!(
        crate::live_redis_streams::keys_of(pid),
        Vec::<String>::new()
    );
}

#[test]
fn a_pub_size_that_wraps_breaks_one_nats_connection() {
    if !service_up("NATS JetStream", 4222) || !have_python_module("nats", "nats-py") {
        return;
    }
    let m = marker("nats");
    let text = profile(
        "nats",
        "{ kind: nats, ack_wait: 30s, max_deliver: 3 }",
        "bomb",
        "nats_ack_after_work.py",
        &m,
    );
    let (pid, code, err, s) = run(&text, &[]);
    check(
        code,
        &err,
        &s,
        "PUB of 18446744073709551584 bytes over the server's max_payload",
        &m,
    );
    assert_eq!(crate::live_nats::streams_of(pid), Vec::<String>::new());
}

#[test]
fn a_frame_over_frame_max_breaks_one_rabbitmq_connection() {
    if !service_up("RabbitMQ", 5672) || !have_python_module("pika", "pika") {
        return;
    }
    let m = marker("rabbitmq");
    let text = profile(
        "rabbitmq",
        "{ kind: rabbitmq }",
        "bomb",
        "rabbitmq_ack_after_work.py",
        &m,
    );
    let (pid, code, err, s) = run(&text, &[]);
    check(
        code,
        &err,
        &s,
        "over the negotiated frame_max (131072): FRAME_ERROR",
        &m,
    );
    assert_eq!(
        crate::live_rabbitmq::left_on_server(pid),
        Vec::<String>::new()
    );
}

#[test]
fn a_negative_request_size_breaks_one_kafka_connection() {
    if !service_up("the Kafka broker (Tansu)", 9092)
        || !have_python_module("confluent_kafka", "confluent-kafka")
    {
        return;
    }
    let m = marker("kafka");
    let text = profile(
        "kafka",
        "{ kind: kafka, partitions: 1 }",
        "bomb",
        "kafka_commit_after_work.py",
        &m,
    );
    let (pid, code, err, s) = run(&text, &[]);
    check(code, &err, &s, "declaring -256 bytes", &m);
    assert_eq!(
        crate::live_kafka::left_on_broker(&[pid]),
        Vec::<String>::new()
    );
}

#[test]
fn a_panic_injected_in_a_proxy_task_ends_that_connection_and_not_the_run() {
    if !service_up("Redis", 6379) || !have_python_module("redis", "redis") {
        return;
    }
    let m = marker("panic");
    let text = profile(
        "redis-streams",
        "{ kind: redis-streams, min_idle: 30s, max_deliveries: 3 }",
        "ping",
        "redis_streams_ack_after_work.py",
        &m,
    );
    let (pid, code, err, s) = run(&text, &[("ACKBENCH_TEST_PROXY_PANIC", "1")]);
    check(
        code,
        &err,
        &s,
        "the proxy's reader panicked: ACKBENCH_TEST_PROXY_PANIC",
        &m,
    );
    assert_eq!(
        crate::live_redis_streams::keys_of(pid),
        Vec::<String>::new()
    );
}
