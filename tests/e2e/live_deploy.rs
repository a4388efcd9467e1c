//! A rolling deploy against the real RabbitMQ server on 127.0.0.1:5672 with the built-in
//! ack-after-work, beside the sim model of the same profile: the same cost per rollout.

use serde_json::Value;

use crate::common::{run_text, service_up};

/// Two workers (prefetch 1), three orders at 0, 50 and 100 s, each handler a 60 s call (the
/// effect at the request) then the ack; a restart 1 s after a worker ends; one rollout at 30 s
/// replacing worker 1, then worker 2. A live run's first send and connections may take a second
/// or so of wall time (10 s of profile time here): the rollout still comes inside worker 1's
/// first handler. Ten times faster than profile time: about 16 s of wall time.
fn profile(grace: &str) -> String {
    format!(
        "name: live-deploy
mode: live
run: {{ duration: 101s, drain: 4m, time_scale: 0.1 }}
broker: {{ kind: rabbitmq, consumer_timeout: 300m }}
workload: {{ arrival: {{ every: 50s }}, count: 3 }}
consumer: {{ target: ack-after-work, workers: 2, restart_after: 1s }}
provider: {{ effect_at: request, latency: {{ dist: fixed, value: 60s }} }}
chaos:
  - deploy: {{ at: 30s, grace: {grace} }}
"
    )
}

/// The rollout's counts: told, stopped, killed, interrupted, duplicates, lost, late.
fn cost(summary: &Value) -> Vec<u64> {
    let d = &summary["deploys"];
    assert_eq!(
        d.as_array().map(Vec::len),
        Some(1),
        "one rollout: {summary}"
    );
    [
        "told",
        "stopped",
        "killed",
        "interrupted",
        "duplicates",
        "lost",
        "late",
    ]
    .iter()
    .map(|k| d[0][*k].as_u64().expect("a count"))
    .collect()
}

fn live_and_sim(grace: &str) -> (Value, Value) {
    let text = profile(grace);
    let live = run_text(&text, &["--quiet"]);
    assert!(live.code() <= 1, "{}", live.stderr());
    let sim = run_text(&text, &["--quiet", "--set", "mode=sim"]);
    assert!(sim.code() <= 1, "{}", sim.stderr());
    (live.summary(), sim.summary())
}

#[test]
fn a_rolling_deploy_on_real_rabbitmq_costs_what_the_sim_model_says() {
    if !service_up("RabbitMQ", 5672) {
        return;
    }
    // Grace 90 s: worker 1 (order 1, 0-60 s), told at 30 s, finishes, acks and exits at 60 s;
    // back at 61 s, when worker 2 (order 2, 50-110 s) is told: it finishes and exits at 110 s,
    // back at 111 s. Order 3 (100 s) goes to worker 1. Both stopped in their grace, nothing
    // cut, nothing twice.
    let (live, sim) = live_and_sim("90s");
    assert_eq!(cost(&sim), [2, 2, 0, 0, 0, 0, 0]);
    assert_eq!(cost(&live), cost(&sim));
    assert_eq!(live["duplicate_effects"], 0);
    // Grace 3 s: worker 1 is killed at 33 s inside order 1's call, its effect already made;
    // RabbitMQ requeues the order as the connection closes and hands it at once to worker 2,
    // idle (order 2 comes at 50 s): a second effect. Worker 1 is back at 34 s, when worker 2 is
    // told, inside that call: killed at 37 s, the order requeued again and taken by worker 1 (a
    // third effect). Order 2 goes to worker 2, back at 38 s. So: 2 told, 0 stopped, 2 killed,
    // 2 deliveries cut, both of order 1: 1 message with a duplicate effect, none lost.
    let (live, sim) = live_and_sim("3s");
    assert_eq!(cost(&sim), [2, 0, 2, 2, 1, 0, 0]);
    assert_eq!(cost(&live), cost(&sim));
    assert_eq!(live["duplicate_effects"], sim["duplicate_effects"]);
    assert_eq!(live["lost"], 0);
}
