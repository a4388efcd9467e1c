//! A `message` fault live counts as the same profile does in sim mode: on the embedded SQS
//! endpoint a dropped ack (the endpoint answers the DeleteMessage success and never applies it)
//! brings the message back when its visibility timeout ends; on real RabbitMQ the AMQP proxy
//! keeps a `basic.ack` from the server (or passes it on later), and the delivery stays the
//! consumer's until its connection is cut; on real NATS JetStream the proxy keeps an ack (or a
//! delivery) from its way, and the server redelivers when AckWait ends; on real Redis Streams
//! the proxy keeps an XACK (answering the worker `:1` itself) or sends it later, or takes an
//! entry out of a read's reply, and the entry stays pending until XAUTOCLAIM takes it after
//! `min_idle`.

use serde_json::Value;

use crate::common::{run_text, service_up, stderr, summary_of, temp_profile};
use crate::live_rabbitmq::{left_on_server, run_ackbench};

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

/// One built-in ack-after-work worker (prefetch 1) on RabbitMQ, four orders 50 s apart, a 5 s
/// provider; the worker's connection is cut at 80 s (the built-in target connects again at
/// once); `rule` on msg-2's first delivery. The server's consumer_timeout (30 wall minutes,
/// 600m at time_scale 0.05) is far past the run.
const RABBITMQ: &str = "\
name: e2e-rabbitmq-message
mode: live
seed: 3
run: { duration: 200s, drain: 5m, time_scale: 0.05 }
broker: { kind: rabbitmq, consumer_timeout: 600m }
workload: { arrival: { every: 50s }, count: 4 }
consumer: { target: ack-after-work, workers: 1, restart_after: 1s }
provider: { effect_at: request, latency: { dist: fixed, value: 5s } }
chaos:
  - message: RULE
  - connection: { fault: cut, at: 80s, workers: [1] }
";

/// What both modes of a run on a real broker (RabbitMQ, NATS, Redis Streams) must agree on,
/// and how often each rule fired.
fn agreed_counts(s: &Value) -> Vec<u64> {
    let mut v: Vec<u64> = [
        "messages",
        "deliveries",
        "effects",
        "duplicate_effects",
        "lost",
        "unfinished",
        "stale_acks",
        "dlq",
    ]
    .iter()
    .map(|k| s[*k].as_u64().unwrap_or_else(|| panic!("{k} in {s}")))
    .collect();
    v.extend(
        s["chaos_rules"]
            .as_array()
            .expect("chaos_rules")
            .iter()
            .map(|r| r["fired"].as_u64().expect("fired")),
    );
    v
}

/// `RABBITMQ` with `rule` run live against 127.0.0.1:5672 (checked to leave no queue or
/// exchange of its own on the server) and in sim mode: both counts.
fn rabbitmq_live_and_sim(rule: &str) -> (Vec<u64>, Vec<u64>) {
    let (_dir, path) = temp_profile(&RABBITMQ.replace("RULE", rule));
    let path = path.to_str().unwrap();
    let out = tempfile::tempdir().unwrap();
    let run = |dir: &str, mode: &[&str]| {
        let out = out.path().join(dir);
        let mut args = vec!["run", path, "--out", out.to_str().unwrap(), "--quiet"];
        args.extend_from_slice(mode);
        let (pid, o) = run_ackbench(&args);
        assert!(
            o.status.code().is_some_and(|c| c <= 1),
            "{dir}: {}",
            stderr(&o)
        );
        (pid, agreed_counts(&summary_of(&out)))
    };
    let (pid, live) = run("live", &[]);
    assert_eq!(
        left_on_server(pid),
        Vec::<String>::new(),
        "left on the server"
    );
    let (_, sim) = run("sim", &["--set", "mode=sim"]);
    (live, sim)
}

#[test]
fn drop_ack_and_delay_ack_on_real_rabbitmq_count_like_the_sim_model() {
    if !service_up("RabbitMQ", 5672) {
        return;
    }
    // msg-1 at 0 s: effect, acked at 5 s. msg-2 at 50 s: effect, its ack at 55 s kept from the
    // server, so the worker (prefetch 1) holds it and takes nothing more. The cut at 80 s
    // closes its connection: the server requeues msg-2 and hands it to the worker, connected
    // again: a second effect, acked at 85 s. msg-3 at 100 s, msg-4 at 150 s, once each. So 4
    // messages, 5 deliveries, 5 effects, 1 duplicate, nothing lost, unfinished or stale; each
    // rule fired once.
    let delayed = std::thread::spawn(|| {
        rabbitmq_live_and_sim("{ action: delay_ack, delay: 40s, delivery: 1, keys: [msg-2] }")
    });
    let (live, sim) = rabbitmq_live_and_sim("{ action: drop_ack, delivery: 1, keys: [msg-2] }");
    let expected = vec![4, 5, 5, 1, 0, 0, 0, 0, 1, 1];
    assert_eq!((&sim, &live), (&expected, &expected), "drop_ack: sim, live");
    // The same, and msg-2's first ack, held 40 s, comes due at 95 s: its connection is gone
    // and msg-2 acked since, so the server would ignore it: 1 stale ack.
    let (live, sim) = delayed.join().unwrap();
    let expected = vec![4, 5, 5, 1, 0, 0, 1, 0, 1, 1];
    assert_eq!(
        (&sim, &live),
        (&expected, &expected),
        "delay_ack: sim, live"
    );
}

#[test]
fn drop_delivery_and_delay_delivery_on_real_rabbitmq_count_like_the_sim_model() {
    if !service_up("RabbitMQ", 5672) {
        return;
    }
    // msg-2's first delivery (50 s) is handed out and kept from the worker, which (prefetch 1)
    // then takes nothing more. The cut at 80 s closes its connection: the server requeues
    // msg-2 and hands it to the worker, connected again: its only effect, acked at 85 s. So 4
    // messages, 5 deliveries, 4 effects, no duplicate; each rule fired once.
    let delayed = std::thread::spawn(|| {
        rabbitmq_live_and_sim("{ action: delay_delivery, delay: 10s, delivery: 1, keys: [msg-2] }")
    });
    let (live, sim) =
        rabbitmq_live_and_sim("{ action: drop_delivery, delivery: 1, keys: [msg-2] }");
    let expected = vec![4, 5, 4, 0, 0, 0, 0, 0, 1, 1];
    assert_eq!(
        (&sim, &live),
        (&expected, &expected),
        "drop_delivery: sim, live"
    );
    // msg-2's first delivery reaches the worker at 60 s instead of 50 s: its effect then, acked
    // at 65 s, before the cut (which finds the worker idle and holding nothing). 4 deliveries,
    // 4 effects; each rule fired once.
    let (live, sim) = delayed.join().unwrap();
    let expected = vec![4, 4, 4, 0, 0, 0, 0, 0, 1, 1];
    assert_eq!(
        (&sim, &live),
        (&expected, &expected),
        "delay_delivery: sim, live"
    );
}

/// One built-in ack-after-work worker on NATS JetStream (AckWait 30 s, one delivery pending at
/// most), four orders 50 s apart, a 5 s provider; `rule` on msg-2's first delivery.
const NATS: &str = "\
name: e2e-nats-message
mode: live
seed: 3
run: { duration: 200s, drain: 5m, time_scale: 0.05 }
broker: { kind: nats, ack_wait: 30s }
workload: { arrival: { every: 50s }, count: 4 }
consumer: { target: ack-after-work, workers: 1, restart_after: 1s }
provider: { effect_at: request, latency: { dist: fixed, value: 5s } }
chaos:
  - message: RULE
";

/// `NATS` with `rule` run live against 127.0.0.1:4222 (checked to leave no stream of its own
/// on the server) and in sim mode: both counts.
fn nats_live_and_sim(rule: &str) -> (Vec<u64>, Vec<u64>) {
    let (_dir, path) = temp_profile(&NATS.replace("RULE", rule));
    let path = path.to_str().unwrap();
    let out = tempfile::tempdir().unwrap();
    let live = crate::live_nats::finished(crate::live_nats::run(out.path(), "live", path, &[]));
    let sim = crate::live_nats::run(out.path(), "sim", path, &["--set", "mode=sim"]);
    assert!(
        sim.1.status.code().is_some_and(|c| c <= 1),
        "{}",
        stderr(&sim.1)
    );
    (
        agreed_counts(&live),
        agreed_counts(&sim.2.expect("a sim summary")),
    )
}

#[test]
fn every_message_action_on_real_nats_counts_like_the_sim_model() {
    if !crate::live_nats::nats_up() {
        return;
    }
    let runs = [
        "{ action: drop_ack, delivery: 1, keys: [msg-2] }",
        "{ action: delay_ack, delay: 40s, delivery: 1, keys: [msg-2] }",
        "{ action: drop_delivery, delivery: 1, keys: [msg-2] }",
        "{ action: delay_delivery, delay: 10s, delivery: 1, keys: [msg-2] }",
    ]
    .map(|rule| std::thread::spawn(move || nats_live_and_sim(rule)));
    let [drop_ack, delay_ack, drop_delivery, delay_delivery] = runs.map(|r| r.join().unwrap());
    // msg-2 is delivered at 50 s, its effect made, its ack (55 s) kept from the server; its
    // AckWait ends at 80 s: delivered again, a second effect, acked at 85 s. msg-1, msg-3 and
    // msg-4 once each: 4 messages, 5 deliveries, 5 effects, 1 duplicate; the rule fired once.
    let expected = vec![4, 5, 5, 1, 0, 0, 0, 0, 1];
    assert_eq!(
        (&drop_ack.1, &drop_ack.0),
        (&expected, &expected),
        "drop_ack: sim, live"
    );
    // The same, and the first ack reaches the server at 95 s, msg-2 acked since: a stale ack.
    let expected = vec![4, 5, 5, 1, 0, 0, 1, 0, 1];
    assert_eq!(
        (&delay_ack.1, &delay_ack.0),
        (&expected, &expected),
        "delay_ack: sim, live"
    );
    // msg-2's first delivery (50 s) never reaches the worker, which asks again; AckWait ends
    // at 80 s: delivered again, its only effect. 5 deliveries, 4 effects, no duplicate.
    let expected = vec![4, 5, 4, 0, 0, 0, 0, 0, 1];
    assert_eq!(
        (&drop_delivery.1, &drop_delivery.0),
        (&expected, &expected),
        "drop_delivery: sim, live"
    );
    // msg-2's first delivery reaches the worker at 60 s, inside its AckWait: effect, acked at
    // 65 s. 4 deliveries, 4 effects.
    let expected = vec![4, 4, 4, 0, 0, 0, 0, 0, 1];
    assert_eq!(
        (&delay_delivery.1, &delay_delivery.0),
        (&expected, &expected),
        "delay_delivery: sim, live"
    );
}

/// One built-in ack-after-work worker on Redis Streams (an entry claimable after 30 s idle),
/// four orders 50 s apart, a 5 s provider; `rule` on msg-2's first delivery.
const REDIS: &str = "\
name: e2e-redis-message
mode: live
seed: 3
run: { duration: 200s, drain: 5m, time_scale: 0.05 }
broker: { kind: redis-streams, min_idle: 30s }
workload: { arrival: { every: 50s }, count: 4 }
consumer: { target: ack-after-work, workers: 1, restart_after: 1s }
provider: { effect_at: request, latency: { dist: fixed, value: 5s } }
chaos:
  - message: RULE
";

/// `REDIS` with `rule` run live against 127.0.0.1:6379 (checked to leave no key of its own on
/// the server) and in sim mode: both counts.
fn redis_live_and_sim(rule: &str) -> (Vec<u64>, Vec<u64>) {
    let (_dir, path) = temp_profile(&REDIS.replace("RULE", rule));
    let (pid, code, err, live) = crate::live::run_to_end(&path, &[]);
    assert!(code.is_some_and(|c| c <= 1), "live: {err}");
    assert_eq!(
        crate::live_redis_streams::keys_of(pid),
        Vec::<String>::new(),
        "left on the server"
    );
    let (_, code, err, sim) = crate::live::run_to_end(&path, &["--set", "mode=sim"]);
    assert!(code.is_some_and(|c| c <= 1), "sim: {err}");
    (agreed_counts(&live), agreed_counts(&sim))
}

#[test]
fn drop_ack_delay_ack_and_drop_delivery_on_real_redis_streams_count_like_the_sim_model() {
    if !crate::live_redis_streams::redis_up() {
        return;
    }
    let delayed = std::thread::spawn(|| {
        redis_live_and_sim("{ action: delay_ack, delay: 40s, delivery: 1, keys: [msg-2] }")
    });
    let dropped = std::thread::spawn(|| {
        redis_live_and_sim("{ action: drop_delivery, delivery: 1, keys: [msg-2] }")
    });
    let (live, sim) = redis_live_and_sim("{ action: drop_ack, delivery: 1, keys: [msg-2] }");
    // msg-2 is read at 50 s, its effect made, its XACK (55 s) kept from the server and
    // answered 1 by the proxy; it stays in the consumer's pending list, idle from 50 s, and
    // the worker's XAUTOCLAIM takes it at 80 s: delivered again, a second effect, acked at
    // 85 s. msg-1, msg-3 and msg-4 once each: 4 messages, 5 deliveries, 5 effects, 1
    // duplicate, nothing lost, unfinished or stale; the rule fired once.
    let expected = vec![4, 5, 5, 1, 0, 0, 0, 0, 1];
    assert_eq!((&sim, &live), (&expected, &expected), "drop_ack: sim, live");
    // The same, and the first XACK reaches the server 40 s on (95 s; live, when the worker's
    // blocking read ahead of it returns): msg-2 was acked at 85 s, the server answers 0, a
    // stale ack.
    let (live, sim) = delayed.join().unwrap();
    let expected = vec![4, 5, 5, 1, 0, 0, 1, 0, 1];
    assert_eq!(
        (&sim, &live),
        (&expected, &expected),
        "delay_ack: sim, live"
    );
    // msg-2's first delivery (50 s) is taken out of the read's reply (the worker reads nil and
    // reads again); it stays in the consumer's pending list, and the worker's XAUTOCLAIM takes
    // it at 80 s: its only effect, acked at 85 s. 5 deliveries, 4 effects, no duplicate.
    let (live, sim) = dropped.join().unwrap();
    let expected = vec![4, 5, 4, 0, 0, 0, 0, 0, 1];
    assert_eq!(
        (&sim, &live),
        (&expected, &expected),
        "drop_delivery: sim, live"
    );
}
