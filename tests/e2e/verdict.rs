//! A verdict to trust: a chaos rule that cannot or did not fire, messages left behind, a consumer
//! that never ran, the timeout diagnosis against the lease each handler held, and time to done.

use std::path::Path;

use serde_json::Value;

use crate::common::{ackbench, refused, run_profile, stderr, temp_profile};

/// `ackbench run PROFILE --out TMP ARGS...`: (exit code, summary.json, stdout, report dir).
fn run(profile: &str, args: &[&str]) -> (i32, Value, String, tempfile::TempDir) {
    let r = run_profile(Path::new(profile), args);
    (r.code(), r.summary(), r.stdout(), r.dir)
}

fn text(dir: &Path, name: &str) -> String {
    std::fs::read_to_string(dir.join(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn budget<'a>(s: &'a Value, name: &str) -> &'a Value {
    s["budgets"]
        .as_array()
        .and_then(|b| b.iter().find(|b| b["name"] == name))
        .unwrap_or_else(|| panic!("budget {name} in {}", s["budgets"]))
}

#[test]
fn a_chaos_point_no_handler_reaches_is_refused_naming_the_valid_points() {
    let set = "chaos=[{kill_worker: {point: call_startd, probability: 1}}]";
    for cmd in ["check", "run"] {
        let e = refused(&[cmd, "profiles/healthy.yaml", "--set", set], &[]);
        assert!(
            e.contains(
                "chaos.0.kill_worker.point: no handler of target `ack-after-work` reaches \
                 \"call_startd\": the points are `received`, `call_started`, `call_answered` (it \
                 declares no checkpoint)"
            ),
            "{cmd}: {e}"
        );
    }
    // A checkpoint of another target; and the store-backed target that declares it.
    let e = refused(
        &["check", "profiles/healthy.yaml"],
        &[
            "--set",
            "consumer.target=dedupe-table",
            "--set",
            "chaos=[{kill_worker: {point: claimed}}]",
        ],
    );
    assert!(
        e.contains("and the checkpoints it declares, `committed`"),
        "{e}"
    );
    // A consumer program: ackbench says which points it can see.
    let e = refused(
        &["check", "profiles/live-thursday.yaml"],
        &["--set", "chaos=[{kill_worker: {point: committed}}]"],
    );
    assert!(
        e.contains(
            "ackbench cannot see \"committed\" in a consumer program (consumer.command): it \
             sees `received`, `call_started`, `call_answered`"
        ),
        "{e}"
    );
}

#[test]
fn a_chaos_rule_that_never_fires_fails_the_verdict_unless_optional() {
    // Healthy runs never deliver a message five times: the rule can never fire.
    let rule = "chaos=[{kill_worker: {point: call_answered, delivery: 5}}]";
    let (code, s, out, dir) = run("profiles/healthy.yaml", &["--set", rule]);
    assert_eq!(code, 1, "{out}");
    assert_eq!(s["verdict"], "fail");
    let rules = &s["chaos_rules"];
    assert_eq!(rules.as_array().map(Vec::len), Some(1), "{rules}");
    assert_eq!(rules[0]["fired"], 0);
    assert_eq!(rules[0]["optional"], false);
    assert_eq!(
        rules[0]["label"],
        "kill_worker at call_answered (delivery 5)"
    );
    let b = budget(&s, "unfired_chaos_rules");
    assert_eq!(
        (b["actual"].as_f64(), b["pass"].as_bool()),
        (Some(1.0), Some(false))
    );
    let warning = "CHAOS: rule 0 (kill_worker at call_answered (delivery 5)) never fired";
    assert!(out.contains(warning), "{out}");
    assert!(out.contains("FAIL  healthy"), "{out}");
    assert!(text(dir.path(), "summary.md")
        .contains("**CHAOS:** rule 0 (kill_worker at call_answered (delivery 5)) never fired"));
    let html = text(dir.path(), "report.html");
    assert!(html.contains("<strong>CHAOS:</strong> rule 0 (kill_worker at call_answered (delivery 5)) never fired"), "{html}");

    // optional: true: a warning, and the run passes.
    let optional = "chaos=[{kill_worker: {point: call_answered, delivery: 5, optional: true}}]";
    let (code, s, out, _) = run("profiles/healthy.yaml", &["--set", optional]);
    assert_eq!(code, 0, "{out}");
    assert_eq!(s["chaos_rules"][0]["optional"], true);
    assert!(
        out.contains("CHAOS: optional rule 0 (kill_worker at call_answered (delivery 5)) never fired in this run."),
        "{out}"
    );
    assert!(!out.contains("unfired_chaos_rules"), "{out}");
}

#[test]
fn a_rule_that_fires_reports_its_kills() {
    let (_, s, out, _) = run("profiles/kill-after-effect.yaml", &[]);
    let kills = s["worker_kills"].as_u64().unwrap_or(0);
    assert!(kills > 50, "{kills}");
    assert_eq!(s["chaos_rules"][0]["fired"].as_u64(), Some(kills));
    let b = budget(&s, "unfired_chaos_rules");
    assert_eq!(
        (b["actual"].as_f64(), b["pass"].as_bool()),
        (Some(0.0), Some(true))
    );
    assert!(!out.contains("CHAOS:"), "{out}");
}

#[test]
fn messages_left_in_the_queue_fail_unless_the_profile_allows_them() {
    // 2000 orders in the first 10 s, 4 workers, 1 minute and no drain: most are left behind.
    let load = [
        "--set",
        "workload.count=2000",
        "--set",
        "workload.arrival={rate_per_s: 200}",
        "--set",
        "run.duration=1m",
        "--set",
        "run.drain=0s",
    ];
    let (code, s, out, _) = run("profiles/healthy.yaml", &load);
    let unfinished = s["unfinished"].as_u64().unwrap_or(0);
    assert!(unfinished > 500, "{unfinished}");
    assert_eq!(code, 1, "{out}");
    let b = budget(&s, "unfinished");
    assert_eq!(
        (
            b["limit"].as_f64(),
            b["actual"].as_f64(),
            b["pass"].as_bool()
        ),
        (Some(0.0), Some(unfinished as f64), Some(false))
    );
    assert!(
        out.contains(&format!(
            "UNFINISHED: {unfinished} messages were still in the queue when the run stopped."
        )),
        "{out}"
    );
    // A profile that allows them passes; max_oldest_age is a budget too.
    let mut allowed = load.to_vec();
    allowed.extend(["--set", "budgets.unfinished=2000"]);
    let (code, _, out, _) = run("profiles/healthy.yaml", &allowed);
    assert_eq!(code, 0, "{out}");
    allowed.extend(["--set", "budgets.max_oldest_age=10s"]);
    let (code, s, out, _) = run("profiles/healthy.yaml", &allowed);
    assert_eq!(code, 1, "{out}");
    assert_eq!(budget(&s, "max_oldest_age")["pass"], false);
}

#[test]
fn a_consumer_that_never_runs_fails_naming_the_cause() {
    // A restart storm: the consumer program exits at once, every time.
    let (_dir, path) = temp_profile(
        "name: storm\nmode: live\nrun: { duration: 1s, drain: 1s }\n\
         workload:\n  arrival: { every: 100ms }\n  count: 10\n\
         consumer: { command: [/bin/true], workers: 2, restart_after: 0s }\n",
    );
    let (code, s, out, dir) = run(path.to_str().unwrap_or_default(), &[]);
    assert_eq!(code, 1, "{out}");
    assert_eq!(
        (s["deliveries"].as_u64(), s["unfinished"].as_u64()),
        (Some(0), Some(10))
    );
    let words =
        "NEVER RAN: the consumer never ran: not one of the 10 published messages was ever received";
    assert!(out.contains(words), "{out}");
    assert!(out.contains("FAIL  storm"), "{out}");
    assert!(text(dir.path(), "summary.md").contains("**NEVER RAN:** the consumer never ran"));
    assert!(text(dir.path(), "report.html")
        .contains("<strong>NEVER RAN:</strong> the consumer never ran"));
}

/// The Thursday incident with `target`: (exit code, summary, stdout, latency chart caption).
fn thursday(profile: &str, sets: &[&str]) -> (i32, Value, String, String) {
    let (code, s, out, dir) = run(profile, sets);
    let svg = text(dir.path(), "charts/latency.svg");
    (code, s, out, svg)
}

#[test]
fn correct_consumers_are_not_told_their_messages_were_redelivered() {
    for (profile, sets) in [
        (
            "profiles/marlow-thursday.yaml",
            vec!["--set", "consumer.target=heartbeat"],
        ),
        ("profiles/marlow-thursday-heartbeat.yaml", vec![]),
    ] {
        let (code, s, out, svg) = thursday(profile, &sets);
        assert_eq!(code, 0, "{profile}: {out}");
        assert!(!out.contains("TIMEOUT:"), "{profile}: {out}");
        assert!(
            !out.contains("had their message redelivered"),
            "{profile}: {out}"
        );
        assert!(
            out.contains("yet no handler outlived the lease it held: 108 of 108 acked in time, 108 after extending their lease"),
            "{profile}: {out}"
        );
        assert!(
            svg.contains("No handler outlived the lease it held: 108 of 108 acked in time, 108 after extending it (up to 60 s); none redelivered"),
            "{profile}"
        );
        let ratio = s["p99_over_visibility"].as_f64().unwrap_or(f64::NAN);
        assert!(ratio < 1.0, "{profile}: {ratio}");
        // Extended every 10 s, acked after 31-40 s: the last extension at 30 s ends at 60 s.
        assert_eq!(s["effective_lease_ms"]["max"].as_f64(), Some(60_000.0));
        assert_eq!(s["handler_leases"]["outlived"], 0);
        assert_eq!(s["handler_leases"]["extended"], 108);
    }
    let (code, s, out, svg) = thursday(
        "profiles/marlow-thursday.yaml",
        &["--set", "consumer.target=ack-before-work"],
    );
    assert_eq!(code, 0, "{out}");
    assert!(
        !out.contains("TIMEOUT:") && !out.contains("had their message redelivered"),
        "{out}"
    );
    assert!(svg.contains(
        "No handler outlived the lease it held: 108 of 108 acked in time; none redelivered"
    ));
    assert_eq!(
        s["p99_over_visibility"].as_f64(),
        Some(0.0),
        "acked at once"
    );
    assert_eq!(s["handler_leases"]["acked_in_time"], 108);
}

#[test]
fn the_thursday_consumer_is_still_told_why_it_duplicates() {
    let (code, s, out, svg) = thursday("profiles/marlow-thursday.yaml", &[]);
    assert_eq!(code, 1);
    assert!(s["p99_over_visibility"].as_f64().unwrap_or(0.0) > 1.0);
    let l = &s["handler_leases"];
    assert_eq!(
        [
            &l["handlers"],
            &l["outlived"],
            &l["outlived_redelivered"],
            &l["outlived_dead_lettered"]
        ],
        [324, 324, 216, 108]
    );
    assert!(
        out.contains(
            "TIMEOUT: 324 of 324 handlers still held their message when the lease they held ran out \
             (visibility timeout 30000.000 ms, handler p99 39878.655 ms): 216 had their message \
             redelivered while still being worked on, 108 had their message moved to the DLQ."
        ),
        "{out}"
    );
    assert!(svg.contains(
        "324 of 324 handlers (100%) outlived the lease they held: 216 redelivered while still working, 108 dead-lettered"
    ));
}

#[test]
fn time_to_done_is_the_latency_users_mean() {
    let (_, s, out, dir) = run("profiles/healthy.yaml", &[]);
    // Effects at request time on an idle queue: end to end is 0; done waits for the ack.
    assert_eq!(s["end_to_end_ms"]["p99"].as_f64(), Some(0.0));
    let done = s["time_to_done_ms"]["p99"].as_f64().unwrap_or(0.0);
    assert!(done > 100.0 && done < 2000.0, "{done}");
    assert_eq!(s["messages_done"], 108);
    assert!(out.contains("  time to done "), "{out}");
    assert!(out.contains("(108 of 108 done)"), "{out}");
    assert!(dir.path().join("time-to-done.hlog").exists());
    let html = text(dir.path(), "report.html");
    assert!(html.contains("<tr><th>time to done</th>"), "{html}");
    assert!(html.contains("time to done: from publish to the moment the message had its effect and an ack had deleted it; 108 of 108 messages done."));
    // `ackbench report` reads the log back: a damaged one is named.
    std::fs::write(dir.path().join("time-to-done.hlog"), "not a log\n").expect("write");
    let o = ackbench(&["report", dir.path().to_str().unwrap_or_default()]);
    assert_ne!(o.status.code(), Some(0));
    assert!(stderr(&o).contains("time-to-done.hlog"), "{}", stderr(&o));
}

#[test]
fn the_backlog_run_fails_and_its_columns_fit_their_numbers() {
    // 1,000,000 orders at 200/s against 4 workers: most are left behind, and a message done
    // late waits for more than 10^6 ms, past what fixed columns held.
    let (code, s, out, _) = run(
        "profiles/healthy.yaml",
        &[
            "--set",
            "workload.count=1000000",
            "--set",
            "workload.arrival={rate_per_s: 200}",
        ],
    );
    assert_eq!(code, 1, "{out}");
    let unfinished = s["unfinished"].as_u64().unwrap_or(0);
    assert!(unfinished > 800_000, "{unfinished}");
    assert_eq!(budget(&s, "unfinished")["pass"], false);
    let done_max = s["time_to_done_ms"]["max"].as_f64().unwrap_or(0.0);
    assert!(done_max > 1e6, "{done_max}");
    let lines: Vec<&str> = out.lines().collect();
    let at = lines
        .iter()
        .position(|l| l.starts_with("Latency (ms)"))
        .unwrap_or_else(|| panic!("{out}"));
    let head = lines[at];
    for (i, row) in ["handler", "end to end", "time to done", "lease held"]
        .iter()
        .enumerate()
    {
        let line = lines[at + 1 + i];
        assert!(line.starts_with(&format!("  {row} ")), "{row}: {out}");
        // Five numbers, each apart from the next, aligned under the header.
        let cells: Vec<&str> = line[2 + row.len()..].split_whitespace().collect();
        assert_eq!(cells.len(), 5, "{row}: {line}");
        assert_eq!(line.len(), head.len(), "{out}");
    }
    assert!(
        out.contains(&format!(
            "UNFINISHED: {unfinished} messages were still in the queue"
        )),
        "{out}"
    );
}

#[test]
fn a_live_heartbeat_is_measured_against_the_lease_it_asked_the_endpoint_for() {
    // Ten orders, 31-40 s calls on a 30 s lease, the built-in heartbeat over the SQS API at
    // 20x: every extension reaches the endpoint as ChangeMessageVisibility.
    let (_dir, path) = temp_profile(
        "name: live-heartbeat\nmode: live\nseed: 3\n\
         run: { duration: 500s, drain: 10m, time_scale: 0.05 }\n\
         broker: { visibility_timeout: 30s, max_receives: 3, stale_ack: reject }\n\
         workload: { arrival: { every: 50s }, count: 10 }\n\
         consumer: { target: heartbeat, workers: 4, restart_after: 1s }\n\
         provider:\n  latency: { dist: uniform, min: 31s, max: 40s }\n\
         budgets: { duplicate_rate: 0, dlq: 0 }\n",
    );
    let (code, s, out, _) = run(path.to_str().unwrap_or_default(), &[]);
    assert_eq!(code, 0, "{out}");
    let l = &s["handler_leases"];
    assert_eq!(
        [
            &l["handlers"],
            &l["extended"],
            &l["outlived"],
            &l["acked_in_time"]
        ],
        [10, 10, 0, 10],
        "{out}"
    );
    assert!(s["effective_lease_ms"]["max"].as_f64().unwrap_or(0.0) > 30_000.0);
    let ratio = s["p99_over_visibility"].as_f64().unwrap_or(f64::NAN);
    assert!(ratio < 1.0, "{ratio}");
    assert!(!out.contains("TIMEOUT:"), "{out}");
}
