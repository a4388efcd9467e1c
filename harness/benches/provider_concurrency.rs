//! The HTTP provider holding 10,000 concurrent slow calls (31-40 s each, the reference
//! incident's provider): are they all answered, and what is the provider's peak RSS? Beside it,
//! the same load against a wiremock `MockServer` whose responder answers 202 after the same
//! 31-40 s delay: the measurement behind serving the provider with axum/hyper (ARCHITECTURE.md).
//!
//! `cargo bench -p ackbench --bench provider_concurrency` (release build; about 90 s for both);
//! `-- ackbench` or `-- wiremock` runs one side only, `-- N` sets the number of concurrent calls.
//! Each server runs as its own process (`ackbench provider`, or this bench re-run as a wiremock
//! server), so its peak RSS (VmHWM) is its own; this process is the client (one connection per
//! call, opened in waves of 200 every 50 ms).

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

/// Set in the environment of the re-run bench that serves wiremock.
const SERVE_WIREMOCK: &str = "ACKBENCH_BENCH_SERVE_WIREMOCK";

fn main() {
    if std::env::var_os(SERVE_WIREMOCK).is_some() {
        serve_wiremock();
        return;
    }
    let args: Vec<String> = std::env::args().skip(1).collect();
    let n: usize = args
        .iter()
        .filter(|a| !a.starts_with("--"))
        .find_map(|a| a.parse().ok())
        .unwrap_or(10_000);
    let only = |side: &str| {
        let sides = ["ackbench", "wiremock"];
        !args.iter().any(|a| sides.contains(&a.as_str())) || args.iter().any(|a| a == side)
    };
    let dir = tempfile::tempdir().expect("temp dir");
    if only("ackbench") {
        let profile = dir.path().join("provider-bench.yaml");
        std::fs::write(&profile, PROFILE).expect("write profile");
        let child = Command::new(env!("CARGO_BIN_EXE_ackbench"))
            .args([
                "provider",
                profile.to_str().expect("utf-8"),
                "--listen",
                "127.0.0.1:0",
                "--for",
                "150s",
                // Every call holds its own connection: none may wait behind the limit.
                "--max-connections",
                &(n + 100).to_string(),
            ])
            .stdout(Stdio::piped())
            .spawn()
            .expect("start ackbench provider");
        measure("ackbench provider (axum/hyper)", child, "/w/1/send", n);
    }
    if only("wiremock") {
        let child = Command::new(std::env::current_exe().expect("this bench's path"))
            .env(SERVE_WIREMOCK, "1")
            .stdout(Stdio::piped())
            .spawn()
            .expect("start the wiremock server");
        measure("wiremock MockServer", child, "/send", n);
    }
}

/// Sends `n` concurrent calls to the server `child` (whose first line of output is
/// `provider listening on BASE`) at `path`; prints what was answered and its peak RSS.
fn measure(name: &str, mut child: std::process::Child, path: &str, n: usize) {
    let mut lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
    let first = lines.next().expect("a first line").expect("utf-8");
    let base = first
        .trim_start_matches("provider listening on ")
        .to_string();
    let url = format!("{base}{path}");
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
        "{name}: concurrent calls {n}: answered 202 {ok}, failed {failed}, all done in {:.1} s",
        elapsed.as_secs_f64()
    );
    println!("{name}: peak RSS (VmHWM): {peak:.1} MiB");
}

/// A wiremock responder with the provider's incident latency: 202 after 31-40 s (uniform).
struct SlowProvider(std::sync::Mutex<u64>);

impl wiremock::Respond for SlowProvider {
    fn respond(&self, _: &wiremock::Request) -> wiremock::ResponseTemplate {
        // A small xorshift: the delays only need to spread over 31-40 s.
        let mut x = self.0.lock().expect("not poisoned");
        *x ^= *x << 13;
        *x ^= *x >> 7;
        *x ^= *x << 17;
        let delay = Duration::from_millis(31_000 + *x % 9_001);
        wiremock::ResponseTemplate::new(202).set_delay(delay)
    }
}

/// The re-run bench as a wiremock server: one mock for `POST /send`, no request recording
/// (the provider keeps no request either), for at most 150 s.
fn serve_wiremock() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(async {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1");
        let server = wiremock::MockServer::builder()
            .listener(listener)
            .disable_request_recording()
            .start()
            .await;
        wiremock::Mock::given(wiremock::matchers::method("POST"))
            .and(wiremock::matchers::path("/send"))
            .respond_with(SlowProvider(std::sync::Mutex::new(0x9E37_79B9_7F4A_7C15)))
            .mount(&server)
            .await;
        println!("provider listening on {}", server.uri());
        tokio::time::sleep(Duration::from_secs(150)).await;
    });
}

fn peak_rss_mib(pid: u32) -> f64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .map_or(f64::NAN, |kb| kb / 1024.0)
}
