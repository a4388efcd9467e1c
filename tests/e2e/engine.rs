//! The engine's acceptance: the reference incident, its "fix", the healthy day, determinism.

use serde_json::Value;

use crate::common::{ackbench, run_profile, stderr};

/// Runs a profile into a temp folder; returns (exit code, summary.json, raw summary text, stdout).
fn run(profile: &str, extra: &[&str]) -> (i32, Value, String, String) {
    let r = run_profile(std::path::Path::new(profile), extra);
    let v = r.summary();
    let text = std::fs::read_to_string(r.dir.path().join("summary.json")).unwrap();
    assert!(
        r.dir.path().join("timeseries.csv").exists(),
        "timeseries.csv written"
    );
    (r.code(), v, text, r.stdout())
}

fn u(v: &Value, k: &str) -> u64 {
    v[k].as_u64()
        .unwrap_or_else(|| panic!("{k} is a count: {}", v[k]))
}

#[test]
fn marlow_thursday_duplicates_everything_and_dead_letters_every_order() {
    let (code, s, _, out) = run("profiles/marlow-thursday.yaml", &[]);
    assert_eq!(code, 1, "a budget fails");
    assert_eq!(s["verdict"], "fail");
    for (k, want) in [
        ("messages", 108),
        ("deliveries", 324),
        ("redeliveries", 216),
        ("effects", 324),
        ("messages_with_effect", 108),
        ("duplicate_effects", 216),
        ("lost", 0),
        ("unfinished", 0),
        ("dlq", 108),
        ("dlq_with_effect", 108),
        ("dlq_without_effect", 0),
        ("stale_acks", 324),
        ("worker_kills", 0),
    ] {
        assert_eq!(u(&s, k), want, "{k}");
    }
    assert_eq!(s["duplicate_rate"].as_f64(), Some(2.0));
    assert_eq!(
        s["max_oldest_age_s"].as_f64(),
        Some(90.0),
        "each order leaves for the DLQ at 90 s"
    );
    assert!(s["handler_latency_ms"]["p50"].as_f64().unwrap() > 30_000.0);
    assert!(s["p99_over_visibility"].as_f64().unwrap() > 1.0);
    // The printed table shows the same counts and the command that reproduces the run.
    assert!(out.contains("324"), "{out}");
    // The reproduce line can be pasted as it is: its first word runs this very binary from the
    // folder the run was started in (the workspace root here), on PATH or not.
    let line = out
        .lines()
        .find_map(|l| l.strip_prefix("reproduce: "))
        .unwrap_or_else(|| panic!("no reproduce line: {out}"));
    let (program, rest) = line.split_once(' ').unwrap();
    // The folder the run wrote to is kept (`--out`): the line reruns into the same folder.
    let folder = rest
        .strip_prefix("run profiles/marlow-thursday.yaml --seed 1 --out ")
        .unwrap_or_else(|| panic!("the profile, seed and --out: {out}"));
    // (the temporary folder run_profile gave, removed since)
    assert!(
        std::path::Path::new(folder).starts_with(std::env::temp_dir()),
        "{out}"
    );
    let exe = std::path::Path::new(env!("CARGO_BIN_EXE_ackbench"));
    if program != "ackbench" {
        let named = crate::common::root().join(program).canonicalize().unwrap();
        assert_eq!(named, exe.canonicalize().unwrap(), "{out}");
    }
}

#[test]
fn acking_first_hides_the_incident() {
    let (code, s, _, _) = run(
        "profiles/marlow-thursday.yaml",
        &["--set", "consumer.target=ack-before-work"],
    );
    assert_eq!((code, s["verdict"].as_str()), (0, Some("pass")));
    assert_eq!(
        (
            u(&s, "effects"),
            u(&s, "duplicate_effects"),
            u(&s, "dlq"),
            u(&s, "lost")
        ),
        (108, 0, 0, 0)
    );
}

#[test]
fn healthy_day_passes() {
    let (code, s, _, _) = run("profiles/healthy.yaml", &[]);
    assert_eq!((code, s["verdict"].as_str()), (0, Some("pass")));
    assert_eq!(
        (
            u(&s, "effects"),
            u(&s, "duplicate_effects"),
            u(&s, "lost"),
            u(&s, "dlq")
        ),
        (108, 0, 0, 0)
    );
}

#[test]
fn same_seed_same_bytes_other_seed_other_latencies() {
    let strip = |t: &str| {
        let mut v: Value = serde_json::from_str(t).unwrap();
        v["wall_s"] = Value::Null;
        serde_json::to_string(&v).unwrap()
    };
    let (_, _, a, _) = run("profiles/healthy.yaml", &[]);
    let (_, _, b, _) = run("profiles/healthy.yaml", &[]);
    let wall = |t: &str| {
        t.lines()
            .find(|l| l.contains("\"wall_s\""))
            .map(str::to_string)
    };
    let drop_wall = |t: &str| {
        t.lines()
            .filter(|l| !l.contains("\"wall_s\""))
            .collect::<Vec<_>>()
            .join("\n")
    };
    assert!(wall(&a).is_some());
    assert_eq!(
        drop_wall(&a),
        drop_wall(&b),
        "byte-identical apart from wall_s"
    );
    let (_, _, c, _) = run("profiles/healthy.yaml", &["--seed", "2"]);
    assert_ne!(strip(&a), strip(&c));
    let (va, vc): (Value, Value) = (
        serde_json::from_str(&a).unwrap(),
        serde_json::from_str(&c).unwrap(),
    );
    assert_ne!(
        va["handler_latency_ms"], vc["handler_latency_ms"],
        "another seed, other latencies"
    );
    assert_eq!(vc["seed"], 2);
}

#[test]
fn summary_has_every_contract_field_in_order() {
    let (_, _, text, _) = run("profiles/healthy.yaml", &[]);
    let contract = [
        "schema_version",
        "profile",
        "mode",
        "seed",
        "verdict",
        "complete",
        "virtual_s",
        "wall_s",
        "messages",
        "deliveries",
        "redeliveries",
        "effects",
        "messages_with_effect",
        "duplicate_effects",
        "duplicate_rate",
        "lost",
        "unfinished",
        "late",
        "dlq",
        "dlq_with_effect",
        "dlq_without_effect",
        "stale_acks",
        "worker_kills",
        "worker_busy_s",
        "last_handler_end_s",
        "max_oldest_age_s",
        "visibility_timeout_s",
        "handler_latency_ms",
        "end_to_end_ms",
        "p99_over_visibility",
        "effective_lease_ms",
        "handler_leases",
        "time_to_done_ms",
        "messages_done",
        "chaos_rules",
        "budgets",
    ];
    // Key order as written (serde_json's Map would sort): keys of the pretty-printed text at
    // one indentation level.
    let keys_at = |indent: &str| -> Vec<String> {
        text.lines()
            .filter_map(|l| l.strip_prefix(indent))
            .filter(|l| l.starts_with('"'))
            .filter_map(|l| l[1..].split('"').next().map(str::to_string))
            .collect()
    };
    let top = keys_at("  ");
    assert_eq!(&top[..contract.len()], &contract[..]);
    let v: Value = serde_json::from_str(&text).unwrap();
    for k in [
        "handler_latency_ms",
        "end_to_end_ms",
        "effective_lease_ms",
        "time_to_done_ms",
    ] {
        let mut inner: Vec<&str> = v[k]
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        inner.sort_unstable();
        assert_eq!(inner, ["max", "p50", "p90", "p99", "p999"], "{k}");
        let pos: Vec<usize> = ["p50", "p90", "p99", "p999", "max"]
            .iter()
            .map(|p| {
                text.find(&format!("\"{k}\"")).unwrap()
                    + text[text.find(&format!("\"{k}\"")).unwrap()..]
                        .find(&format!("\"{p}\""))
                        .unwrap()
            })
            .collect();
        assert!(
            pos.windows(2).all(|w| w[0] < w[1]),
            "{k} in order p50, p90, p99, p999, max"
        );
    }
    let b = &v["budgets"][0];
    for k in ["name", "limit", "actual", "pass"] {
        assert!(b.get(k).is_some(), "budget entry has {k}");
    }
}

/// Built without live mode, a live profile is refused with the reason.
#[cfg(not(feature = "live"))]
#[test]
fn a_live_profile_needs_the_live_feature() {
    let (_dir, path) = crate::common::temp_profile(
        "name: live-without-live\nmode: live\nrun: { duration: 10s, time_scale: 0.1 }\n\
         workload: { arrival: { every: 1s } }\nconsumer: { target: ack-after-work, workers: 2 }\n",
    );
    let o = ackbench(&[
        "run",
        path.to_str().unwrap(),
        "--out",
        _dir.path().join("r").to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("built without live mode"),
        "{}",
        stderr(&o)
    );
}

#[cfg(feature = "live")]
#[test]
fn a_live_consumer_that_cannot_start_ends_the_run_with_exit_3() {
    // The program is there and executable (the check before the run passes), but its
    // interpreter is not: starting it fails.
    let dir = tempfile::tempdir().unwrap();
    let program = dir.path().join("consumer");
    std::fs::write(&program, "#!/nonexistent/interpreter\n").unwrap();
    std::fs::set_permissions(
        &program,
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    let (_dir, path) = crate::common::temp_profile(&format!(
        "name: no-such-consumer\nmode: live\nrun: {{ duration: 10s, time_scale: 0.1 }}\n\
         workload: {{ arrival: {{ every: 1s }} }}\n\
         consumer: {{ command: [{}], workers: 2 }}\n",
        program.display()
    ));
    let o = ackbench(&[
        "run",
        path.to_str().unwrap(),
        "--out",
        _dir.path().join("r").to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    assert!(stderr(&o).contains("cannot start worker"), "{}", stderr(&o));
    assert!(
        stderr(&o).contains(&program.display().to_string()),
        "{}",
        stderr(&o)
    );
    // A program that is not there at all is refused before the run (exit 2).
    let text = std::fs::read_to_string(&path)
        .unwrap()
        .replace(&program.display().to_string(), "/nonexistent/consumer");
    std::fs::write(&path, text).unwrap();
    let o = ackbench(&[
        "run",
        path.to_str().unwrap(),
        "--out",
        _dir.path().join("r2").to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("consumer.command: the program `/nonexistent/consumer` does not exist"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn messages_that_go_round_without_time_passing_stop_the_run_instead_of_hanging() {
    // A poison message released at once (`on_poison: release`, no delay) with no delivery limit
    // is redelivered at the same virtual instant for ever. The run stops after a bounded number
    // of rounds at that instant: a partial report, verdict incomplete, exit 3, and the reason.
    let started = std::time::Instant::now();
    let (code, s, _, out) = run(
        "profiles/healthy.yaml",
        &[
            "--set",
            "broker.max_receives=0",
            "--set",
            "workload.poison={first: 1}",
            "--set",
            "consumer.options.on_poison=release",
        ],
    );
    assert!(started.elapsed() < std::time::Duration::from_secs(120));
    assert_eq!(code, 3, "{out}");
    assert_eq!(s["verdict"], "incomplete");
    assert_eq!(s["complete"], false);
    let why = s["incomplete_reason"].as_str().unwrap();
    assert!(why.contains("virtual time could not pass"), "{why}");
    assert!(
        out.contains("INCOMPLETE: the run was stopped because virtual time could not pass"),
        "{out}"
    );
    // The poison message is the one left; it was delivered over and over at 0 s, about once
    // a round (a round that hands nothing out runs the timers that free the worker).
    assert_eq!(u(&s, "unfinished"), 1);
    assert!(u(&s, "deliveries") > 100_000, "{}", s["deliveries"]);
}
