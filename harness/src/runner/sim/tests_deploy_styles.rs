//! How each built-in target's style meets a rolling deploy. Every target stops the same way
//! (the client's: a worker told to stop takes no next message and exits once its handler is
//! done), and what that costs follows from where the style settles a message: ack-before-work
//! has acked before the work, so a delivery cut at the grace's end is lost; heartbeat goes on
//! extending its lease while it finishes; and a batch consumer finishes the batch of its last
//! poll before it exits, committing it, as a consumer that checks its stop flag between polls.

use super::tests::{count, run, S};
use super::tests_deploy::effects_per_message;
use crate::metrics::deploys::costs;
use crate::profile::load_str;
use crate::record::{EventKind, RunRecord};

fn sim(text: &str) -> RunRecord {
    run(&load_str("t.yaml", text, &[]).expect("a valid profile"))
}

/// (told, stopped, killed, interrupted, duplicates, lost) of the run's one rollout.
fn cost(r: &RunRecord) -> (u64, u64, u64, u64, u64, u64) {
    let c = costs(r, 300 * S);
    assert_eq!(c.len(), 1, "one rollout");
    let c = &c[0].cost;
    (
        c.told,
        c.stopped,
        c.killed,
        c.interrupted,
        c.duplicates,
        c.lost,
    )
}

#[test]
fn ack_before_work_cut_at_the_grace_end_loses_the_message_it_had_acked() {
    // The scenario of tests_deploy.rs with ack-before-work and the effect at the provider's
    // answer: two workers, six messages every 4 s, 10 s calls, a deploy at 5 s, grace 3 s.
    // Worker 1 acked msg-1 at 0 s; killed at 8 s, before the answer (10 s): no effect, nothing
    // left to hand out again. Back at 9 s (takes msg-3, published 8 s); worker 2 is told then,
    // killed at 12 s inside msg-2 (acked at 4 s, answer due at 14 s): lost too. msg-3 to msg-6
    // run once each. So: 2 told, 0 stopped, 2 killed, 2 cut, 0 duplicates, 2 lost.
    let r = sim("name: t
run: { duration: 21s, drain: 1h }
broker: { visibility_timeout: 30s, max_receives: 0 }
workload: { arrival: { every: 4s }, count: 6 }
consumer: { target: ack-before-work, workers: 2, restart_after: 1s }
provider: { effect_at: response, latency: { dist: fixed, value: 10s } }
chaos:
  - deploy: { at: 5s, grace: 3s }
");
    assert_eq!(effects_per_message(&r), vec![0, 0, 1, 1, 1, 1]);
    assert_eq!(cost(&r), (2, 0, 2, 2, 0, 2));
}

#[test]
fn heartbeat_goes_on_extending_its_lease_while_it_finishes_within_the_grace() {
    // A 4 s lease, extended every 4/3 s while the 10 s call runs. Worker 1 (msg-1, 0-10 s) is
    // told at 5 s and finishes with its lease kept: it acks at 10 s, exits, is back at 11 s,
    // when worker 2 is told inside msg-2 (4-14 s), which it finishes the same way. No lease
    // runs out: each of the six messages one delivery, one effect; both stopped, nothing cut.
    // (ack-after-work on the same lease has every message handed out again after 4 s.)
    let r = sim("name: t
run: { duration: 21s, drain: 1h }
broker: { visibility_timeout: 4s, max_receives: 0 }
workload: { arrival: { every: 4s }, count: 6 }
consumer: { target: heartbeat, workers: 2, restart_after: 1s }
provider: { effect_at: request, latency: { dist: fixed, value: 10s } }
chaos:
  - deploy: { at: 5s, grace: 30s }
");
    assert_eq!(effects_per_message(&r), vec![1; 6]);
    assert_eq!(count(&r, |k| matches!(k, EventKind::Delivered { .. })), 6);
    assert_eq!(cost(&r), (2, 2, 0, 0, 0, 0));
}

#[test]
fn a_batch_consumer_told_to_stop_finishes_and_commits_its_polls_batch_first() {
    // Kafka, one partition, three records (0, 0.1, 0.2 s), 2 s calls, commit-after-batch with
    // polls of up to 3 records; only worker 1 is replaced. The group forms at 3 s: worker 1
    // polls all three and works through them (3-5, 5-7, 7-9 s); told at 4 s, it goes on with
    // records 2 and 3, commits the batch at 9 s and only then exits. Each record once: 3
    // effects, 0 duplicates; the rollout: 1 told, 1 stopped, nothing cut. (Exiting after record
    // 1 would leave the batch uncommitted: record 1 would run again on the partition's next
    // owner, a duplicate from a stop within its grace.)
    let r = sim("name: t
run: { duration: 1s, drain: 2m }
broker: { kind: kafka, partitions: 1, max_poll_interval: 60s, session_timeout: 6s,
          heartbeat_interval: 1s, max_poll_records: 3, enable_auto_commit: false }
workload: { arrival: { every: 100ms }, count: 3 }
consumer: { target: commit-after-batch, workers: 2, restart_after: 1s }
provider: { effect_at: request, latency: { dist: fixed, value: 2s } }
chaos:
  - deploy: { at: 4s, grace: 30s, workers: [1] }
");
    assert_eq!(effects_per_message(&r), vec![1, 1, 1]);
    let stopped: Vec<u64> = r
        .events
        .iter()
        .filter(|e| matches!(e.kind, EventKind::WorkerStopped { .. }))
        .map(|e| e.at / S)
        .collect();
    assert_eq!(stopped, vec![9]);
    assert_eq!(cost(&r), (1, 1, 0, 0, 0, 0));
}
