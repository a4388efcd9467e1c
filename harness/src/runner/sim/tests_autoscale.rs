//! `autoscale` on hand-derived scenarios: `ack-after-work` (its handler: a 60 s provider call
//! whose effect counts at the request, then the ack), a 10-minute lease, messages published
//! 1 s apart, and the fleet scaled on the queue's ready messages, target 1 per replica.

use super::tests::{run, S};
use super::tests_deploy::effects_per_message;
use crate::profile::load_str;
use crate::record::{EventKind, RunRecord};

fn scaled(workers: u32, count: u32, autoscale: &str) -> RunRecord {
    scaled_with(workers, count, autoscale, "")
}

/// `scaled` with more chaos rules after the autoscale (`more`: YAML list items).
fn scaled_with(workers: u32, count: u32, autoscale: &str, more: &str) -> RunRecord {
    let text = format!(
        "name: t
run: {{ duration: 10s, drain: 1h }}
broker: {{ visibility_timeout: 10m }}
workload: {{ arrival: {{ every: 1s }}, count: {count} }}
consumer: {{ target: ack-after-work, workers: {workers}, restart_after: 1s }}
provider: {{ effect_at: request, latency: {{ dist: fixed, value: 60s }} }}
chaos:
  - autoscale: {autoscale}
{more}"
    );
    run(&load_str("t.yaml", &text, &[]).expect("a valid profile"))
}

/// The (instant in s, worker) of each event `f` picks.
fn at(r: &RunRecord, f: impl Fn(&EventKind) -> Option<u32>) -> Vec<(u64, u32)> {
    r.events
        .iter()
        .filter_map(|e| f(&e.kind).map(|w| (e.at / S, w)))
        .collect()
}

fn scales(r: &RunRecord) -> Vec<(u64, u32, u32)> {
    r.events
        .iter()
        .filter_map(|e| match e.kind {
            EventKind::Scaled { from, to, .. } => Some((e.at / S, from, to)),
            _ => None,
        })
        .collect()
}

#[test]
fn a_scale_in_cuts_exactly_the_handlers_of_the_replicas_it_removes() {
    // Three workers take messages 1-3 at 0, 1, 2 s (the lowest idle worker), each for 60 s.
    // The queue shows 0 ready from 2 s. The HPA's first sync (15 s) records the 3 it finds; the
    // scale-down window (10 s) has let it go by the sync at 30 s: 3 -> 1 (min 1). The youngest,
    // all equal, go by the highest number: workers 3 then 2, told at 30 s, killed at 50 s
    // (grace 20 s) inside messages 3 and 2. Worker 1 acks message 1 at 60 s. Messages 2 and 3
    // come back at the end of their leases (601, 602 s); worker 1 takes them one after the
    // other (1 ready on 1 replica is within the tolerance: no scale-out): 2 effects each.
    let r = scaled(
        3,
        3,
        "{ target: 1, min: 1, max: 3, grace: 20s, scale_down: { stabilization: 10s } }",
    );
    assert_eq!(scales(&r), vec![(30, 3, 1)]);
    let removed = at(&r, |k| match *k {
        EventKind::ReplicaRemoved { worker, .. } => Some(worker),
        _ => None,
    });
    assert_eq!(removed, vec![(30, 3), (30, 2)]);
    let killed = at(&r, |k| match *k {
        EventKind::WorkerKilled { worker, .. } => Some(worker),
        _ => None,
    });
    assert_eq!(killed, vec![(50, 3), (50, 2)]);
    let restarted = at(&r, |k| match *k {
        EventKind::WorkerRestarted { worker } | EventKind::WorkerAdded { worker } => Some(worker),
        _ => None,
    });
    assert_eq!(restarted, vec![], "a removed replica never comes back");
    assert_eq!(effects_per_message(&r), vec![1, 2, 2]);
    assert_eq!(
        r.end / S,
        721,
        "worker 1: message 2 from 601 s, message 3 from 661 s"
    );
}

#[test]
fn a_scale_out_starts_its_replicas_after_their_startup_in_new_slots() {
    // One worker takes message 1 at 0 s; messages 2-5 (1-4 s) wait. The sync at 15 s reads 4
    // ready: ceil(4 / 1) = 4, held to max 3: 1 -> 3. Workers 2 and 3 (new slots) start at 35 s
    // (startup 20 s) and take messages 2 and 3; messages 4 and 5 wait for a worker to be free
    // (60 s: worker 1; 95 s: worker 2). The sync at 30 s reads 4 ready on 3 replicas (1.33):
    // asks 4, held to 3.
    let r = scaled(1, 5, "{ target: 1, max: 3, startup: 20s }");
    assert_eq!(scales(&r)[0], (15, 1, 3));
    let added = at(&r, |k| match *k {
        EventKind::WorkerAdded { worker } => Some(worker),
        _ => None,
    });
    assert_eq!(added, vec![(35, 2), (35, 3)]);
    let delivered = at(&r, |k| match *k {
        EventKind::Delivered { worker, .. } => Some(worker),
        _ => None,
    });
    assert_eq!(delivered, vec![(0, 1), (35, 2), (35, 3), (60, 1), (95, 2)]);
    assert_eq!(effects_per_message(&r), vec![1, 1, 1, 1, 1]);
}

#[test]
fn a_rollout_goes_on_past_a_worker_a_scale_in_removed() {
    // As in the first test, with a deploy (rule 1) at 25 s replacing worker 3 then worker 1,
    // grace 10 s. Worker 3 is told at 25 s inside message 3. The scale-in at 30 s removes
    // workers 3 (already told: it keeps the deploy's grace) and 2 (told, grace 20 s). Worker 3
    // is killed at 35 s by the deploy and not restarted: the rollout goes on at once and tells
    // worker 1, inside message 1: killed at 45 s, restarted at 46 s (its replica was not
    // removed). Worker 2 is killed at 50 s by the scale-in. The three cut messages come back at
    // their leases' ends (600, 601, 602 s): worker 1 takes message 1 at 600 s; the sync at 615 s
    // reads 2 ready: 1 -> 2, and worker 2, made again, takes one; at 630 s 1 ready on 2 (the
    // 10 s window holds nothing higher): 2 -> 1, the youngest, worker 2, killed at 650 s.
    let r = scaled_with(
        3,
        3,
        "{ target: 1, min: 1, max: 3, grace: 20s, scale_down: { stabilization: 10s } }",
        "  - deploy: { at: 25s, grace: 10s, workers: [3, 1] }\n",
    );
    let told = at(&r, |k| match *k {
        EventKind::FaultFired { worker, rule: 1 } => Some(worker),
        _ => None,
    });
    assert_eq!(told, vec![(25, 3), (35, 1)]);
    let killed = at(&r, |k| match *k {
        EventKind::WorkerKilled { worker, rule } => Some(worker * 10 + rule),
        _ => None,
    });
    assert_eq!(
        killed,
        vec![(35, 31), (45, 11), (50, 20), (650, 20)],
        "worker x 10 + rule"
    );
    let restarted = at(&r, |k| match *k {
        EventKind::WorkerRestarted { worker } => Some(worker),
        _ => None,
    });
    assert_eq!(restarted, vec![(46, 1)]);
}
