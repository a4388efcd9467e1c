//! Live mode against the Kafka-protocol broker on this machine (Tansu on 127.0.0.1:9092,
//! docs/kafka-live.md): a member past max.poll.interval.ms, a kill between effect and commit,
//! and auto-commit ahead of the work, each with the built-in target and with the
//! confluent-kafka consumer, give the sim model's counts on the same profile; the run's topic
//! is deleted and no worker is left.
//!
//! One difference is measured, not loosened: a live delivery is a fetch (docs/kafka-live.md),
//! so the records a killed worker had prefetched count as deliveries where the sim model counts
//! only those handed to the application.

use serde_json::Value;

use crate::common::{have_python_module, root, service_up};
use crate::live::{run_to_end as run, workers_left};

/// What both modes must agree on.
pub const SAME: [&str; 8] = [
    "messages",
    "effects",
    "duplicate_effects",
    "lost",
    "unfinished",
    "stale_acks",
    "rebalances",
    "fenced_commits",
];

fn tansu_up() -> bool {
    service_up("the Kafka broker (Tansu)", 9092)
}

fn counts(s: &Value) -> Vec<(&'static str, Option<u64>)> {
    SAME.iter().map(|k| (*k, s[*k].as_u64())).collect()
}

/// The shipped profile's text with its built-in target replaced by `script` as worker
/// processes (marked `marker`), every other consumer setting kept.
fn with_script(
    profile: &str,
    script: &str,
    marker: &str,
) -> (tempfile::TempDir, std::path::PathBuf) {
    let text = std::fs::read_to_string(root().join(profile)).expect("the shipped profile");
    let command = format!(
        "command: [python3, \"{}\"], env: {{ ACKBENCH_TEST_MARKER: \"{marker}\" }}",
        root().join(script).display()
    );
    let replaced: Vec<String> = text
        .lines()
        .map(|l| match l.starts_with("consumer:") {
            true => {
                let target = l.split("target: ").nth(1).and_then(|t| t.split(',').next());
                l.replace(
                    &format!("target: {}", target.expect("a built-in target")),
                    &command,
                )
            }
            false => l.to_string(),
        })
        .collect();
    crate::common::temp_profile(&replaced.join("\n"))
}

/// The broker's topics and consumer groups of the runs of ackbench processes `pids` (a run's
/// topic and its group are named `ackbench-<pid>-<ms>`).
pub fn left_on_broker(pids: &[u32]) -> Vec<String> {
    let o = std::process::Command::new("python3")
        .args([
            "-c",
            "from confluent_kafka.admin import AdminClient\n\
             a = AdminClient({'bootstrap.servers': '127.0.0.1:9092'})\n\
             print('\\n'.join(a.list_topics(timeout=10).topics))\n\
             groups = a.list_consumer_groups(request_timeout=10).result().valid\n\
             print('\\n'.join(g.group_id for g in groups))",
        ])
        .output()
        .expect("python3 runs");
    String::from_utf8_lossy(&o.stdout)
        .lines()
        .filter(|t| {
            pids.iter()
                .any(|p| t.starts_with(&format!("ackbench-{p}-")))
        })
        .map(str::to_string)
        .collect()
}

/// Runs `profile` in sim mode, with the built-in target live and with `script` (a confluent-kafka
/// consumer, when python3 has it) live, the two live runs side by side: each live run's counts
/// are the sim's, its exit code 0, and `deliveries_more` more deliveries than the sim's.
fn live_counts_like_sim(profile: &str, script: &str, deliveries_more: u64) {
    if !tansu_up() {
        return;
    }
    let python = have_python_module("confluent_kafka", "confluent-kafka");
    let marker = format!("kafka-{}-{}", std::process::id(), profile.replace('/', "-"));
    let (_py_dir, py_profile) = with_script(profile, script, &marker);
    let py = python.then(|| std::thread::spawn(move || run(&py_profile, &[])));
    let shipped = root().join(profile);
    let (pid, code, err, builtin) = run(&shipped, &[]);
    let (_, sim_code, sim_err, sim) = run(&shipped, &["--set", "mode=sim"]);
    assert_eq!(sim_code, Some(0), "{sim_err}");
    assert_eq!(code, Some(0), "{err}");
    assert!(!err.contains("could not remove"), "{err}");
    let mut live = vec![("built-in", builtin)];
    let mut pids = vec![pid];
    if let Some(py) = py {
        let (pid, code, err, s) = py.join().expect("the python run");
        assert_eq!(code, Some(0), "{err}");
        assert!(!err.contains("could not remove"), "{err}");
        live.push(("confluent-kafka", s));
        pids.push(pid);
    }
    for (consumer, s) in &live {
        assert_eq!(counts(s), counts(&sim), "{consumer} live against sim: {s}");
        assert_eq!(
            s["deliveries"].as_u64(),
            sim["deliveries"].as_u64().map(|d| d + deliveries_more),
            "{consumer}: a live delivery is a fetch"
        );
    }
    assert_eq!(
        workers_left(&marker),
        Vec::<String>::new(),
        "no worker left"
    );
    if python {
        assert_eq!(
            left_on_broker(&pids),
            Vec::<String>::new(),
            "topics or groups left"
        );
    }
}

#[test]
fn a_member_past_max_poll_interval_counts_like_the_sim_model() {
    // Sim: 3 messages, 5 deliveries, 5 effects (2 duplicates), 2 stale acks (fenced), 0 lost,
    // 2 rebalances (profiles/brokers/live-kafka-poll-interval.yaml derives them). No kill: the
    // worker fetches exactly what its polls hand out.
    live_counts_like_sim(
        "profiles/brokers/live-kafka-poll-interval.yaml",
        "targets/python/kafka_commit_after_work.py",
        0,
    );
}

#[test]
fn a_kill_between_effect_and_commit_counts_like_the_sim_model() {
    // Sim: 6 messages, 7 effects (1 duplicate), 0 lost, 2 rebalances. The killed worker had
    // fetched its partition's 3 records and handed out 1: 2 more deliveries live.
    live_counts_like_sim(
        "profiles/brokers/live-kafka-kill.yaml",
        "targets/python/kafka_commit_after_work.py",
        2,
    );
}

#[test]
fn auto_commit_ahead_of_the_work_loses_the_rest_of_the_batch_like_the_sim_model() {
    // Sim: 6 messages, 3 effects, 3 lost. The killed worker had fetched all 6 records and
    // handed out 3: 3 more deliveries live.
    live_counts_like_sim(
        "profiles/brokers/live-kafka-auto-commit.yaml",
        "targets/python/kafka_auto_commit.py",
        3,
    );
}
