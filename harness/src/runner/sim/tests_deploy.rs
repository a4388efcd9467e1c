//! Rolling deploys on hand-derived scenarios: two workers of `ack-after-work` (its handler: a
//! 10 s provider call whose effect counts at the request, then the ack), a 30 s lease, six
//! messages published every 4 s (at 0, 4, 8, 12, 16, 20 s), a restart 1 s after a worker exits,
//! and one deploy at 5 s replacing worker 1 then worker 2.

use super::tests::{count, run, S};
use crate::metrics::deploys::{costs, DeployCost, StopCost};
use crate::profile::load_str;
use crate::record::{EventKind, RunRecord};

fn deploy(grace: &str) -> RunRecord {
    let text = format!(
        "name: t
run: {{ duration: 21s, drain: 1h }}
broker: {{ visibility_timeout: 30s, max_receives: 0 }}
workload: {{ arrival: {{ every: 4s }}, count: 6 }}
consumer: {{ target: ack-after-work, workers: 2, restart_after: 1s }}
provider: {{ effect_at: request, latency: {{ dist: fixed, value: 10s }} }}
chaos:
  - deploy: {{ at: 5s, grace: {grace} }}
"
    );
    run(&load_str("t.yaml", &text, &[]).expect("a valid profile"))
}

/// The effects of each message, by publish order.
pub(super) fn effects_per_message(r: &RunRecord) -> Vec<usize> {
    let mut v = vec![0; r.messages.len()];
    for e in &r.ledger.effects {
        v[(e.seq.expect("a published key") - 1) as usize] += 1;
    }
    v
}

/// The one rollout of these runs (rule 0, at 5 s): workers told, stopped, killed, deliveries
/// cut and duplicates (nothing lost or late here).
fn rollout(told: u64, stopped: u64, killed: u64, interrupted: u64, duplicates: u64) -> DeployCost {
    DeployCost {
        rule: 0,
        deploy: 1,
        started_s: 5.0,
        cost: StopCost {
            told,
            stopped,
            killed,
            interrupted,
            duplicates,
            lost: 0,
            late: 0,
        },
    }
}

fn at(r: &RunRecord, f: impl Fn(&EventKind) -> bool) -> Vec<u64> {
    r.events
        .iter()
        .filter(|e| f(&e.kind))
        .map(|e| e.at / S)
        .collect()
}

#[test]
fn a_grace_longer_than_the_handler_costs_nothing() {
    // 0 s: msg-1 to worker 1 (call 0-10 s); 4 s: msg-2 to worker 2 (4-14 s). 5 s: worker 1 is
    // told to stop; msg-3 (8 s) waits, as worker 1 fetches nothing more. 10 s: worker 1 acks
    // msg-1 and exits instead of fetching; back at 11 s, when worker 2 is told, and takes msg-3
    // (11-21 s). 14 s: worker 2 acks msg-2 and exits; back at 15 s (the rollout is over), takes
    // msg-4 (published 12 s). msg-5 and msg-6 follow at 21 and 25 s, acked at 31 and 35 s.
    // Every message one delivery, one effect: 0 duplicates, no kill.
    let r = deploy("30s");
    assert_eq!(effects_per_message(&r), vec![1; 6]);
    assert_eq!(
        at(&r, |k| matches!(k, EventKind::FaultFired { .. })),
        vec![5, 11]
    );
    assert_eq!(
        at(&r, |k| matches!(k, EventKind::WorkerStopped { .. })),
        vec![10, 14]
    );
    assert_eq!(
        count(&r, |k| matches!(k, EventKind::WorkerKilled { .. })),
        0
    );
    assert_eq!(count(&r, |k| matches!(k, EventKind::Delivered { .. })), 6);
    assert_eq!(r.end, 35 * S);
    assert_eq!(costs(&r, 300 * S), vec![rollout(2, 2, 0, 0, 0)]);
}

#[test]
fn a_grace_shorter_than_the_handler_kills_mid_call_and_each_cut_message_runs_twice() {
    // Grace 3 s. Worker 1, told at 5 s, is killed at 8 s inside msg-1's call (its effect came at
    // 0 s); the lease runs on to 30 s. Back at 9 s, worker 1 takes msg-3 (published 8 s) and
    // worker 2 is told; killed at 12 s inside msg-2's call (effect at 4 s, lease to 34 s). Back
    // at 13 s, worker 2 takes msg-4. msg-5 goes to worker 1 at 19 s, msg-6 to worker 2 at
    // 23 s. At 30 s msg-1's lease ends: delivery 2 to worker 1 (idle since 29 s), a second
    // effect; at 34 s msg-2's: delivery 2 to worker 2 (idle since 33 s), a second effect.
    // So: 2 kills, 2 deliveries cut, 2 duplicates, nothing lost; the run ends at 44 s.
    let r = deploy("3s");
    assert_eq!(effects_per_message(&r), vec![2, 2, 1, 1, 1, 1]);
    assert_eq!(
        at(&r, |k| matches!(k, EventKind::WorkerKilled { .. })),
        vec![8, 12]
    );
    assert_eq!(
        count(&r, |k| matches!(k, EventKind::WorkerStopped { .. })),
        0
    );
    assert_eq!(
        at(&r, |k| matches!(
            k,
            EventKind::Delivered { delivery: 2, .. }
        )),
        vec![30, 34]
    );
    assert_eq!(r.end, 44 * S);
    assert_eq!(costs(&r, 300 * S), vec![rollout(2, 0, 2, 2, 2)]);
}
