//! An `autoscale` rule live (docs/autoscale.md): KEDA's poll and the HPA's sync read the real
//! queue's length (the embedded SQS endpoint's counts; RabbitMQ's `messages_ready` and the
//! deliveries its proxy saw unacked), a scale-in stops a replica as a `deploy` does and never
//! brings it back, a scale-out starts one. Each run is run again in sim mode: the scale events
//! (who scaled, from, to) and each scale-in's cost are the sim's, and so are the counts.
//!
//! Every evening here: four 2-minute jobs (the email sent as each starts) land at 0-3 s on a
//! fleet of 4 scaled on *ready* messages, target 1, 1 to 4 replicas, the HPA's scale-down window
//! cut to 60 s, grace 20 s, startup 0 s, at 1/20 of real time. The HPA's first sync (15 s)
//! records the 4 replicas it finds; from 30 s it reads 0 ready (every job taken): 1 each time.
//! At 75 s the 15 s record has left the window: 4 -> 1. The ReplicaSet removes the youngest
//! first, all equal here, so the highest numbers: workers 4, 3, 2, each inside its job (to
//! 121-123 s), killed at 95 s, its email sent: three cut jobs.

use serde_json::Value;

use crate::common::{python_with, root, run_profile, service_up};

/// (by, from, to, cost) of each scale event: what must be the sim's.
fn scale_events(s: &Value) -> Vec<(String, u64, u64, Value)> {
    let events = s["autoscaling"]["scale_events"].as_array();
    (events.into_iter().flatten())
        .map(|e| {
            (
                e["by"].as_str().unwrap_or_default().to_string(),
                e["from"].as_u64().unwrap_or_default(),
                e["to"].as_u64().unwrap_or_default(),
                e["cost"].clone(),
            )
        })
        .collect()
}

/// The counts that must be the sim's.
fn counts(s: &Value) -> Vec<u64> {
    crate::common::counts(
        s,
        &["messages", "effects", "duplicate_effects", "lost", "dlq"],
    )
}

/// Runs `profile` (under `profiles/`) with `sets` live and in sim mode: both exit 0 or 1, and
/// the live run's scale events, scale-in costs and counts are the sim run's. The sim summary.
fn live_like_sim(profile: &str, sets: &[&str]) -> Value {
    let path = root().join("profiles").join(profile);
    let mut args = vec!["--quiet"];
    for s in sets {
        args.extend(["--set", s]);
    }
    let live = run_profile(&path, &[&args[..], &["--set", "mode=live"]].concat());
    assert!(live.code() <= 1, "{}", live.stderr());
    let sim = run_profile(&path, &[&args[..], &["--set", "mode=sim"]].concat());
    assert!(sim.code() <= 1, "{}", sim.stderr());
    let (live, sim) = (live.summary(), sim.summary());
    assert_eq!(
        scale_events(&live),
        scale_events(&sim),
        "live: {live}\nsim: {sim}"
    );
    assert_eq!(counts(&live), counts(&sim), "live: {live}\nsim: {sim}");
    sim
}

/// A scale-in's cost as summary.json gives it: told, stopped, killed, cut, duplicates.
fn cost(told: u64, killed: u64, duplicates: u64) -> Value {
    serde_json::json!({
        "told": told, "stopped": 0, "killed": killed, "interrupted": killed,
        "duplicates": duplicates, "lost": 0, "late": 0
    })
}

const EVENING: [&str; 6] = [
    "provider.latency={dist: fixed, value: 2m}",
    "chaos=[{autoscale: {target: 1, metric: ready, min: 1, max: 4, grace: 20s, \
     scale_down: {stabilization: 60s}}}]",
    "run.time_scale=0.05",
    "run.drain=20m",
    "budgets={}",
    "seed=1",
];

#[test]
fn an_evening_scale_in_on_the_embedded_sqs_endpoint_costs_what_the_sim_model_says() {
    // Visibility timeout 3 minutes. The cut jobs 2, 3, 4 come back at their leases' ends (181,
    // 182, 183 s); worker 1 (idle since 120 s) takes job 2 (second email) to 301 s. The sync at
    // 195 s reads 2 ready: 1 -> 2; the new replica takes the lowest free number, worker 2, and
    // job 3 (second email) to 315 s. From 210 s 1 ready, 2 replicas: 1 each time; at 255 s the
    // window lets it: 2 -> 1, the youngest is worker 2 (made at 195 s), killed at 275 s inside
    // job 3. Worker 1 takes job 4 at 301 s (second email) and job 3 at 421 s (visible since
    // 375 s: a third email). 4 messages, 8 effects, 4 duplicates; scale events: 75 s 4 -> 1 (3
    // told, 3 killed and cut, 3 duplicates), 195 s 1 -> 2, 255 s 2 -> 1 (1 told, killed, cut,
    // duplicated).
    let sim = live_like_sim(
        "chaos/autoscale-evening-sqs.yaml",
        &[&EVENING[..], &["broker.visibility_timeout=3m"]].concat(),
    );
    assert_eq!(counts(&sim), [4, 8, 4, 0, 0], "{sim}");
    let hpa = |from, to, cost| ("hpa".to_string(), from, to, cost);
    assert_eq!(
        scale_events(&sim),
        [
            hpa(4, 1, cost(3, 3, 3)),
            hpa(1, 2, Value::Null),
            hpa(2, 1, cost(1, 1, 1))
        ],
        "{sim}"
    );
}

#[test]
fn the_same_evening_against_an_external_sqs_server_reads_its_queue_attributes() {
    // moto's server (`broker.endpoint`): the looks read ApproximateNumberOfMessages as KEDA's
    // aws-sqs-queue scaler does. The lease and the jobs are whole wall seconds (9 s, 6 s).
    let Some(moto) = crate::live_sqs_endpoint::moto() else {
        return;
    };
    let endpoint = format!("broker.endpoint=http://127.0.0.1:{}", moto.port);
    let sim = live_like_sim(
        "chaos/autoscale-evening-sqs.yaml",
        &[&EVENING[..], &["broker.visibility_timeout=3m", &endpoint]].concat(),
    );
    assert_eq!(counts(&sim), [4, 8, 4, 0, 0], "{sim}");
}

#[test]
fn an_evening_scale_in_on_real_rabbitmq_costs_what_the_sim_model_says() {
    if !service_up("RabbitMQ", 5672) {
        return;
    }
    // The server's consumer_timeout (30 minutes of wall time) is 600 minutes at this scale.
    // RabbitMQ requeues the three cut jobs as their workers' connections close (95 s); worker 1
    // is in job 1 to 120 s. The sync at 105 s reads 3 ready: 1 -> 3 (the HPA adds up to 4 pods
    // per 15 s); workers 2 and 3 start at once and take two of them (second emails), worker 1
    // the third at 120 s. From 120 s 0 ready: at 165 s the window lets it: 3 -> 1, workers 3 and
    // 2 (made together at 105 s) killed at 185 s inside their jobs (to 225 s): requeued. The sync
    // at 195 s reads 2 ready, worker 1 busy to 240 s: 1 -> 2, worker 2 takes one (third email);
    // at 255 s 2 -> 1 kills it at 275 s inside it. Worker 1 runs the other at 240 s (third
    // email) and the last at 360 s (fourth). 4 messages, 10 effects, 6 duplicates.
    let sim = live_like_sim(
        "chaos/autoscale-evening-rabbitmq.yaml",
        &[&EVENING[..], &["broker.consumer_timeout=600m"]].concat(),
    );
    assert_eq!(counts(&sim), [4, 10, 6, 0, 0], "{sim}");
    let hpa = |from, to, cost| ("hpa".to_string(), from, to, cost);
    assert_eq!(
        scale_events(&sim),
        [
            hpa(4, 1, cost(3, 3, 3)),
            hpa(1, 3, Value::Null),
            hpa(3, 1, cost(2, 2, 2)),
            hpa(1, 2, Value::Null),
            hpa(2, 1, cost(1, 1, 1))
        ],
        "{sim}"
    );
}

#[test]
fn a_scale_in_of_celery_workers_unmodified_costs_what_the_sim_model_says() {
    if !service_up("RabbitMQ", 5672) || !python_with("celery", "celery>=5.3") {
        return;
    }
    let _one = crate::frameworks_deploy::ONE_AT_A_TIME
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    // profiles/frameworks/celery-rabbitmq.yaml (acks_late, prefetch 1) with the threads pool,
    // at half real time: two orders (0, 1 s), 60 s tasks (the email sent as each starts), two
    // workers, scaled on ready messages, target 1, 1 to 2 replicas, window 30 s, grace 3 s.
    // Each worker takes one order once its Celery has started (seconds). The first sync (15 s)
    // records 2; from 30 s at the latest every order is taken: 1. At 45 s (the sim; later if
    // Celery took longer than 30 s to start) 2 -> 1: worker 2 is told inside its task; Celery's
    // warm shutdown waits for it, the grace does not: killed 3 s later, the email sent, no ack:
    // RabbitMQ requeues the order, and worker 1 runs it again after its own (a second email).
    // 2 messages, 3 effects, 1 duplicate; one scale-in: 1 told, killed, cut, duplicated.
    let sim = live_like_sim(
        "frameworks/celery-rabbitmq.yaml",
        &[
            "workload.count=2",
            "run.duration=2s",
            "provider.latency={dist: fixed, value: 60s}",
            "provider.effect_at=request",
            "chaos=[{autoscale: {target: 1, metric: ready, min: 1, max: 2, grace: 3s, \
             scale_down: {stabilization: 30s}}}]",
            "run.time_scale=0.5",
            "broker.consumer_timeout=60m",
            "budgets={}",
            "consumer.command=[python3, -m, celery, --workdir, profiles/frameworks/celery, -A, \
             tasks_rabbitmq, worker, -n, \"scale${ACKBENCH_WORKER}@%h\", --pool=threads, \
             --concurrency=1, --without-heartbeat, --without-gossip, --without-mingle, -l, \
             warning]",
        ],
    );
    assert_eq!(counts(&sim), [2, 3, 1, 0, 0], "{sim}");
    assert_eq!(
        scale_events(&sim),
        [("hpa".to_string(), 2, 1, cost(1, 1, 1))],
        "{sim}"
    );
}
