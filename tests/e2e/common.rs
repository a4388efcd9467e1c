//! Helpers shared by the end-to-end tests.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

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
