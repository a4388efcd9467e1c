//! Live mode against a real Redis server (127.0.0.1:6379): the Thursday and a kill scenario give
//! the sim model's counts with the built-in target and with the redis-py consumer; nothing the
//! run created is left on the server, also after SIGINT and SIGTERM mid-run, and no worker is
//! left; an unreachable server exits 3, a server that may evict the stream exits 2.

use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::time::Duration;

use nix::sys::signal::Signal;
use serde_json::Value;

use crate::common::{
    ackbench, have_python_module, root, service_up, signal, start, stderr, summary_of,
    temp_profile, wait_within,
};
use crate::live::{until_going, workers_left, GOING_WITHIN};

const COUNTS: [&str; 5] = ["effects", "duplicate_effects", "dlq", "lost", "unfinished"];

pub fn redis_up() -> bool {
    service_up("Redis", 6379)
}

fn counts(s: &Value) -> Vec<(String, Option<u64>)> {
    ["messages", "deliveries", "stale_acks"]
        .iter()
        .chain(COUNTS.iter())
        .map(|k| (k.to_string(), s[*k].as_u64()))
        .collect()
}

/// The Redis keys of the runs of ackbench process `pid` (the run id is `ackbench-<pid>-<ms>`).
pub fn keys_of(pid: u32) -> Vec<String> {
    let client = redis::Client::open("redis://127.0.0.1:6379/").expect("a Redis URL");
    let mut conn = client.get_connection().expect("Redis answers");
    redis::cmd("KEYS")
        .arg(format!("ackbench-{pid}-*"))
        .query(&mut conn)
        .expect("KEYS answers")
}

/// Run `pid` left no key on the server and no worker (marked `marker`) running.
fn left_nothing(pid: u32, marker: &str) {
    assert_eq!(
        keys_of(pid),
        Vec::<String>::new(),
        "the run's keys are deleted"
    );
    assert_eq!(workers_left(marker), Vec::<String>::new(), "no worker left");
}

/// Runs `profile` in sim mode: (exit code, stderr, summary).
fn sim_run(profile: &std::path::Path) -> (Option<i32>, String, Value) {
    let dir = tempfile::tempdir().expect("temp dir");
    let out = dir.path().join("sim");
    let o = ackbench(&[
        "run",
        profile.to_str().unwrap(),
        "--set",
        "mode=sim",
        "--out",
        out.to_str().unwrap(),
        "--quiet",
        "--format",
        "json",
    ]);
    (o.status.code(), stderr(&o), summary_of(&out))
}

fn run(profile: &std::path::Path, args: &[&str]) -> (u32, Option<i32>, String, Value) {
    crate::live::run_to_end(profile, args)
}

/// A kill scenario: 30 orders every 5 s to 3 workers, 20 kills at `call_answered` of a first
/// delivery, min_idle 30 s, at most 5 deliveries. `consumer` is the YAML of `consumer:`. At
/// time scale 0.2 (30 s of wall time for the orders) a Python worker's restart (a second or
/// more of interpreter start on a busy machine) is a few profile seconds.
fn kill_profile(consumer: &str) -> String {
    format!(
        r#"
name: live-redis-kills
mode: live
seed: 7
run: {{ duration: 150s, drain: 30m, time_scale: 0.2 }}
broker: {{ kind: redis-streams, min_idle: 30s, max_deliveries: 5 }}
workload: {{ arrival: {{ every: 5s }}, count: 30 }}
consumer: {consumer}
provider:
  effect_at: request
  latency: {{ dist: lognormal, median: 240ms, p99: 900ms }}
chaos:
  - kill_worker: {{ point: call_answered, delivery: 1, times: 20 }}
"#
    )
}

fn python_consumer(marker: &str) -> String {
    let script = root().join("targets/python/redis_streams_ack_after_work.py");
    format!(
        "{{ command: [python3, \"{}\"], workers: 3, restart_after: 1s, env: {{ ACKBENCH_TEST_MARKER: \"{marker}\" }} }}",
        script.display()
    )
}

const BUILTIN: &str = "{ target: ack-after-work, workers: 3, restart_after: 1s }";

#[test]
fn the_thursday_on_redis_streams_counts_like_the_sim_model_and_leaves_nothing() {
    if !redis_up() {
        return;
    }
    let profile = root().join("profiles/brokers/live-redis-streams-thursday.yaml");
    let (sim_code, sim_err, sim) = sim_run(&profile);
    assert_eq!(sim_code, Some(1), "{sim_err}");
    // The sim model's Thursday on Redis Streams (profiles/brokers/redis-streams.yaml's header):
    // each order is claimed once at 30 s, 108 duplicates, 216 stale acks, nothing dead.
    assert_eq!(
        (sim["effects"].as_u64(), sim["duplicate_effects"].as_u64()),
        (Some(216), Some(108))
    );
    let (pid, code, err, live) = run(&profile, &[]);
    assert_eq!(code, Some(1), "the duplicate budget fails: {err}");
    assert_eq!(live["mode"], "live");
    assert_eq!(counts(&live), counts(&sim), "live against sim");
    assert_eq!(
        keys_of(pid),
        Vec::<String>::new(),
        "the run's keys are deleted"
    );
}

#[test]
fn kills_at_call_answered_count_like_the_sim_model_with_the_builtin_and_the_python_consumer() {
    if !redis_up() {
        return;
    }
    let python = have_python_module("redis", "redis");
    let marker = format!("redis-kills-{}", std::process::id());
    let (_py_dir, py_profile) = temp_profile(&kill_profile(&python_consumer(&marker)));
    let py = python.then(|| std::thread::spawn(move || run(&py_profile, &[])));
    let (_dir, profile) = temp_profile(&kill_profile(BUILTIN));
    let (sim_code, sim_err, sim) = sim_run(&profile);
    assert!(sim_code.is_some_and(|c| c <= 1), "{sim_err}");
    // Each kill falls between the effect and the XACK: the entry stays in the dead worker's
    // pending entries list until an idle worker claims it 30 s later and sends it again. 30
    // orders, 20 of them twice: 50 effects, 20 duplicates, none dead or lost.
    assert_eq!(
        (
            sim["effects"].as_u64(),
            sim["duplicate_effects"].as_u64(),
            sim["worker_kills"].as_u64()
        ),
        (Some(50), Some(20), Some(20))
    );
    let (pid, code, err, live) = run(&profile, &[]);
    assert!(code.is_some_and(|c| c <= 1), "{err}");
    assert_eq!(live["worker_kills"], 20, "{err}");
    assert_eq!(counts(&live), counts(&sim), "built-in target against sim");
    assert_eq!(
        keys_of(pid),
        Vec::<String>::new(),
        "the run's keys are deleted"
    );
    if let Some(py) = py {
        let (pid, code, err, live) = py.join().expect("the Python run");
        assert!(code.is_some_and(|c| c <= 1), "{err}");
        assert_eq!(live["worker_kills"], 20, "{err}");
        assert_eq!(counts(&live), counts(&sim), "redis-py consumer against sim");
        left_nothing(pid, &marker);
    }
}

/// The Thursday of profiles/brokers/live-redis-streams-thursday.yaml over its first 20 orders
/// (1000 s), with `consumer` for its consumer, at time scale 0.1: the closest call of seed 1's
/// first deliveries (msg-11, 31.58 s) answers 0.58 s of profile time after the claim at 30 s,
/// 58 ms of wall time for the claimer's XPENDING and XCLAIM, where 0.05 leaves a Python
/// consumer on a busy machine 29 ms.
fn short_thursday(consumer: &str) -> String {
    let text =
        std::fs::read_to_string(root().join("profiles/brokers/live-redis-streams-thursday.yaml"))
            .expect("the shipped profile");
    let builtin = "consumer: { target: ack-after-work, workers: 4, restart_after: 1s }";
    assert!(
        text.contains(builtin) && text.contains("count: 108") && text.contains("time_scale: 0.05")
    );
    text.replace(builtin, &format!("consumer: {consumer}"))
        .replace("count: 108", "count: 20")
        .replace("duration: 90m", "duration: 1000s")
        .replace("time_scale: 0.05", "time_scale: 0.1")
}

#[test]
fn the_redis_py_consumer_on_the_scaled_clock_counts_like_the_sim_model() {
    if !redis_up()
        || !have_python_module("redis", "redis")
        || !crate::live_clock::have_libfaketime()
    {
        return;
    }
    let marker = format!("redis-clock-{}", std::process::id());
    let python = python_consumer(&marker).replace("workers: 3", "workers: 4");
    let (_dir, profile) = temp_profile(&short_thursday(&python));
    let (_sim_dir, sim_profile) = temp_profile(&short_thursday(
        "{ target: ack-after-work, workers: 4, restart_after: 1s }",
    ));
    let (sim_code, sim_err, sim) = sim_run(&sim_profile);
    assert_eq!(sim_code, Some(1), "{sim_err}");
    // Each of the 20 orders is claimed once at 30 s, during its 31-40 s provider call: 40
    // deliveries and effects (20 duplicates); both XACKs are stale (the first removes the
    // entry, the second finds it gone): 40 stale acks, nothing dead or lost.
    assert_eq!(
        (
            sim["deliveries"].as_u64(),
            sim["effects"].as_u64(),
            sim["duplicate_effects"].as_u64(),
            sim["stale_acks"].as_u64(),
            sim["dlq"].as_u64()
        ),
        (Some(40), Some(40), Some(20), Some(40), Some(0))
    );
    let (pid, code, err, live) = run(&profile, &[]);
    assert_eq!(code, Some(1), "the duplicate budget fails: {err}");
    // The consumer ran on the run's pace (time_scale 0.1: 10 times as fast), its durations
    // (BLOCK, min-idle-time, XPENDING's idle times) converted by its proxy.
    assert!(err.contains("consumer clock: scaled, x10 "), "{err}");
    assert_eq!(
        counts(&live),
        counts(&sim),
        "redis-py consumer against sim: {err}"
    );
    assert_eq!(
        keys_of(pid),
        Vec::<String>::new(),
        "the run's keys are deleted"
    );
    assert_eq!(
        workers_left(&marker),
        Vec::<String>::new(),
        "no worker left"
    );
}

/// Starts a long run of Python workers, sends `sig` once they run and the stream exists, and
/// checks that the run's keys and workers are gone.
fn interrupted(sig: Signal) {
    if !redis_up() || !have_python_module("redis", "redis") {
        return;
    }
    let marker = format!("redis-{sig}-{}", std::process::id());
    let text = kill_profile(&python_consumer(&marker))
        .replace("count: 30", "count: 400")
        .replace("duration: 150s", "duration: 2000s");
    let (dir, profile) = temp_profile(&text);
    let out = dir.path().join("r");
    let mut child = start(&[
        "run",
        profile.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--quiet",
        "--format",
        "json",
    ]);
    let pid = child.id();
    // Going: the stream is on the server and a worker process runs (one running is enough to
    // see that the signal stops it).
    let seen = until_going(
        Duration::from_millis(100),
        || (keys_of(pid), workers_left(&marker)),
        |(keys, workers)| !keys.is_empty() && !workers.is_empty(),
    );
    if let Err((keys, workers)) = seen {
        let _ = child.kill();
        panic!("{sig:?}: the run got going within {GOING_WITHIN:?}: keys {keys:?}, workers {workers:?}");
    }
    std::thread::sleep(Duration::from_secs(2));
    signal(&child, sig);
    assert_eq!(wait_within(&mut child, Duration::from_secs(30)), Some(3));
    left_nothing(pid, &marker);
}

#[test]
fn sigint_mid_run_deletes_the_stream_and_stops_every_worker() {
    interrupted(Signal::SIGINT);
}

#[test]
fn sigterm_mid_run_deletes_the_stream_and_stops_every_worker() {
    interrupted(Signal::SIGTERM);
}

#[test]
fn an_unreachable_server_exits_3_naming_the_url_and_the_kind() {
    let (_dir, profile) = temp_profile(&kill_profile(BUILTIN));
    let o = ackbench(&[
        "run",
        profile.to_str().unwrap(),
        "--set",
        "broker.url=redis://127.0.0.1:1",
        "--out",
        profile.with_file_name("r").to_str().unwrap(),
        "--quiet",
    ]);
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains("redis://127.0.0.1:1") && err.contains("redis-streams"),
        "{err}"
    );
}

/// A server that answers CONFIG GET as one with `maxmemory 100mb` and `allkeys-lru`, and an
/// error to anything else (as an old server answers CLIENT SETINFO).
fn evicting_server() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").expect("a port");
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for conn in listener.incoming().flatten() {
            std::thread::spawn(move || {
                let mut w = conn.try_clone().expect("a socket");
                let mut r = BufReader::new(conn);
                let mut line = String::new();
                loop {
                    // A command: *N, then N bulk strings ($len, text).
                    line.clear();
                    if r.read_line(&mut line).unwrap_or(0) == 0 {
                        return;
                    }
                    let n: usize = line.trim_start_matches('*').trim().parse().unwrap_or(0);
                    let mut args = Vec::new();
                    for _ in 0..n * 2 {
                        line.clear();
                        r.read_line(&mut line).unwrap_or(0);
                        if !line.starts_with('$') {
                            args.push(line.trim().to_ascii_lowercase());
                        }
                    }
                    let reply = match args.iter().map(String::as_str).collect::<Vec<_>>()[..] {
                        ["config", "get", "maxmemory"] => {
                            "*2\r\n$9\r\nmaxmemory\r\n$9\r\n104857600\r\n".to_string()
                        }
                        ["config", "get", "maxmemory-policy"] => {
                            "*2\r\n$16\r\nmaxmemory-policy\r\n$11\r\nallkeys-lru\r\n".to_string()
                        }
                        _ => "-ERR unknown command\r\n".to_string(),
                    };
                    if w.write_all(reply.as_bytes()).is_err() {
                        return;
                    }
                }
            });
        }
    });
    port
}

#[test]
fn a_server_that_may_evict_the_stream_exits_2_with_its_setting() {
    let port = evicting_server();
    let (_dir, profile) = temp_profile(&kill_profile(BUILTIN));
    let url = format!("broker.url=redis://127.0.0.1:{port}");
    let o = ackbench(&[
        "run",
        profile.to_str().unwrap(),
        "--set",
        &url,
        "--out",
        profile.with_file_name("r").to_str().unwrap(),
        "--quiet",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains("maxmemory-policy allkeys-lru") && err.contains("noeviction"),
        "{err}"
    );
}
