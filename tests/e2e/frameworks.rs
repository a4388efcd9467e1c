//! The consumers teams already run, unmodified: Celery (RabbitMQ with `task_acks_late`, and SQS
//! through kombu with its base64 bodies), Dramatiq (RabbitMQ) and FastStream (Redis Streams),
//! each installed from PyPI by the test (under ACKBENCH_REQUIRE_SERVICES=1; otherwise skipped
//! with a printed reason) and run by the shipped profiles in `profiles/frameworks/`: ackbench
//! publishes each framework's own message (`workload.message.format`) to a queue declared as
//! the framework declares it.
//!
//! Every profile: 20 orders, 2 workers, 2 kills at `call_answered` on a first delivery, ack
//! after the work. Each kill falls between the email and the ack: the broker hands the message
//! out again (RabbitMQ requeues on the closed connection, SQS at the lease's end, the FastStream
//! app claims the pending entry after min idle) and its next delivery sends the email again:
//! 20 + 2 = 22 effects, 2 duplicates, 0 lost, 0 DLQ.

use std::process::{Command, Stdio};

use serde_json::Value;

use crate::common::{have_python_module, root, service_up, summary_of};
use crate::live_rabbitmq::left_on_server;

const KEYS: [&str; 6] = [
    "messages",
    "effects",
    "duplicate_effects",
    "lost",
    "dlq",
    "worker_kills",
];

/// python3 with `module`, pip-installing `requirement` first under ACKBENCH_REQUIRE_SERVICES=1.
fn python_with(module: &str, requirement: &str) -> bool {
    let missing = !Command::new("python3")
        .args(["-c", &format!("import {module}")])
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if missing && std::env::var("ACKBENCH_REQUIRE_SERVICES").as_deref() == Ok("1") {
        let _ = Command::new("python3")
            .args(["-m", "pip", "install", "--quiet", requirement])
            .status();
    }
    have_python_module(module, requirement)
}

/// Runs `profiles/frameworks/NAME.yaml` with `args`; its pid and summary.
fn framework_run(name: &str, args: &[&str]) -> (u32, Value) {
    let profile = root().join(format!("profiles/frameworks/{name}.yaml"));
    let dir = tempfile::tempdir().expect("temp dir");
    let mut all = vec![
        "run",
        profile.to_str().expect("utf-8 path"),
        "--out",
        dir.path().to_str().expect("utf-8 path"),
        "--quiet",
    ];
    all.extend_from_slice(args);
    let child = Command::new(env!("CARGO_BIN_EXE_ackbench"))
        .args(&all)
        .current_dir(root())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("ackbench starts");
    let pid = child.id();
    let o = child.wait_with_output().expect("ackbench runs");
    let code = o.status.code();
    assert!(
        code.is_some_and(|c| c <= 1),
        "{name}: exit {code:?}\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    (pid, summary_of(dir.path()))
}

/// Exchanges on the RabbitMQ server named `celery.pidbox` or `reply.celery.pidbox`.
fn pidbox_exchanges() -> Vec<String> {
    let o = Command::new("rabbitmqctl")
        .args(["list_exchanges", "name", "-q"])
        .output()
        .expect("rabbitmqctl runs");
    String::from_utf8_lossy(&o.stdout)
        .lines()
        .map(str::trim)
        .filter(|n| n.ends_with("celery.pidbox"))
        .map(str::to_string)
        .collect()
}

fn counts(s: &Value) -> Vec<u64> {
    crate::common::counts(s, &KEYS)
}

#[test]
fn celery_with_acks_late_on_rabbitmq_duplicates_the_two_killed_orders() {
    if !service_up("RabbitMQ", 5672) || !python_with("celery", "celery>=5.3") {
        return;
    }
    let before = pidbox_exchanges();
    let (pid, s) = framework_run("celery-rabbitmq", &[]);
    assert_eq!(counts(&s), [20, 22, 2, 0, 0, 2], "{s}");
    assert_eq!(s["verdict"], "pass");
    // The run's queue and Celery's exchange named after it are gone, and so are the pidbox
    // exchanges Celery declared for its remote control, unless they were there before.
    assert_eq!(left_on_server(pid), Vec::<String>::new());
    assert_eq!(pidbox_exchanges(), before);
}

#[test]
fn celery_on_sqs_with_kombus_base64_bodies_duplicates_the_two_killed_orders() {
    if !python_with("kombu.asynchronous.aws.sqs", "celery[sqs]>=5.3")
        || !python_with("celery", "celery[sqs]>=5.3")
    {
        return;
    }
    let (_, s) = framework_run("celery-sqs", &[]);
    assert_eq!(counts(&s), [20, 22, 2, 0, 0, 2], "{s}");
    assert_eq!(s["verdict"], "pass");
}

#[test]
fn dramatiq_on_rabbitmq_duplicates_the_two_killed_orders() {
    if !service_up("RabbitMQ", 5672) || !python_with("dramatiq", "dramatiq[rabbitmq]>=1.15") {
        return;
    }
    let (pid, s) = framework_run("dramatiq-rabbitmq", &[]);
    assert_eq!(counts(&s), [20, 22, 2, 0, 0, 2], "{s}");
    // The queue, and Dramatiq's `.DQ` and `.XQ` queues beside it, are gone.
    assert_eq!(left_on_server(pid), Vec::<String>::new());
    assert_eq!(s["verdict"], "pass");
}

#[test]
fn faststream_on_redis_streams_duplicates_the_two_killed_orders() {
    if !service_up("Redis", 6379) || !python_with("faststream.redis", "faststream[redis]>=0.5") {
        return;
    }
    let (_, s) = framework_run("faststream-redis-streams", &[]);
    assert_eq!(counts(&s), [20, 22, 2, 0, 0, 2], "{s}");
    assert_eq!(s["verdict"], "pass");
}
