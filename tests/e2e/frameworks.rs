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

use std::process::Command;

use serde_json::Value;

use crate::common::{python_with, root, service_up, summary_of};
use crate::live_rabbitmq::{left_on_server, run_ackbench};

const KEYS: [&str; 6] = [
    "messages",
    "effects",
    "duplicate_effects",
    "lost",
    "dlq",
    "worker_kills",
];

/// Runs `profiles/frameworks/NAME.yaml` with `args`; its pid and summary.
pub fn framework_run(name: &str, args: &[&str]) -> (u32, Value) {
    let (pid, s, _) = framework_run_md(name, args);
    (pid, s)
}

/// [`framework_run`], with the report's summary.md.
fn framework_run_md(name: &str, args: &[&str]) -> (u32, Value, String) {
    profile_run(&format!("frameworks/{name}"), args)
}

/// Runs `profiles/NAME.yaml` with `args` (it must exit 0 or 1): its pid, summary and summary.md.
pub fn profile_run(name: &str, args: &[&str]) -> (u32, Value, String) {
    let profile = root().join(format!("profiles/{name}.yaml"));
    let dir = tempfile::tempdir().expect("temp dir");
    let mut all = vec![
        "run",
        profile.to_str().expect("utf-8 path"),
        "--out",
        dir.path().to_str().expect("utf-8 path"),
        "--quiet",
    ];
    all.extend_from_slice(args);
    let (pid, o) = run_ackbench(&all);
    let code = o.status.code();
    assert!(
        code.is_some_and(|c| c <= 1),
        "{name}: exit {code:?}\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let md = std::fs::read_to_string(dir.path().join("summary.md")).unwrap_or_default();
    (pid, summary_of(dir.path()), md)
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
fn celery_acking_before_the_work_loses_the_two_killed_orders_and_says_so() {
    if !service_up("RabbitMQ", 5672) || !python_with("celery", "celery>=5.3") {
        return;
    }
    // Celery's default (no task_acks_late): the prefork pool acks a task's message as a
    // child process takes it, before the task runs. Each kill at `call_started` comes after
    // that ack and before the email (the provider's effect comes with its answer, which the
    // dead worker never gets): the broker has nothing to hand out again. 20 messages, 18
    // effects, 0 duplicates, 2 lost, and the run fails on the `lost` budget.
    let (pid, s, md) = framework_run_md(
        "celery-rabbitmq",
        &[
            "--set",
            "consumer.env={ACKS_LATE: \"0\"}",
            "--set",
            "chaos=[{kill_worker: {point: call_started, delivery: 1, times: 2}}]",
            "--set",
            "provider.effect_at=response",
        ],
    );
    assert_eq!(counts(&s), [20, 18, 0, 2, 0, 2], "{s}");
    assert_eq!(s["verdict"], "fail");
    assert!(
        md.contains("**LOST:** 2 messages were deleted from the queue and never had an effect"),
        "{md}"
    );
    assert_eq!(left_on_server(pid), Vec::<String>::new());
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
    // `faststream run` is FastStream's CLI extra (typer).
    let faststream = python_with("faststream.redis", "faststream[redis,cli]>=0.5")
        && python_with("typer", "faststream[redis,cli]>=0.5");
    if !service_up("Redis", 6379) || !faststream {
        return;
    }
    let (_, s) = framework_run("faststream-redis-streams", &[]);
    assert_eq!(counts(&s), [20, 22, 2, 0, 0, 2], "{s}");
    assert_eq!(s["verdict"], "pass");
}

#[test]
fn a_queue_that_already_exists_refuses_the_run_unless_it_is_reused() {
    if !service_up("RabbitMQ", 5672) || !python_with("pika", "pika>=1.3") {
        return;
    }
    let name = format!("ackbench-{}-exists", std::process::id());
    let pika = |op: &str| {
        let script = format!(
            "import pika\nc = pika.BlockingConnection(pika.URLParameters(\"amqp://guest:guest@127.0.0.1:5672/%2f\"))\nch = c.channel()\n{op}\nc.close()\n"
        );
        let ok = Command::new("python3").args(["-c", &script]).status();
        assert!(ok.is_ok_and(|s| s.success()), "{op}");
    };
    pika(&format!("ch.queue_declare(\"{name}\", durable=True)"));
    let profile = root().join("profiles/frameworks/celery-rabbitmq.yaml");
    let queue = format!("broker.queue={name}");
    let o = crate::common::ackbench(&["check", profile.to_str().unwrap(), "--set", &queue]);
    assert_eq!(o.status.code(), Some(0), "a name alone checks");
    let dir = tempfile::tempdir().unwrap();
    let o = crate::common::ackbench(&[
        "run",
        profile.to_str().unwrap(),
        "--set",
        &queue,
        "--out",
        dir.path().to_str().unwrap(),
    ]);
    pika(&format!("ch.queue_delete(\"{name}\")"));
    let err = crate::common::stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains(&format!(
            "broker.queue {name}: the queue already exists on the RabbitMQ server"
        )) && err.contains("broker.reuse: true"),
        "{err}"
    );
}
