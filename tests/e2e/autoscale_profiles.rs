//! The shipped `profiles/chaos/autoscale-*.yaml` give the counts and the scale events their
//! comments derive, and pass the budgets that encode them.

use crate::common::{counts, root, run_profile};

const KEYS: [&str; 6] = [
    "messages",
    "deliveries",
    "effects",
    "duplicate_effects",
    "lost",
    "worker_kills",
];

/// A scale event as (at s, from, to, killed by it).
type Scale = (u64, u64, u64, u64);

/// The run's counts (KEYS), its scale events, and its worker-seconds.
fn run(name: &str) -> (Vec<u64>, Vec<Scale>, f64) {
    let profile = root().join(format!("profiles/chaos/{name}.yaml"));
    let ran = run_profile(&profile, &["--quiet"]);
    assert_eq!(ran.code(), 0, "{name}: the budgets hold\n{}", ran.stderr());
    let s = ran.summary();
    let a = &s["autoscaling"];
    let events = a["scale_events"].as_array().expect("scale events");
    let scales = events
        .iter()
        .map(|e| {
            let n = |k: &str| e[k].as_f64().unwrap_or_else(|| panic!("{k}: {e}")) as u64;
            (
                n("at_s"),
                n("from"),
                n("to"),
                e["cost"]["killed"].as_u64().unwrap_or(0),
            )
        })
        .collect();
    let seconds = a["worker_seconds"].as_f64().expect("worker_seconds");
    (counts(&s, &KEYS), scales, seconds)
}

#[test]
fn the_evening_scale_ins_cost_what_their_profiles_derive() {
    // SQS: the scale-in at 315 s kills workers 4, 3, 2 inside their jobs; the jobs come back
    // at their leases' ends, one on a replica made at 915 s and cut again at 1215 s.
    assert_eq!(
        run("autoscale-evening-sqs"),
        (
            vec![4, 8, 8, 4, 0, 4],
            vec![(315, 4, 1, 3), (915, 1, 2, 0), (1215, 2, 1, 1)],
            4066.0
        )
    );
    // A grace longer than the job: the same scale-in, every job finished within it.
    assert_eq!(
        run("autoscale-evening-sqs-grace"),
        (vec![4, 4, 4, 0, 0, 0], vec![(315, 4, 1, 0)], 2409.0)
    );
    // Redis Streams: the cut jobs stay in the pending entries list, which the lag the fleet
    // scales on leaves out: worker 1 claims them one after the other, the last done at 2400 s.
    assert_eq!(
        run("autoscale-evening-redis-streams"),
        (vec![4, 7, 7, 3, 0, 3], vec![(315, 4, 1, 3)], 3435.0)
    );
    // RabbitMQ requeues a killed worker's job at once: each scale-in makes the queue busy, the
    // fleet scales out, and the window's end cuts the new replicas again.
    assert_eq!(
        run("autoscale-evening-rabbitmq"),
        (
            vec![4, 11, 11, 7, 0, 7],
            vec![
                (315, 4, 1, 3),
                (345, 1, 3, 0),
                (645, 3, 1, 2),
                (675, 1, 2, 0),
                (975, 2, 1, 1),
                (1005, 1, 2, 0),
                (1305, 2, 1, 1)
            ],
            4755.0
        )
    );
}
