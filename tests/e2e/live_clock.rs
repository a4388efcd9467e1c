//! The scaled consumer clock: BBC's sqs-consumer (npm), unmodified, in its production settings
//! (30 s visibility timeout, 10 s heartbeat) on a compressed run. Its packages are installed
//! from npm into a temporary folder once per test process.
//!
//! The full Thursday incident (108 orders, 4.5 minutes of wall time for each of the two runs)
//! is ignored in the suite; run it with
//! `cargo test -p ackbench --test e2e live_clock -- --include-ignored`.
//! The suite runs a 20-order version of it (about a minute).

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::OnceLock;

use serde_json::{json, Value};

use crate::common::{ackbench, stderr};

/// Whether the scaled clock's mechanism (libfaketime) is installed where ackbench looks
/// (skipped with a reason, or failed under ACKBENCH_REQUIRE_SERVICES=1, when not).
pub(crate) fn have_libfaketime() -> bool {
    let arch = std::env::consts::ARCH;
    let ok = std::env::var_os("ACKBENCH_LIBFAKETIME").is_some()
        || [
            format!("/usr/lib/{arch}-linux-gnu/faketime/libfaketime.so.1"),
            "/usr/lib/faketime/libfaketime.so.1".to_string(),
            "/usr/lib64/faketime/libfaketime.so.1".to_string(),
            "/usr/local/lib/faketime/libfaketime.so.1".to_string(),
        ]
        .iter()
        .any(|p| std::path::Path::new(p).is_file());
    if !ok {
        skip_or_fail("libfaketime is not installed (apt-get install libfaketime)");
    }
    ok
}

pub(crate) fn skip_or_fail(why: &str) {
    assert!(
        std::env::var("ACKBENCH_REQUIRE_SERVICES").as_deref() != Ok("1"),
        "required (ACKBENCH_REQUIRE_SERVICES=1): {why}"
    );
    eprintln!("skipped: {why}");
}

/// sqs-consumer and @aws-sdk/client-sqs installed from npm (once): their node_modules folder,
/// or `None` (skipped with a printed reason) without node and npm.
fn sqs_consumer_modules() -> Option<PathBuf> {
    static MODULES: OnceLock<Option<PathBuf>> = OnceLock::new();
    MODULES
        .get_or_init(|| {
            let runs = |program: &str| {
                Command::new(program)
                    .arg("--version")
                    .stdout(Stdio::null())
                    .stderr(Stdio::null())
                    .status()
                    .is_ok_and(|s| s.success())
            };
            if !runs("node") || !runs("npm") {
                skip_or_fail(
                    "node and npm are needed for sqs-consumer (apt-get install nodejs npm)",
                );
                return None;
            }
            // Kept for the test process's life: the runs read the packages from it.
            let dir = tempfile::tempdir().expect("temp dir").keep();
            let o = Command::new("npm")
                .args([
                    "install",
                    "--no-audit",
                    "--no-fund",
                    "--prefix",
                    dir.to_str().unwrap(),
                    "sqs-consumer@14",
                    "@aws-sdk/client-sqs@3",
                ])
                .output()
                .expect("npm runs");
            assert!(
                o.status.success(),
                "npm install sqs-consumer: {}",
                String::from_utf8_lossy(&o.stderr)
            );
            Some(dir.join("node_modules"))
        })
        .clone()
}

/// Runs the shipped sqs-consumer profile with `sets`, the packages in `modules`; returns its
/// summary and its stderr.
fn run(modules: &std::path::Path, sets: &[String]) -> (Value, String) {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r");
    let mut args = vec![
        "run".to_string(),
        "profiles/live-thursday-sqs-consumer.yaml".to_string(),
        "--out".to_string(),
        out.display().to_string(),
        "--quiet".to_string(),
        "--set".to_string(),
        format!("consumer.env.NODE_PATH={}", modules.display()),
    ];
    for s in sets {
        args.extend(["--set".to_string(), s.clone()]);
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let o = ackbench(&args);
    let err = stderr(&o);
    assert!(o.status.code().is_some_and(|c| c <= 1), "{err}");
    let summary = crate::common::summary_of(&out);
    (summary, err)
}

fn counts(s: &Value) -> [u64; 5] {
    ["messages", "effects", "duplicate_effects", "dlq", "lost"].map(|k| s[k].as_u64().unwrap())
}

/// The heartbeat run and the one without, side by side; checks that both ran on the scaled
/// clock and that the probe measured it.
fn both(sets: &[String]) -> Option<([u64; 5], [u64; 5])> {
    if !have_libfaketime() {
        return None;
    }
    let modules = sqs_consumer_modules()?;
    let without = {
        let (modules, mut sets) = (modules.clone(), sets.to_vec());
        sets.push("consumer.env.SQS_CONSUMER_HEARTBEAT=0".to_string());
        std::thread::spawn(move || run(&modules, &sets))
    };
    let (with, with_err) = run(&modules, sets);
    let (without, without_err) = without.join().unwrap();
    for s in [&with, &without] {
        // summary.json says the clock: scaled at x20, and the probe's measure or why not.
        let c = &s["consumer_clock"];
        assert_eq!(
            (&c["clock"], &c["speed"]),
            (&json!("scaled"), &json!(20.0)),
            "{c}"
        );
        assert!(c["measured"].is_f64() || c["note"].is_string(), "{c}");
    }
    for err in [&with_err, &without_err] {
        assert!(err.contains("consumer clock: scaled, x20"), "{err}");
        // The probe measured the clock: within 5% of x20 it says so, else it warns (a machine
        // loaded far beyond its cores can slow the probe itself; the counts below still hold).
        assert!(
            err.contains("consumer clock: measured x")
                || err.contains("warning: the consumer clock runs x"),
            "{err}"
        );
        if let Some(w) = err.lines().find(|l| l.starts_with("warning:")) {
            eprintln!("{w}");
        }
    }
    Some((counts(&with), counts(&without)))
}

#[test]
fn sqs_consumer_with_its_heartbeat_holds_every_lease_on_a_short_thursday() {
    // 20 orders, one every 50 s (1000 s), each a 31-40 s provider call against a 30 s lease:
    // with the 10 s heartbeat every lease is extended before it ends, so each order is
    // delivered once, sends once and is deleted: 20 effects, 0 duplicates, 0 DLQ. Without it
    // every delivery outlives its lease and is delivered again, 3 times (max_receives), each
    // delivery sending: 60 effects, 40 duplicates, and all 20 in the DLQ.
    let sets = ["workload.count=20", "run.duration=1000s"].map(String::from);
    let Some((with, without)) = both(&sets) else {
        return;
    };
    assert_eq!(with, [20, 20, 0, 0, 0], "with the heartbeat");
    assert_eq!(without, [20, 60, 40, 20, 0], "without the heartbeat");
}

#[test]
#[ignore = "the full Thursday: 4.5 minutes of wall time; run with --include-ignored"]
fn sqs_consumer_on_the_thursday_counts_like_the_sim_run() {
    // The same as the short one over 108 orders: 108 / 0 / 0 with the heartbeat; without it
    // the sim run's 324 effects, 216 duplicates, 108 DLQ.
    let Some((with, without)) = both(&[]) else {
        return;
    };
    assert_eq!(with, [108, 108, 0, 0, 0], "with the heartbeat");
    assert_eq!(without, [108, 324, 216, 108, 0], "without the heartbeat");
}
