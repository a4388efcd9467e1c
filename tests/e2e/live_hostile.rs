//! A hostile consumer against each real broker's proxy: worker 1 sends its proxy, each on a
//! connection of its own, a nesting bomb, a size that overflows, a payload over the server's
//! limit and garbage bytes (tests/e2e/hostile_worker.py); worker 2 is the example consumer.
//! The run ends on time with its report, which names each of worker 1's broken connections and
//! why, in the order sent; it deletes what it created, exits with its verdict, and worker 2's
//! counts are whole. A panic injected in a
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

/// Worker 1's connections broke, one for each of `whys` in turn, each saying it; the 8
/// messages were all done once by worker 2; the verdict passed (exit 0); no worker is left.
fn check(code: Option<i32>, err: &str, s: &Value, whys: &[&str], marker: &str) {
    assert_eq!(code, Some(0), "the run's verdict, not a crash: {err}");
    let broken = s["broken_connections"]
        .as_array()
        .expect("broken connections");
    assert!(broken.iter().all(|b| b["worker"] == 1), "{s}");
    let said: Vec<&str> = broken
        .iter()
        .map(|b| b["why"].as_str().unwrap_or(""))
        .collect();
    assert_eq!(said.len(), whys.len(), "{said:#?}");
    for (said, why) in said.iter().zip(whys) {
        assert!(said.contains(why), "{said:?} says {why:?}");
    }
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
/// with `whys`, and for nothing left on the server (`false`: skipped).
fn hostile(k: &Kind, mode: &str, env: &[(&str, &str)], whys: &[&str]) -> bool {
    if !service_up(k.server.0, k.server.1) || !have_python_module(k.module.0, k.module.1) {
        return false;
    }
    let m = marker(&format!("{}-{mode}", k.kind));
    let text = profile(k.kind, k.broker, mode, k.normal, &m);
    let (pid, code, err, s) = run(&text, env);
    check(code, &err, &s, whys, &m);
    assert_eq!((k.left)(pid), Vec::<String>::new(), "nothing left");
    true
}

#[test]
fn a_nesting_bomb_an_overflowing_size_an_oversized_bulk_and_garbage_each_break_one_redis_connection(
) {
    hostile(
        &REDIS,
        "all",
        &[],
        &[
            // The EVAL's reply, 10,000 deep; then the 200,000 `*1` of one command.
            "the server sent a frame nested deeper than 128",
            "the worker sent a command with '*' where a bulk string goes",
            r#"the worker sent a bulk string whose length "99999999999999999999999" is no length"#,
            "the worker sent a bulk string of 600000000 bytes, over proto-max-bulk-len",
            r#"the worker sent an array whose length "\xff\xfegarbage" is no length"#,
        ],
    );
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
fn a_nesting_bomb_an_overflowing_size_an_oversized_pub_and_garbage_each_break_one_nats_connection()
{
    hostile(
        &NATS,
        "all",
        &[],
        &[
            "the worker sent a CONNECT whose options are no JSON object (recursion limit exceeded",
            WRAPS,
            "the worker sent PUB of 2000000 bytes over the server's max_payload (1048576)",
            r#"the worker sent a line starting "\x16\x03\x01\x00\xa5garbage", no operation"#,
        ],
    );
}

#[test]
fn sigint_after_a_hostile_worker_ends_the_run_with_its_partial_report() {
    // The overflowing PUB once made the proxy spin, deaf to SIGINT. A 10-minute run: worker 1
    // breaks its four connections within its first seconds; SIGINT 5 s in ends the run (exit 3,
    // incomplete) with its report, which names them, and its stream deleted.
    let k = &NATS;
    if !service_up(k.server.0, k.server.1) || !have_python_module(k.module.0, k.module.1) {
        return;
    }
    let m = marker("nats-sigint");
    let text = profile(k.kind, k.broker, "all", k.normal, &m)
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
    let why = s["broken_connections"][1]["why"]
        .as_str()
        .unwrap_or_default();
    assert!(why.contains(WRAPS), "{s}");
    assert_eq!((k.left)(child.id()), Vec::<String>::new(), "nothing left");
    assert_eq!(workers_left(&m), Vec::<String>::new(), "no worker left");
}

#[test]
fn a_nesting_bomb_an_overflowing_size_an_oversized_frame_and_garbage_each_break_one_rabbitmq_connection(
) {
    let rabbitmq = Kind {
        kind: "rabbitmq",
        server: ("RabbitMQ", 5672),
        module: ("pika", "pika"),
        broker: "{ kind: rabbitmq }",
        normal: "rabbitmq_ack_after_work.py",
        left: crate::live_rabbitmq::left_on_server,
    };
    let whys = [
        "the worker sent a frame whose field tables nest deeper than 128: SYNTAX_ERROR",
        "the worker sent a frame of 4294967295 payload bytes over the negotiated frame_max (131072)",
        "the worker sent a frame of 200000 payload bytes over the negotiated frame_max (131072)",
        r#"the worker sent "GET / HTTP/1.1\r\n" where the AMQP protocol header goes"#,
    ];
    hostile(&rabbitmq, "all", &[], &whys);
}

#[test]
fn a_count_bomb_an_overflowing_size_an_oversized_request_and_garbage_each_break_one_kafka_connection(
) {
    let kafka = Kind {
        kind: "kafka",
        server: ("the Kafka broker (Tansu)", 9092),
        module: ("confluent_kafka", "confluent-kafka"),
        broker: "{ kind: kafka, partitions: 1 }",
        normal: "kafka_commit_after_work.py",
        left: |pid| crate::live_kafka::left_on_broker(&[pid]),
    };
    let whys = [
        "the worker sent a Metadata v1 request whose body does not decode",
        "the worker sent a frame declaring -256 bytes",
        "the worker sent a frame declaring 209715200 bytes, over the broker's limit (104857600)",
        "the worker sent a request of API key 30583, which Kafka does not have",
    ];
    hostile(&kafka, "all", &[], &whys);
}

#[test]
fn a_panic_injected_in_a_proxy_task_ends_that_connection_and_not_the_run() {
    // Worker 1's PING reaches its proxy, whose reader panics on it (a debug build's test hook).
    let why = "the proxy's reader panicked: ACKBENCH_TEST_PROXY_PANIC";
    hostile(
        &REDIS,
        "ping",
        &[("ACKBENCH_TEST_PROXY_PANIC", "1")],
        &[why],
    );
}
