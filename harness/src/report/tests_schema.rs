//! summary.json against its published schema, docs/summary.schema.json: the summaries of every
//! shipped sim profile (and of runs that add the optional fields: message groups, an
//! interrupted run) validate, and a summary that drifts from the schema does not. The e2e tests
//! check every summary.json they read against the same file (`tests/e2e/common.rs`).

use std::path::Path;

use serde_json::Value;

use super::summary::{summarise, to_json, RunInfo};
use crate::profile;
use crate::runner;

/// docs/summary.schema.json, compiled.
fn validator() -> jsonschema::Validator {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/summary.schema.json");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{e}: {path:?}"));
    let schema: Value = serde_json::from_str(&text).expect("the schema is JSON");
    jsonschema::validator_for(&schema).unwrap_or_else(|e| panic!("the schema is valid: {e}"))
}

/// The schema's complaints about `summary`, one line each; empty when it validates.
fn complaints(v: &jsonschema::Validator, summary: &Value) -> Vec<String> {
    v.iter_errors(summary)
        .map(|e| format!("{}: {e}", e.instance_path()))
        .collect()
}

/// summary.json of profile `path` (under the repository's `profiles/`) run in process with
/// `sets`, parsed.
fn summary_of(path: &str, sets: &[&str]) -> Value {
    let file = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../profiles")
        .join(path);
    let text = std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{e}: {file:?}"));
    let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
    let scenario = profile::load_str(path, &text, &sets).unwrap_or_else(|e| panic!("{e}"));
    let record = runner::run(&scenario).unwrap_or_else(|e| panic!("{e}"));
    let info = RunInfo {
        profile: scenario.name.clone(),
        mode: "sim".into(),
        seed: scenario.seed,
        wall_s: 0.25,
    };
    let json = to_json(&summarise(&info, &record, &scenario.budgets));
    serde_json::from_str(&json).expect("summary.json is JSON")
}

/// Every shipped sim profile (`mode: sim`), its path under `profiles/`.
fn shipped_sim_profiles() -> Vec<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../profiles");
    let mut found = Vec::new();
    let mut dirs = vec![root.clone()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).expect("profiles/ is readable") {
            let path = entry.expect("a directory entry").path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "yaml")
                && std::fs::read_to_string(&path)
                    .is_ok_and(|t| t.lines().any(|l| l.trim() == "mode: sim"))
            {
                let rel = path.strip_prefix(&root).expect("under profiles/");
                found.push(rel.to_string_lossy().into_owned());
            }
        }
    }
    found.sort();
    found
}

#[test]
fn every_shipped_sim_profile_writes_a_summary_the_schema_accepts() {
    let v = validator();
    let profiles = shipped_sim_profiles();
    // marlow-thursday, -claim, -heartbeat, healthy, kill-after-effect, poison-friday,
    // redrive-after-incident, producer-retry-window and the four of brokers/: 12 today.
    assert!(profiles.len() >= 12, "{profiles:?}");
    for p in &profiles {
        let s = summary_of(p, &[]);
        assert_eq!(complaints(&v, &s), Vec::<String>::new(), "{p}");
    }
}

#[test]
fn the_optional_fields_of_a_sim_run_are_in_the_schema() {
    let v = validator();
    // A retrying producer on a FIFO queue in 4 message groups: duplicate_publishes,
    // publishes_deduplicated and message_groups are written (and checked) too.
    let s = summary_of("producer-retry-window.yaml", &["workload.groups=4"]);
    for field in [
        "duplicate_publishes",
        "publishes_deduplicated",
        "message_groups",
    ] {
        assert!(s.get(field).is_some(), "{field} written");
    }
    assert_eq!(s["message_groups"].as_array().map(Vec::len), Some(4));
    assert_eq!(complaints(&v, &s), Vec::<String>::new());
    // The Thursday on NATS names its kind (left out for sqs).
    let s = summary_of("brokers/nats.yaml", &[]);
    assert_eq!(s["broker_kind"], "nats");
    assert_eq!(complaints(&v, &s), Vec::<String>::new());
}

#[test]
fn an_interrupted_run_says_why_and_the_schema_holds_it_its_broken_connections_and_broker_notes() {
    let v = validator();
    let text = include_str!("../../../profiles/healthy.yaml");
    let scenario = profile::load_str("healthy.yaml", text, &[]).unwrap_or_else(|e| panic!("{e}"));
    let mut record = runner::run(&scenario).unwrap_or_else(|e| panic!("{e}"));
    record.incomplete = Some("interrupted by SIGINT".into());
    // A live run's broken connection is held to the schema too.
    record
        .broken_connections
        .push(crate::record::BrokenConnection {
            at: 1_000_000_000,
            worker: 1,
            why: "the worker sent a frame nested deeper than 1".into(),
        });
    let info = RunInfo {
        profile: scenario.name.clone(),
        mode: "sim".into(),
        seed: scenario.seed,
        wall_s: 0.25,
    };
    // And what a live run's broker side says.
    record
        .broker_notes
        .push("consumer group: 2 generation(s) joined".into());
    let summary = summarise(&info, &record, &scenario.budgets);
    let notes: Vec<String> = super::words::notes(&summary)
        .into_iter()
        .map(|n| n.text)
        .collect();
    assert!(
        notes.contains(&"BROKER: consumer group: 2 generation(s) joined.".to_string()),
        "{notes:?}"
    );
    let s: Value = serde_json::from_str(&to_json(&summary)).unwrap();
    assert_eq!(s["verdict"], "incomplete");
    assert_eq!(s["broken_connections"][0]["at_s"], 1.0);
    assert_eq!(
        s["broker_notes"][0],
        "consumer group: 2 generation(s) joined"
    );
    assert_eq!(complaints(&v, &s), Vec::<String>::new());
    let mut unnamed = s.clone();
    unnamed["broken_connections"][0]
        .as_object_mut()
        .map(|o| o.remove("why"));
    assert_eq!(complaints(&v, &unnamed).len(), 1, "{unnamed}");
    // Without its reason, or with a pass verdict, it is not a summary ackbench writes.
    let mut no_reason = s.clone();
    no_reason
        .as_object_mut()
        .map(|o| o.remove("incomplete_reason"));
    assert_eq!(complaints(&v, &no_reason).len(), 1, "{no_reason}");
    let mut passed = s.clone();
    passed["verdict"] = "pass".into();
    assert_eq!(complaints(&v, &passed).len(), 1);
}

#[test]
fn a_summary_that_drifts_from_the_schema_is_refused() {
    let v = validator();
    let s = summary_of("marlow-thursday.yaml", &[]);
    assert_eq!(complaints(&v, &s), Vec::<String>::new());
    // A field the schema does not list (a new one, added without the schema).
    let mut added = s.clone();
    added["retries_per_message"] = 2.into();
    assert_eq!(complaints(&v, &added).len(), 1);
    // A count written as text, a missing field, a latency with a sixth number.
    let mut text = s.clone();
    text["duplicate_effects"] = "216".into();
    assert_eq!(complaints(&v, &text).len(), 1);
    let mut missing = s.clone();
    missing.as_object_mut().map(|o| o.remove("lost"));
    assert_eq!(complaints(&v, &missing).len(), 1);
    let mut latency = s.clone();
    latency["handler_latency_ms"]["p75"] = 1.0.into();
    assert_eq!(complaints(&v, &latency).len(), 1);
    // A nested object keeps its own fields too: a budget without `pass`.
    let mut budget = s;
    budget["budgets"][0]
        .as_object_mut()
        .map(|o| o.remove("pass"));
    assert_eq!(complaints(&v, &budget).len(), 1);
}
