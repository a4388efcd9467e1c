//! FIFO queues in live mode, on the embedded SQS broker: the retrying producer of
//! profiles/producer-retry-window.yaml and a poison head in one of two message groups, with the
//! built-in target and with the shipped boto3 consumer (targets/python/ack_after_work.py); each
//! live run's counts equal those of the sim run of the same profile. And a retrying producer
//! live against queues that deduplicate nothing (a standard SQS queue, RabbitMQ, NATS, Redis
//! Streams): every attempt is a message, as in sim mode.

use serde_json::Value;

use crate::common::{root, run_profile, run_text, Ran};
use crate::live::have_boto3;
use crate::producer_retries::{counts, PRODUCER_COUNTS};

const PROFILE: &str = "profiles/producer-retry-window.yaml";

/// The shipped profile's text with its consumer replaced by the boto3 consumer.
fn with_python_consumer(text: &str) -> String {
    let script = root().join("targets/python/ack_after_work.py");
    let line = text
        .lines()
        .find(|l| l.starts_with("consumer:"))
        .expect("the profile has a consumer line");
    text.replace(
        line,
        &format!(
            "consumer: {{ command: [python3, \"{}\"], workers: 2, restart_after: 1s }}",
            script.display()
        ),
    )
}

/// A key's (deliveries, distinct broker messages, acked deliveries).
type KeyCounts = (u32, usize, u32);

/// Per key of deliveries.csv: its [`KeyCounts`].
fn per_key(r: &Ran) -> std::collections::BTreeMap<String, KeyCounts> {
    let text = std::fs::read_to_string(r.dir.path().join("deliveries.csv")).expect("deliveries");
    let mut keys: std::collections::BTreeMap<String, (u32, Vec<String>, u32)> = Default::default();
    for line in text.lines().skip(1) {
        let f: Vec<&str> = line.split(',').collect();
        let k = keys.entry(f[1].to_string()).or_default();
        k.0 += 1;
        if !k.1.contains(&f[2].to_string()) {
            k.1.push(f[2].to_string());
        }
        k.2 += u32::from(f[6] == "acked");
    }
    keys.into_iter()
        .map(|(k, (d, m, a))| (k, (d, m.len(), a)))
        .collect()
}

/// The producer example `text` live (time scale 0.02: sends up to minute 16.5, about 20 s)
/// against the sim run of the shipped profile (the built-in ack-after-work, which a consumer
/// command stands for live), with `sets` on both.
fn producer_live_and_sim(text: &str, sets: &[&str]) -> (Ran, Value, Value) {
    let mut live = vec![
        "--quiet",
        "--set",
        "mode=live",
        "--set",
        "run.time_scale=0.02",
    ];
    let mut sim = vec!["--quiet"];
    for s in sets {
        live.extend(["--set", s]);
        sim.extend(["--set", s]);
    }
    let sim = run_profile(std::path::Path::new(PROFILE), &sim).summary();
    let r = run_text(text, &live);
    assert!(r.code() <= 1, "{}", r.stderr());
    let s = r.summary();
    assert_eq!(s["mode"], "live", "{s}");
    (r, s, sim)
}

fn check_five_minute_window(r: &Ran, s: &Value, sim: &Value) {
    // 20 orders, each sent at 0, 1, 3, 7 minutes after its first send; the 5-minute window
    // drops the sends at 1 and 3 (40) and accepts the one at 7 (20 duplicate publishes): 40
    // broker messages, each delivered once and acked after its email: 40 effects, 20
    // duplicates.
    assert_eq!(
        counts(s, PRODUCER_COUNTS),
        [20, 40, 0, 40, 20, 20, 0, 0, 0, 20, 40]
            .map(Value::from)
            .to_vec(),
        "{s}"
    );
    assert_eq!(counts(s, PRODUCER_COUNTS), counts(sim, PRODUCER_COUNTS));
    assert!(s.get("message_groups").is_none(), "{s}");
    // Per order: two broker messages, each delivered once and acked: two emails (one
    // delivery, one email, as 40 effects over 40 deliveries say), so exactly one duplicate.
    let keys = per_key(r);
    assert_eq!(keys.len(), 20);
    for (k, c) in &keys {
        assert_eq!(*c, (2, 2, 2), "{k}: (deliveries, messages, acked)");
    }
}

#[test]
fn the_producer_retry_example_live_sends_one_second_email_per_order() {
    let text = std::fs::read_to_string(root().join(PROFILE)).expect("profile");
    let (r, s, sim) = producer_live_and_sim(&text, &[]);
    assert_eq!(
        r.code(),
        1,
        "the duplicate_effects budget fails: {}",
        r.stdout()
    );
    check_five_minute_window(&r, &s, &sim);
}

#[test]
fn a_ten_minute_window_live_drops_every_retry() {
    // Every retry is inside 10 minutes: 20 messages, 60 sends dropped, 20 emails.
    let text = std::fs::read_to_string(root().join(PROFILE)).expect("profile");
    let (r, s, sim) = producer_live_and_sim(&text, &["broker.dedup_window=10m"]);
    assert_eq!(r.code(), 0, "{}", r.stdout());
    assert_eq!(
        counts(&s, PRODUCER_COUNTS),
        [20, 20, 0, 20, 20, 0, 0, 0, 0, 0, 60]
            .map(Value::from)
            .to_vec(),
        "{s}"
    );
    assert_eq!(counts(&s, PRODUCER_COUNTS), counts(&sim, PRODUCER_COUNTS));
    for (k, c) in per_key(&r) {
        assert_eq!(c, (1, 1, 1), "{k}: (deliveries, messages, acked)");
    }
}

#[test]
fn the_producer_retry_example_live_with_the_boto3_consumer() {
    if !have_boto3() {
        return;
    }
    let text = with_python_consumer(&std::fs::read_to_string(root().join(PROFILE)).expect("p"));
    let (r, s, sim) = producer_live_and_sim(&text, &[]);
    assert_eq!(r.code(), 1, "{}", r.stdout());
    check_five_minute_window(&r, &s, &sim);
}

/// Four messages in two groups (msg-1 at 0 s and msg-3 at 50 s in group-1; msg-2 at 40 s and
/// msg-4 at 80 s in group-2); msg-1 is poison: the consumer dies on it, it is delivered three
/// times, 30 s apart, and dead-lettered at its third lease's end. Group-2's first message comes
/// late enough for the workers to have started even live (a Python worker takes a second or two
/// of wall time, up to 20 s at this scale, under load).
const GROUPS: &str = "name: groups
run: { duration: 90s, drain: 1h, time_scale: 0.1 }
broker: { kind: sqs, visibility_timeout: 30s, max_receives: 3, fifo: true }
workload: { arrival: { at: [0s, 40s, 50s, 80s] }, count: 4, poison: { keys: [msg-1] }, groups: 2 }
consumer: { target: ack-after-work, workers: 2, restart_after: 1s }
provider: { effect_at: request, latency: { dist: fixed, value: 1s } }
";

const GROUP_COUNTS: &[&str] = &[
    "messages",
    "deliveries",
    "redeliveries",
    "effects",
    "duplicate_effects",
    "lost",
    "dlq",
    "unfinished",
    "duplicate_publishes",
    "publishes_deduplicated",
];

/// A message group of summary.json: (group, messages, max_backlog, blocked_s).
type Group = (String, u64, u64, f64);

/// `text` (GROUPS, or GROUPS with a consumer command) live against the sim run of GROUPS.
fn check_groups(text: &str) {
    let sim = run_text(GROUPS, &["--quiet"]);
    assert_eq!(sim.code(), 0, "{}", sim.stdout());
    let sim = sim.summary();
    let r = run_text(text, &["--quiet", "--set", "mode=live"]);
    assert_eq!(r.code(), 0, "{}\n{}", r.stdout(), r.stderr());
    let s = r.summary();
    // 4 messages; msg-1 delivered 3 times (2 redeliveries) then dead-lettered; the other three
    // once each: 6 deliveries, 3 emails, 1 DLQ entry.
    assert_eq!(
        counts(&s, GROUP_COUNTS),
        [4, 6, 2, 3, 0, 0, 1, 0, 0, 0].map(Value::from).to_vec(),
        "{s}"
    );
    assert_eq!(counts(&s, GROUP_COUNTS), counts(&sim, GROUP_COUNTS));
    // Sim: msg-1 delivered at 0, 30 and 60 s, dead-lettered at 90 s; group-1 is blocked from
    // msg-3's publish at 50 s to 90 s (40 s); group-2's messages (at 40 and 80 s, emailed in
    // 1 s) never wait. Live, msg-1's first delivery waits for the workers to start (S), which
    // moves its dead-lettering to 90 + S: group-1 is blocked 40 + S.
    let groups = |s: &Value| -> Vec<Group> {
        s["message_groups"]
            .as_array()
            .unwrap_or_else(|| panic!("message_groups in {s}"))
            .iter()
            .map(|g| {
                (
                    g["group"].as_str().unwrap_or("").to_string(),
                    g["messages"].as_u64().unwrap_or(0),
                    g["max_backlog"].as_u64().unwrap_or(0),
                    g["blocked_s"].as_f64().unwrap_or(-1.0),
                )
            })
            .collect()
    };
    assert_eq!(
        groups(&sim),
        vec![
            ("group-1".into(), 2, 2, 40.0),
            ("group-2".into(), 2, 1, 0.0)
        ]
    );
    let live = groups(&s);
    let shape = |g: &[Group]| -> Vec<(String, u64, u64)> {
        g.iter().map(|(n, m, b, _)| (n.clone(), *m, *b)).collect()
    };
    assert_eq!(shape(&live), shape(&groups(&sim)), "{s}");
    assert!(
        (40.0..70.0).contains(&live[0].3),
        "group-1 blocked 40 s and the workers' start: {s}"
    );
    assert_eq!(live[1].3, 0.0, "group-2 never waits: {s}");
}

#[test]
fn a_poison_head_live_blocks_its_group_only() {
    check_groups(GROUPS);
}

#[test]
fn a_poison_head_live_blocks_its_group_only_with_the_boto3_consumer() {
    if !have_boto3() {
        return;
    }
    check_groups(&with_python_consumer(GROUPS));
}

/// A retrying producer against a queue that deduplicates nothing (`broker`): every attempt is
/// a message.
fn producer_without_fifo(broker: &str) {
    // 4 orders 10 s apart, each first attempt unanswered, retried after 1m: sends at 0, 10,
    // 20, 30 s and 60, 70, 80, 90 s, all accepted: 8 broker messages, 4 duplicate publishes,
    // none dropped; each delivered once and emailed: 8 effects, 4 duplicates (1 per order).
    let text = format!(
        "name: producer-standard
run: {{ duration: 40s, drain: 10m, time_scale: 0.05 }}
broker: {broker}
workload:
  arrival: {{ every: 10s }}
  count: 4
  producer: {{ first_attempts: 1, backoff: [1m] }}
consumer: {{ target: ack-after-work, workers: 2 }}
provider: {{ effect_at: request, latency: {{ dist: fixed, value: 200ms }} }}
"
    );
    let sim = run_text(&text, &["--quiet"]).summary();
    let r = run_text(&text, &["--quiet", "--set", "mode=live"]);
    assert!(r.code() <= 1, "{}", r.stderr());
    let s = r.summary();
    assert_eq!(s["mode"], "live", "{s}");
    assert_eq!(
        counts(&s, PRODUCER_COUNTS),
        [4, 8, 0, 8, 4, 4, 0, 0, 0, 4, 0].map(Value::from).to_vec(),
        "{s}"
    );
    assert_eq!(counts(&s, PRODUCER_COUNTS), counts(&sim, PRODUCER_COUNTS));
}

#[test]
fn a_retrying_producer_live_on_a_standard_queue_sends_every_attempt() {
    producer_without_fifo("{ kind: sqs, visibility_timeout: 30s }");
}

/// [`producer_without_fifo`] on a real server answering on `port`, if it is up.
fn producer_on_server(name: &str, port: u16, broker: &str) {
    if crate::common::service_up(name, port) {
        producer_without_fifo(broker);
    }
}

#[test]
fn a_retrying_producer_live_on_rabbitmq_sends_every_attempt() {
    // The server's consumer_timeout (30 min of wall time) is 600m at this time scale.
    let broker = "{ kind: rabbitmq, queue_type: quorum, consumer_timeout: 600m }";
    producer_on_server("RabbitMQ", 5672, broker);
}

#[test]
fn a_retrying_producer_live_on_nats_sends_every_attempt() {
    producer_on_server("NATS", 4222, "{ kind: nats, ack_wait: 30s }");
}

#[test]
fn a_retrying_producer_live_on_redis_streams_sends_every_attempt() {
    producer_on_server("Redis", 6379, "{ kind: redis-streams, min_idle: 30s }");
}
