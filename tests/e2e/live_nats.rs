//! Live mode against a real NATS JetStream server (127.0.0.1:4222): the sim model's counts for
//! the Thursday incident and for kills, the built-in target and the Python consumer alike; the
//! run's stream and consumer removed after every run, also after SIGINT and SIGTERM; an
//! unreachable server and a server without JetStream refused.

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use futures_util::StreamExt;
use serde_json::Value;

use crate::common::{have_python_module, root, service_up, stderr, summary_of, temp_profile};
use crate::live::{until_going, workers_left, GOING_WITHIN};

pub(crate) fn nats_up() -> bool {
    service_up("NATS JetStream", 4222)
}

/// Streams on the server that ackbench process `pid` created (its run ids start so).
pub(crate) fn streams_of(pid: u32) -> Vec<String> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let c = async_nats::connect("nats://127.0.0.1:4222").await.unwrap();
        let js = async_nats::jetstream::new(c);
        let mut names = js.stream_names();
        let mut out = Vec::new();
        while let Some(n) = names.next().await {
            let n = n.unwrap();
            if n.starts_with(&format!("ackbench-{pid}-")) {
                out.push(n);
            }
        }
        out
    })
}

/// Runs `ackbench run PROFILE ARGS` into a report folder of `dir`; returns its pid, output and
/// summary (if written).
pub(crate) fn run(
    dir: &Path,
    name: &str,
    profile: &str,
    args: &[&str],
) -> (u32, Output, Option<Value>) {
    let out = dir.join(name);
    let child = Command::new(env!("CARGO_BIN_EXE_ackbench"))
        .args(["run", profile, "--out", out.to_str().unwrap(), "--quiet"])
        .args(args)
        .current_dir(root())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("ackbench starts");
    let pid = child.id();
    let o = child.wait_with_output().unwrap();
    let s = out.join("summary.json").exists().then(|| summary_of(&out));
    (pid, o, s)
}

/// A finished run: its summary, after checking it left nothing on the server.
pub(crate) fn finished(run: (u32, Output, Option<Value>)) -> Value {
    let (pid, o, s) = run;
    assert!(o.status.code().is_some_and(|c| c <= 1), "{}", stderr(&o));
    assert_eq!(
        streams_of(pid),
        Vec::<String>::new(),
        "nothing left on the server"
    );
    let s = s.expect("a summary");
    assert!(
        s.get("unattributed_calls").is_none(),
        "every call matched to a delivery its worker held: {s}"
    );
    s
}

const COUNTS: [&str; 5] = ["effects", "duplicate_effects", "dlq", "lost", "deliveries"];

pub(crate) fn counts(s: &Value) -> Vec<(&'static str, Value)> {
    COUNTS.iter().map(|&k| (k, s[k].clone())).collect()
}

#[test]
fn the_thursday_incident_on_jetstream_counts_like_the_sim_model() {
    if !nats_up() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let profile = "profiles/brokers/live-nats-thursday.yaml";
    let live = finished(run(dir.path(), "live", profile, &[]));
    let sim = finished(run(dir.path(), "sim", profile, &["--set", "mode=sim"]));
    assert_eq!(live["mode"], "live");
    assert_eq!(counts(&live), counts(&sim));
    // 108 orders, each delivered twice and never to MaxDeliver (profiles/brokers/nats.yaml).
    assert_eq!(
        (live["effects"].as_u64(), live["duplicate_effects"].as_u64()),
        (Some(216), Some(108))
    );
    assert_eq!(live["stale_acks"], sim["stale_acks"]);
}

/// 30 orders, 3 workers, the first delivery of 20 of them killed once the provider answered:
/// AckWait 30 s, MaxDeliver 5. `consumer` is the profile's consumer block.
fn kills_profile(consumer: &str, chaos: bool) -> String {
    let chaos = if chaos {
        "chaos:\n  - kill_worker: { point: call_answered, delivery: 1, times: 20 }\n"
    } else {
        ""
    };
    format!(
        r#"
name: live-nats-kills
mode: live
seed: 7
run: {{ duration: 150s, drain: 10m, time_scale: 0.1 }}
broker: {{ kind: nats, ack_wait: 30s, max_deliver: 5 }}
workload: {{ arrival: {{ every: 5s }}, count: 30 }}
consumer:
{consumer}
  workers: 3
  restart_after: 1s
provider:
  effect_at: request
  latency: {{ dist: lognormal, median: 240ms, p99: 900ms }}
{chaos}"#
    )
}

pub(crate) fn python_consumer(marker: &str) -> String {
    let script = root().join("targets/python/nats_ack_after_work.py");
    format!(
        "  command: [python3, \"{}\"]\n  env: {{ ACKBENCH_TEST_MARKER: \"{marker}\" }}",
        script.display()
    )
}

#[test]
fn kills_at_call_answered_count_like_the_sim_model_for_the_built_in_and_the_python_consumer() {
    if !nats_up() {
        return;
    }
    let python = have_python_module("nats", "nats-py");
    let dir = tempfile::tempdir().unwrap();
    let (_d, builtin) = temp_profile(&kills_profile("  target: ack-after-work", true));
    let builtin = builtin.to_str().unwrap().to_string();
    let marker = format!("nats-kills-{}", std::process::id());
    let (_p, py) = temp_profile(&kills_profile(&python_consumer(&marker), true));
    let py = py.to_str().unwrap().to_string();
    let d = dir.path().to_path_buf();
    let py_run = python.then(|| {
        let d = d.clone();
        std::thread::spawn(move || finished(run(&d, "python", &py, &[])))
    });
    let live = finished(run(&d, "live", &builtin, &[]));
    let sim = finished(run(&d, "sim", &builtin, &["--set", "mode=sim"]));
    assert_eq!(live["worker_kills"], 20);
    assert_eq!(counts(&live), counts(&sim));
    // One duplicate per kill between the effect and the ack, nothing lost.
    assert_eq!(
        (live["duplicate_effects"].as_u64(), live["lost"].as_u64()),
        (Some(20), Some(0))
    );
    if let Some(py_run) = py_run {
        let py = py_run.join().unwrap();
        assert_eq!(py["worker_kills"], 20);
        // Effects, duplicates, lost and DLQ as the built-in's. Deliveries may exceed them:
        // nats-py's `fetch(1, timeout=5)` gives up on its own clock 100 us after the expiry it
        // asked the server for, so on a loaded machine a worker can have two pull requests
        // open (the one it gave up on and the next); the server then delivers a second message
        // that waits in the client's inbox while the first is handled, and if the worker is
        // killed meanwhile that message is delivered again when its AckWait ends: one more
        // delivery, no effect, nothing lost. The built-in target never has two open.
        let without_deliveries = |s: &Value| {
            let mut c = counts(s);
            c.retain(|(k, _)| *k != "deliveries");
            c
        };
        assert_eq!(
            without_deliveries(&py),
            without_deliveries(&live),
            "the Python consumer counts like the built-in"
        );
        let (d_py, d_live) = (py["deliveries"].as_u64(), live["deliveries"].as_u64());
        assert!(
            d_py >= d_live && d_py <= d_live.map(|d| d + 3),
            "deliveries: Python {d_py:?}, built-in {d_live:?} (extra ones only from pull requests nats-py gave up on)"
        );
        assert!(
            workers_left(&marker).is_empty(),
            "{:?}",
            workers_left(&marker)
        );
    }
}

/// Starts a run of many orders with Python workers, waits until its stream exists and the
/// workers run, sends `signal`; returns the exit code after checking nothing is left.
fn interrupted_by(signal: nix::sys::signal::Signal, name: &str) -> Option<i32> {
    let marker = format!("nats-{name}-{}", std::process::id());
    let (dir, profile) = temp_profile(
        // Publishing goes on for 300 wall seconds (3000 s at 0.1), far past the signal, however
        // slowly the workers start: the run is still going when it is interrupted.
        &kills_profile(&python_consumer(&marker), false)
            .replace("count: 30", "count: 500")
            .replace("duration: 150s", "duration: 3000s"),
    );
    let mut child = Command::new(env!("CARGO_BIN_EXE_ackbench"))
        .args(["run", profile.to_str().unwrap(), "--quiet", "--out"])
        .arg(dir.path().join("r"))
        .current_dir(root())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let pid = child.id();
    // Going: the stream is on the server and a worker process runs (one running is enough to
    // see that the signal stops it).
    let seen = until_going(
        Duration::from_millis(200),
        || (streams_of(pid), workers_left(&marker)),
        |(streams, workers)| !streams.is_empty() && !workers.is_empty(),
    );
    if let Err((streams, workers)) = seen {
        let _ = child.kill();
        panic!("{name}: the run got going within {GOING_WITHIN:?}: streams {streams:?}, workers {workers:?}");
    }
    nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid as i32), signal).unwrap();
    let code = child.wait().unwrap().code();
    assert_eq!(streams_of(pid), Vec::<String>::new(), "{name}: stream left");
    assert!(
        workers_left(&marker).is_empty(),
        "{name}: {:?}",
        workers_left(&marker)
    );
    code
}

#[test]
fn sigint_and_sigterm_mid_run_leave_no_stream_and_no_worker() {
    if !nats_up() || !have_python_module("nats", "nats-py") {
        return;
    }
    use nix::sys::signal::Signal;
    let term = std::thread::spawn(|| interrupted_by(Signal::SIGTERM, "sigterm"));
    assert_eq!(interrupted_by(Signal::SIGINT, "sigint"), Some(3));
    assert_eq!(term.join().unwrap(), Some(3));
}

#[test]
fn an_unreachable_server_exits_3_naming_the_url_and_the_kind() {
    let dir = tempfile::tempdir().unwrap();
    let (_d, p) = temp_profile(
        &kills_profile("  target: ack-after-work", false)
            .replace("kind: nats,", "kind: nats, url: \"nats://127.0.0.1:1\","),
    );
    let (_, o, _) = run(dir.path(), "r", p.to_str().unwrap(), &[]);
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains("nats broker at nats://127.0.0.1:1"),
        "names the kind and the URL: {err}"
    );
}

#[test]
fn a_server_without_jetstream_exits_2_saying_how_to_enable_it() {
    if Command::new("nats-server")
        .arg("--version")
        .output()
        .is_err()
    {
        assert!(
            std::env::var("ACKBENCH_REQUIRE_SERVICES").as_deref() != Ok("1"),
            "nats-server is required (ACKBENCH_REQUIRE_SERVICES=1)"
        );
        eprintln!("skipped: no nats-server to start without JetStream");
        return;
    }
    // A server of our own, JetStream off, on a free port.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut server = Command::new("nats-server")
        .args(["-a", "127.0.0.1", "-p", &port.to_string()])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let started = Instant::now();
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err()
        && started.elapsed() < Duration::from_secs(10)
    {
        std::thread::sleep(Duration::from_millis(50));
    }
    let dir = tempfile::tempdir().unwrap();
    let url = format!("nats://127.0.0.1:{port}");
    let (_d, p) = temp_profile(
        &kills_profile("  target: ack-after-work", false)
            .replace("kind: nats,", &format!("kind: nats, url: \"{url}\",")),
    );
    let (_, o, _) = run(dir.path(), "r", p.to_str().unwrap(), &[]);
    let _ = server.kill();
    let _ = server.wait();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(err.contains(&url) && err.contains("-js"), "{err}");
}

#[test]
fn max_deliver_advisories_count_in_dlq_like_the_sim_model() {
    if !nats_up() {
        return;
    }
    // 4 poison messages of 20 crash the worker on each delivery: MaxDeliver 3 is reached for
    // each (the server's MAX_DELIVERIES advisory), 16 orders are sent once.
    let (dir, p) = temp_profile(
        r#"
name: live-nats-poison
mode: live
seed: 3
run: { duration: 100s, drain: 10m, time_scale: 0.05 }
broker: { kind: nats, ack_wait: 10s, max_deliver: 3 }
workload: { arrival: { every: 5s }, count: 20, poison: { first: 4 } }
consumer: { target: ack-after-work, workers: 3, restart_after: 1s }
provider:
  effect_at: request
  latency: { dist: lognormal, median: 240ms, p99: 900ms }
"#,
    );
    let p = p.to_str().unwrap();
    let live = finished(run(dir.path(), "live", p, &[]));
    let sim = finished(run(dir.path(), "sim", p, &["--set", "mode=sim"]));
    assert_eq!(counts(&live), counts(&sim));
    assert_eq!(
        (live["dlq"].as_u64(), live["effects"].as_u64()),
        (Some(4), Some(16))
    );
}
