//! Live mode's own CPU: ackbench's user and system time (its own threads only; the worker
//! processes are not in it) on `profiles/live-thursday.yaml` with a fast provider, at 108 and
//! at 5,000 messages.
//!
//! `cargo bench -p ackbench --bench live_cpu` (release build; needs python3 with boto3, as the
//! profile's consumer does). `-- 108` runs one size only.
//!
//! Both sizes publish over the profile's 90 minutes (4.5 wall minutes at `time_scale: 0.05`):
//! 108 orders every 50 s, or 5,000 orders every 1.08 s, against a provider that answers in
//! 1 ms with no slow phase. The live loop's cost is then the same wall time plus the work per
//! call: CPU per call that stays flat from 108 to 5,000 calls means nothing in the loop grows
//! with the run (a ledger cloned per progress line, a timer polled every few milliseconds
//! whatever is due).
//!
//! The CPU time is read from `/proc/PID/stat` after ackbench has exited but before it is
//! reaped (`waitid` with `WNOWAIT`), so it is ackbench's final figure, with none of its
//! children's time.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Instant;

use nix::sys::wait::{waitid, Id, WaitPidFlag};
use nix::unistd::Pid;

const PROFILE: &str = include_str!("../../profiles/live-thursday.yaml");

/// (messages, arrival interval): both sizes publish over the profile's 90 minutes.
const SIZES: &[(u64, &str)] = &[(108, "50s"), (5_000, "1080ms")];

fn main() {
    let only: Vec<u64> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    println!(
        "{:>9} {:>9} {:>8} {:>9} {:>11} {:>13}",
        "messages", "calls", "wall_s", "cpu_s", "cpu_%_wall", "cpu_us/call"
    );
    for &(n, every) in SIZES {
        if !only.is_empty() && !only.contains(&n) {
            continue;
        }
        let m = measure(&root, n, every);
        println!(
            "{:>9} {:>9} {:>8.1} {:>9.3} {:>11.2} {:>13.1}",
            n,
            m.calls,
            m.wall_s,
            m.cpu_s,
            100.0 * m.cpu_s / m.wall_s,
            m.cpu_s * 1e6 / m.calls.max(1) as f64
        );
    }
}

struct Measured {
    calls: u64,
    wall_s: f64,
    cpu_s: f64,
}

/// One live run of `n` orders every `every`, its folder in a temporary directory.
fn measure(root: &Path, n: u64, every: &str) -> Measured {
    let text = PROFILE
        .replace("arrival: { every: 50s }", &format!("arrival: {{ every: {every} }}"))
        .replace("count: 108", &format!("count: {n}"))
        .replace(
            "  phases:\n    - { from: 0s, to: 2h, latency: { dist: uniform, min: 31s, max: 40s } }\n",
            "",
        )
        .replace(
            "latency: { dist: lognormal, median: 240ms, p99: 900ms }",
            "latency: { dist: fixed, value: 1ms }",
        );
    assert!(
        text.contains(&format!("count: {n}")) && !text.contains("phases:"),
        "profiles/live-thursday.yaml changed shape: update this bench"
    );
    let dir = tempfile::tempdir().expect("a temporary folder");
    let profile = dir.path().join("live-cpu.yaml");
    std::fs::write(&profile, text).expect("the profile is written");
    let out = dir.path().join("report");
    let started = Instant::now();
    let child = Command::new(env!("CARGO_BIN_EXE_ackbench"))
        .arg("run")
        .arg(&profile)
        .arg("--out")
        .arg(&out)
        .arg("--quiet")
        .current_dir(root)
        .stdout(Stdio::null())
        .spawn()
        .expect("ackbench starts");
    let pid = Pid::from_raw(child.id() as i32);
    waitid(Id::Pid(pid), WaitPidFlag::WEXITED | WaitPidFlag::WNOWAIT).expect("ackbench exits");
    let wall_s = started.elapsed().as_secs_f64();
    let cpu_s = own_cpu_s(pid);
    let status = { child }.wait().expect("ackbench is reaped");
    assert!(
        matches!(status.code(), Some(0 | 1)),
        "the run completes (exit 0 or 1): {status}"
    );
    let summary: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(out.join("summary.json")).expect("summary.json"),
    )
    .expect("summary.json is JSON");
    assert_eq!(
        summary["messages"].as_u64(),
        Some(n),
        "every order published"
    );
    Measured {
        calls: summary["effects"].as_u64().unwrap_or(0),
        wall_s,
        cpu_s,
    }
}

/// User plus system time of an exited, not yet reaped process (fields 14 and 15 of
/// `/proc/PID/stat`, in clock ticks), in seconds.
fn own_cpu_s(pid: Pid) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).expect("/proc/PID/stat");
    // The command name (field 2) is in parentheses and may hold spaces: count after it.
    let after = &stat[stat.rfind(')').expect("a stat line") + 2..];
    let fields: Vec<&str> = after.split_whitespace().collect();
    // `after` starts at field 3 (state): utime is field 14, stime field 15.
    let ticks: u64 = fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap();
    // SAFETY: sysconf reads a constant of the system; it has no preconditions.
    let per_s = match unsafe { libc::sysconf(libc::_SC_CLK_TCK) } {
        t if t > 0 => t as f64,
        _ => 100.0,
    };
    ticks as f64 / per_s
}
