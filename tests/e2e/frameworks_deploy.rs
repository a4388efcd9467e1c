//! A rolling deploy of the framework consumers of `profiles/frameworks/` (unmodified apps,
//! installed from PyPI by the test under ACKBENCH_REQUIRE_SERVICES=1), on RabbitMQ.
//!
//! ackbench tells a worker to stop by signalling its process group (docs/chaos.md#deploy), so
//! every process of the framework gets the SIGTERM at once, not only its main process (as a
//! container's PID 1 does under Kubernetes). What each framework does with that is measured here:
//!
//! - Celery's main process takes SIGTERM as a warm shutdown: it stops consuming and waits for
//!   the tasks it runs (the Celery workers guide, "Stopping the worker"). With the `threads`
//!   pool the tasks run in that process: they finish, and a grace longer than the task costs
//!   nothing. With the default `prefork` pool, each pool child resets SIGTERM to its default
//!   (celery.concurrency.prefork's WORKER_SIGRESET) and dies of the group's signal in the middle
//!   of its task; the main process then acks the task's message (acks_late acks a task whose
//!   worker was lost unless task_reject_on_worker_lost): the work is lost, whatever the grace.
//! - Dramatiq's worker process takes a first SIGTERM as a graceful stop and a second as "kill":
//!   its main process forwards the SIGTERM it got, so the worker process gets two; when they
//!   are handled as two (a race), it exits with its message unacked, RabbitMQ requeues it and
//!   it runs again: a duplicate per message in flight, whatever the grace.
//!
//! A rollout's cost (summary.json's `deploys`) counts what its kills cut; a worker that cuts its
//! own work on the signal and exits within its grace counts as stopped, so these losses and
//! duplicates show in the run's counts, not in the rollout's.
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
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

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
fn celery_prefork_loses_the_tasks_its_pool_children_ran_when_the_group_gets_sigterm() {
    if !celery_here() {
        return;
    }
    // The shipped profile's pool (prefork, one child), grace 30 s, tasks of 15 s, the email
    // effective when the provider answers. Worker 1 is told at 15 s: its pool child dies at once
    // inside order 1 or 2 (the answer never reaches it: no email), the main process acks the
    // order and exits. Worker 2, told when worker 1 is back (16-17 s), loses the other order the
    // same way. Order 3
    // waited (both busy) and runs once on a restarted worker. 3 messages, 1 effect, 0
    // duplicates, 2 lost. Both workers stopped within the grace: the rollout itself cut nothing.
    let prefork = celery_pool("prefork");
    let s = deploy_run("celery-rabbitmq", "15s", "response", "30s", &[&prefork]);
    assert_eq!(counts(&s), [3, 1, 0, 2], "{s}");
    assert_eq!(cost(&s), [2, 2, 0, 0, 0, 0, 0], "{s}");
    assert_eq!(s["verdict"], "fail", "the lost budget: {s}");
}

#[test]
fn dramatiq_runs_a_message_in_flight_twice_when_the_second_sigterm_kills_its_worker() {
    if !service_up("RabbitMQ", 5672) || !python_with("dramatiq", "dramatiq[rabbitmq]>=1.15") {
        return;
    }
    // Grace 30 s, tasks of 15 s (effect at the request). Worker 1, told at 15 s inside an order
    // (Dramatiq prefetches: one worker may hold orders 1 and 2, the other order 3), gets SIGTERM
    // twice: the group's, then its main process's. Whether the second is a "kill" is a race: the
    // worker process's Python handler may run once for both (a graceful stop: the order
    // finishes and is acked) or once each (it exits at once, the order unacked; RabbitMQ
    // requeues it and a restarted worker sends the email again). Worker 2, told once worker 1
    // is back, the same. Seen here: 2 duplicates in two runs of three, none in the third. So:
    // 3 messages, 3 + d effects, d duplicates, d at most 2, 0 lost; nothing killed at a grace's
    // end, whichever way the race went.
    let s = deploy_run("dramatiq-rabbitmq", "15s", "request", "30s", &[]);
    let c = counts(&s);
    assert_eq!((c[0], c[3]), (3, 0), "3 messages, 0 lost: {s}");
    assert!(c[2] <= 2 && c[1] == 3 + c[2], "3 + d effects, d <= 2: {s}");
    let cost = cost(&s);
    assert_eq!((cost[0], cost[2]), (2, 0), "told 2, killed 0: {s}");
}
