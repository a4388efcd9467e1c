//! A rolling deploy against the real RabbitMQ server on 127.0.0.1:5672 with the built-in
//! ack-after-work, beside the sim model of the same profile: the same cost per rollout.

use serde_json::Value;

use crate::common::{run_text, service_up};

/// Two workers (prefetch 1), `orders` orders one a second from 0 s, each handler a 60 s call
/// (the effect at the request) then the ack; a restart 5 s after a worker ends; one rollout at
/// 30 s replacing worker 1, then worker 2. Both workers are busy at 30 s whichever took which
/// order (a real server picks), and a live run's first sends and connections, which may take a
/// second or so of wall time (10 s of profile time here), are over by then. Ten times faster
/// than profile time: about 15 s of wall time.
fn profile(grace: &str, orders: u32) -> String {
    format!(
        "name: live-deploy
mode: live
run: {{ duration: 3s, drain: 4m, time_scale: 0.1 }}
broker: {{ kind: rabbitmq, consumer_timeout: 300m }}
workload: {{ arrival: {{ every: 1s }}, count: {orders} }}
consumer: {{ target: ack-after-work, workers: 2, restart_after: 5s }}
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

fn live_and_sim(grace: &str, orders: u32) -> (Value, Value) {
    let text = profile(grace, orders);
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
    // Grace 90 s, three orders: the two workers take orders 1 and 2 (0-60 s, 1-61 s); order 3
    // waits. The first worker told (30 s) finishes, acks and exits; the other takes order 3 at
    // 60 or 61 s (61-121 s or so). The first is back 5 s after its exit, when the other is told:
    // it finishes order 3 within its grace and exits. Both stopped, nothing cut, nothing twice.
    let (live, sim) = live_and_sim("90s", 3);
    assert_eq!(cost(&sim), [2, 2, 0, 0, 0, 0, 0]);
    assert_eq!(cost(&live), cost(&sim));
    assert_eq!(live["duplicate_effects"], 0);
    // Grace 3 s, two orders: the first worker told (30 s) is killed at 33 s inside its call,
    // its effect already made; RabbitMQ requeues the order as the connection closes; the other
    // worker is busy, so the first, back at 38 s, takes it again (a second effect). The other,
    // told at 38 s, is killed at 41 s the same way and takes its order again at 46 s. So: 2
    // told, 0 stopped, 2 killed, 2 deliveries cut, 2 messages with a duplicate effect.
    let (live, sim) = live_and_sim("3s", 2);
    assert_eq!(cost(&sim), [2, 0, 2, 2, 2, 0, 0]);
    assert_eq!(cost(&live), cost(&sim));
    assert_eq!(live["duplicate_effects"], sim["duplicate_effects"]);
    assert_eq!(live["lost"], 0);
}
