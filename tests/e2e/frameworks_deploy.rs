//! A rolling deploy of the framework consumers of `profiles/frameworks/` (unmodified apps,
//! installed from PyPI by the test under ACKBENCH_REQUIRE_SERVICES=1), on RabbitMQ.
//!
//! ackbench tells a worker to stop by signalling the program it started (docs/chaos.md#deploy),
//! as Kubernetes signals a container's main process; what the framework does with it is
//! measured here:
//!
//! - Celery's main process takes SIGTERM as a warm shutdown: it stops consuming and waits for
//!   the tasks it runs (the Celery workers guide, "Stopping the worker"), in its own threads
//!   (`threads` pool) or in its pool children (the default `prefork`, whose children do not get
//!   the signal): they finish, and a grace longer than the task costs nothing.
//! - Dramatiq's main process forwards the SIGTERM to its worker process once: a graceful stop,
//!   which finishes the message in flight and acks it (a second SIGTERM would mean "kill").
//!
//! Every run: 3 orders (0, 1, 2 s; 2 where a test says so), 2 workers (one task at a time each,
//! prefetch 1), each task a provider call of `latency`; one rollout at 15 s. The workers take
//! orders 1 and 2 once they have started (3.5-6 s after the run's start on an idle machine; up
//! to 30 s seen while other framework runs started beside them, hence one run at a time here),
//! so both are inside a task when told.

use std::sync::Mutex;

use serde_json::Value;

use crate::common::{python_with, service_up};
use crate::frameworks::framework_run;
use crate::live_deploy::cost;

/// Celery's `worker` command of profiles/frameworks/celery-rabbitmq.yaml with `pool`, and node
/// names of its own (Celery's remote control queue is exclusive per node name: two runs at once
/// with the same names would refuse each other's workers).
fn celery_pool(pool: &str) -> String {
    format!(
        "consumer.command=[python3, -m, celery, --workdir, profiles/frameworks/celery, -A, \
         tasks_rabbitmq, worker, -n, \"deploy-{pool}${{ACKBENCH_WORKER}}@%h\", --pool={pool}, \
         --concurrency=1, --without-heartbeat, --without-gossip, --without-mingle, -l, warning]"
    )
}

/// One framework run at a time: Python frameworks starting side by side take seconds longer.
pub static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// Runs framework profile `name` with 3 orders, tasks of `latency`, effects at `effect_at` and
/// a rollout at 15 s with `grace`; `more` are further overrides.
fn deploy_run(name: &str, latency: &str, effect_at: &str, grace: &str, more: &[&str]) -> Value {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let latency = format!("provider.latency={{dist: fixed, value: {latency}}}");
    let effect_at = format!("provider.effect_at={effect_at}");
    let chaos = format!("chaos=[{{deploy: {{at: 15s, grace: {grace}}}}}]");
    let mut args = vec![
        "--set",
        "workload.count=3",
        "--set",
        "run.duration=3s",
        "--set",
        &latency,
        "--set",
        &effect_at,
        "--set",
        &chaos,
    ];
    for m in more {
        args.extend(["--set", m]);
    }
    framework_run(name, &args).1
}

/// messages, effects, duplicate effects, lost.
fn counts(s: &Value) -> Vec<u64> {
    crate::common::counts(s, &["messages", "effects", "duplicate_effects", "lost"])
}

fn celery_here() -> bool {
    service_up("RabbitMQ", 5672) && python_with("celery", "celery>=5.3")
}

#[test]
fn celery_threads_finishes_its_tasks_within_the_grace_and_a_short_grace_duplicates_them() {
    if !celery_here() {
        return;
    }
    let threads = celery_pool("threads");
    // Grace 30 s, tasks of 15 s (effect at the request). Worker 1, told at 15 s inside its task
    // (to 18.5-30 s), finishes it, acks and exits; back 1 s later, when worker 2 is told, inside
    // order 2 or (having finished it) order 3, which it finishes within its grace. Every order
    // one effect: 3 messages, 3 effects, 0 duplicates, 0 lost; nothing killed. (The run may end,
    // drained, before worker 2 has exited: 1 or 2 stopped.)
    let s = deploy_run("celery-rabbitmq", "15s", "request", "30s", &[&threads]);
    assert_eq!(counts(&s), [3, 3, 0, 0], "{s}");
    let c = cost(&s);
    assert_eq!((c[0], c[2]), (2, 0), "told 2, killed 0: {s}");
    // Grace 3 s, two orders, tasks of 25 s: worker 1 is killed at 18 s inside order 1 or 2 (to
    // 28.5 s or later), its email sent; RabbitMQ requeues the order. Worker 1 is back at 19 s
    // and worker 2 is told then, inside the other order: killed at 22 s the same way. Nobody
    // takes a message before 22 s (worker 1's Celery starts in seconds), so each cut order runs
    // again on a restarted worker: 2 messages, 4 effects, 2 duplicates, 0 lost; the rollout: 2
    // told, 0 stopped, 2 killed, 2 cut, 2 duplicates.
    let two = "workload.count=2";
    let s = deploy_run("celery-rabbitmq", "25s", "request", "3s", &[&threads, two]);
    assert_eq!(counts(&s), [2, 4, 2, 0], "{s}");
    assert_eq!(cost(&s), [2, 0, 2, 2, 2, 0, 0], "{s}");
}

#[test]
fn celery_prefork_finishes_the_tasks_its_pool_children_run_within_the_grace() {
    if !celery_here() {
        return;
    }
    // The shipped profile's pool (prefork, one child), grace 30 s, tasks of 15 s, the email
    // effective when the provider answers. Worker 1 is told at 15 s inside order 1 or 2: its
    // main process stops consuming, its pool child (not signalled) finishes the task by 30 s at
    // the latest, the answer sends the email, the message is acked and the worker exits. Worker
    // 2, told when worker 1 is back, does the same with the other order. Order 3 waited (both
    // busy) and runs once on a restarted worker. 3 messages, 3 effects, 0 duplicates, 0 lost;
    // nothing killed (the run may end, drained, before worker 2 has exited: 1 or 2 stopped).
    let prefork = celery_pool("prefork");
    let s = deploy_run("celery-rabbitmq", "15s", "response", "30s", &[&prefork]);
    assert_eq!(counts(&s), [3, 3, 0, 0], "{s}");
    let c = cost(&s);
    assert_eq!((c[0], c[2]), (2, 0), "told 2, killed 0: {s}");
}

#[test]
fn celery_prefork_short_grace_duplicates_each_task_it_cuts() {
    if !celery_here() {
        return;
    }
    // Grace 3 s, two orders, tasks of 25 s, the email sent at the request. Worker 1 is told at
    // 15 s inside order 1 or 2 (to 28.5 s or later): its main process stops consuming, its pool
    // child (not signalled) goes on with the task; at 18 s the grace ends and the SIGKILL takes
    // the worker's whole process group, the child with it, before the task ends: no ack, and
    // RabbitMQ requeues the order on the connection's close. Worker 1 is back at 19 s and worker
    // 2 is told then, inside the other order: killed at 22 s the same way. Each cut order runs
    // again on a restarted worker, as with the threads pool: 2 messages, 4 effects, 2
    // duplicates, 0 lost; the rollout: 2 told, 0 stopped, 2 killed, 2 cut, 2 duplicates.
    let prefork = celery_pool("prefork");
    let two = "workload.count=2";
    let s = deploy_run("celery-rabbitmq", "25s", "request", "3s", &[&prefork, two]);
    assert_eq!(counts(&s), [2, 4, 2, 0], "{s}");
    assert_eq!(cost(&s), [2, 0, 2, 2, 2, 0, 0], "{s}");
}

#[test]
fn dramatiq_finishes_the_message_in_flight_within_the_grace() {
    if !service_up("RabbitMQ", 5672) || !python_with("dramatiq", "dramatiq[rabbitmq]>=1.15") {
        return;
    }
    // Grace 30 s, tasks of 15 s (effect at the request). Worker 1, told at 15 s inside an order
    // (Dramatiq prefetches: one worker may hold orders 1 and 2, the other order 3): its main
    // process forwards the SIGTERM once to its worker process, which stops consuming, finishes
    // the order in hand and acks it; a prefetched order it had not started goes back to the
    // queue unacked (not run: no effect). Worker 2, told once worker 1 is back, the same. Each
    // order runs once: 3 messages, 3 effects, 0 duplicates, 0 lost; nothing killed.
    let s = deploy_run("dramatiq-rabbitmq", "15s", "request", "30s", &[]);
    assert_eq!(counts(&s), [3, 3, 0, 0], "{s}");
    let cost = cost(&s);
    assert_eq!((cost[0], cost[2]), (2, 0), "told 2, killed 0: {s}");
}
