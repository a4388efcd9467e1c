//! Helpers shared by the end-to-end tests.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// The workspace root (profiles/ lives there).
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("harness/ has a parent")
        .to_path_buf()
}

/// Runs `ackbench ARGS...` from the workspace root.
pub fn ackbench(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ackbench"))
        .args(args)
        .current_dir(root())
        .output()
        .expect("the ackbench binary runs")
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// Writes `text` to a fresh temporary profile file and returns (dir guard, path).
pub fn temp_profile(text: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("profile.yaml");
    std::fs::write(&path, text).expect("write profile");
    (dir, path)
}

/// Runs `ackbench BASE... ARGS...`, asserts it was refused as bad input (exit 2), returns stderr.
pub fn refused(base: &[&str], args: &[&str]) -> String {
    let all: Vec<&str> = base.iter().chain(args).copied().collect();
    let o = ackbench(&all);
    assert_eq!(o.status.code(), Some(2), "{all:?}: {}", stderr(&o));
    stderr(&o)
}

/// Starts `ackbench ARGS...` from the workspace root, stdout piped (stderr kept for messages).
pub fn start(args: &[&str]) -> std::process::Child {
    start_with(args, &[])
}

/// [`start`] with `env` added to ackbench's environment.
pub fn start_with(args: &[&str], env: &[(&str, &str)]) -> std::process::Child {
    Command::new(env!("CARGO_BIN_EXE_ackbench"))
        .args(args)
        .envs(env.iter().copied())
        .current_dir(root())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("the ackbench binary starts")
}

/// Sends `signal` to `child`.
pub fn signal(child: &std::process::Child, signal: nix::sys::signal::Signal) {
    nix::sys::signal::kill(nix::unistd::Pid::from_raw(child.id() as i32), signal)
        .expect("the signal is sent");
}

/// Waits up to `limit` for `child` to exit; its exit code (None: killed by a signal), or a
/// panic if it is still running (it is killed first).
pub fn wait_within(child: &mut std::process::Child, limit: std::time::Duration) -> Option<i32> {
    let started = std::time::Instant::now();
    loop {
        if let Some(status) = child.try_wait().expect("the child can be waited for") {
            return status.code();
        }
        if started.elapsed() >= limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("ackbench did not exit within {limit:?}");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// The counts of summary.json the tests compare most: messages, deliveries, effects,
/// duplicates, DLQ and lost.
pub const CORE_COUNTS: [&str; 6] = [
    "messages",
    "deliveries",
    "effects",
    "duplicate_effects",
    "dlq",
    "lost",
];

/// The counts `keys` of a summary, in that order; a key that is not a count panics, naming it.
pub fn counts(s: &serde_json::Value, keys: &[&str]) -> Vec<u64> {
    keys.iter()
        .map(|k| s[*k].as_u64().unwrap_or_else(|| panic!("{k}: {}", s[*k])))
        .collect()
}

/// Reads a report folder's summary.json, checked against docs/summary.schema.json.
pub fn summary_of(dir: &Path) -> serde_json::Value {
    let text = std::fs::read_to_string(dir.join("summary.json"))
        .unwrap_or_else(|e| panic!("no summary.json in {}: {e}", dir.display()));
    checked_summary(&text, &dir.display().to_string())
}

/// docs/summary.schema.json, compiled once for every test of the run.
fn summary_schema() -> &'static jsonschema::Validator {
    static SCHEMA: std::sync::OnceLock<jsonschema::Validator> = std::sync::OnceLock::new();
    SCHEMA.get_or_init(|| {
        let path = root().join("docs/summary.schema.json");
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{e}: {path:?}"));
        let schema: serde_json::Value = serde_json::from_str(&text).expect("the schema is JSON");
        jsonschema::validator_for(&schema).unwrap_or_else(|e| panic!("the schema is valid: {e}"))
    })
}

/// summary.json's `text` (from `origin`), parsed; a panic listing every way it departs from
/// docs/summary.schema.json (a field the schema does not know, a missing one, a wrong type), so
/// the published schema cannot drift from what the runs write.
pub fn checked_summary(text: &str, origin: &str) -> serde_json::Value {
    let summary: serde_json::Value = serde_json::from_str(text).expect("summary.json is JSON");
    assert_schema(&summary, origin);
    summary
}

/// Asserts that `summary` (a summary.json object, from `origin`) validates against
/// docs/summary.schema.json.
pub fn assert_schema(summary: &serde_json::Value, origin: &str) {
    let complaints: Vec<String> = summary_schema()
        .iter_errors(summary)
        .map(|e| format!("  {}: {e}", e.instance_path()))
        .collect();
    assert!(
        complaints.is_empty(),
        "summary.json of {origin} departs from docs/summary.schema.json:\n{}",
        complaints.join("\n")
    );
}

/// A finished `ackbench run`: what it printed and exited with, and its report folder.
pub struct Ran {
    pub output: Output,
    /// The report folder (`--out`), removed when this value is dropped.
    pub dir: tempfile::TempDir,
}

impl Ran {
    /// The exit code; a panic naming stderr if the run was ended by a signal.
    pub fn code(&self) -> i32 {
        self.output
            .status
            .code()
            .unwrap_or_else(|| panic!("ackbench was killed: {}", self.stderr()))
    }

    /// summary.json, parsed; a panic naming stderr if the run wrote none.
    pub fn summary(&self) -> serde_json::Value {
        let text = std::fs::read_to_string(self.dir.path().join("summary.json"))
            .unwrap_or_else(|e| panic!("summary.json written ({e}); stderr: {}", self.stderr()));
        checked_summary(&text, &self.dir.path().display().to_string())
    }

    pub fn stdout(&self) -> String {
        stdout(&self.output)
    }

    pub fn stderr(&self) -> String {
        stderr(&self.output)
    }
}

/// `ackbench run PROFILE --out TMP ARGS...` from the workspace root.
pub fn run_profile(profile: &Path, args: &[&str]) -> Ran {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut all = vec![
        "run",
        profile.to_str().expect("utf-8 path"),
        "--out",
        dir.path().to_str().expect("utf-8 path"),
    ];
    all.extend_from_slice(args);
    Ran {
        output: ackbench(&all),
        dir,
    }
}

/// [`run_profile`] on a profile given as text (written to a temporary file first).
pub fn run_text(text: &str, args: &[&str]) -> Ran {
    let (_profile_dir, path) = temp_profile(text);
    run_profile(&path, args)
}

/// True when a server answers on 127.0.0.1:`port` (`name` is what the test needs, e.g.
/// `RabbitMQ`); otherwise the test is skipped with a printed reason, unless
/// ACKBENCH_REQUIRE_SERVICES=1 (CI, which starts the services first), where that is a failure.
pub fn service_up(name: &str, port: u16) -> bool {
    let addr = std::net::SocketAddr::from(([127, 0, 0, 1], port));
    let ok = std::net::TcpStream::connect_timeout(&addr, std::time::Duration::from_secs(2)).is_ok();
    if !ok {
        assert!(
            std::env::var("ACKBENCH_REQUIRE_SERVICES").as_deref() != Ok("1"),
            "{name} is required on 127.0.0.1:{port} (ACKBENCH_REQUIRE_SERVICES=1); \
             `ACKBENCH_SERVICES=... bash .ci/services.sh` starts it"
        );
        eprintln!("skipped: {name} does not answer on 127.0.0.1:{port}");
    }
    ok
}

/// True when python3 can import `module` (a PyPI package `package`); otherwise skipped with a
/// printed reason, unless ACKBENCH_REQUIRE_SERVICES=1, where that is a failure.
pub fn have_python_module(module: &str, package: &str) -> bool {
    let ok = std::process::Command::new("python3")
        .args(["-c", &format!("import {module}")])
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        assert!(
            std::env::var("ACKBENCH_REQUIRE_SERVICES").as_deref() != Ok("1"),
            "python3 with {package} is required (ACKBENCH_REQUIRE_SERVICES=1): pip install {package}"
        );
        eprintln!("skipped: python3 cannot import {module} (pip install {package})");
    }
    ok
}

/// python3 with `module`, pip-installing `requirement` first under ACKBENCH_REQUIRE_SERVICES=1.
pub fn python_with(module: &str, requirement: &str) -> bool {
    let missing = !Command::new("python3")
        .args(["-c", &format!("import {module}")])
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if missing && std::env::var("ACKBENCH_REQUIRE_SERVICES").as_deref() == Ok("1") {
        let _ = Command::new("python3")
            .args(["-m", "pip", "install", "--quiet", requirement])
            .status();
    }
    have_python_module(module, requirement)
}

/// The counts of a run's one rollout (summary.json's `deploys`): told, stopped, killed,
/// interrupted, duplicates, lost, late.
pub fn deploy_cost(summary: &serde_json::Value) -> Vec<u64> {
    let d = &summary["deploys"];
    assert_eq!(
        d.as_array().map(Vec::len),
        Some(1),
        "one rollout: {summary}"
    );
    [
        "told",
        "stopped",
        "killed",
        "interrupted",
        "duplicates",
        "lost",
        "late",
    ]
    .iter()
    .map(|k| d[0][*k].as_u64().expect("a count"))
    .collect()
}
