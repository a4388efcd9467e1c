//! The framework profiles of `profiles/frameworks/` as their sim model: `--mode sim` runs each
//! profile's `consumer.sim` (the built-in target that stands in for the framework app) in place
//! of its `consumer.command`, and leaves out what only a live run reads. No broker, no Python:
//! these run everywhere. Bad values of the recipe are refused with exit 2.

use serde_json::Value;

use crate::common::{ackbench, counts, refused, root, run_profile, stderr, temp_profile};

const KEYS: [&str; 6] = [
    "messages",
    "effects",
    "duplicate_effects",
    "lost",
    "dlq",
    "worker_kills",
];

fn profile(name: &str) -> String {
    root()
        .join(format!("profiles/frameworks/{name}.yaml"))
        .display()
        .to_string()
}

/// `ackbench run profiles/frameworks/NAME.yaml --mode sim ARGS...`: its summary and stdout.
fn sim(name: &str, args: &[&str]) -> (Value, String) {
    let all = [&["--mode", "sim"], args].concat();
    let ran = run_profile(std::path::Path::new(&profile(name)), &all);
    assert_eq!(ran.code(), 0, "{name}: {}", ran.stderr());
    (ran.summary(), ran.stdout())
}

#[test]
fn mode_sim_runs_each_framework_profile_as_its_sim_model() {
    // Each profile: 20 orders, 2 workers, 2 kills at `call_answered` on a first delivery, its
    // stand-in ack-after-work: each kill falls between the email and the ack, the message is
    // delivered again and its email sent again: 22 effects, 2 duplicates, 0 lost, 0 DLQ, the
    // counts the live runs of tests/e2e/frameworks.rs give.
    for name in [
        "celery-rabbitmq",
        "celery-sqs",
        "dramatiq-rabbitmq",
        "faststream-redis-streams",
    ] {
        let (s, out) = sim(name, &[]);
        assert_eq!(s["mode"], "sim", "{name}");
        assert_eq!(counts(&s, &KEYS), [20, 22, 2, 0, 0, 2], "{name}: {s}");
        assert!(out.contains(" --mode sim --out "), "{name}: {out}");
    }
    // Kafka: 6 records, worker 1 killed after its first email and before its commit; the
    // member that takes its partition over sends it again: 7 effects, 1 duplicate, 1 kill.
    let (s, _) = sim("faststream-kafka", &[]);
    assert_eq!(counts(&s, &KEYS), [6, 7, 1, 0, 0, 1], "{s}");
}

#[test]
fn mode_sim_is_check_sweep_and_size_too() {
    let p = profile("dramatiq-rabbitmq");
    let o = ackbench(&["check", &p, "--mode", "sim"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    // Without --mode the profile is live: its command is checked to be on PATH, so only the
    // mode is asserted here.
    let o = ackbench(&["check", &p, "--mode", "live"]);
    assert_ne!(o.status.code(), Some(2), "{}", stderr(&o));
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("sweep");
    let o = ackbench(&[
        "sweep",
        &p,
        "--mode",
        "sim",
        "--vary",
        "consumer.workers=1,2",
        "--metric",
        "duplicate_effects",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(out.join("sweep.csv").is_file());
}

#[test]
fn a_command_with_no_stand_in_is_refused_in_sim_mode_naming_consumer_sim() {
    let text = std::fs::read_to_string(profile("celery-sqs"))
        .unwrap()
        .lines()
        .filter(|l| !l.trim_start().starts_with("sim:"))
        .collect::<Vec<_>>()
        .join("\n");
    let (_dir, path) = temp_profile(&text);
    let path = path.display().to_string();
    for how in [["--mode", "sim"], ["--set", "mode=sim"]] {
        let err = refused(&["run", &path], &how);
        assert!(
            err.contains(
                "consumer.command: a consumer command runs only in live mode (mode: live); to run \
                 this profile in sim mode, give consumer.sim: the built-in target that stands in \
                 for the command there, e.g. `sim: { target: ack-after-work }` under consumer"
            ),
            "{err}"
        );
    }
    // The old recipe, a target in place of the command, still runs: --mode sim drops the
    // command the target replaces.
    let dir = tempfile::tempdir().unwrap();
    let o = ackbench(&[
        "run",
        &path,
        "--mode",
        "sim",
        "--set",
        "consumer.target=ack-after-work",
        "--quiet",
        "--out",
        dir.path().to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
}

#[test]
fn bad_values_of_the_recipe_are_refused() {
    let p = profile("celery-rabbitmq");
    let err = refused(&["run", &p], &["--mode", "replay"]);
    assert!(
        err.contains("invalid value 'replay' for '--mode <MODE>'")
            && err.contains("[possible values: sim, live]"),
        "{err}"
    );
    let err = refused(
        &["run", &p],
        &["--mode", "sim", "--set", "consumer.sim.target=ack-maybe"],
    );
    assert!(
        err.contains(
            "--set consumer.sim.target=ack-maybe: consumer.sim.target: unknown target \
             `ack-maybe`; built-in targets: ack-after-work, "
        ),
        "{err}"
    );
    let err = refused(
        &["check", &p],
        &[
            "--mode",
            "sim",
            "--set",
            "consumer.sim.options={claim_window: 2m}",
        ],
    );
    assert!(
        err.contains(
            "consumer.sim.options.claim_window: target ack-after-work has no option \
             `claim_window`; it accepts on_poison, http_timeout, retry"
        ),
        "{err}"
    );
    // Checked in live mode too, though only sim mode runs it.
    let err = refused(&["check", &p], &["--set", "consumer.sim.target=ack-maybe"]);
    assert!(
        err.contains("consumer.sim.target: unknown target `ack-maybe`"),
        "{err}"
    );
}
