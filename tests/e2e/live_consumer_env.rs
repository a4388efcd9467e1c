//! `consumer.env` in a live run: a consumer that reads only its own variable names (no
//! `ACKBENCH_*` of its own, no shell wrapper) gets the run's values through `${ACKBENCH_...}`,
//! on the embedded SQS broker; `$${` and any other `${...}` reach it as written.

use crate::common::run_text;
use crate::live::have_boto3;

/// A consumer that knows nothing of ackbench: its queue and its email API come from its own
/// variables; it exits at once (a crash the run counts) if the others are not as written.
const CONSUMER: &str = r#"
import json, os, sys, urllib.request
import boto3

queue = os.environ["ORDERS_QUEUE_URL"]
api = os.environ["EMAIL_API_URL"]
worker = os.environ["ACKBENCH_WORKER"]
expected = {"LITERAL": "${ACKBENCH_WORKER}", "GREETING": "worker " + worker + " of ${HOME}"}
for name, value in expected.items():
    if os.environ.get(name) != value:
        sys.exit(f"{name} is {os.environ.get(name)!r}, not {value!r}")
sqs = boto3.client("sqs", region_name=os.environ["AWS_REGION"])
while True:
    got = sqs.receive_message(QueueUrl=queue, WaitTimeSeconds=1, MaxNumberOfMessages=1)
    for m in got.get("Messages", []):
        key = json.loads(m["Body"])["key"]
        req = urllib.request.Request(api, data=json.dumps({"key": key}).encode(),
                                     headers={"Content-Type": "application/json"}, method="POST")
        urllib.request.urlopen(req, timeout=30).read()
        sqs.delete_message(QueueUrl=queue, ReceiptHandle=m["ReceiptHandle"])
"#;

#[test]
fn a_consumer_reads_the_runs_values_under_its_own_names() {
    if !have_boto3() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("consumer.py");
    std::fs::write(&script, CONSUMER).unwrap();
    let profile = format!(
        r#"
name: live-consumer-env
mode: live
seed: 5
run: {{ duration: 1s, drain: 30s, time_scale: 1 }}
broker: {{ visibility_timeout: 30s, max_receives: 3 }}
workload: {{ arrival: {{ every: 200ms }}, count: 5 }}
consumer:
  command: [python3, "{script}"]
  workers: 2
  env:
    EMAIL_API_URL: "${{ACKBENCH_PROVIDER_URL}}send"
    ORDERS_QUEUE_URL: "${{ACKBENCH_QUEUE_URL}}"
    LITERAL: "$${{ACKBENCH_WORKER}}"
    GREETING: "worker ${{ACKBENCH_WORKER}} of ${{HOME}}"
provider:
  effect_at: request
  latency: {{ dist: fixed, value: 10ms }}
budgets: {{ lost: 0, duplicate_rate: 0 }}
"#,
        script = script.display()
    );
    let r = run_text(&profile, &["--quiet"]);
    let s = r.summary();
    let folder = s["worker_logs"]["folder"].as_str().unwrap_or_default();
    assert_eq!(
        (r.code(), &s["effects"], &s["worker_crashes"]),
        (0, &serde_json::json!(5), &serde_json::json!(0)),
        "{s}\nstderr: {}",
        r.stderr()
    );
    assert_eq!(
        (&s["messages_with_effect"], &s["lost"]),
        (&5.into(), &0.into())
    );
    // The run names where its workers wrote.
    assert!(folder.ends_with("/logs"), "{s}");
    let md = std::fs::read_to_string(r.dir.path().join("summary.md")).unwrap();
    assert!(md.contains(folder), "{md}");
}
