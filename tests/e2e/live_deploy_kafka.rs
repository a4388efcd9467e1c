//! A rolling deploy against the Kafka-protocol broker on this machine (Tansu on 127.0.0.1:9092,
//! docs/kafka-live.md) with the built-in ack-after-work (a commit after each record), beside the
//! sim model of the same profile. A live Kafka consumer runs on the real clock: the profile is
//! seconds long.

use crate::common::service_up;
use crate::live_deploy::{cost, effects, live_and_sim};

/// Two workers, two partitions, four records 100 ms apart (two per partition), one record a
/// poll, each handler a 4 s call (the effect at the request) then the commit; one rollout at
/// 5 s. The group forms at 3 s (Tansu answers a JoinGroup after session.timeout / 2).
/// restart_after 8s: a member restarted 1 s after it left took no record for the rest of the
/// run on Tansu (its partition's records stayed unfinished), where the sim model has it
/// consume at once; live_kafka.rs waits 15 s for the same reason.
const PROFILE: &str = "name: live-deploy-kafka
mode: live
seed: 1
run: { duration: 1s, drain: 40s }
broker: { kind: kafka, partitions: 2, max_poll_interval: 30s, session_timeout: 6s,
          heartbeat_interval: 1s, max_poll_records: 1, enable_auto_commit: false }
workload: { arrival: { every: 100ms }, count: 4 }
consumer: { target: ack-after-work, workers: 2, restart_after: 8s }
provider: { effect_at: request, latency: { dist: fixed, value: 4s } }
chaos:
  - deploy: { at: 5s, grace: 10s }
";

#[test]
fn a_rolling_deploy_within_the_grace_on_kafka_costs_nothing_as_in_sim() {
    if !service_up("the Kafka broker (Tansu)", 9092) {
        return;
    }
    // 3 s: worker 1 takes record 1 (partition 0), worker 2 record 2 (partition 1), to 7 s.
    // 5 s: worker 1 is told; at 7 s it commits record 1 and leaves instead of polling. Worker 2
    // takes record 4 (7-11 s), then rejoins the group with both partitions and takes record 3
    // from partition 0's committed offset (about 13-17 s). Worker 1 is back at 15 s and worker 2
    // is told inside record 3: it finishes it within its grace, commits and leaves. Every
    // record once: 4 messages, 4 effects, 0 duplicates, 0 lost; the rollout: 2 told, 2
    // stopped, nothing cut.
    let (live, sim) = live_and_sim(PROFILE);
    assert_eq!(cost(&sim), [2, 2, 0, 0, 0, 0, 0], "{sim}");
    assert_eq!(effects(&sim), [4, 4, 0, 0]);
    assert_eq!(cost(&live), cost(&sim), "{live}");
    assert_eq!(effects(&live), effects(&sim), "{live}");
    assert_eq!(live["unfinished"], 0, "{live}");
}
