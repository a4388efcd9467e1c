//! A NATS consumer on the scaled clock (`consumer.clock: scaled`, the default of a compressed
//! run with libfaketime): the shipped Python consumer, with no time scale of its own, counts
//! like the sim model on a short Thursday; and a consumer that reads its consumer's AckWait
//! and NAKs with a delay hears and is heard in profile time (the workers' proxy converts).

use crate::common::{have_python_module, root, temp_profile};
use crate::live_clock::have_libfaketime;
use crate::live_nats::{counts, finished, nats_up, python_consumer, run};

/// Checks that the run's stderr says its consumer ran on the scaled clock at `speed`, and
/// that the probe measured it (within 5% it says so; otherwise it warns, which a machine
/// loaded far beyond its cores can cause: the counts still hold).
fn ran_scaled(stderr: &str, speed: &str) {
    assert!(
        stderr.contains(&format!("consumer clock: scaled, x{speed} ")),
        "{stderr}"
    );
    assert!(
        stderr.contains("consumer clock: measured x")
            || stderr.contains("warning: the consumer clock runs x"),
        "{stderr}"
    );
}

#[test]
fn the_python_consumer_on_the_scaled_clock_counts_like_the_sim_model_on_a_short_thursday() {
    if !nats_up() || !have_python_module("nats", "nats-py") || !have_libfaketime() {
        return;
    }
    // The Thursday (profiles/brokers/live-nats-thursday.yaml) over 20 orders, one every 50 s:
    // each provider call takes 31-40 s against a 30 s AckWait, so each order is delivered
    // twice and sends twice (delivery 1's late ack acks it under its second holder): 40
    // effects, 20 duplicates, 0 DLQ, 0 lost, 40 deliveries, as the sim model has it.
    let thursday = std::fs::read_to_string(root().join("profiles/brokers/live-nats-thursday.yaml"))
        .unwrap()
        .replace("count: 108", "count: 20")
        .replace("duration: 90m", "duration: 1000s");
    let marker = format!("nats-clock-{}", std::process::id());
    let (_p, python) = temp_profile(&thursday.replace(
        "consumer: { target: ack-after-work, workers: 4, restart_after: 1s }",
        &format!(
            "consumer:\n{}\n  workers: 4\n  restart_after: 1s",
            python_consumer(&marker)
        ),
    ));
    let (_b, builtin) = temp_profile(&thursday);
    let dir = tempfile::tempdir().unwrap();
    let (pid, out, summary) = run(dir.path(), "python", python.to_str().unwrap(), &[]);
    ran_scaled(&String::from_utf8_lossy(&out.stderr), "50");
    let live = finished((pid, out, summary));
    let sim = finished(run(
        dir.path(),
        "sim",
        builtin.to_str().unwrap(),
        &["--set", "mode=sim"],
    ));
    assert_eq!(counts(&live), counts(&sim));
    assert_eq!(
        (live["effects"].as_u64(), live["duplicate_effects"].as_u64()),
        (Some(40), Some(20))
    );
}

/// A consumer that reads its consumer's info, NAKs each first delivery with a 20 s delay
/// (`msg.nak(delay=20)`, profile seconds on its clock) and sends and acks the second; it notes
/// when on its monotonic clock (one timeline for every worker of the run).
const NAK_THEN_ACK: &str = r#"
import asyncio, json, os, time, urllib.request
import nats, nats.errors

OUT = os.environ["NAK_TEST_OUT"]

def note(text):
    with open(OUT, "a") as f:
        f.write(text + "\n")

async def main():
    nc = await nats.connect(os.environ["ACKBENCH_NATS_URL"])
    js = nc.jetstream()
    sub = await js.pull_subscribe_bind(os.environ["ACKBENCH_CONSUMER"], os.environ["ACKBENCH_STREAM"])
    info = await sub.consumer_info()
    note(f"ack_wait {info.config.ack_wait}")
    while True:
        try:
            msgs = await sub.fetch(1, timeout=5)
        except nats.errors.TimeoutError:
            continue
        for msg in msgs:
            seq = msg.metadata.sequence.stream
            if msg.metadata.num_delivered == 1:
                note(f"nak {seq} {time.monotonic():.3f}")
                await msg.nak(delay=20)
                continue
            note(f"redelivered {seq} {time.monotonic():.3f}")
            body = json.loads(msg.data)
            req = urllib.request.Request(
                os.environ["ACKBENCH_PROVIDER_URL"] + "send",
                data=json.dumps({"key": body["key"], "to": body["email"]}).encode(),
                headers={"Content-Type": "application/json"},
                method="POST",
            )
            urllib.request.urlopen(req, timeout=60).read()
            await msg.ack_sync(timeout=30)

asyncio.run(main())
"#;

#[test]
fn a_consumer_reads_its_ack_wait_and_naks_with_a_delay_in_profile_time() {
    if !nats_up() || !have_python_module("nats", "nats-py") || !have_libfaketime() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("nak_then_ack.py");
    std::fs::write(&script, NAK_THEN_ACK).unwrap();
    let notes = dir.path().join("notes.txt");
    // 5 orders, one every 10 s, at time scale 0.05 (x20): AckWait 30 s is 1.5 s of wall time
    // on the server, the NAK's 20 s is 1 s. Each order is delivered twice (the NAK, then the
    // redelivery 20 s later that sends and acks): 10 deliveries, 5 effects, no duplicate.
    let (_p, profile) = temp_profile(&format!(
        r#"
name: live-nats-nak-delay
mode: live
seed: 4
run: {{ duration: 50s, drain: 10m, time_scale: 0.05 }}
broker: {{ kind: nats, ack_wait: 30s, max_deliver: 3 }}
workload: {{ arrival: {{ every: 10s }}, count: 5 }}
consumer:
  command: [python3, "{}"]
  env: {{ NAK_TEST_OUT: "{}" }}
  workers: 2
  restart_after: 1s
provider:
  effect_at: request
  latency: {{ dist: fixed, value: 200ms }}
"#,
        script.display(),
        notes.display()
    ));
    let (pid, out, summary) = run(dir.path(), "r", profile.to_str().unwrap(), &[]);
    ran_scaled(&String::from_utf8_lossy(&out.stderr), "20");
    let s = finished((pid, out, summary));
    assert_eq!(
        crate::common::counts(&s, &crate::common::CORE_COUNTS),
        [5, 10, 5, 0, 0, 0],
        "{:?}",
        crate::common::CORE_COUNTS
    );
    // Each worker read AckWait as the profile's 30 s (the server holds 1.5 s).
    let notes = std::fs::read_to_string(&notes).unwrap();
    let ack_waits: Vec<&str> = notes
        .lines()
        .filter(|l| l.starts_with("ack_wait"))
        .collect();
    assert!(!ack_waits.is_empty(), "{notes}");
    assert!(ack_waits.iter().all(|l| *l == "ack_wait 30.0"), "{notes}");
    // The redelivery came 20 s after the NAK on the consumers' clock (not 400 s: the 20 s
    // taken as wall time), whichever worker got it; and in the run's record: delivery 2 of
    // each seq starts 20 s (plus a round trip) after delivery 1.
    let mut noted = std::collections::BTreeMap::<(&str, u64), f64>::new();
    for l in notes.lines() {
        if let [what @ ("nak" | "redelivered"), seq, t] = l.split(' ').collect::<Vec<_>>()[..] {
            noted.insert((what, seq.parse().unwrap()), t.parse().unwrap());
        }
    }
    for seq in 1..=5 {
        let (Some(nak), Some(again)) = (noted.get(&("nak", seq)), noted.get(&("redelivered", seq)))
        else {
            panic!("stream seq {seq}: {notes}");
        };
        assert!(
            (19.0..26.0).contains(&(again - nak)),
            "stream seq {seq}: {notes}"
        );
    }
    let csv = std::fs::read_to_string(dir.path().join("r/deliveries.csv")).unwrap();
    let mut starts = std::collections::BTreeMap::<u64, Vec<f64>>::new();
    for line in csv.lines().skip(1) {
        // worker,key,seq,delivery,start_s,end_s,outcome
        let f: Vec<&str> = line.split(',').collect();
        starts
            .entry(f[2].parse().unwrap())
            .or_default()
            .push(f[4].parse().unwrap());
    }
    for (seq, mut t) in starts {
        t.sort_by(f64::total_cmp);
        assert_eq!(t.len(), 2, "seq {seq}: {csv}");
        assert!((19.5..25.0).contains(&(t[1] - t[0])), "seq {seq}: {csv}");
    }
}
