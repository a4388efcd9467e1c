//! A hostile consumer against each real broker's proxy: worker 1 sends its proxy bytes no
//! broker takes (tests/e2e/hostile_worker.py), worker 2 is the example consumer. The run ends
//! on time with its report, which names worker 1's broken connection and why; it deletes what
//! it created, exits with its verdict, and worker 2's counts are whole. A panic injected in a
//! proxy task (`ACKBENCH_TEST_PROXY_PANIC`, honoured by debug builds only) ends one connection
//! the same way.

use std::time::{Duration, Instant};

use serde_json::Value;

use nix::sys::signal::Signal;

use crate::common::{
    have_python_module, root, service_up, signal, start_with, stderr, summary_of, temp_profile,
    wait_within,
};
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
    let out_dir = out.path().to_str().expect("utf-8 path");
    let child = start_with(
        &["run", path.to_str().unwrap(), "--out", out_dir, "--quiet"],
        env,
    );
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

/// One broker kind: its server, the example consumer's module and script, the profile's
/// `broker:`, and what the run of an ackbench pid left on the server.
struct Kind {
    kind: &'static str,
    server: (&'static str, u16),
    module: (&'static str, &'static str),
    broker: &'static str,
    normal: &'static str,
    left: fn(u32) -> Vec<String>,
}

const REDIS: Kind = Kind {
    kind: "redis-streams",
    server: ("Redis", 6379),
    module: ("redis", "redis"),
    broker: "{ kind: redis-streams, min_idle: 30s, max_deliveries: 3 }",
    normal: "redis_streams_ack_after_work.py",
    left: crate::live_redis_streams::keys_of,
};

/// A run on `k` with worker 1 in `mode` (and `env` for ackbench), checked as [`check`] says
/// with `why`, and for nothing left on the server: its broken connections (`None`: skipped).
fn hostile(k: &Kind, mode: &str, env: &[(&str, &str)], why: &str) -> Option<Vec<Value>> {
    if !service_up(k.server.0, k.server.1) || !have_python_module(k.module.0, k.module.1) {
        return None;
    }
    let m = marker(&format!("{}-{mode}", k.kind));
    let text = profile(k.kind, k.broker, mode, k.normal, &m);
    let (pid, code, err, s) = run(&text, env);
    check(code, &err, &s, why, &m);
    assert_eq!((k.left)(pid), Vec::<String>::new(), "nothing left");
    s["broken_connections"].as_array().cloned()
}

#[test]
fn a_reply_nested_10000_deep_and_nested_commands_break_one_redis_connection_each() {
    let Some(broken) = hostile(&REDIS, "bomb", &[], "nested deeper than 128") else {
        return;
    };
    // The EVAL's reply, then the 200,000 `*1`: two connections.
    assert_eq!(broken.len(), 2, "{broken:?}");
    let second = broken[1]["why"].as_str().unwrap();
    assert!(second.contains("where a bulk string goes"), "{second}");
}

const NATS: Kind = Kind {
    kind: "nats",
    server: ("NATS JetStream", 4222),
    module: ("nats", "nats-py"),
    broker: "{ kind: nats, ack_wait: 30s, max_deliver: 3 }",
    normal: "nats_ack_after_work.py",
    left: crate::live_nats::streams_of,
};

const WRAPS: &str = "PUB of 18446744073709551584 bytes over the server's max_payload (1048576)";

#[test]
fn a_pub_size_that_wraps_breaks_one_nats_connection() {
    hostile(&NATS, "bomb", &[], WRAPS);
}

#[test]
fn sigint_after_a_hostile_worker_ends_the_run_with_its_partial_report() {
    // The overflowing PUB once made the proxy spin, deaf to SIGINT. A 10-minute run: worker 1
    // breaks its connection within its first seconds; SIGINT 5 s in ends the run (exit 3,
    // incomplete) with its report, which names the broken connection, and its stream deleted.
    let k = &NATS;
    if !service_up(k.server.0, k.server.1) || !have_python_module(k.module.0, k.module.1) {
        return;
    }
    let m = marker("nats-sigint");
    let text = profile(k.kind, k.broker, "bomb", k.normal, &m)
        .replace("duration: 4s", "duration: 600s")
        .replace("count: 8", "count: 1200");
    let (_dir, path) = temp_profile(&text);
    let out = tempfile::tempdir().expect("temp dir");
    let out_dir = out.path().to_str().expect("utf-8 path");
    let mut child = start_with(
        &["run", path.to_str().unwrap(), "--out", out_dir, "--quiet"],
        &[],
    );
    std::thread::sleep(Duration::from_secs(5));
    signal(&child, Signal::SIGINT);
    assert_eq!(wait_within(&mut child, Duration::from_secs(30)), Some(3));
    let s = summary_of(out.path());
    assert_eq!(s["complete"], false, "{s}");
    let why = s["broken_connections"][0]["why"]
        .as_str()
        .unwrap_or_default();
    assert!(why.contains(WRAPS), "{s}");
    assert_eq!((k.left)(child.id()), Vec::<String>::new(), "nothing left");
    assert_eq!(workers_left(&m), Vec::<String>::new(), "no worker left");
}

#[test]
fn a_frame_over_frame_max_breaks_one_rabbitmq_connection() {
    let rabbitmq = Kind {
        kind: "rabbitmq",
        server: ("RabbitMQ", 5672),
        module: ("pika", "pika"),
        broker: "{ kind: rabbitmq }",
        normal: "rabbitmq_ack_after_work.py",
        left: crate::live_rabbitmq::left_on_server,
    };
    let why = "over the negotiated frame_max (131072): FRAME_ERROR";
    hostile(&rabbitmq, "bomb", &[], why);
}

#[test]
fn a_negative_request_size_breaks_one_kafka_connection() {
    let kafka = Kind {
        kind: "kafka",
        server: ("the Kafka broker (Tansu)", 9092),
        module: ("confluent_kafka", "confluent-kafka"),
        broker: "{ kind: kafka, partitions: 1 }",
        normal: "kafka_commit_after_work.py",
        left: |pid| crate::live_kafka::left_on_broker(&[pid]),
    };
    hostile(&kafka, "bomb", &[], "declaring -256 bytes");
}

#[test]
fn a_panic_injected_in_a_proxy_task_ends_that_connection_and_not_the_run() {
    // Worker 1's PING reaches its proxy, whose reader panics on it (a debug build's test hook).
    let why = "the proxy's reader panicked: ACKBENCH_TEST_PROXY_PANIC";
    hostile(&REDIS, "ping", &[("ACKBENCH_TEST_PROXY_PANIC", "1")], why);
}
