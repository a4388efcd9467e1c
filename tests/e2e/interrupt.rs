//! Interrupted runs: SIGINT, SIGTERM and SIGHUP end a live run like its end does (no worker or
//! ingress process left, a partial report marked incomplete, exit 3); SIGKILL of ackbench still
//! leaves no worker or ingress process (they die with their parent); SIGINT on a long sim run
//! exits 3 with a partial report too.

use std::collections::HashSet;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use nix::sys::signal::Signal;

use crate::common::{ackbench, root, signal, start, stderr, stdout, summary_of, wait_within};
use crate::live::{have_boto3, workers_left};

/// A live run of 20 orders through the reference ingress service to 2 Python workers, every
/// program started from copies of the scripts in `dir` (so their command lines name this test
/// alone) and carrying `marker` in its environment. At time scale 0.5 the orders take 10 s of
/// wall time: the run is interrupted long before its end.
fn live_profile(dir: &Path, marker: &str) -> PathBuf {
    for script in ["ack_after_work.py", "ingress.py"] {
        std::fs::copy(root().join("targets/python").join(script), dir.join(script))
            .expect("copy the script");
    }
    let text = format!(
        r#"
name: live-interrupted
mode: live
seed: 5
run: {{ duration: 20s, drain: 1m, time_scale: 0.5 }}
broker: {{ visibility_timeout: 30s, max_receives: 3 }}
workload:
  count: 20
  ingress:
    command: [python3, "{dir}/ingress.py"]
    url: "http://127.0.0.1:{{port}}/orders"
    method: POST
    body: "{{body}}"
    rate_per_s: 1
    users: 2
    env: {{ ACKBENCH_TEST_MARKER: "{marker}" }}
consumer:
  command: [python3, "{dir}/ack_after_work.py"]
  workers: 2
  restart_after: 1s
  env: {{ ACKBENCH_TEST_MARKER: "{marker}" }}
provider:
  effect_at: request
  latency: {{ dist: lognormal, median: 240ms, p99: 900ms }}
budgets: {{ lost: 0 }}
"#,
        dir = dir.display()
    );
    let path = dir.join("profile.yaml");
    std::fs::write(&path, text).expect("write the profile");
    path
}

/// The process group of `pid` (field 5 of /proc/PID/stat).
fn pgid_of(pid: &str) -> Option<String> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let after = stat.rsplit_once(')')?.1;
    after.split_whitespace().nth(2).map(str::to_string)
}

/// Every live process `ps` lists: (pid, process group, command line). A zombie (state Z) has
/// ended already and only waits for its parent to read its status: it is not listed.
fn ps() -> Vec<(String, String, String)> {
    let out = Command::new("ps")
        .args(["-eo", "pid=,pgid=,stat=,args="])
        .output()
        .expect("ps runs");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| {
            let mut parts = l.split_whitespace();
            let pid = parts.next()?.to_string();
            let pgid = parts.next()?.to_string();
            let stat = parts.next()?;
            let args = parts.collect::<Vec<_>>().join(" ");
            (!stat.starts_with('Z')).then_some((pid, pgid, args))
        })
        .collect()
}

/// What is left, by `ps`, of the process groups `groups` or of command lines naming `dir`
/// (ackbench itself aside: it may still be writing its report).
fn left_by_ps(groups: &HashSet<String>, dir: &Path) -> Vec<String> {
    let dir = dir.display().to_string();
    let ackbench = env!("CARGO_BIN_EXE_ackbench");
    ps().into_iter()
        .filter(|(_, pgid, args)| {
            groups.contains(pgid) || (args.contains(&dir) && !args.starts_with(ackbench))
        })
        .map(|(pid, pgid, args)| format!("{pid} (group {pgid}) {args}"))
        .collect()
}

/// Starts the live run, waits until both workers and the ingress service run, sends `sig`;
/// returns the child, the process groups of the programs it started, and when the signal went.
fn run_and_signal(
    profile: &Path,
    out: &Path,
    marker: &str,
    sig: Signal,
) -> (std::process::Child, HashSet<String>, Instant) {
    let child = start(&[
        "run",
        profile.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    let python = |p: &String| {
        let pid = p.split(' ').next().unwrap_or_default();
        std::fs::read_link(format!("/proc/{pid}/exe"))
            .is_ok_and(|exe| exe.to_string_lossy().contains("python"))
    };
    let started = Instant::now();
    let ready = || {
        let left: Vec<String> = workers_left(marker).into_iter().filter(python).collect();
        let ingress = left.iter().filter(|p| p.contains("ingress.py")).count();
        let workers = left
            .iter()
            .filter(|p| p.contains("ack_after_work.py"))
            .count();
        (ingress == 1 && workers == 2).then_some(left)
    };
    let mut programs = None;
    while programs.is_none() && started.elapsed() < Duration::from_secs(60) {
        std::thread::sleep(Duration::from_millis(100));
        programs = ready();
    }
    let programs = programs.expect("both workers and the ingress service ran within 60 s");
    // Let the load get going (a few orders published and handled).
    std::thread::sleep(Duration::from_millis(1500));
    let groups: HashSet<String> = programs
        .iter()
        .filter_map(|p| pgid_of(p.split(' ').next().unwrap_or_default()))
        .collect();
    assert_eq!(
        groups.len(),
        3,
        "each program in a group of its own: {programs:?}"
    );
    signal(&child, sig);
    (child, groups, Instant::now())
}

/// Asserts that nothing of the run is left, by process group, by command line and by
/// environment, within 2 s of `since`.
fn nothing_left_within_2s(groups: &HashSet<String>, dir: &Path, marker: &str, since: Instant) {
    let mut left = (left_by_ps(groups, dir), workers_left(marker));
    while (!left.0.is_empty() || !left.1.is_empty()) && since.elapsed() < Duration::from_secs(2) {
        std::thread::sleep(Duration::from_millis(50));
        left = (left_by_ps(groups, dir), workers_left(marker));
    }
    assert!(
        left.0.is_empty() && left.1.is_empty(),
        "left 2 s after the signal: {left:?}"
    );
}

/// A signal that ends the run like its end: exit 3, nothing left, a partial report.
fn ends_the_run_with_a_partial_report(sig: Signal) {
    if !have_boto3() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let marker = format!("{sig:?}-{}", std::process::id());
    let profile = live_profile(dir.path(), &marker);
    let out = dir.path().join("r");
    let (mut child, groups, since) = run_and_signal(&profile, &out, &marker, sig);
    // Every program is gone within 2 s, while ackbench still writes its report...
    nothing_left_within_2s(&groups, dir.path(), &marker, since);
    let code = wait_within(&mut child, Duration::from_secs(30));
    // ...and nothing came back after it exited.
    nothing_left_within_2s(&groups, dir.path(), &marker, since);
    let o = child.wait_with_output().unwrap();
    assert_eq!(code, Some(3), "{sig:?}: {}", stderr(&o));
    let printed = stdout(&o);
    assert!(
        printed.contains("INCOMPLETE  live-interrupted (live, seed 5): interrupted by a signal"),
        "{printed}"
    );
    assert!(printed.contains("(partial: what was recorded up to the stop)"));

    // The partial report: summary.json marked incomplete, and `ackbench report` re-renders
    // the folder, still marked incomplete everywhere.
    let s = summary_of(&out);
    assert_eq!(s["verdict"], "incomplete");
    assert_eq!(s["complete"], false);
    assert_eq!(
        s["incomplete_reason"],
        "interrupted by a signal (SIGINT, SIGTERM or SIGHUP)"
    );
    assert!(
        s["messages"].as_u64().unwrap() < 20,
        "stopped before the end: {s}"
    );
    for f in ["report.html", "summary.md", "junit.xml"] {
        std::fs::remove_file(out.join(f)).unwrap();
    }
    let r = ackbench(&["report", out.to_str().unwrap()]);
    assert_eq!(r.status.code(), Some(0), "{}", stderr(&r));
    assert_eq!(summary_of(&out)["complete"], false);
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(
        html.contains("<span class=\"badge\">INCOMPLETE</span>"),
        "report.html"
    );
    assert!(html.contains("<strong>INCOMPLETE:</strong> the run was interrupted"));
    let md = std::fs::read_to_string(out.join("summary.md")).unwrap();
    assert!(
        md.starts_with("### ⚠️ INCOMPLETE: live-interrupted"),
        "{md}"
    );
    let junit = std::fs::read_to_string(out.join("junit.xml")).unwrap();
    assert!(junit.contains("<property name=\"verdict\" value=\"incomplete\"/>"));
    assert!(junit.contains("<testcase name=\"complete\""), "{junit}");
}

#[test]
fn sigint_mid_live_run_leaves_a_partial_report_and_no_process() {
    ends_the_run_with_a_partial_report(Signal::SIGINT);
}

#[test]
fn sigterm_mid_live_run_leaves_a_partial_report_and_no_process() {
    ends_the_run_with_a_partial_report(Signal::SIGTERM);
}

#[test]
fn sighup_mid_live_run_leaves_no_process_and_exits_3() {
    if !have_boto3() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let marker = format!("sighup-{}", std::process::id());
    let profile = live_profile(dir.path(), &marker);
    let out = dir.path().join("r");
    let (mut child, groups, since) = run_and_signal(&profile, &out, &marker, Signal::SIGHUP);
    nothing_left_within_2s(&groups, dir.path(), &marker, since);
    let code = wait_within(&mut child, Duration::from_secs(30));
    nothing_left_within_2s(&groups, dir.path(), &marker, since);
    assert_eq!(code, Some(3));
    assert_eq!(summary_of(&out)["verdict"], "incomplete");
}

#[test]
fn sigkill_of_ackbench_mid_live_run_leaves_no_worker_or_ingress_process() {
    if !have_boto3() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let marker = format!("sigkill-{}", std::process::id());
    let profile = live_profile(dir.path(), &marker);
    let out = dir.path().join("r");
    let (mut child, groups, since) = run_and_signal(&profile, &out, &marker, Signal::SIGKILL);
    // ackbench cannot do anything about SIGKILL: its programs die with it (PR_SET_PDEATHSIG).
    assert_eq!(wait_within(&mut child, Duration::from_secs(5)), None);
    nothing_left_within_2s(&groups, dir.path(), &marker, since);
}

#[test]
fn sigint_on_a_long_sim_run_exits_3_with_a_partial_report() {
    // 1,000,000 orders, one every 100 ms: a long run for a debug build, interrupted once
    // the run has started (its first line is printed before the run).
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r");
    let mut child = start(&[
        "run",
        "profiles/healthy.yaml",
        "--set",
        "workload.count=1000000",
        "--set",
        "workload.arrival={every: 100ms}",
        "--set",
        "run.duration=200000s",
        "--out",
        out.to_str().unwrap(),
    ]);
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let first = lines.next().and_then(Result::ok).unwrap_or_default();
    assert!(first.starts_with("ackbench: healthy (mode sim"), "{first}");
    std::thread::sleep(Duration::from_millis(2500));
    signal(&child, Signal::SIGINT);
    let rest: Vec<String> = lines.map_while(Result::ok).collect();
    let code = wait_within(&mut child, Duration::from_secs(120));
    assert_eq!(code, Some(3), "{rest:?}");
    assert!(
        rest[0].starts_with("INCOMPLETE  healthy (sim, seed "),
        "{rest:?}"
    );
    let s = summary_of(&out);
    assert_eq!(
        (s["verdict"].as_str(), s["complete"].as_bool()),
        (Some("incomplete"), Some(false))
    );
    let messages = s["messages"].as_u64().unwrap();
    assert!(messages > 0 && messages < 1_000_000, "{messages}");
    let r = ackbench(&["report", out.to_str().unwrap(), "--format", "md"]);
    assert_eq!(r.status.code(), Some(0), "{}", stderr(&r));
    let md = std::fs::read_to_string(out.join("summary.md")).unwrap();
    assert!(md.starts_with("### ⚠️ INCOMPLETE: healthy"), "{md}");
}
