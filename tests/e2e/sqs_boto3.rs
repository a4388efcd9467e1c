//! SQS conformance seen from boto3: runs `tests/sqs/boto3_conformance.py` against a server.
//! Skips with a printed reason when boto3 is not installed, unless
//! `ACKBENCH_REQUIRE_SERVICES=1` (CI), where a missing boto3 fails the test.

use std::process::Command;
use std::time::Duration;

use crate::common::root;
use crate::sqs_support::server;

fn boto3_available() -> Result<(), String> {
    let out = Command::new("python3")
        .args(["-c", "import boto3; print(boto3.__version__)"])
        .output()
        .map_err(|e| format!("python3 does not run: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "`import boto3` failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn boto3_conformance() {
    if let Err(why) = boto3_available() {
        if std::env::var("ACKBENCH_REQUIRE_SERVICES").as_deref() == Ok("1") {
            panic!("boto3 is required (ACKBENCH_REQUIRE_SERVICES=1): {why}; install it with `pip install boto3`");
        }
        println!("skipped: {why} (install with `pip install boto3`)");
        return;
    }
    let srv = server().await;
    let script = root().join("tests/sqs/boto3_conformance.py");
    let endpoint = srv.endpoint_url();
    // The script bounds each of its waits; this bounds the whole run.
    let out = tokio::task::spawn_blocking(move || {
        run_bounded(&script, &endpoint, Duration::from_secs(120))
    })
    .await
    .expect("the runner thread finishes");
    let (success, stdout, stderr) = out.expect("python3 starts");
    println!("{stdout}");
    assert!(success, "boto3 conformance failed:\n{stdout}\n{stderr}");
    srv.shutdown().await;
}

/// Runs the script; kills it if it outlives `limit`. Returns (success, stdout, stderr).
fn run_bounded(
    script: &std::path::Path,
    endpoint: &str,
    limit: Duration,
) -> std::io::Result<(bool, String, String)> {
    use std::io::Read;
    let mut child = Command::new("python3")
        .arg(script)
        .arg(endpoint)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()?;
    let (mut so, mut se) = (child.stdout.take(), child.stderr.take());
    let out = std::thread::spawn(move || {
        let mut s = String::new();
        if let Some(p) = so.as_mut() {
            let _ = p.read_to_string(&mut s);
        }
        s
    });
    let err = std::thread::spawn(move || {
        let mut s = String::new();
        if let Some(p) = se.as_mut() {
            let _ = p.read_to_string(&mut s);
        }
        s
    });
    let start = std::time::Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait()? {
            break Some(status);
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let (stdout, mut stderr) = (
        out.join().unwrap_or_default(),
        err.join().unwrap_or_default(),
    );
    if status.is_none() {
        stderr.push_str(&format!("\nkilled after {limit:?}"));
    }
    Ok((status.is_some_and(|s| s.success()), stdout, stderr))
}
