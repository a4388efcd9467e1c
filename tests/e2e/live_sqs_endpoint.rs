//! Live mode against an external SQS server (`broker.endpoint`): moto's server from PyPI,
//! started by the test on a free port. The run creates its own queues there, observes every
//! worker through its proxy port, and deletes the queues at the end.

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::common::{ackbench, have_python_module, run_text, stderr, temp_profile};

/// A moto server on 127.0.0.1, stopped when dropped.
pub(crate) struct Moto {
    child: Child,
    pub port: u16,
}

impl Drop for Moto {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Starts `moto_server`, or skips (printed) when moto is not installed, unless
/// ACKBENCH_REQUIRE_SERVICES=1.
pub(crate) fn moto() -> Option<Moto> {
    if !have_python_module("moto.server", "moto[server]") {
        return None;
    }
    let port = free_port();
    let child = Command::new("python3")
        .args([
            "-m",
            "moto.server",
            "-H",
            "127.0.0.1",
            "-p",
            &port.to_string(),
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("python3 -m moto.server starts");
    let moto = Moto { child, port };
    let deadline = Instant::now() + Duration::from_secs(30);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < deadline, "moto did not listen on {port}");
        std::thread::sleep(Duration::from_millis(100));
    }
    Some(moto)
}

/// The queues on the server, as `aws sqs list-queues` would list them (through boto3).
pub(crate) fn queues(port: u16) -> String {
    let o = Command::new("python3")
        .args([
            "-c",
            "import boto3,sys; c=boto3.client('sqs', endpoint_url=sys.argv[1], region_name='us-east-1', \
             aws_access_key_id='a', aws_secret_access_key='b'); print(c.list_queues().get('QueueUrls', []))",
            &format!("http://127.0.0.1:{port}"),
        ])
        .output()
        .unwrap();
    String::from_utf8_lossy(&o.stdout).to_string()
}

/// 20 orders, each killed once at `call_answered` on its first delivery: the effect is done, the
/// ack never sent, and the lease (20 s, 2 s of wall time) hands the message out again.
fn kill_profile(port: u16, consumer: &str) -> String {
    format!(
        "name: endpoint-kills\nmode: live\nseed: 3\n\
         run: {{ duration: 20s, drain: 5m, time_scale: 0.1 }}\n\
         broker: {{ kind: sqs, endpoint: \"http://127.0.0.1:{port}\", visibility_timeout: 20s, \
         max_receives: 3, stale_ack: sqs }}\n\
         workload: {{ arrival: {{ every: 1s }}, count: 20 }}\n\
         consumer: {{ {consumer}, workers: 4, restart_after: 1s }}\n\
         provider: {{ effect_at: request, latency: {{ dist: fixed, value: 200ms }} }}\n\
         chaos:\n  - kill_worker: {{ point: call_answered, delivery: 1 }}\n"
    )
}

fn run(profile: &str) -> Value {
    let r = run_text(profile, &["--quiet"]);
    assert!(r.code() <= 1, "{}", r.stderr());
    r.summary()
}

fn counts(s: &Value) -> Vec<u64> {
    [
        "messages",
        "deliveries",
        "effects",
        "duplicate_effects",
        "dlq",
        "lost",
        "worker_kills",
        "broker_anomalies",
    ]
    .iter()
    .map(|k| s[*k].as_u64().unwrap_or(u64::MAX))
    .collect()
}

#[test]
fn kills_against_moto_count_as_the_sim_model_and_leave_no_queue() {
    let Some(moto) = moto() else { return };
    let builtin = kill_profile(moto.port, "target: ack-after-work");
    let sim = run(&builtin.replace("mode: live", "mode: sim"));
    // Each of the 20 messages: delivery 1 sends the email and dies at the answer (20 kills),
    // delivery 2 after the lease sends it again and acks: 40 deliveries, 40 effects, 20
    // duplicates, nothing dead-lettered or lost.
    assert_eq!(counts(&sim), [20, 40, 40, 20, 0, 0, 20, 0]);
    assert_eq!(
        counts(&run(&builtin)),
        counts(&sim),
        "built-in target on moto"
    );
    if have_python_module("boto3", "boto3") {
        let python = kill_profile(
            moto.port,
            "command: [python3, targets/python/ack_after_work.py]",
        );
        assert_eq!(
            counts(&run(&python)),
            counts(&sim),
            "boto3 consumer on moto"
        );
    }
    assert_eq!(
        queues(moto.port).trim(),
        "[]",
        "the run's queues are deleted"
    );
}

#[test]
fn an_unreachable_endpoint_exits_3_naming_it() {
    let port = free_port();
    let (_dir, path) = temp_profile(&kill_profile(port, "target: ack-after-work"));
    let o = ackbench(&["run", path.to_str().unwrap(), "--quiet"]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(3), "{err}");
    assert!(
        err.contains(&format!(
            "cannot reach the sqs broker at http://127.0.0.1:{port}"
        )),
        "{err}"
    );
}

#[test]
fn a_lease_that_is_not_whole_wall_seconds_exits_2() {
    let (_dir, path) = temp_profile(
        // 30 s at 0.05 is 1.5 s of wall time.
        &kill_profile(1, "target: ack-after-work")
            .replace("time_scale: 0.1", "time_scale: 0.05")
            .replace("visibility_timeout: 20s", "visibility_timeout: 30s"),
    );
    let o = ackbench(&["run", path.to_str().unwrap(), "--quiet"]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("whole seconds"), "{err}");
}

/// The Thursday (20 orders, 31-40 s answers, a 30 s lease: one wall second at this scale)
/// against moto with the boto3 consumer. The sim model hands a message out again at the instant
/// its lease ends, so every message is received three times and dead-lettered (60 deliveries,
/// 40 duplicates, 20 in the DLQ). moto hands an expired message out only to a receive that
/// looks after it expired, a few hundred milliseconds of wall time later (seconds of profile
/// time here), so a holder's late delete often reaches it first: by the latest receipt, nobody
/// having received the message since, which deletes it as AWS documents (the `sqs` stale-ack
/// policy). Fewer redeliveries, no DLQ: the difference is the server's redelivery lag, and what
/// holds whatever the lag is checked.
#[test]
fn the_thursday_on_moto_differs_from_the_model_only_by_its_redelivery_lag() {
    let Some(moto) = moto() else { return };
    if !have_python_module("boto3", "boto3") {
        return;
    }
    let text = std::fs::read_to_string(crate::common::root().join("profiles/live-thursday.yaml"))
        .unwrap()
        .replace("count: 108", "count: 20")
        .replace("time_scale: 0.05", "time_scale: 0.0333333333333")
        .replace(
            "kind: embedded,",
            &format!("kind: sqs, endpoint: \"http://127.0.0.1:{}\",", moto.port),
        )
        .replace("stale_ack: reject", "stale_ack: sqs");
    let live = run(&text);
    let c = |k: &str| live[k].as_u64().unwrap();
    assert_eq!(c("messages"), 20);
    assert_eq!(c("messages_with_effect"), 20, "every order is sent: {live}");
    assert_eq!(c("lost"), 0);
    assert_eq!(c("unfinished"), 0);
    assert_eq!(c("broker_anomalies"), 0, "{live}");
    // Every delivery sends an email (effect at request); at most three per order.
    assert_eq!(c("effects"), c("deliveries"));
    assert!((20..=60).contains(&c("deliveries")), "{live}");
    assert_eq!(c("duplicate_effects"), c("deliveries") - 20);
    assert_eq!(
        queues(moto.port).trim(),
        "[]",
        "the run's queues are deleted"
    );
}
