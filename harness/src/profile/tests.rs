//! Tests of the whole loading pipeline: defaults, YAML errors, unknown keys and wrong types with
//! their positions, overrides and their origin, files.

use std::time::Duration;

use super::testutil::{error, error_with, scenario, with, BASE};
use super::*;

fn secs(n: u64) -> Duration {
    Duration::from_secs(n)
}

#[test]
fn a_minimal_profile_gets_every_default() {
    let s = scenario("run: { duration: 10m }\nworkload: { arrival: { every: 50s } }\nconsumer: { target: ack-after-work }\n");
    let expected = Scenario {
        name: "p".into(),
        description: String::new(),
        mode: Mode::Sim,
        seed: 1,
        run: RunSpec {
            duration: secs(600),
            drain: secs(1800),
            sample_every: None,
            time_scale: 1.0,
            publish_window: 1024,
            record: Default::default(),
        },
        broker: BrokerSpec {
            kind: BrokerKind::Sqs,
            lease: secs(30),
            max_deliveries: 0,
            stale_ack: StaleAck::Reject,
            url: None,
            fifo: None,
            observe: crate::profile::Observe::Proxy,
            queue: Default::default(),
        },
        workload: WorkloadSpec {
            arrival: Arrival::Every(secs(50)),
            count: None,
            poison: Poison::None,
            keys: None,
            ingress: None,
            producer: None,
            groups: None,
            message: None,
        },
        consumer: ConsumerSpec {
            target: "ack-after-work".into(),
            workers: 1,
            restart_after: secs(1),
            options: TargetOptions::default(),
            command: None,
            env: vec![],
            clock: None,
        },
        provider: ProviderSpec {
            key: Default::default(),
            effect_at: EffectAt::Request,
            latency: LatencyDist::LogNormal {
                median: Duration::from_millis(240),
                p99: Duration::from_millis(900),
            },
            phases: vec![],
        },
        chaos: vec![],
        redrive: None,
        budgets: Budgets {
            late_after: secs(300),
            unfinished: Some(0),
            ..Budgets::default()
        },
    };
    assert_eq!(s, expected);
}

#[test]
fn the_design_example_loads() {
    let s = scenario(
        "\
name: example-incident
description: Email provider answers in 31-40 s for 90 minutes; ack after the work.
mode: sim
seed: 7
run: { duration: 90m, drain: 30m, sample_every: 10s }
broker: { kind: embedded, visibility_timeout: 30s, max_receives: 3, stale_ack: ignore }
workload:
  arrival: { every: 50s }
  count: 108
  poison: { first: 0 }
consumer: { target: ack-after-work, workers: 4, restart_after: 2s, options: {} }
provider:
  effect_at: response
  latency: { dist: lognormal, median: 240ms, p99: 900ms }
  phases:
    - { from: 0s, to: 90m, latency: { dist: uniform, min: 31s, max: 40s } }
chaos:
  - kill_worker: { point: call_started, probability: 0.05 }
budgets: { duplicate_rate: 0, lost: 0, dlq: 0, p99_over_visibility: 0.5 }
",
    );
    assert_eq!(s.name, "example-incident");
    assert_eq!(s.seed, 7);
    assert_eq!(s.run.sample_every, Some(secs(10)));
    assert_eq!(s.broker.max_deliveries, 3);
    assert_eq!(s.broker.stale_ack, StaleAck::Ignore);
    assert_eq!(s.workload.count, Some(108));
    assert_eq!(s.workload.poison, Poison::First(0));
    assert_eq!(s.consumer.workers, 4);
    assert_eq!(s.provider.effect_at, EffectAt::Response);
    assert_eq!(
        s.provider.phases,
        vec![Phase {
            from: secs(0),
            to: Some(secs(5400)),
            latency: Some(LatencyDist::Uniform {
                min: secs(31),
                max: secs(40)
            }),
            errors: None,
            hang: None,
            ..Phase::default()
        }]
    );
    assert_eq!(s.budgets.dlq, Some(0));
    assert_eq!(s.budgets.p99_over_visibility, Some(0.5));
}

#[test]
fn the_name_defaults_to_the_file_stem() {
    let s = load_str(
        "profiles/slow-provider.yaml",
        BASE.replace("name: t\n", "").as_str(),
        &[],
    );
    assert_eq!(s.map(|s| s.name).ok(), Some("slow-provider".to_string()));
}

#[test]
fn a_name_must_be_a_plain_folder_name() {
    assert_eq!(
        error(&BASE.replace("name: t", "name: ../x")),
        "p.yaml:1:7: name: must be one plain folder name: no /, \\ or control characters, not \
         empty, . or .., at most 100 bytes (it names the report folder), got \"../x\""
    );
    let long = "n".repeat(101);
    assert!(error(&BASE.replace("name: t", &format!("name: {long}"))).contains("at most 100 bytes"));
    scenario(&BASE.replace("name: t", &format!("name: {}", "n".repeat(100))));
}

#[test]
fn a_name_taken_from_the_file_name_is_checked_like_a_written_one() {
    // `...yaml` would name the profile `..`: its report folder would be the one above.
    let text = BASE.replace("name: t\n", "");
    for (file, stem) in [("dir/...yaml", ".."), ("dir/..yaml", ".")] {
        let e = load_str(file, &text, &[])
            .map(|s| s.name)
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            format!(
                "{file}:1:1: name: the profile has no name, so it is named after its file, and \
                 the file's name gives \"{stem}\", which cannot name the report folder: add a \
                 name (name: my-scenario) or rename the file; a name must be one plain folder \
                 name: no /, \\ or control characters, not empty, . or .., at most 100 bytes"
            )
        );
    }
    // A name given by --set is checked as written.
    let s = load_str("dir/...yaml", &text, &["name=fixed".to_string()]);
    assert_eq!(s.map(|s| s.name).ok(), Some("fixed".to_string()));
}

#[test]
fn nesting_deeper_than_the_cap_is_refused_before_parsing() {
    let deep = format!(
        "name: x\nrun: {}{}\n",
        "[".repeat(20_000),
        "]".repeat(20_000)
    );
    let started = std::time::Instant::now();
    // `run:` is level 1, so the 64th `[` (column 6 + 63) is level 65.
    assert_eq!(
        error(&deep),
        "p.yaml:2:69: not valid YAML: nested more than 64 levels deep (collections inside \
         collections); a profile needs fewer than 10"
    );
    assert!(
        started.elapsed() < Duration::from_secs(1),
        "{:?}",
        started.elapsed()
    );
    let value = format!("{}{}", "[".repeat(100), "]".repeat(100));
    assert_eq!(
        error_with(BASE, &[&format!("run.drain={value}")]),
        format!(
            "--set run.drain={value}: the value is nested more than 64 levels deep (collections \
             inside collections); a profile needs fewer than 10"
        )
    );
}

#[test]
fn a_repeated_key_is_placed_where_it_repeats() {
    assert_eq!(
        error(&with("run: { duration: 5m }\n")),
        "p.yaml:6:1: not valid YAML: duplicate entry with key \"run\""
    );
    assert_eq!(
        error(&with("broker:\n  max_receives: 3\n  max_receives: 4\n")),
        "p.yaml:8:3: not valid YAML: broker: duplicate entry with key \"max_receives\""
    );
}

#[test]
fn text_that_is_not_yaml_is_placed() {
    let e = error("run: { duration: 10m\nbroker: [\n");
    assert!(
        e.starts_with("p.yaml:2:7: not valid YAML: did not find expected ',' or '}'"),
        "{e}"
    );
    let e = error("run:\n  duration: 10m\n   drain: 5m\n");
    assert!(
        e.starts_with("p.yaml:3:9: not valid YAML: mapping values are not allowed"),
        "{e}"
    );
}

#[test]
fn a_repeated_key_is_an_error() {
    let e = error(&with("broker: { max_receives: 3, max_receives: 4 }\n"));
    assert!(e.starts_with("p.yaml:6:"), "{e}");
    assert!(
        e.contains("duplicate entry with key \"max_receives\""),
        "{e}"
    );
}

#[test]
fn a_profile_is_a_mapping() {
    assert_eq!(
        error("- run\n"),
        "p.yaml:1:1: (top level): invalid type: sequence, expected a profile: a mapping with the \
         sections name, description, mode, seed, run, broker, workload, consumer, provider, \
         chaos, redrive, budgets"
    );
}

#[test]
fn an_unknown_top_level_key_is_named_with_the_allowed_ones() {
    assert_eq!(
        error(&with("brokers: {}\n")),
        "p.yaml:6:1: brokers: unknown field `brokers`, expected one of `name`, `description`, \
         `mode`, `seed`, `run`, `broker`, `workload`, `consumer`, `provider`, `chaos`, `redrive`, \
         `budgets`"
    );
}

#[test]
fn an_unknown_key_is_an_error_at_any_depth() {
    assert_eq!(
        error(&with("broker:\n  visibilty_timeout: 30s\n")),
        "p.yaml:7:3: broker.visibilty_timeout: unknown key `visibilty_timeout` for broker kind \
         sqs; the keys of sqs are: kind, endpoint, visibility_timeout, max_receives, stale_ack, \
         fifo, dedup_window, observe, queue"
    );
    let e = error(&with("provider:\n  phases:\n    - { from: 0s, to: 1m, latency: { dist: fixed, value: 1s, vlaue: 2s } }\n"));
    assert!(
        e.starts_with("p.yaml:8:62: provider.phases.0.latency.vlaue: unknown field `vlaue`"),
        "{e}"
    );
    let e = error(&with(
        "chaos:\n  - kill_worker: { point: received, when: 1m }\n",
    ));
    assert!(
        e.starts_with("p.yaml:7:37: chaos.0.kill_worker.when: unknown field `when`"),
        "{e}"
    );
}

#[test]
fn an_unknown_budget_lists_the_valid_budget_names() {
    assert_eq!(
        error(&with("budgets:\n  duplicate_rat: 0\n")),
        "p.yaml:7:3: budgets.duplicate_rat: unknown field `duplicate_rat`, expected one of \
         `duplicate_rate`, `duplicate_effects`, `lost`, `late`, `dlq`, `dlq_with_effect`, \
         `p99_over_visibility`, `p999_handler_latency`, `max_oldest_age`, `worker_busy_fraction`, \
         `overlapping_executions`, `rejected`, `ingress_lost`, `unfinished`"
    );
}

#[test]
fn a_wrong_type_is_placed_at_the_value() {
    assert_eq!(
        error(&with("broker:\n  max_receives: three\n")),
        "p.yaml:7:17: broker.max_receives: invalid type: string \"three\", expected a whole number from 0 to 4294967295"
    );
    assert_eq!(
        error(&with("broker: { max_receives: -1 }\n")),
        "p.yaml:6:25: broker.max_receives: invalid value: integer `-1`, expected a whole number from 0 to 4294967295"
    );
    assert_eq!(
        error(&with("broker: { stale_ack: drop }\n")),
        "p.yaml:6:22: broker.stale_ack: unknown variant `drop`, expected one of `reject`, \
         `delete`, `ignore`, `sqs`"
    );
    assert_eq!(
        error(&with("mode: fast\n")),
        "p.yaml:6:7: mode: unknown variant `fast`, expected `sim` or `live`"
    );
}

#[test]
fn a_duration_without_unit_says_a_unit_is_required() {
    assert_eq!(
        error(&with("broker: { visibility_timeout: 30 }\n")),
        "p.yaml:6:31: broker.visibility_timeout: a duration needs a unit: 250ms, 30s, 90m, 1h30m (got 30)"
    );
    assert_eq!(
        error(&with("broker: { visibility_timeout: -30s }\n")),
        "p.yaml:6:31: broker.visibility_timeout: a duration cannot be negative, got -30s"
    );
}

#[test]
fn an_override_changes_a_field_by_its_path() {
    let sets = [
        "broker.visibility_timeout=90s".to_string(),
        "consumer.target=ack-before-work".to_string(),
        "budgets.dlq=5".to_string(),
        "seed=42".to_string(),
    ];
    let s = load_str("p.yaml", BASE, &sets).unwrap();
    assert_eq!(s.broker.lease, secs(90));
    assert_eq!(s.consumer.target, "ack-before-work");
    assert_eq!(s.budgets.dlq, Some(5));
    assert_eq!(s.seed, 42);
}

#[test]
fn an_override_indexes_lists() {
    let text = with(
        "provider:\n  phases:\n    - { from: 0s, to: 90m, errors: { status: 503, rate: 1 } }\n",
    );
    let s = load_str("p.yaml", &text, &["provider.phases.0.to=45m".to_string()]).unwrap();
    assert_eq!(s.provider.phases[0].to, Some(secs(45 * 60)));
}

#[test]
fn an_error_in_an_override_names_the_override() {
    assert_eq!(
        error_with(BASE, &["broker.visibility_timeout=13h"]),
        "--set broker.visibility_timeout=13h: broker.visibility_timeout: must be at most 12h \
         (SQS's maximum), got 13h"
    );
    assert_eq!(
        error_with(BASE, &["broker.visiblity_timeout=90s"]),
        "--set broker.visiblity_timeout=90s: broker.visiblity_timeout: unknown key \
         `visiblity_timeout` for broker kind sqs; the keys of sqs are: kind, endpoint, \
         visibility_timeout, max_receives, stale_ack, fifo, dedup_window, observe, queue"
    );
    assert_eq!(
        error_with(BASE, &["consumer.workers=many"]),
        "--set consumer.workers=many: consumer.workers: invalid type: string \"many\", expected a whole number from 0 to 4294967295"
    );
}

#[test]
fn an_override_that_breaks_a_rule_about_its_section_is_named() {
    assert_eq!(
        error_with(BASE, &["workload.arrival.rate_per_s=2"]),
        "--set workload.arrival.rate_per_s=2: workload.arrival: give only one of every, \
         rate_per_s, at, ramp, got every and rate_per_s"
    );
}

#[test]
fn an_error_elsewhere_keeps_its_file_position_despite_overrides() {
    assert_eq!(
        error_with(
            &with("broker:\n  visibility_timeout: 13h\n"),
            &["budgets.dlq=1"]
        ),
        "p.yaml:7:23: broker.visibility_timeout: must be at most 12h (SQS's maximum), got 13h"
    );
}

#[test]
fn an_override_can_fix_the_file() {
    let text = with("broker:\n  visibility_timeout: 13h\n");
    let s = load_str(
        "p.yaml",
        &text,
        &["broker.visibility_timeout=1h".to_string()],
    )
    .unwrap();
    assert_eq!(s.broker.lease, secs(3600));
}

#[test]
fn an_override_without_equals_sign_is_an_error() {
    assert_eq!(
        error_with(BASE, &["broker.visibility_timeout"]),
        "--set broker.visibility_timeout: expected PATH=VALUE, e.g. --set broker.visibility_timeout=90s"
    );
}

#[test]
fn a_missing_file_names_the_path_and_the_os_error() {
    let e = load(Path::new("/nonexistent/x.yaml"), &[])
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with("/nonexistent/x.yaml: cannot read the profile: No such file or directory"),
        "{e}"
    );
}

#[test]
fn a_file_loads_and_its_effective_yaml_has_the_overrides() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("incident.yaml");
    std::fs::write(&path, BASE.replace("name: t\n", "")).unwrap();
    let sets = ["broker.visibility_timeout=90s".to_string()];
    assert_eq!(load(&path, &sets).unwrap().name, "incident");
    let text = effective_yaml(&path, &sets).unwrap();
    let again = load_str("incident.yaml", &text, &[]).unwrap();
    assert_eq!(again, load(&path, &sets).unwrap());
    assert!(text.contains("visibility_timeout: 90s"), "{text}");
}

#[test]
fn an_empty_file_says_what_is_required() {
    assert_eq!(
        error(""),
        "p.yaml:1:1: run.duration: required: how long the workload publishes, e.g. 10m"
    );
}

#[test]
fn anchors_and_merge_keys_work() {
    let s = scenario(&with(
        "provider:\n  latency: &slow { dist: uniform, min: 31s, max: 40s }\n  phases:\n    \
         - { from: 0s, to: 1m, latency: *slow }\n    - { from: 1m, to: 2m, latency: { <<: *slow, max: 50s } }\n",
    ));
    assert_eq!(
        s.provider.phases[0].latency,
        Some(LatencyDist::Uniform {
            min: secs(31),
            max: secs(40)
        })
    );
    assert_eq!(
        s.provider.phases[1].latency,
        Some(LatencyDist::Uniform {
            min: secs(31),
            max: secs(50)
        })
    );
}

/// The profile layer is a leaf: nothing under `src/profile/` names a module of the crate
/// outside it (runtime modules depend on the profile, never the other way).
#[test]
fn the_profile_layer_imports_no_other_module_of_the_crate() {
    // Built at run time so that this test's own text does not match.
    let needle = ["crate", "::"].concat();
    fn walk(dir: &std::path::Path, needle: &str, found: &mut Vec<String>) {
        for entry in std::fs::read_dir(dir).expect("src/profile is readable") {
            let path = entry.expect("a directory entry").path();
            if path.is_dir() {
                walk(&path, needle, found);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let text = std::fs::read_to_string(&path).expect("a source file");
                for (i, line) in text.lines().enumerate() {
                    let outside = line
                        .match_indices(needle)
                        .any(|(at, _)| !line[at + needle.len()..].starts_with("profile"));
                    if outside {
                        found.push(format!("{}:{}: {}", path.display(), i + 1, line.trim()));
                    }
                }
            }
        }
    }
    let mut found = Vec::new();
    walk(
        &std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/profile"),
        &needle,
        &mut found,
    );
    assert!(found.is_empty(), "{}", found.join("\n"));
}
