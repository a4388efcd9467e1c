//! What ended each RabbitMQ delivery, with a real consumer on the real server: amqplib's
//! `ch.ack(msg)` followed by `conn.close()` writes the close (channel 0, straight to the socket)
//! before the ack (channel 1, buffered), so RabbitMQ closes the connection, requeues the message
//! and discards the ack. The report must say the worker's close took those deliveries back, not
//! the 30-minute consumer timeout. amqplib is installed from npm into a temporary folder once
//! per test process.

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::OnceLock;

use crate::common::{service_up, stderr, summary_of, temp_profile};
use crate::live::workers_left;
use crate::live_clock::skip_or_fail;
use crate::live_rabbitmq::{left_on_server, run_ackbench};

/// amqplib installed from npm (once): its node_modules folder, or `None` (skipped with a
/// printed reason) without node and npm.
fn amqplib_modules() -> Option<PathBuf> {
    static MODULES: OnceLock<Option<PathBuf>> = OnceLock::new();
    MODULES
        .get_or_init(|| {
            let runs = |program: &str| {
                Command::new(program)
                    .arg("--version")
                    .stdout(Stdio::null())
                    .stderr(Stdio::null())
                    .status()
                    .is_ok_and(|s| s.success())
            };
            if !runs("node") || !runs("npm") {
                skip_or_fail("node and npm are needed for amqplib (apt-get install nodejs npm)");
                return None;
            }
            // Kept for the test process's life: the runs read the package from it.
            let dir = tempfile::tempdir().expect("temp dir").keep();
            let o = Command::new("npm")
                .args([
                    "install",
                    "--no-audit",
                    "--no-fund",
                    "--prefix",
                    dir.to_str().unwrap(),
                    "amqplib@0",
                ])
                .output()
                .expect("npm runs");
            assert!(
                o.status.success(),
                "npm install amqplib: {}",
                String::from_utf8_lossy(&o.stderr)
            );
            Some(dir.join("node_modules"))
        })
        .clone()
}

/// A consumer that sends each message's email, acks it and, on a message's first delivery,
/// closes its connection at once (one message per connection), then connects again. A
/// redelivered message is acked on a connection that stays open.
const CLOSE_AFTER_ACK: &str = r#"
const amqp = require('amqplib');
const { ACKBENCH_AMQP_URL: url, ACKBENCH_QUEUE: queue, ACKBENCH_PROVIDER_URL: provider } = process.env;

async function send(key) {
  const r = await fetch(provider + 'send', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ key, to: 'ops@example.com' }),
  });
  return r.ok;
}

async function session() {
  const conn = await amqp.connect(url);
  const ch = await conn.createChannel();
  await ch.prefetch(1);
  await new Promise((resolve, reject) => {
    conn.on('close', resolve);
    conn.on('error', reject);
    ch.consume(queue, async (msg) => {
      const { key } = JSON.parse(msg.content.toString());
      await send(key);
      ch.ack(msg);
      if (!msg.fields.redelivered) await conn.close();
    });
  });
}

(async () => {
  for (;;) {
    try { await session(); } catch (e) { console.error('session ended: ' + e.message); }
    await new Promise((r) => setTimeout(r, 100));
  }
})();
"#;

#[test]
fn a_consumer_closing_its_connection_right_after_its_ack_is_said_to_and_no_consumer_timeout_is_blamed(
) {
    if !service_up("RabbitMQ", 5672) {
        return;
    }
    let Some(modules) = amqplib_modules() else {
        return;
    };
    let marker = format!("rmq-close-after-ack-{}", std::process::id());
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("close_after_ack.js");
    std::fs::write(&script, CLOSE_AFTER_ACK).unwrap();
    // 5 orders a second apart, one worker, the server's 30-minute consumer timeout.
    let (_pdir, profile) = temp_profile(&format!(
        r#"
name: live-rabbitmq-close-after-ack
mode: live
seed: 7
run: {{ duration: 5s, drain: 3m, time_scale: 1 }}
broker: {{ kind: rabbitmq, consumer_timeout: 30m }}
workload: {{ arrival: {{ every: 1s }}, count: 5 }}
consumer:
  command: [node, "{}"]
  workers: 1
  restart_after: 1s
  env: {{ NODE_PATH: "{}", ACKBENCH_TEST_MARKER: "{marker}" }}
provider:
  effect_at: request
  latency: {{ dist: lognormal, median: 20ms, p99: 60ms }}
"#,
        script.display(),
        modules.display()
    ));
    let out = dir.path().join("r");
    let (pid, o) = run_ackbench(&[
        "run",
        profile.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--quiet",
    ]);
    assert!(o.status.code().is_some_and(|c| c <= 1), "{}", stderr(&o));
    assert_eq!(
        left_on_server(pid),
        Vec::<String>::new(),
        "left on the server"
    );
    assert!(
        workers_left(&marker).is_empty(),
        "{:?}",
        workers_left(&marker)
    );
    let s = summary_of(&out);
    // Every order's first delivery is returned by the worker's connection close (its ack
    // discarded), its second acked on a connection left open: 5 messages, 10 deliveries, 10
    // emails (5 duplicates), 10 handlers of which 5 acked in time and 5 returned, all by the
    // worker's close; none outlived the 30-minute consumer timeout.
    assert_eq!(s["messages"], 5, "{s}");
    assert_eq!(s["lost"], 0, "{s}");
    assert_eq!(s["deliveries"], 10, "{s}");
    // Each discarded ack reached the proxy after the close: stale.
    assert_eq!(s["stale_acks"], 5, "{s}");
    let l = &s["handler_leases"];
    assert_eq!(l["outlived"], 0, "{l}");
    assert_eq!(l["returned"], 5, "{l}");
    assert_eq!(
        l["returned_by"],
        serde_json::json!({
            "channel_closed": 0,
            "connection_closed": 5,
            "connection_lost": 0,
            "ack_refused": 0,
            "broker_closed_channel": 0,
            "broker_closed_connection": 0
        }),
        "{l}"
    );
    let md = std::fs::read_to_string(out.join("summary.md")).expect("summary.md");
    assert!(!md.contains("TIMEOUT:"), "{md}");
    assert!(md.contains("**RETURNED:**"), "{md}");
    assert!(
        md.contains(
            "5 of 10 handlers had their message taken back by the broker before they \
             settled it, before their consumer timeout (1800000.000 ms) ran out: 5 because the \
             worker closed its connection;"
        ),
        "{md}"
    );
    let _ = std::fs::remove_dir_all(std::env::temp_dir().join(format!("ackbench-live-{pid}")));
}
