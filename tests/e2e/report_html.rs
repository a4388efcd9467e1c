//! report.html in a real browser: headless Chromium opens the page of a run, takes a screenshot
//! and logs no console message (the page has no script and fetches nothing).
//!
//! Chromium is Debian's `chromium` package. When it is absent the test installs it if
//! `ACKBENCH_REQUIRE_SERVICES=1` (as CI sets) and otherwise skips with a printed reason.

use std::fs::{self, File};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::report_run::write_report;

const CHROMIUM: &str = "/usr/bin/chromium";

/// Chromium's path, installing it if CI requires it; `None` (with the reason printed) to skip.
fn chromium() -> Option<PathBuf> {
    let path = PathBuf::from(CHROMIUM);
    if path.exists() {
        return Some(path);
    }
    if std::env::var("ACKBENCH_REQUIRE_SERVICES").as_deref() != Ok("1") {
        eprintln!(
            "skipped: {CHROMIUM} is not installed (apt-get install chromium, or set \
             ACKBENCH_REQUIRE_SERVICES=1 to have this test install it)"
        );
        return None;
    }
    let apt = |args: &[&str]| {
        Command::new("apt-get")
            .args(args)
            .env("DEBIAN_FRONTEND", "noninteractive")
            .status()
            .is_ok_and(|s| s.success())
    };
    if !apt(&["install", "-y", "chromium"]) {
        assert!(apt(&["update"]), "apt-get update failed");
        assert!(
            apt(&["install", "-y", "chromium"]),
            "apt-get install chromium failed"
        );
    }
    assert!(
        path.exists(),
        "{CHROMIUM} is still missing after installing chromium"
    );
    Some(path)
}

/// Runs Chromium headless on `page`, screenshot into `shot`; returns its stderr.
fn screenshot(chromium: &Path, page: &Path, work: &Path, shot: &Path) -> String {
    let log = work.join("chromium.log");
    let mut child = Command::new(chromium)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--enable-logging=stderr",
            "--v=0",
            "--window-size=1280,2000",
        ])
        .arg(format!(
            "--user-data-dir={}",
            work.join("profile").display()
        ))
        .arg(format!("--screenshot={}", shot.display()))
        .arg(format!("file://{}", page.display()))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(File::create(&log).expect("chromium log"))
        .spawn()
        .expect("chromium starts");
    let started = Instant::now();
    loop {
        if child.try_wait().expect("chromium status").is_some() {
            break;
        }
        if started.elapsed() > Duration::from_secs(120) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("chromium took more than 120 s");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    fs::read_to_string(&log).unwrap_or_default()
}

#[test]
fn report_html_renders_in_headless_chromium_without_console_errors() {
    let Some(chromium) = chromium() else {
        return;
    };
    let tmp = tempfile::tempdir().expect("temp dir");
    let dir = tmp.path().join("report");
    write_report("marlow-thursday", &["workload.count=20"], &dir);
    let page = dir.join("report.html");
    let shot = tmp.path().join("shot.png");
    let log = screenshot(&chromium, &page, tmp.path(), &shot);

    let png =
        fs::read(&shot).unwrap_or_else(|e| panic!("no screenshot ({e}); chromium said:\n{log}"));
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n", "the screenshot is a PNG");
    let be = |b: &[u8]| u32::from_be_bytes([b[0], b[1], b[2], b[3]]);
    assert_eq!((be(&png[16..20]), be(&png[20..24])), (1280, 2000));
    assert!(
        png.len() > 50_000,
        "the screenshot shows a page ({} bytes)",
        png.len()
    );
    // The page has no script: any console message at all is an error of the page.
    let console: Vec<&str> = log
        .lines()
        .filter(|l| l.contains("CONSOLE") || l.contains("Uncaught") || l.contains("net::ERR_"))
        .collect();
    assert!(
        console.is_empty(),
        "console messages:\n{}",
        console.join("\n")
    );
}
