//! Live runs whose messages come through the system's own HTTP front door
//! (targets/python/ingress.py), driven by goose users: summary.json's `ingress` object, the
//! `ingress_lost` budget, a service that never listens, Ctrl-C, and a load without a schedule.

use std::time::Duration;

use serde_json::Value;

use crate::common::{ackbench, root, stderr, stdout, temp_profile};
use crate::live::{have_boto3, run_and_interrupt, workers_left};

/// A live profile: `count` orders through the reference ingress, at `pace` (YAML lines under
/// `ingress:`), with `extra` lines for the ingress section (env, body...).
fn profile(count: u32, pace: &str, extra: &str) -> String {
    let script = root()
        .join("targets/python/ingress.py")
        .display()
        .to_string();
    format!(
        r#"
name: live-ingress-e2e
mode: live
seed: 3
run: {{ duration: 10m, drain: 1m, time_scale: 0.05 }}
broker: {{ visibility_timeout: 30s, max_receives: 3 }}
workload:
  count: {count}
  ingress:
    command: [python3, "{script}"]
    url: "http://127.0.0.1:{{port}}/orders"
{pace}{extra}
consumer: {{ target: ack-after-work, workers: 3 }}
provider:
  latency: {{ dist: lognormal, median: 240ms, p99: 900ms }}
budgets: {{ lost: 0, ingress_lost: 0 }}
"#
    )
}

/// Runs `profile` with `sets`; returns (exit code, stdout, summary).
fn run(profile: &str, sets: &[&str]) -> (Option<i32>, String, Value) {
    let (dir, path) = temp_profile(profile);
    let out = dir.path().join("r");
    let mut args = vec![
        "run".to_string(),
        path.display().to_string(),
        "--out".into(),
        out.display().to_string(),
    ];
    for s in sets {
        args.extend(["--set".to_string(), s.to_string()]);
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let o = ackbench(&args);
    let summary = std::fs::read_to_string(out.join("summary.json"))
        .unwrap_or_else(|e| panic!("no summary.json ({e}); stderr: {}", stderr(&o)));
    (
        o.status.code(),
        stdout(&o),
        crate::common::checked_summary(&summary, &out.display().to_string()),
    )
}

#[test]
fn the_shipped_ingress_profile_publishes_every_order_once() {
    if !have_boto3() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r");
    let o = ackbench(&[
        "run",
        "profiles/live-ingress.yaml",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let s: Value = crate::common::summary_of(&out);
    assert_eq!(s["mode"], "live");
    for (field, want) in [
        ("messages", 120),
        ("effects", 120),
        ("duplicate_effects", 0),
        ("lost", 0),
        ("dlq", 0),
    ] {
        assert_eq!(s[field], want, "{field}");
    }
    let i = &s["ingress"];
    for (field, want) in [
        ("planned", 120),
        ("requests", 120),
        ("accepted", 120),
        ("refused", 0),
        ("failed", 0),
        ("published", 120),
        ("lost", 0),
        ("published_unaccepted", 0),
        ("duplicate_publishes", 0),
        ("users", 4),
    ] {
        assert_eq!(i[field], want, "ingress.{field}");
    }
    assert_eq!(i["scheduled"], true);
    assert_eq!(i["target_rate_per_s"], 1.0);
    let achieved = i["achieved_rate_per_s"].as_f64().unwrap();
    assert!((0.9..=1.1).contains(&achieved), "achieved {achieved}/s");
    // Goose's own totals agree with ackbench's join.
    assert_eq!(i["goose"]["requests"], 120);
    assert_eq!(i["goose"]["status_codes"]["202"], 120);
    assert!(i["goose"]["response_ms"]["p50"].as_f64().unwrap() > 0.0);
    // Every report shows the ingress table.
    assert!(stdout(&o).contains("Ingress (HTTP load by goose)"));
    let md = std::fs::read_to_string(out.join("summary.md")).unwrap();
    assert!(md.contains("| lost at the ingress | 0 |"), "{md}");
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(html.contains("Ingress (HTTP load by goose)"));
}

#[test]
fn orders_accepted_but_never_published_fail_the_ingress_lost_budget() {
    if !have_boto3() {
        return;
    }
    let (code, out, s) = run(
        &profile(30, "    rate_per_s: 2\n", ""),
        &["workload.ingress.env.INGRESS_DROP_EVERY=10"],
    );
    assert_eq!(code, Some(1), "{out}");
    let i = &s["ingress"];
    assert_eq!(
        (i["accepted"].as_u64(), i["published"].as_u64()),
        (Some(30), Some(27))
    );
    assert_eq!(i["lost"], 3);
    // The queue's own accounting only knows what was published: nothing lost there.
    assert_eq!(
        (s["messages"].as_u64(), s["lost"].as_u64()),
        (Some(27), Some(0))
    );
    let budget = s["budgets"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["name"] == "ingress_lost")
        .unwrap();
    assert_eq!(
        (budget["actual"].as_f64(), budget["pass"].as_bool()),
        (Some(3.0), Some(false))
    );
    assert!(
        out.contains(
            "INGRESS LOST: the ingress accepted 3 orders (2xx) that never reached the queue"
        ),
        "{out}"
    );
}

#[test]
fn refused_requests_are_counted_not_lost() {
    if !have_boto3() {
        return;
    }
    // Not an order: the ingress answers 400 and publishes nothing.
    let (code, _, s) = run(
        &profile(5, "    users: 2\n", "    body: \"not json {key}\"\n"),
        &[],
    );
    assert_eq!(code, Some(0));
    let i = &s["ingress"];
    assert_eq!(i["scheduled"], false);
    assert_eq!(
        (i["requests"].as_u64(), i["refused"].as_u64()),
        (Some(5), Some(5))
    );
    assert_eq!(
        (i["published"].as_u64(), i["lost"].as_u64()),
        (Some(0), Some(0))
    );
    assert_eq!(i["goose"]["status_codes"]["400"], 5);
    assert_eq!(s["messages"], 0);
}

#[test]
fn users_alone_send_every_order_as_fast_as_answered() {
    if !have_boto3() {
        return;
    }
    let (code, _, s) = run(&profile(40, "    users: 3\n", ""), &[]);
    assert_eq!(code, Some(0));
    let i = &s["ingress"];
    assert_eq!(
        (i["scheduled"].as_bool(), i["users"].as_u64()),
        (Some(false), Some(3))
    );
    assert_eq!(
        (i["requests"].as_u64(), i["published"].as_u64()),
        (Some(40), Some(40))
    );
    assert_eq!(i["target_rate_per_s"], 0.0);
    assert_eq!(
        (s["effects"].as_u64(), s["lost"].as_u64()),
        (Some(40), Some(0))
    );
}

#[test]
fn a_service_that_exits_before_listening_fails_the_run_with_its_log() {
    let text = profile(5, "    rate_per_s: 1\n", "").replace(
        &format!(
            "[python3, \"{}\"]",
            root().join("targets/python/ingress.py").display()
        ),
        "[sh, -c, \"echo no queue configured >&2; exit 4\"]",
    );
    let (dir, path) = temp_profile(&text);
    let o = ackbench(&[
        "run",
        path.to_str().unwrap(),
        "--out",
        dir.path().join("r").to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains(
            "the ingress service exited (exit status: 4) before it listened on 127.0.0.1:"
        ),
        "{err}"
    );
    let log = err.split("its output is in ").nth(1).unwrap().trim();
    let log = log.lines().next().unwrap();
    assert!(
        std::fs::read_to_string(log)
            .unwrap()
            .contains("no queue configured"),
        "{log}"
    );
}

#[test]
fn ctrl_c_mid_ingress_run_leaves_no_service_behind() {
    if !have_boto3() {
        return;
    }
    let marker = format!("ingress-sigint-{}", std::process::id());
    let (_dir, path) = temp_profile(&profile(
        400,
        "    rate_per_s: 1\n",
        &format!("    env: {{ ACKBENCH_TEST_MARKER: \"{marker}\" }}\n"),
    ));
    // Interrupt a moment after the service is up and the load runs.
    let code = run_and_interrupt(&path, || {
        let up = !workers_left(&marker).is_empty();
        if up {
            std::thread::sleep(Duration::from_secs(1));
        }
        up
    });
    assert_eq!(code, Some(3), "an interrupted run could not complete");
    assert!(
        workers_left(&marker).is_empty(),
        "no ingress service left after Ctrl-C: {:?}",
        workers_left(&marker)
    );
}

#[test]
fn a_slow_front_door_puts_the_closed_model_load_behind_its_schedule() {
    if !have_boto3() {
        return;
    }
    // 2 orders per profile second at time_scale 0.05: 40 per wall second. Two users against
    // answers of 0.2 s manage 10: the load falls behind, and says so instead of hiding it.
    let (code, out, s) = run(
        &profile(
            20,
            "    rate_per_s: 2\n    users: 2\n",
            "    env: { INGRESS_DELAY_S: \"0.2\" }\n",
        ),
        &[],
    );
    assert_eq!(code, Some(0), "{out}");
    let i = &s["ingress"];
    assert_eq!(
        (i["requests"].as_u64(), i["published"].as_u64()),
        (Some(20), Some(20))
    );
    let achieved = i["achieved_rate_per_s"].as_f64().unwrap();
    assert!(achieved < 0.9 * 2.0, "achieved {achieved}/s");
    // The last request starts about 2 wall seconds (40 profile seconds) after it was due.
    let lag = i["schedule_lag_ms"]["max"].as_f64().unwrap();
    assert!(lag > 20_000.0, "max lag {lag} ms");
    assert!(i["goose"]["response_ms"]["p50"].as_f64().unwrap() >= 200.0);
    assert!(out.contains("INGRESS BEHIND:"), "{out}");
}

#[test]
fn a_load_without_schedule_stops_sending_at_the_end_of_run_duration() {
    if !have_boto3() {
        return;
    }
    // One user, answers of 0.3 s wall, and run.duration of 20 profile s = 1 wall s: about 4 of
    // the 50 planned requests start in time.
    let text = profile(
        50,
        "    users: 1\n",
        "    env: { INGRESS_DELAY_S: \"0.3\" }\n",
    )
    .replace("duration: 10m", "duration: 20s");
    let (code, out, s) = run(&text, &[]);
    assert_eq!(code, Some(0), "{out}");
    let i = &s["ingress"];
    let sent = i["requests"].as_u64().unwrap();
    assert!((1..=5).contains(&sent), "sent {sent}");
    assert_eq!(i["published"].as_u64(), Some(sent));
    assert_eq!(i["planned"], 50);
    assert!(
        out.contains(&format!(
            "INGRESS: only {sent} of 50 planned requests were sent"
        )),
        "{out}"
    );
}
