//! Signals on the commands that are not a single run: `sweep` and `size` end with exit 3 and
//! say so (not the shell's 130), and the standalone servers stop on SIGTERM and SIGHUP as on
//! Ctrl-C.

use std::io::Read;
use std::time::Duration;

use nix::sys::signal::Signal;

use crate::common::{signal, start, wait_within};

/// Starts `args`, lets it work for `after`, sends `sig`; its exit code and stderr.
fn interrupted(args: &[&str], after: Duration, sig: Signal) -> (Option<i32>, String) {
    let mut child = start(args);
    std::thread::sleep(after);
    signal(&child, sig);
    let code = wait_within(&mut child, Duration::from_secs(20));
    let mut err = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    (code, err)
}

#[test]
fn an_interrupted_sweep_exits_3_and_says_why() {
    // Four points of 500,000 messages each: far longer than the 1.5 s before the signal in a
    // debug build.
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("s");
    for sig in [Signal::SIGINT, Signal::SIGTERM] {
        let (code, err) = interrupted(
            &[
                "sweep",
                "profiles/healthy.yaml",
                "--set",
                "workload.count=500000",
                "--set",
                "workload.arrival={every: 10ms}",
                "--set",
                "run.duration=10000s",
                "--vary",
                "consumer.workers=4,8,16,32",
                "--out",
                out.to_str().unwrap(),
            ],
            Duration::from_millis(1500),
            sig,
        );
        assert_eq!(code, Some(3), "{sig}: {err}");
        assert!(
            err.contains("error: ackbench sweep: interrupted by a signal"),
            "{sig}: {err}"
        );
        assert!(!out.join("sweep.csv").exists());
    }
}

#[test]
fn an_interrupted_size_exits_3_and_says_why() {
    let (code, err) = interrupted(
        &[
            "size",
            "profiles/healthy.yaml",
            "--set",
            "workload.count=500000",
            "--set",
            "workload.arrival={every: 10ms}",
            "--set",
            "run.duration=10000s",
            "--out",
            tempfile::tempdir()
                .unwrap()
                .path()
                .join("z")
                .to_str()
                .unwrap(),
        ],
        Duration::from_millis(1500),
        Signal::SIGINT,
    );
    assert_eq!(code, Some(3), "{err}");
    assert!(
        err.contains("error: ackbench size: interrupted by a signal"),
        "{err}"
    );
}

#[test]
fn the_standalone_provider_and_broker_stop_on_sigterm_and_sighup() {
    for sig in [Signal::SIGTERM, Signal::SIGHUP] {
        for cmd in ["provider", "broker"] {
            let (code, err) = interrupted(
                &[cmd, "profiles/healthy.yaml", "--listen", "127.0.0.1:0"],
                Duration::from_millis(800),
                sig,
            );
            assert_eq!(code, Some(0), "{cmd} on {sig}: {err}");
        }
    }
}
