//! Chaos acceptance: kills mid-handler, poison, the idempotent targets, DLQ truth, traces.

use serde_json::Value;

use crate::common::{ackbench, counts, run_profile};

/// Runs a profile into a temp folder; returns (exit code, summary.json, stdout, report dir).
fn run(profile: &str, extra: &[&str]) -> (i32, Value, String, tempfile::TempDir) {
    let r = run_profile(std::path::Path::new(profile), extra);
    (r.code(), r.summary(), r.stdout(), r.dir)
}

#[test]
fn claim_then_send_and_heartbeat_survive_the_incident() {
    for p in [
        "profiles/marlow-thursday-claim.yaml",
        "profiles/marlow-thursday-heartbeat.yaml",
    ] {
        let (code, s, _, _) = run(p, &[]);
        assert_eq!(code, 0, "{p} passes its budgets");
        assert_eq!(
            counts(
                &s,
                &["effects", "duplicate_effects", "dlq", "lost", "messages"]
            ),
            [108, 0, 0, 0, 108],
            "{p}"
        );
    }
}

#[test]
fn kill_after_effect_with_each_target() {
    let p = "profiles/kill-after-effect.yaml";
    let (_, s, _, _) = run(p, &[]);
    let [kills, dups, lost] = counts(&s, &["worker_kills", "duplicate_effects", "lost"])[..] else {
        unreachable!()
    };
    assert!(
        kills > 50,
        "about 30% of 300 first deliveries are killed: {kills}"
    );
    assert_eq!(
        dups, kills,
        "ack-after-work: one duplicate per kill at call_answered"
    );
    assert_eq!(lost, 0);
    for target in ["dedupe-table", "status-fence"] {
        let (code, s, _, _) = run(
            p,
            &[
                "--set",
                &format!("consumer.target={target}"),
                "--set",
                "chaos.0.kill_worker.point=committed",
            ],
        );
        let c = counts(
            &s,
            &[
                "worker_kills",
                "duplicate_effects",
                "lost",
                "effects",
                "unfinished",
            ],
        );
        assert!(c[0] > 50, "{target}: kills happen at `committed`: {c:?}");
        assert_eq!(c[1..], [0, 0, 300, 0], "{target}");
        assert_eq!(code, 0, "{target} passes");
    }
    let (code, s, _, _) = run(
        p,
        &[
            "--set",
            "consumer.target=ack-before-work",
            "--set",
            "provider.effect_at=response",
            "--set",
            "chaos.0.kill_worker.point=call_started",
        ],
    );
    let c = counts(&s, &["worker_kills", "lost", "duplicate_effects"]);
    assert!(c[0] > 50, "{c:?}");
    assert_eq!(
        c[1], c[0],
        "ack-before-work loses exactly the killed messages"
    );
    assert_eq!(c[2], 0);
    assert_eq!(code, 1);
}

#[test]
fn poison_friday_dead_letters_the_poison_or_loses_it_silently() {
    let (_, s, _, _) = run("profiles/poison-friday.yaml", &[]);
    assert_eq!(
        counts(
            &s,
            &[
                "dlq",
                "dlq_without_effect",
                "dlq_with_effect",
                "lost",
                "effects",
                "worker_crashes"
            ]
        ),
        [40, 40, 0, 0, 60, 120]
    );
    let (code, s, out, _) = run(
        "profiles/poison-friday.yaml",
        &["--set", "consumer.target=ack-before-work"],
    );
    assert_eq!(counts(&s, &["lost", "dlq", "effects"]), [40, 0, 60]);
    assert_eq!(code, 1);
    assert!(
        out.contains("LOST: 40 messages"),
        "the table says so in words:\n{out}"
    );
}

#[test]
fn redriving_the_thursday_dlq_sends_every_email_once_more() {
    let (_, s, out, _) = run("profiles/redrive-after-incident.yaml", &[]);
    assert_eq!(
        counts(
            &s,
            &["redriven", "redrive_duplicate_effects", "effects", "dlq"]
        ),
        [108, 108, 432, 0]
    );
    assert!(
        out.contains("108 duplicate effects caused by the redrive"),
        "{out}"
    );
}

#[test]
fn trace_shows_one_orders_life() {
    let (_, _, out, dir) = run("profiles/marlow-thursday.yaml", &["--trace", "msg-1"]);
    let file = std::fs::read_to_string(dir.path().join("trace-msg-1.txt")).expect("trace written");
    assert!(out.contains(&file), "printed as written");
    let lines: Vec<&str> = file.lines().collect();
    let has = |at: &str, what: &str| {
        lines
            .iter()
            .any(|l| l.trim_start().starts_with(at) && l.contains(what))
    };
    assert!(has("0.000s", "delivered #1"), "{file}");
    assert!(has("30.000s", "delivered #2"), "{file}");
    assert!(has("60.000s", "delivered #3"), "{file}");
    assert_eq!(
        lines.iter().filter(|l| l.contains("STALE")).count(),
        3,
        "{file}"
    );
    assert!(has("90.000s", "DEAD-LETTERED"), "{file}");
    let o = ackbench(&["run", "profiles/marlow-thursday.yaml", "--trace", "order-9"]);
    assert_eq!(o.status.code(), Some(2));
}
