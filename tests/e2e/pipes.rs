//! A closed standard output (`ackbench ... | head -1`) ends printing, not the command: no panic,
//! and the exit code is the command's own (the verdict's for `run`).

use std::os::fd::OwnedFd;
use std::process::{Command, Stdio};

use crate::common::root;

/// Runs `ackbench ARGS...` with stdout a pipe nobody reads (its read end closed before the
/// start): every write fails with EPIPE. Returns (exit code, stderr).
fn with_closed_stdout(args: &[&str]) -> (Option<i32>, String) {
    let (read, write): (OwnedFd, OwnedFd) = nix::unistd::pipe().expect("a pipe");
    drop(read);
    let o = Command::new(env!("CARGO_BIN_EXE_ackbench"))
        .args(args)
        .current_dir(root())
        .stdout(Stdio::from(write))
        .stderr(Stdio::piped())
        .output()
        .expect("ackbench runs");
    (
        o.status.code(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

#[test]
fn a_closed_stdout_keeps_every_commands_exit_code() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r");
    let out = out.to_str().unwrap();
    // marlow-thursday fails two budgets: exit 1, whatever happens to its printing.
    let (code, err) = with_closed_stdout(&["run", "profiles/marlow-thursday.yaml", "--out", out]);
    assert_eq!(code, Some(1), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    // The report was written all the same.
    assert!(std::path::Path::new(out).join("summary.json").exists());
    let (code, err) = with_closed_stdout(&["run", "profiles/healthy.yaml", "--out", out]);
    assert_eq!((code, err.contains("panicked")), (Some(0), false), "{err}");
    for args in [
        vec!["report", out],
        vec!["check", "profiles/healthy.yaml"],
        vec!["run", "profiles/healthy.yaml", "--out", out, "--quiet"],
    ] {
        let (code, err) = with_closed_stdout(&args);
        assert_eq!(code, Some(0), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    }
}

#[test]
fn head_reads_the_first_line_and_the_verdict_stays() {
    // As a shell pipeline: `ackbench run ... | head -1`, pipefail so the exit code is ackbench's.
    let bin = env!("CARGO_BIN_EXE_ackbench");
    let dir = tempfile::tempdir().unwrap();
    let script = format!(
        "set -o pipefail; '{bin}' run profiles/marlow-thursday.yaml --out '{}' | head -1",
        dir.path().join("r").display()
    );
    let o = Command::new("bash")
        .args(["-c", &script])
        .current_dir(root())
        .output()
        .expect("bash runs");
    let first = String::from_utf8_lossy(&o.stdout);
    assert_eq!(first, "ackbench: marlow-thursday (mode sim, seed 1)\n");
    assert_eq!(
        o.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(!String::from_utf8_lossy(&o.stderr).contains("panicked"));
}
