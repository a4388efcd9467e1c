//! A `message` fault live on the embedded SQS endpoint counts as the same profile does in sim
//! mode: a dropped ack (the endpoint answers the DeleteMessage success and never applies it)
//! brings the message back when its visibility timeout ends.

use serde_json::Value;

use crate::common::run_text;

/// Four orders 50 s apart, two `ack-after-work` workers, a 5 s provider, a 30 s visibility
/// timeout; the ack of msg-2's first delivery is dropped. msg-2: delivered at 50 s (effect),
/// its ack at 55 s dropped; its lease ends at 80 s: delivered again (a second effect), acked
/// at 85 s. So 5 deliveries, 5 effects, 1 duplicate, nothing lost, the rule fired once.
const PROFILE: &str = "\
name: e2e-drop-ack
mode: live
seed: 3
run: { duration: 200s, drain: 5m, time_scale: 0.05 }
broker: { visibility_timeout: 30s, stale_ack: reject }
workload: { arrival: { every: 50s }, count: 4 }
consumer: { target: ack-after-work, workers: 2, restart_after: 1s }
provider: { effect_at: request, latency: { dist: fixed, value: 5s } }
chaos:
  - message: { action: drop_ack, delivery: 1, keys: [msg-2] }
";

fn counts(s: &Value) -> Vec<u64> {
    let mut v: Vec<u64> = [
        "messages",
        "deliveries",
        "effects",
        "duplicate_effects",
        "lost",
        "dlq",
    ]
    .iter()
    .map(|k| s[*k].as_u64().unwrap_or_else(|| panic!("{k} in {s}")))
    .collect();
    v.push(s["chaos_rules"][0]["fired"].as_u64().expect("rule 0 fired"));
    v
}

/// The live run's and the sim run's counts of `PROFILE` with its rule written `rule`.
fn live_and_sim(rule: &'static str) -> (Vec<u64>, Vec<u64>) {
    let text = PROFILE.replace("{ action: drop_ack, delivery: 1, keys: [msg-2] }", rule);
    let live = std::thread::spawn({
        let text = text.clone();
        move || {
            let live = run_text(&text, &["--quiet"]);
            assert!(live.code() <= 1, "{}", live.stderr());
            counts(&live.summary())
        }
    });
    let sim = run_text(&text, &["--quiet", "--set", "mode=sim"]);
    assert!(sim.code() <= 1, "{}", sim.stderr());
    (live.join().unwrap(), counts(&sim.summary()))
}

#[test]
fn drop_ack_on_the_embedded_sqs_endpoint_counts_like_the_sim_run() {
    let (live, sim) = live_and_sim("{ action: drop_ack, delivery: 1, keys: [msg-2] }");
    let expected = vec![4, 5, 5, 1, 0, 0, 1];
    assert_eq!(sim, expected, "sim");
    assert_eq!(live, expected, "live");
}

#[test]
fn delay_ack_and_drop_delivery_on_the_embedded_sqs_endpoint_count_like_the_sim_run() {
    // msg-2's first ack (sent at 55 s) reaches the endpoint at 95 s; its lease ended at 80 s:
    // delivered again (second effect), acked at 85 s; the late ack is refused (reject).
    let (live, sim) = live_and_sim("{ action: delay_ack, delay: 40s, delivery: 1, keys: [msg-2] }");
    let expected = vec![4, 5, 5, 1, 0, 0, 1];
    assert_eq!(
        (&sim, &live),
        (&expected, &expected),
        "delay_ack: sim, live"
    );
    // msg-2's first delivery (50 s) is leased and left out of the answer; at 80 s its lease
    // ends and it is delivered again, handled once: 5 deliveries, 4 effects, no duplicate.
    let (live, sim) = live_and_sim("{ action: drop_delivery, delivery: 1, keys: [msg-2] }");
    let expected = vec![4, 5, 4, 0, 0, 0, 1];
    assert_eq!(
        (&sim, &live),
        (&expected, &expected),
        "drop_delivery: sim, live"
    );
}
