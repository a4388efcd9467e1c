//! Attribution against a consumer nobody on the project wrote: an unmodified FastStream
//! RabbitMQ subscriber (installed from PyPI), at its defaults: unlimited prefetch, deliveries
//! handled concurrently, acked after the handler returns. It holds several deliveries at once,
//! so each provider call must be matched to the delivery of its key, not to the latest one the
//! worker received, and a kill rule on first deliveries must fire on first deliveries only.
//! And a consumer whose effect keys name no published message: a misconfigured run, not a loss.

use std::process::{Command, Output, Stdio};

use serde_json::Value;

use crate::common::{have_python_module, root, service_up, stderr, summary_of, temp_profile};
use crate::live::workers_left;
use crate::live_rabbitmq::left_on_server;

/// The subscriber as a team writes it: the run's queue (declared by the run, so looked up
/// passively), the order's JSON body, the email sent with urllib, FastStream's own ack policy.
const APP: &str = r#"import asyncio
import json
import os
import urllib.request

from faststream import FastStream
from faststream.rabbit import RabbitBroker, RabbitQueue

broker = RabbitBroker(os.environ["ACKBENCH_AMQP_URL"])
app = FastStream(broker)


def send(key, to):
    req = urllib.request.Request(
        os.environ["ACKBENCH_PROVIDER_URL"] + "send",
        data=json.dumps({"key": key, "to": to}).encode(),
        headers={"Content-Type": "application/json"},
        method="POST",
    )
    with urllib.request.urlopen(req, timeout=900) as resp:
        resp.read()


@broker.subscriber(RabbitQueue(os.environ["ACKBENCH_QUEUE"], declare=False))
async def handle(order):
    if isinstance(order, (bytes, str)):
        order = json.loads(order)
    await asyncio.to_thread(send, order["key"], order["email"])
"#;

/// python3 with FastStream's RabbitMQ broker and its command line: installed with pip when
/// missing under ACKBENCH_REQUIRE_SERVICES=1 (as CI runs), else the test is skipped with a
/// printed reason.
fn have_faststream() -> bool {
    let import = "import faststream.rabbit, aio_pika, typer";
    let missing = !Command::new("python3")
        .args(["-c", import])
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if missing && std::env::var("ACKBENCH_REQUIRE_SERVICES").as_deref() == Ok("1") {
        let _ = Command::new("python3")
            .args([
                "-m",
                "pip",
                "install",
                "--quiet",
                "faststream[rabbit,cli]>=0.6",
            ])
            .status();
    }
    have_python_module(
        "faststream.rabbit, aio_pika, typer",
        "'faststream[rabbit,cli]'",
    )
}

/// 20 orders: 5 at once before the workers are up (they pile up, and one worker takes them all),
/// then 15 every 10 s from 200 s. A kill at the first `received` returns the pile with message 1
/// on its second delivery and the others on their first: the next worker holds both kinds at
/// once. From 200 s, two kills at `call_answered` on a first delivery: each order killed there
/// is sent again on its second delivery.
fn profile(consumer: &str) -> String {
    let phase_b: Vec<String> = (0..15).map(|i| format!("{}s", 200 + 10 * i)).collect();
    format!(
        r#"
name: live-faststream-prefetch
mode: live
seed: 7
run: {{ duration: 360s, drain: 60m, time_scale: 0.05 }}
broker: {{ kind: rabbitmq, consumer_timeout: 600m }}
workload: {{ arrival: {{ at: [0s, 1s, 2s, 3s, 4s, {}] }} }}
consumer:
  {consumer}
  workers: 2
  restart_after: 1s
provider:
  effect_at: request
  latency: {{ dist: lognormal, median: 240ms, p99: 900ms }}
chaos:
  - kill_worker: {{ point: received, times: 1 }}
  - kill_worker: {{ point: call_answered, delivery: 1, times: 2, from: 200s }}
"#,
        phase_b.join(", ")
    )
}

/// Runs `ackbench run PROFILE --out DIR ARGS...`; its pid and output.
fn run(profile: &str, out: &std::path::Path, args: &[&str]) -> (u32, Output) {
    let child = Command::new(env!("CARGO_BIN_EXE_ackbench"))
        .args(["run", profile, "--out", out.to_str().unwrap(), "--quiet"])
        .args(args)
        .current_dir(root())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("ackbench starts");
    let pid = child.id();
    (pid, child.wait_with_output().expect("ackbench runs"))
}

const KEYS: [&str; 6] = [
    "messages",
    "effects",
    "duplicate_effects",
    "dlq",
    "lost",
    "unfinished",
];

/// The lines of a trace (`--trace KEY`) that name a delivery: ("delivered" or "call" or
/// "effect", worker, delivery), in time order.
fn steps(trace: &str) -> Vec<(&'static str, u32, u32)> {
    let num = |s: &str, after: &str| -> Option<u32> {
        let rest = &s[s.find(after)? + after.len()..];
        rest.split(|c: char| !c.is_ascii_digit())
            .next()?
            .parse()
            .ok()
    };
    trace
        .lines()
        .filter_map(|l| {
            let what = if l.contains("delivered #") {
                "delivered"
            } else if l.contains("call started") {
                "call"
            } else if l.contains("EFFECT") {
                "effect"
            } else {
                return None;
            };
            let delivery = if what == "delivered" {
                num(l, "delivered #")?
            } else {
                num(l, "delivery ")?
            };
            Some((what, num(l, "worker ")?, delivery))
        })
        .collect()
}

#[test]
fn faststream_with_unlimited_prefetch_is_killed_on_the_deliveries_the_rule_names() {
    if !service_up("RabbitMQ", 5672) || !have_faststream() {
        return;
    }
    let app_dir = tempfile::tempdir().unwrap();
    std::fs::write(app_dir.path().join("attribution_app.py"), APP).unwrap();
    let marker = format!("faststream-prefetch-{}", std::process::id());
    let (_dir, path) = temp_profile(&profile(&format!(
        "command: [python3, -m, faststream, run, \"attribution_app:app\"]\n  clock: real\n  \
         env: {{ PYTHONPATH: \"{}\", ACKBENCH_TEST_MARKER: \"{marker}\" }}",
        app_dir.path().display()
    )));
    let (_sim_dir, sim_path) = temp_profile(&profile("target: ack-after-work"));
    let out = tempfile::tempdir().unwrap();
    let traces: Vec<String> = (1..=20).map(|i| format!("msg-{i}")).collect();
    let trace_args: Vec<&str> = traces
        .iter()
        .flat_map(|k| ["--trace", k.as_str()])
        .collect();
    let (pid, o) = run(
        path.to_str().unwrap(),
        &out.path().join("live"),
        &trace_args,
    );
    let said = format!("ackbench said:\n{}", stderr(&o));
    assert_eq!(o.status.code(), Some(0), "{said}");
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
    let live = summary_of(&out.path().join("live"));
    let (_, o) = run(
        sim_path.to_str().unwrap(),
        &out.path().join("sim"),
        &["--set", "mode=sim"],
    );
    assert_eq!(o.status.code(), Some(0), "sim: {}", stderr(&o));
    let sim = summary_of(&out.path().join("sim"));
    // One email per order, and one more for each of the 2 orders killed between the email and
    // the ack: 22 effects, 2 duplicates, nothing lost, as the sim model counts it.
    let counts = |s: &Value| crate::common::counts(s, &KEYS);
    assert_eq!(counts(&sim), [20, 22, 2, 0, 0, 0]);
    assert_eq!(counts(&live), counts(&sim), "{live}");
    // 1 kill at `received`, exactly 2 at `call_answered`.
    let fired = |s: &Value| -> Vec<u64> {
        let rules = s["chaos_rules"].as_array().cloned().unwrap_or_default();
        rules
            .iter()
            .map(|r| r["fired"].as_u64().unwrap_or(0))
            .collect()
    };
    assert_eq!(fired(&live), [1, 2], "{live}");
    assert_eq!(fired(&live), fired(&sim));
    assert_eq!(live["worker_kills"], 3);
    // Every call matched to a delivery its worker held.
    assert!(live.get("unattributed_calls").is_none(), "{live}");
    // Each call is in a delivery of its message that its worker received, and the 2 orders sent
    // twice had their first email on delivery 1 (where the rule killed) and the second later.
    let mut twice = 0;
    for key in &traces {
        let path = out.path().join("live").join(format!("trace-{key}.txt"));
        let trace = std::fs::read_to_string(&path).unwrap_or_default();
        let steps = steps(&trace);
        for (i, &(what, worker, delivery)) in steps.iter().enumerate() {
            if what == "call" {
                assert!(
                    steps[..i].contains(&("delivered", worker, delivery)),
                    "{key}: a call in delivery {delivery} worker {worker} never received:\n{trace}"
                );
            }
        }
        let effects: Vec<u32> = steps
            .iter()
            .filter(|s| s.0 == "effect")
            .map(|s| s.2)
            .collect();
        if effects.len() == 2 {
            twice += 1;
            assert_eq!(effects[0], 1, "{key}:\n{trace}");
            assert!(effects[1] > 1, "{key}:\n{trace}");
        }
    }
    assert_eq!(twice, 2);
}

/// A consumer whose calls carry the key where the provider does not read it (`provider.key`
/// points at the address): every email went out once, and no effect names a published message.
#[test]
fn effects_under_keys_no_message_has_fail_as_misconfigured_not_as_loss() {
    let r = crate::common::run_text(
        r#"
name: live-mis-keyed
mode: live
seed: 3
run: { duration: 50s, drain: 10m, time_scale: 0.05 }
workload: { arrival: { every: 5s }, count: 10 }
consumer: { target: ack-after-work, workers: 2, restart_after: 1s }
provider: { key: "pointer:/to" }
budgets: { lost: 0 }
"#,
        &[],
    );
    // A failed verdict (exit 1), on the keys: 10 unmatched effects, the 10 deleted orders
    // unverifiable, none lost; each call's key named no published message.
    assert_eq!(r.code(), 1, "{}", r.stderr());
    let s = r.summary();
    let n = |k: &str| s[k].as_u64();
    assert_eq!(
        [
            n("effects"),
            n("unmatched_effects"),
            n("unknown_key_effects")
        ],
        [Some(0), Some(10), Some(10)],
        "{s}"
    );
    assert_eq!([n("lost"), n("unverifiable_keys")], [Some(0), Some(10)]);
    assert_eq!(s["unattributed_calls"]["unknown_key"], 10);
    let failed: Vec<&str> = s["budgets"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|b| b["pass"] == false)
        .filter_map(|b| b["name"].as_str())
        .collect();
    assert_eq!(failed, ["unmatched_effects"]);
    let out = r.stdout();
    assert!(
        out.contains(
            "FAIL  live-mis-keyed (live, seed 3): misconfigured: 10 effects name no published \
             message"
        ),
        "{out}"
    );
    assert!(
        out.contains("UNMATCHED: 10 effects named keys no published message has"),
        "{out}"
    );
    assert!(!out.contains("LOST:"), "{out}");
    for file in ["summary.md", "junit.xml", "report.html"] {
        let text = std::fs::read_to_string(r.dir.path().join(file)).unwrap_or_default();
        assert!(text.contains("UNMATCHED"), "{file}");
    }
}
