//! Live mode against a real consumer program (targets/python, boto3): exact counts under kills,
//! and no worker process left behind, also after Ctrl-C.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::common::{ackbench, root, run_text, start, stderr, summary_of, temp_profile};

/// True when python3 can import boto3; otherwise the test is skipped (with a printed reason),
/// unless ACKBENCH_REQUIRE_SERVICES=1, where that is a failure.
pub fn have_boto3() -> bool {
    let ok = Command::new("python3")
        .args(["-c", "import boto3"])
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        assert!(
            std::env::var("ACKBENCH_REQUIRE_SERVICES").as_deref() != Ok("1"),
            "python3 with boto3 is required (ACKBENCH_REQUIRE_SERVICES=1): pip install boto3"
        );
        eprintln!("skipped: python3 with boto3 is not available (pip install boto3)");
    }
    ok
}

/// Worker processes (Python interpreters) running whose environment carries `marker`.
fn python_workers(marker: &str) -> Vec<String> {
    workers_left(marker)
        .into_iter()
        .filter(|p| {
            let pid = p.split(' ').next().unwrap_or_default();
            std::fs::read_link(format!("/proc/{pid}/exe"))
                .is_ok_and(|exe| exe.to_string_lossy().contains("python"))
        })
        .collect()
}

/// Processes still running whose environment carries `marker` (the workers and anything they
/// started, such as a version manager's shim).
pub fn workers_left(marker: &str) -> Vec<String> {
    let mut left = Vec::new();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let environ = std::fs::read(entry.path().join("environ")).unwrap_or_default();
        if environ
            .split(|&b| b == 0)
            .any(|kv| kv == format!("ACKBENCH_TEST_MARKER={marker}").as_bytes())
        {
            let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
            let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
            left.push(format!(
                "{} {}",
                entry.file_name().to_string_lossy(),
                cmdline.trim()
            ));
        }
    }
    left
}

fn profile(marker: &str, count: u32, chaos: &str) -> String {
    let script = root().join("targets/python/ack_after_work.py");
    format!(
        r#"
name: live-kills
mode: live
seed: 7
run: {{ duration: {dur}s, drain: 10m, time_scale: 0.05 }}
broker: {{ visibility_timeout: 30s, max_receives: 5, stale_ack: reject }}
workload: {{ arrival: {{ every: 5s }}, count: {count} }}
consumer:
  command: [python3, "{script}"]
  workers: 3
  restart_after: 1s
  env: {{ ACKBENCH_TEST_MARKER: "{marker}" }}
provider:
  effect_at: request
  latency: {{ dist: lognormal, median: 240ms, p99: 900ms }}
{chaos}
"#,
        dur = count * 5,
        script = script.display()
    )
}

#[test]
fn kills_at_call_answered_duplicate_exactly_once_each_and_leave_no_worker() {
    if !have_boto3() {
        return;
    }
    let marker = format!("kills-{}", std::process::id());
    let chaos = "chaos:\n  - kill_worker: { point: call_answered, delivery: 1, times: 20 }\n";
    let r = run_text(&profile(&marker, 40, chaos), &["--quiet"]);
    assert!(r.code() <= 1, "{}", r.stderr());
    let s = r.summary();
    assert_eq!(s["mode"], "live");
    assert_eq!(s["worker_kills"], 20);
    assert_eq!(
        s["duplicate_effects"], 20,
        "one duplicate per kill between the effect and the ack"
    );
    assert_eq!(
        (
            s["lost"].as_u64(),
            s["unfinished"].as_u64(),
            s["messages_with_effect"].as_u64()
        ),
        (Some(0), Some(0), Some(40))
    );
    assert!(
        workers_left(&marker).is_empty(),
        "no worker left: {:?}",
        workers_left(&marker)
    );
}

#[test]
fn ctrl_c_mid_run_stops_every_worker() {
    if !have_boto3() {
        return;
    }
    let marker = format!("sigint-{}", std::process::id());
    let (_dir, path) = temp_profile(&profile(&marker, 200, ""));
    // Interrupt once the workers run.
    let code = run_and_interrupt(&path, || python_workers(&marker).len() >= 3);
    assert_eq!(code, Some(3), "an interrupted run could not complete");
    assert!(
        workers_left(&marker).is_empty(),
        "no worker left after Ctrl-C: {:?}",
        workers_left(&marker)
    );
}

/// How long a live run of Python workers has to get going: a loaded machine starts Python
/// slowly, and workers a chaos rule kills come and go meanwhile.
pub const GOING_WITHIN: Duration = Duration::from_secs(120);

/// Reads `seen` every `every` until `going` holds of what it saw, or [`GOING_WITHIN`] has
/// passed; what it saw last: `Ok` once going, `Err` when the time ran out.
pub fn until_going<T>(
    every: Duration,
    mut seen: impl FnMut() -> T,
    going: impl Fn(&T) -> bool,
) -> Result<T, T> {
    let started = Instant::now();
    let mut last = seen();
    while !going(&last) {
        if started.elapsed() >= GOING_WITHIN {
            return Err(last);
        }
        std::thread::sleep(every);
        last = seen();
    }
    Ok(last)
}

/// Runs `ackbench run PROFILE`, waits (up to 30 s) until `ready` holds, sends it SIGINT, and
/// returns its exit code.
pub fn run_and_interrupt(profile: &std::path::Path, ready: impl Fn() -> bool) -> Option<i32> {
    let out = profile.with_file_name("r");
    let mut child = Command::new(env!("CARGO_BIN_EXE_ackbench"))
        .args(["run", profile.to_str().unwrap(), "--out"])
        .arg(&out)
        .arg("--quiet")
        .current_dir(root())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("ackbench starts");
    let started = Instant::now();
    while !ready() && started.elapsed() < Duration::from_secs(30) {
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(ready(), "the run got going within 30 s");
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(child.id() as i32),
        nix::sys::signal::Signal::SIGINT,
    )
    .unwrap();
    child.wait().unwrap().code()
}

/// Runs a shipped live profile; returns its summary.
fn run_live(profile: &str) -> Value {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r");
    let o = ackbench(&["run", profile, "--out", out.to_str().unwrap(), "--quiet"]);
    assert!(
        o.status.code().is_some_and(|c| c <= 1),
        "{profile}: {}",
        stderr(&o)
    );
    crate::common::summary_of(&out)
}

#[test]
fn the_thursday_incident_live_counts_like_the_sim_run() {
    if !have_boto3() {
        return;
    }
    let claim = std::thread::spawn(|| run_live("profiles/live-thursday-claim.yaml"));
    let naive = run_live("profiles/live-thursday.yaml");
    let claim = claim.join().unwrap();
    let counts = |s: &Value, keys: &[&str]| {
        keys.iter()
            .map(|k| s[*k].as_u64().unwrap())
            .collect::<Vec<_>>()
    };
    assert_eq!(
        counts(
            &naive,
            &[
                "messages",
                "deliveries",
                "effects",
                "duplicate_effects",
                "dlq",
                "dlq_with_effect",
                "lost",
                "overlapping_executions"
            ]
        ),
        // As in the sim run: deliveries 2 and 3 of each order each come while the handler of
        // the one before still calls the provider (2 overlapping executions per order).
        [108, 324, 324, 216, 108, 108, 0, 216],
        "ack_after_work.py"
    );
    assert_eq!(
        counts(
            &claim,
            &[
                "messages",
                "effects",
                "duplicate_effects",
                "dlq",
                "lost",
                "unfinished"
            ]
        ),
        [108, 108, 0, 0, 0, 0],
        "claim_then_send.py"
    );
}

/// A small slow-provider incident for built-in targets in live mode (no Python needed).
fn builtin_profile(target: &str, chaos: &str) -> String {
    format!(
        r#"
name: live-builtin
mode: live
seed: 3
run: {{ duration: 500s, drain: 10m, time_scale: 0.05 }}
broker: {{ visibility_timeout: 30s, max_receives: 3, stale_ack: reject }}
workload: {{ arrival: {{ every: 50s }}, count: 10 }}
consumer: {{ target: {target}, workers: 4, restart_after: 1s }}
provider:
  latency: {{ dist: uniform, min: 31s, max: 40s }}
{chaos}
"#
    )
}

#[test]
fn built_in_targets_run_live_over_the_sqs_api_with_the_sim_counts() {
    let run = |target: &'static str, chaos: &'static str| {
        std::thread::spawn(move || {
            let r = run_text(&builtin_profile(target, chaos), &["--quiet"]);
            assert!(r.code() <= 1, "{target}: {}", r.stderr());
            let s = r.summary();
            // Every provider call matched to the delivery its worker held.
            assert!(s.get("unattributed_calls").is_none(), "{target}: {s}");
            s
        })
    };
    let naive = run("ack-after-work", "");
    let claim = run("claim-then-send", "");
    let dedupe = run(
        "dedupe-table",
        "chaos:\n  - kill_worker: { point: committed, delivery: 1 }\n",
    );
    let counts = |s: &Value, keys: &[&str]| {
        keys.iter()
            .map(|k| s[*k].as_u64().unwrap())
            .collect::<Vec<_>>()
    };
    let keys = [
        "effects",
        "duplicate_effects",
        "dlq",
        "dlq_with_effect",
        "lost",
        "worker_kills",
    ];
    assert_eq!(
        counts(&naive.join().unwrap(), &keys),
        [30, 20, 10, 10, 0, 0],
        "ack-after-work"
    );
    assert_eq!(
        counts(&claim.join().unwrap(), &keys),
        [10, 0, 0, 0, 0, 0],
        "claim-then-send"
    );
    assert_eq!(
        counts(&dedupe.join().unwrap(), &keys),
        [10, 0, 0, 0, 0, 10],
        "dedupe-table, killed after each commit"
    );
}

/// Runs `ackbench run PROFILE ARGS...` to its end: (pid, exit code, stderr, summary).
pub fn run_to_end(profile: &std::path::Path, args: &[&str]) -> (u32, Option<i32>, String, Value) {
    let dir = tempfile::tempdir().expect("temp dir");
    let out = dir.path().join("r");
    let mut all = vec![
        "run",
        profile.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--quiet",
        "--format",
        "json",
    ];
    all.extend_from_slice(args);
    let child = start(&all);
    let pid = child.id();
    let o = child.wait_with_output().expect("ackbench runs");
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    let summary = summary_of(&out);
    assert!(
        summary.get("unattributed_calls").is_none(),
        "every call matched to a delivery its worker held: {summary}"
    );
    (pid, o.status.code(), err, summary)
}
