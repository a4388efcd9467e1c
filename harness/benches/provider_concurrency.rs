//! The HTTP provider holding 10,000 concurrent slow calls (31-40 s each, the reference
//! incident's provider): are they all answered, and what is the provider's peak RSS?
//!
//! `cargo bench -p ackbench --bench provider_concurrency` (release build; about 45 s). The
//! provider runs as its own process (`ackbench provider`), so its peak RSS (VmHWM) is its own;
//! this process is the client (one connection per call, opened in waves of 200 every 50 ms). `-- N` sets the
//! number of concurrent calls.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const PROFILE: &str = r#"
name: provider-bench
run: { duration: 1h }
workload: { arrival: { every: 1s } }
consumer: { target: ack-after-work, workers: 1 }
provider:
  latency: { dist: uniform, min: 31s, max: 40s }
"#;

fn main() {
    let n: usize = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .find_map(|a| a.parse().ok())
        .unwrap_or(10_000);
    let dir = tempfile::tempdir().expect("temp dir");
    let profile = dir.path().join("provider-bench.yaml");
    std::fs::write(&profile, PROFILE).expect("write profile");
    let mut child = Command::new(env!("CARGO_BIN_EXE_ackbench"))
        .args([
            "provider",
            profile.to_str().expect("utf-8"),
            "--listen",
            "127.0.0.1:0",
            "--for",
            "150s",
        ])
        .stdout(Stdio::piped())
        .spawn()
        .expect("start ackbench provider");
    let mut lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
    let first = lines.next().expect("a first line").expect("utf-8");
    let base = first
        .trim_start_matches("provider listening on ")
        .to_string();
    let url = format!("{base}/w/1/send");
    let pid = child.id();

    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let (ok, failed, elapsed) = rt.block_on(async move {
        let client = reqwest::Client::builder()
            .timeout(Duration::from_secs(90))
            .pool_max_idle_per_host(0)
            .build()
            .expect("client");
        let started = Instant::now();
        let mut set = tokio::task::JoinSet::new();
        for i in 0..n {
            // Workers connect in waves, as a fleet starting up does: 200 every 50 ms.
            if i > 0 && i % 200 == 0 {
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            let (c, url) = (client.clone(), url.clone());
            set.spawn(async move {
                let body = format!(r#"{{"key":"msg-{i}","to":"msg-{i}@example.test"}}"#);
                match c.post(url).body(body).send().await {
                    Ok(r) => Ok(r.status().as_u16()),
                    Err(e) => Err(format!("{e:?}")),
                }
            });
        }
        let (mut ok, mut failed) = (0usize, 0usize);
        while let Some(r) = set.join_next().await {
            match r {
                Ok(Ok(202)) => ok += 1,
                Ok(Ok(status)) => {
                    failed += 1;
                    eprintln!("answered {status}");
                }
                Ok(Err(e)) => {
                    if failed == 0 {
                        eprintln!("first failure: {e}");
                    }
                    failed += 1;
                }
                Err(e) => {
                    failed += 1;
                    eprintln!("task failed: {e}");
                }
            }
        }
        (ok, failed, started.elapsed())
    });
    let peak = peak_rss_mib(pid);
    let _ = child.kill();
    let _ = child.wait();
    println!(
        "concurrent calls {n}: answered 202 {ok}, failed {failed}, all done in {:.1} s",
        elapsed.as_secs_f64()
    );
    println!("provider peak RSS (VmHWM): {peak:.1} MiB");
}

fn peak_rss_mib(pid: u32) -> f64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .map_or(f64::NAN, |kb| kb / 1024.0)
}
