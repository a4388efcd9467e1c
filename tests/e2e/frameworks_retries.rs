//! The retries consumers make themselves, followed through their next lives: Dramatiq's Retries
//! middleware (its delay queue `.DQ`, then `.XQ` out of retries) and Celery's `self.retry` and
//! `autoretry_for` (the task published again with its ETA), unmodified, installed from PyPI by
//! the test, live on real RabbitMQ and on the embedded SQS endpoint (Celery through kombu).
//!
//! Each live run is compared with the sim run of the same profile (`consumer.sim`: the built-in
//! `ack-after-work` retrying as the framework does, `consumer.options.republish`): the same
//! messages, deliveries, effects, duplicates, lost, DLQ, failed and consumer retries.
//!
//! Every profile (`profiles/frameworks/*retry*.yaml`): 20 orders, 2 workers, ack after the work,
//! one retry, the provider answering 500 to the first call of msg-10 (in the middle) and of
//! msg-20 (the last order: its retry comes after everything else). Each failed order is
//! published again by its consumer and delivered a second time, where its email is sent:
//! 20 messages, 22 deliveries, 20 effects, 0 duplicates, 0 lost, 0 unfinished, 0 DLQ,
//! 2 consumer retries, 2 handler retries, every provider call attributed, and nothing the run
//! created left on the server (the run's end waited for msg-20's retry, so no queue it removed
//! held a message).

use serde_json::Value;

use crate::common::{ackbench, python_with, root, service_up, stderr, summary_of};
use crate::frameworks::framework_run;
use crate::live_rabbitmq::left_on_server;

const KEYS: [&str; 9] = [
    "messages",
    "deliveries",
    "effects",
    "duplicate_effects",
    "lost",
    "unfinished",
    "dlq",
    "consumer_retries",
    "handler_retries",
];

/// The counts every retry profile expects (see the module's doc).
pub(crate) const RETRIED: [u64; 9] = [20, 22, 20, 0, 0, 0, 0, 2, 2];

/// The counts of `KEYS`, an absent optional count (`consumer_retries`) read as 0.
pub(crate) fn counts(s: &Value) -> Vec<u64> {
    KEYS.iter()
        .map(|k| match &s[*k] {
            Value::Null => 0,
            v => v.as_u64().unwrap_or_else(|| panic!("{k}: {v}")),
        })
        .collect()
}

/// The sim run of `profiles/NAME.yaml` with `args`: its summary.
fn sim_run(name: &str, args: &[&str]) -> Value {
    let profile = root().join(format!("profiles/{name}.yaml"));
    let dir = tempfile::tempdir().expect("temp dir");
    let mut all = vec![
        "run",
        profile.to_str().expect("utf-8 path"),
        "--mode",
        "sim",
        "--out",
        dir.path().to_str().expect("utf-8 path"),
        "--quiet",
    ];
    all.extend_from_slice(args);
    let o = ackbench(&all);
    assert!(
        o.status.code().is_some_and(|c| c <= 1),
        "{name} in sim: {}",
        stderr(&o)
    );
    summary_of(dir.path())
}

/// The live run's counts equal the sim run's of the same profile (`profiles/NAME.yaml`) and `args`, `failed` too.
pub(crate) fn equals_sim(name: &str, args: &[&str], live: &Value) {
    let sim = sim_run(name, args);
    assert_eq!(counts(&sim), counts(live), "sim {sim}\nlive {live}");
    assert_eq!(sim["failed"], live["failed"], "sim {sim}\nlive {live}");
}

/// What every run checks besides its counts: every call attributed, no queue removed while it
/// held a message, and (on RabbitMQ, `pid` given) nothing of the run left on the server.
fn clean(s: &Value, pid: Option<u32>) {
    assert_eq!(s["unattributed_calls"], Value::Null, "{s}");
    assert_eq!(s["removed_at_end"], Value::Null, "{s}");
    if let Some(pid) = pid {
        assert_eq!(left_on_server(pid), Vec::<String>::new());
    }
}

fn dramatiq() -> bool {
    service_up("RabbitMQ", 5672) && python_with("dramatiq", "dramatiq[rabbitmq]>=1.15")
}

fn celery_rabbitmq() -> bool {
    service_up("RabbitMQ", 5672) && python_with("celery", "celery>=5.3")
}

fn celery_sqs() -> bool {
    python_with("kombu.asynchronous.aws.sqs", "celery[sqs]>=5.3")
        && python_with("celery", "celery[sqs]>=5.3")
}

#[test]
fn dramatiq_retries_through_its_delay_queue_are_each_orders_next_delivery() {
    if !dramatiq() {
        return;
    }
    let (pid, s) = framework_run("dramatiq-retry-rabbitmq", &[]);
    assert_eq!(counts(&s), RETRIED, "{s}");
    assert_eq!(s["verdict"], "pass");
    // `.DQ` and `.XQ` are gone with the queue.
    clean(&s, Some(pid));
    equals_sim("frameworks/dramatiq-retry-rabbitmq", &[], &s);
}

#[test]
fn dramatiq_out_of_retries_dead_letters_to_its_xq_with_no_effect_and_nothing_lost() {
    if !dramatiq() {
        return;
    }
    // msg-20 fails on every call: delivery 1, then its retry (delivery 2), after which Dramatiq
    // rejects it and the queue's arguments move it to `.XQ`. 21 deliveries, 19 effects, 1 DLQ
    // without effect, 0 lost, 1 consumer retry; the DLQ budget fails the run.
    let every_call = [
        "--set",
        "provider.phases=[{keys: [msg-20], errors: {status: 500, rate: 1}}]",
    ];
    let (pid, s) = framework_run("dramatiq-retry-rabbitmq", &every_call);
    assert_eq!(counts(&s), [20, 21, 19, 0, 0, 0, 1, 1, 1], "{s}");
    assert_eq!(s["dlq_without_effect"], 1);
    assert_eq!(s["verdict"], "fail");
    // `.XQ` held msg-20 when the run removed it: said, and counted (in the DLQ) first.
    assert_eq!(s["removed_at_end"][0]["messages"], 1, "{s}");
    assert!(
        s["removed_at_end"][0]["queue"]
            .as_str()
            .is_some_and(|q| q.ends_with(".XQ")),
        "{s}"
    );
    assert_eq!(left_on_server(pid), Vec::<String>::new());
    equals_sim("frameworks/dramatiq-retry-rabbitmq", &every_call, &s);
}

#[test]
fn celery_self_retry_on_rabbitmq_is_each_orders_next_delivery() {
    if !celery_rabbitmq() {
        return;
    }
    let (pid, s) = framework_run("celery-retry-rabbitmq", &[]);
    assert_eq!(counts(&s), RETRIED, "{s}");
    assert_eq!(s["verdict"], "pass");
    clean(&s, Some(pid));
    equals_sim("frameworks/celery-retry-rabbitmq", &[], &s);
}

#[test]
fn celery_autoretry_with_backoff_on_rabbitmq_is_each_orders_next_delivery() {
    if !celery_rabbitmq() {
        return;
    }
    let (pid, s) = framework_run("celery-autoretry-rabbitmq", &[]);
    assert_eq!(counts(&s), RETRIED, "{s}");
    assert_eq!(s["verdict"], "pass");
    clean(&s, Some(pid));
    equals_sim("frameworks/celery-autoretry-rabbitmq", &[], &s);
}

#[test]
fn celery_out_of_retries_is_a_failed_task_not_a_lost_message() {
    if !celery_rabbitmq() {
        return;
    }
    // msg-20 fails on every call: its retry fails too, Celery gives up (MaxRetriesExceeded)
    // and, with task_acks_late, acks it: nothing re-queued, no effect, counted as failed (the
    // worker logged it), not lost. 21 deliveries, 19 effects, 0 DLQ, 1 consumer retry.
    let every_call = [
        "--set",
        "provider.phases=[{keys: [msg-20], errors: {status: 500, rate: 1}}]",
    ];
    let (pid, s) = framework_run("celery-retry-rabbitmq", &every_call);
    assert_eq!(counts(&s), [20, 21, 19, 0, 0, 0, 0, 1, 1], "{s}");
    assert_eq!(s["failed"], 1, "{s}");
    clean(&s, Some(pid));
    equals_sim("frameworks/celery-retry-rabbitmq", &every_call, &s);
}

#[test]
fn celery_self_retry_on_sqs_is_each_orders_next_delivery() {
    if !celery_sqs() {
        return;
    }
    let (_, s) = framework_run("celery-retry-sqs", &[]);
    assert_eq!(counts(&s), RETRIED, "{s}");
    assert_eq!(s["verdict"], "pass");
    clean(&s, None);
    equals_sim("frameworks/celery-retry-sqs", &[], &s);
}

#[test]
fn celery_self_retry_on_an_external_sqs_server_is_each_orders_next_delivery() {
    if !celery_sqs() {
        return;
    }
    let Some(moto) = crate::live_sqs_endpoint::moto() else {
        return;
    };
    // The same app against moto's server (`broker.endpoint`): the observing proxy reads the
    // worker's SendMessage of the task as its retry.
    let endpoint = format!("broker.endpoint=http://127.0.0.1:{}", moto.port);
    let (_, s) = framework_run("celery-retry-sqs", &["--set", &endpoint]);
    assert_eq!(counts(&s), RETRIED, "{s}");
    assert_eq!(
        s["stale_acks"], 0,
        "the replaced copy's delete is no stale ack: {s}"
    );
    clean(&s, None);
    equals_sim("frameworks/celery-retry-sqs", &[], &s);
    assert_eq!(crate::live_sqs_endpoint::queues(moto.port).trim(), "[]");
}

#[test]
fn celery_autoretry_with_backoff_on_sqs_is_each_orders_next_delivery() {
    if !celery_sqs() {
        return;
    }
    let (_, s) = framework_run("celery-autoretry-sqs", &[]);
    assert_eq!(counts(&s), RETRIED, "{s}");
    assert_eq!(s["verdict"], "pass");
    clean(&s, None);
    equals_sim("frameworks/celery-autoretry-sqs", &[], &s);
}
