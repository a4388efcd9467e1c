//! Live mode against the real RabbitMQ server on 127.0.0.1:5672 (3.10.x, guest/guest): the sim
//! model's counts from the real server (the Thursday, kills at `call_answered`), the pika
//! consumer against the built-in target and on the scaled clock, nothing left on the server
//! after a run (also after SIGINT and SIGTERM mid-run), an unreachable URL and a contradicting
//! `consumer_timeout`.

use std::process::{Command, Output, Stdio};
use std::time::Duration;

use serde_json::Value;

use crate::common::{root, service_up, stderr, summary_of, temp_profile};
use crate::live::{until_going, workers_left, GOING_WITHIN};
use crate::live_clock::have_libfaketime;

/// python3 with pika: installed with pip when missing under ACKBENCH_REQUIRE_SERVICES=1 (as CI
/// runs), else the Python half of a test is skipped with a printed reason.
fn have_pika() -> bool {
    crate::common::python_with("pika", "pika>=1.3")
}

const KEYS: [&str; 6] = [
    "messages",
    "effects",
    "duplicate_effects",
    "dlq",
    "lost",
    "unfinished",
];

fn counts(s: &Value) -> Vec<u64> {
    crate::common::counts(s, &KEYS)
}

/// What ackbench named on the server for the run of process `pid` (`ackbench-<pid>-<millis>`):
/// its queues and exchanges still there.
pub fn left_on_server(pid: u32) -> Vec<String> {
    let prefix = format!("ackbench-{pid}-");
    let mut left = Vec::new();
    for what in ["list_queues", "list_exchanges"] {
        // rabbitmqctl starts an Erlang node of its own each time, which can fail on a loaded
        // machine (a timeout reaching the server): a failure is tried again before it counts.
        let mut tries = 0;
        let o = loop {
            let o = Command::new("rabbitmqctl")
                .args([what, "name", "-q"])
                .output()
                .expect("rabbitmqctl runs");
            tries += 1;
            if o.status.success() || tries == 3 {
                break o;
            }
            std::thread::sleep(Duration::from_secs(1));
        };
        assert!(
            o.status.success(),
            "rabbitmqctl {what}, tried {tries} times: {}",
            stderr(&o)
        );
        left.extend(
            String::from_utf8_lossy(&o.stdout)
                .lines()
                .map(str::trim)
                .filter(|n| n.starts_with(&prefix))
                .map(|n| format!("{what}: {n}")),
        );
    }
    left
}

/// Runs `ackbench ARGS...`; its pid and output.
pub fn run_ackbench(args: &[&str]) -> (u32, Output) {
    let child = Command::new(env!("CARGO_BIN_EXE_ackbench"))
        .args(args)
        .current_dir(root())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("ackbench starts");
    let pid = child.id();
    (pid, child.wait_with_output().expect("ackbench runs"))
}

/// Runs `profile` live, checks it left nothing on the server and no worker process carrying
/// `marker`; its summary.
fn live(profile: &str, marker: &str) -> Value {
    live_run(profile, marker).2
}

/// [`live`], with the run's pid and stderr.
fn live_run(profile: &str, marker: &str) -> (u32, String, Value) {
    let dir = tempfile::tempdir().unwrap();
    let live = dir.path().join("live");
    let (pid, o) = run_ackbench(&["run", profile, "--out", live.to_str().unwrap(), "--quiet"]);
    assert!(
        o.status.code().is_some_and(|c| c <= 1),
        "{profile}: {}",
        stderr(&o)
    );
    assert_eq!(
        left_on_server(pid),
        Vec::<String>::new(),
        "left on the server"
    );
    assert!(
        workers_left(marker).is_empty(),
        "workers left: {:?}",
        workers_left(marker)
    );
    let summary = summary_of(&live);
    assert!(
        summary.get("unattributed_calls").is_none(),
        "every call matched to a delivery its worker held: {summary}"
    );
    (pid, stderr(&o), summary)
}

/// Runs `profile` live (as [`live`]) and in sim mode (`--set mode=sim`); both summaries.
fn live_and_sim(profile: &str, marker: &str) -> (Value, Value) {
    let live = live(profile, marker);
    (live, sim(profile))
}

/// Runs `profile` in sim mode; its summary.
fn sim(profile: &str) -> Value {
    let dir = tempfile::tempdir().unwrap();
    let sim = dir.path().join("sim");
    let (_, o) = run_ackbench(&[
        "run",
        profile,
        "--set",
        "mode=sim",
        "--out",
        sim.to_str().unwrap(),
        "--quiet",
    ]);
    assert!(
        o.status.code().is_some_and(|c| c <= 1),
        "{profile} sim: {}",
        stderr(&o)
    );
    summary_of(&sim)
}

#[test]
fn the_thursday_on_real_rabbitmq_counts_like_the_sim_model() {
    if !service_up("RabbitMQ", 5672) {
        return;
    }
    let (live, sim) = live_and_sim("profiles/brokers/live-rabbitmq-thursday.yaml", "none");
    assert_eq!(live["mode"], "live");
    // One email per order: 108 deliveries, no duplicate (no lease; consumer_timeout far away).
    assert_eq!(counts(&sim), [108, 108, 0, 0, 0, 0]);
    assert_eq!(counts(&live), counts(&sim));
    assert_eq!(live["deliveries"], sim["deliveries"]);
    assert_eq!(live["stale_acks"], sim["stale_acks"]);
}

/// The consumer line of profiles/brokers/live-rabbitmq-thursday.yaml.
const THURSDAY_CONSUMER: &str =
    "consumer: { target: ack-after-work, workers: 4, restart_after: 1s }";

/// That Thursday over its first 20 orders (1000 s of profile time, 50 s of wall time), with
/// `consumer` as its consumer line.
fn short_thursday(consumer: &str) -> String {
    let text = std::fs::read_to_string(root().join("profiles/brokers/live-rabbitmq-thursday.yaml"))
        .expect("the Thursday profile");
    assert!(text.contains(THURSDAY_CONSUMER), "{text}");
    text.replace("count: 108", "count: 20")
        .replace("duration: 90m", "duration: 1000s")
        .replace(THURSDAY_CONSUMER, consumer)
}

#[test]
fn pika_on_the_scaled_clock_keeps_its_connections_and_counts_like_the_sim_model() {
    if !service_up("RabbitMQ", 5672) || !have_libfaketime() || !have_pika() {
        return;
    }
    // The pika consumer, unmodified, on the clock sped up 20x (the default of this compressed
    // run). pika takes the server's 60 s heartbeat and drops a connection that stays silent
    // for two of its checks of 65 s: unconverted that is 6.5 s of wall time, and each worker
    // here waits up to about 8 wall seconds between orders, so every worker would drop and
    // reconnect again and again (seen as "missed heartbeats" in its log). Converted, the
    // heartbeat reaches pika as 1200 s, and its answer reaches the server as 60 s again.
    let marker = format!("rmq-clock-{}", std::process::id());
    let script = root().join("targets/python/rabbitmq_ack_after_work.py");
    let (_dir, path) = temp_profile(&short_thursday(&format!(
        "consumer: {{ command: [python3, \"{}\"], workers: 4, restart_after: 1s, \
         env: {{ ACKBENCH_TEST_MARKER: \"{marker}\" }} }}",
        script.display()
    )));
    let (pid, err, py) = live_run(path.to_str().unwrap(), &marker);
    assert!(err.contains("consumer clock: scaled, x20"), "{err}");
    let (_sim_dir, sim_path) = temp_profile(&short_thursday(THURSDAY_CONSUMER));
    let sim = sim(sim_path.to_str().unwrap());
    // One email per order, each delivered once: 20 / 20 / 0, as the sim model says.
    assert_eq!(counts(&sim), [20, 20, 0, 0, 0, 0]);
    assert_eq!(counts(&py), counts(&sim));
    assert_eq!(py["deliveries"], sim["deliveries"]);
    // Each worker kept its one connection: no heartbeat timeout, no reconnect.
    let logs = std::env::temp_dir().join(format!("ackbench-live-{pid}/logs"));
    for w in 1..=4 {
        let log = std::fs::read_to_string(logs.join(format!("worker-{w}.err"))).unwrap_or_default();
        assert!(log.contains("consuming"), "worker {w} started: {log}");
        assert!(!log.contains("connection failed"), "worker {w}: {log}");
    }
    let _ = std::fs::remove_dir_all(logs.parent().unwrap());
}

/// 30 orders every 5 s, 3 workers, 20 kills between the provider's answer and the ack. The
/// drain (3 wall minutes) only bounds a run on a loaded machine: a run stops once drained.
fn kills_profile(consumer: &str, marker: &str) -> String {
    // A worker process carries the marker in its environment (a built-in target has none).
    let env = if consumer.starts_with("command") {
        format!("env: {{ ACKBENCH_TEST_MARKER: \"{marker}\" }}")
    } else {
        String::new()
    };
    format!(
        r#"
name: live-rabbitmq-kills
mode: live
seed: 7
run: {{ duration: 150s, drain: 60m, time_scale: 0.05 }}
broker: {{ kind: rabbitmq, consumer_timeout: 600m }}
workload: {{ arrival: {{ every: 5s }}, count: 30 }}
consumer:
  {consumer}
  workers: 3
  restart_after: 1s
  {env}
provider:
  effect_at: request
  latency: {{ dist: lognormal, median: 240ms, p99: 900ms }}
chaos:
  - kill_worker: {{ point: call_answered, delivery: 1, times: 20 }}
"#
    )
}

#[test]
fn kills_at_call_answered_on_real_rabbitmq_count_like_the_sim_model_in_rust_and_python() {
    if !service_up("RabbitMQ", 5672) {
        return;
    }
    let python = have_pika();
    let run = |consumer: String, marker: String| {
        std::thread::spawn(move || {
            let (dir, path) = temp_profile(&kills_profile(&consumer, &marker));
            let r = if consumer.starts_with("command") {
                (live(path.to_str().unwrap(), &marker), Value::Null)
            } else {
                live_and_sim(path.to_str().unwrap(), &marker)
            };
            drop(dir);
            r
        })
    };
    let pid = std::process::id();
    let builtin = run("target: ack-after-work".into(), format!("rmq-kills-{pid}"));
    let script = root().join("targets/python/rabbitmq_ack_after_work.py");
    let pika = python.then(|| {
        run(
            format!("command: [python3, \"{}\"]", script.display()),
            format!("rmq-kills-py-{pid}"),
        )
    });
    let (live, sim) = builtin.join().unwrap();
    // Each kill falls between an email and its ack: the connection closes, the server requeues
    // the message, and its second delivery sends the email again: 20 duplicates, nothing lost.
    assert_eq!(counts(&sim), [30, 50, 20, 0, 0, 0]);
    assert_eq!(counts(&live), counts(&sim), "built-in ack-after-work");
    assert_eq!(live["worker_kills"], 20);
    assert_eq!(live["deliveries"], sim["deliveries"]);
    if let Some(pika) = pika {
        let (py, _) = pika.join().unwrap();
        assert_eq!(
            counts(&py),
            counts(&live),
            "pika consumer against the built-in target"
        );
        assert_eq!(py["worker_kills"], 20);
    }
}

#[test]
fn received_kills_dead_letter_at_the_quorum_delivery_limit_like_the_sim_model() {
    if !service_up("RabbitMQ", 5672) {
        return;
    }
    // 24 kills at `received`, each cutting the worker's connection before the delivery reaches
    // it (the server requeues it: a return). With delivery_limit 1 the second return
    // dead-letters: the first 12 messages to be handed out twice and killed twice go to the
    // dead-letter queue without effect; the other 8 are sent once. The sim model agrees.
    let profile = kills_profile("target: ack-after-work", "none")
        .replace(
            "consumer_timeout: 600m",
            "consumer_timeout: 600m, delivery_limit: 1",
        )
        .replace("count: 30", "count: 20")
        // One worker: which message a restarted worker gets next is then the server's order
        // alone (returns first on a quorum queue), not a race between restarts.
        .replace("workers: 3", "workers: 1")
        .replace(
            "point: call_answered, delivery: 1, times: 20",
            "point: received, times: 24",
        );
    // Without a dead-letter exchange the server drops those 12 (no effect: lost); ackbench
    // sees no drop, and counts the messages the emptied queue no longer has.
    let dropping = {
        let profile = profile.replace("delivery_limit: 1", "delivery_limit: 1, dead_letter: false");
        std::thread::spawn(move || {
            let (_dir, path) = temp_profile(&profile);
            live_and_sim(path.to_str().unwrap(), "none")
        })
    };
    let (_dir, path) = temp_profile(&profile);
    let (live, sim) = live_and_sim(path.to_str().unwrap(), "none");
    assert_eq!(counts(&sim), [20, 8, 0, 12, 0, 0]);
    assert_eq!(counts(&live), counts(&sim));
    assert_eq!(live["dlq_with_effect"], 0);
    assert_eq!(live["deliveries"], sim["deliveries"]);
    assert_eq!(live["worker_kills"], 24);
    let (live, sim) = dropping.join().unwrap();
    assert_eq!(counts(&sim), [20, 8, 0, 0, 12, 0]);
    assert_eq!(counts(&live), counts(&sim), "dead_letter: false");
}

/// Starts a long run, waits until its queue exists, sends `signal`, and checks the run stopped
/// (exit 3, interrupted) leaving nothing on the server and no worker.
fn interrupted_leaves_nothing(signal: nix::sys::signal::Signal, python: bool) {
    let marker = format!("rmq-{signal:?}-{}", std::process::id());
    let script = root().join("targets/python/rabbitmq_ack_after_work.py");
    let consumer = if python {
        format!("command: [python3, \"{}\"]", script.display())
    } else {
        "target: ack-after-work".to_string()
    };
    let (dir, path) = temp_profile(
        // Publishing goes on for 150 wall seconds (3000 s at 0.05), far past the signal, however
        // slowly the workers start: the run is still going when it is interrupted.
        &kills_profile(&consumer, &marker)
            .replace("count: 30", "count: 2000")
            .replace("duration: 150s", "duration: 3000s"),
    );
    let out = dir.path().join("r");
    let child = Command::new(env!("CARGO_BIN_EXE_ackbench"))
        .args([
            "run",
            path.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "--quiet",
        ])
        .current_dir(root())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("ackbench starts");
    let pid = child.id();
    // Going: the run's queue is on the server and, with the Python consumer, a worker process
    // of it runs (one running is enough to see that the signal stops it).
    let seen = until_going(
        Duration::from_millis(200),
        || (left_on_server(pid), workers_left(&marker)),
        |(queues, workers)| !queues.is_empty() && (!python || !workers.is_empty()),
    );
    if seen.is_ok() {
        std::thread::sleep(Duration::from_secs(1));
    }
    nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid as i32), signal).unwrap();
    // What ackbench said, read to its end (a pipe nobody reads could stall it), for every failure.
    let o = child.wait_with_output().unwrap();
    let said = format!(
        "{signal:?} (python: {python}), ackbench said:\n{}",
        stderr(&o)
    );
    assert!(
        seen.is_ok(),
        "the run got going within {GOING_WITHIN:?} (queues and workers seen last: {seen:?}); \
         {said}"
    );
    assert_eq!(
        o.status.code(),
        Some(3),
        "an interrupted run could not complete; {said}"
    );
    assert_eq!(
        left_on_server(pid),
        Vec::<String>::new(),
        "left on the server; {said}"
    );
    let left = workers_left(&marker);
    assert!(left.is_empty(), "workers left: {left:?}; {said}");
}

#[test]
fn sigint_and_sigterm_mid_run_leave_nothing_on_rabbitmq() {
    if !service_up("RabbitMQ", 5672) {
        return;
    }
    let python = have_pika();
    let term = std::thread::spawn(move || {
        interrupted_leaves_nothing(nix::sys::signal::Signal::SIGTERM, python)
    });
    interrupted_leaves_nothing(nix::sys::signal::Signal::SIGINT, false);
    term.join().unwrap();
}

#[test]
fn an_unreachable_rabbitmq_exits_3_naming_the_url_and_the_kind() {
    let (_dir, path) = temp_profile(&kills_profile("target: ack-after-work", "none").replace(
        "kind: rabbitmq,",
        "kind: rabbitmq, url: \"amqp://guest:guest@127.0.0.1:1/%2f\",",
    ));
    let (_, o) = run_ackbench(&["run", path.to_str().unwrap(), "--quiet"]);
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(
        e.contains("rabbitmq") && e.contains("amqp://guest:guest@127.0.0.1:1/%2f"),
        "{e}"
    );
}

#[test]
fn a_consumer_timeout_the_server_does_not_have_exits_2_with_the_servers_value() {
    if !service_up("RabbitMQ", 5672) {
        return;
    }
    // 30m at time_scale 0.05 is 90 000 ms of wall time; the server's default is 1 800 000 ms.
    let (_dir, path) = temp_profile(
        &kills_profile("target: ack-after-work", "none")
            .replace("consumer_timeout: 600m", "consumer_timeout: 30m"),
    );
    let (pid, o) = run_ackbench(&["run", path.to_str().unwrap(), "--quiet"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(e.contains("consumer_timeout = 90000"), "how to set it: {e}");
    assert!(
        e.contains("runs with consumer_timeout = "),
        "the server's value: {e}"
    );
    assert_eq!(left_on_server(pid), Vec::<String>::new());
}
