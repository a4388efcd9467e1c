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
    // A run that scaled draws its fleet.
    for ext in ["png", "svg"] {
        let chart = ran.dir.path().join(format!("charts/fleet.{ext}"));
        assert!(chart.is_file(), "{name}: {}", chart.display());
    }
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

#[test]
fn the_morning_scale_out_lags_by_its_startup() {
    // 120 orders in 2 minutes on 1 worker: the HPA asks 4, 6, 9, 10 replicas at 15-60 s; each
    // starts 60 s later. The last order waits 196 s for a worker and is deleted 216 s after its
    // publish.
    let profile = root().join("profiles/chaos/autoscale-morning-sqs.yaml");
    let age = |args: &[&str]| {
        let ran = run_profile(&profile, &[&["--quiet"], args].concat());
        assert_eq!(ran.code(), 0, "the budgets hold\n{}", ran.stderr());
        let s = ran.summary();
        let a = &s["autoscaling"];
        let scales: Vec<(u64, u64, u64)> = (a["scale_events"].as_array().expect("events"))
            .iter()
            .map(|e| {
                let n = |k: &str| e[k].as_f64().unwrap_or_else(|| panic!("{k}: {e}")) as u64;
                (n("at_s"), n("from"), n("to"))
            })
            .collect();
        assert_eq!(
            scales,
            vec![(15, 1, 4), (30, 4, 6), (45, 6, 9), (60, 9, 10)]
        );
        assert_eq!(counts(&s, &KEYS), vec![120, 120, 120, 0, 0, 0]);
        // Each scale-out's lag: the oldest message's age when it rose, when its replicas had
        // started, and how long after.
        let lags: Vec<(f64, f64, f64)> = (a["scale_events"].as_array().expect("events"))
            .iter()
            .map(|e| {
                let l = &e["lag"];
                let n = |k: &str| l[k].as_f64().unwrap_or_else(|| panic!("{k}: {e}"));
                (
                    n("oldest_age_s"),
                    n("oldest_age_when_started_s"),
                    n("started_after_s"),
                )
            })
            .collect();
        (
            lags,
            s["end_to_end_ms"]["max"].as_f64().expect("e2e"),
            s["max_oldest_age_s"].as_f64().expect("age"),
            a["worker_seconds"].as_f64().expect("worker-seconds"),
        )
    };
    // Worker 1 alone takes an order every 20 s to 75 s; the oldest not yet deleted at each
    // scale-out is the one in its hands (published at 0, 1, 2, 3 s), and when the replicas of
    // each start 60 s later: order 4 (3 s) at 75 s, order 5 (4 s) at 90 s, order 9 (8 s) at
    // 105 s, orders 15-17 (14 s) at 120 s (the profile's comment).
    let lags = vec![
        (15.0, 72.0, 60.0),
        (29.0, 86.0, 60.0),
        (43.0, 97.0, 60.0),
        (57.0, 106.0, 60.0),
    ];
    assert_eq!(age(&[]), (lags, 196_000.0, 216.0, 2510.0));
    // Replicas ready at once: the same scale events, a minute less of lag.
    assert_eq!(
        age(&["--set", "chaos.0.autoscale.startup=0s"]),
        (
            vec![
                (15.0, 15.0, 0.0),
                (29.0, 29.0, 0.0),
                (40.0, 40.0, 0.0),
                (49.0, 49.0, 0.0)
            ],
            141_000.0,
            161.0,
            2500.0
        )
    );
}

#[test]
fn a_rule_that_could_never_scale_exits_2_naming_its_field() {
    let evening = root().join("profiles/chaos/autoscale-evening-rabbitmq.yaml");
    let base = ["run", evening.to_str().expect("utf-8 path"), "--quiet"];
    let set = |rule: &str| format!("chaos=[{{autoscale: {rule}}}]");
    for (args, want) in [
        (
            vec!["--set".to_string(), set("{target: 1, min: 5, max: 4}")],
            "chaos.0.autoscale.min: must be at most max (4), got 5",
        ),
        (
            vec!["--set".to_string(), set("{target: 0}")],
            "chaos.0.autoscale.target: must be at least 1, got 0",
        ),
        // The RabbitMQ scaler over AMQP or HTTP reads both; Redis Streams' reads only the lag.
        (
            vec![
                "--set".to_string(),
                "broker={kind: redis-streams}".to_string(),
                "--set".to_string(),
                set("{target: 1, metric: ready_and_in_flight}"),
            ],
            "chaos.0.autoscale.metric: KEDA's redis-streams scaler for broker kind \
             redis-streams cannot read ready_and_in_flight",
        ),
        (
            vec![
                "--set".to_string(),
                "broker={kind: nats}".to_string(),
                "--set".to_string(),
                set("{target: 1, metric: ready_and_in_flight}"),
                "--set".to_string(),
                "mode=live".to_string(),
            ],
            "chaos.0.autoscale: runs in the sim only on broker kind nats (run.mode: sim)",
        ),
    ] {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let err = crate::common::refused(&base, &args);
        assert!(err.contains(want), "{args:?}: {err}");
    }
}
