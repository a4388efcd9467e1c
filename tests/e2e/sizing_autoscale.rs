//! `ackbench size` on an autoscaled profile: the autoscaler's settings sized, verified by the
//! after-run, and written as a KEDA ScaledObject and a Deployment patch.

use serde_json::Value;

use crate::common::{ackbench, root, run_profile, stderr, stdout};

#[test]
fn the_evening_scale_in_is_sized_to_cut_nothing_and_written_as_a_scaled_object() {
    let dir = tempfile::tempdir().expect("temp dir");
    let out = dir.path().join("sizing");
    let out_s = out.to_str().expect("utf-8 path");
    let o = ackbench(&[
        "size",
        "profiles/chaos/autoscale-evening-sqs.yaml",
        "--out",
        out_s,
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = std::fs::read_to_string(out.join("sizing.json")).expect("sizing.json");
    let v: Value = serde_json::from_str(&text).expect("JSON");
    let a = &v["autoscale"];
    assert_eq!(a["rule"], 0, "{a}");
    // The 600 s jobs (600.31 s to the histogram): a grace of x 1.25 = 751 s; the profile's
    // other settings of the rule kept (max: Little's law capped at the 4 jobs; the 5m window,
    // longer than the 15 s a replica takes to come back).
    let set: Vec<&str> = (v["set"].as_array().expect("set").iter())
        .filter_map(Value::as_str)
        .collect();
    let fleet: Vec<&&str> = set.iter().filter(|s| s.starts_with("chaos.")).collect();
    assert_eq!(fleet, [&"chaos.0.autoscale.grace=12m31s"], "{set:?}");
    assert!(
        !set.iter().any(|s| s.starts_with("consumer.workers")),
        "{set:?}"
    );
    // Before: the profile's derived counts (3 scale events; 4 handlers cut, each duplicated).
    let before = &a["before"];
    assert_eq!(before["scale_events"], 3, "{before}");
    assert_eq!(before["handlers_cut"], 4, "{before}");
    assert_eq!(before["cut_with_duplicate"], 4, "{before}");
    assert_eq!(v["verification"]["before"]["duplicate_effects"], 4);
    // After: the same scale-in at 315 s tells workers 4, 3, 2 to stop; each finishes its job
    // (to 601-603 s) within the grace: none is cut, no email goes twice.
    let after = &a["after"];
    assert_eq!(after["scale_events"], 1, "{after}");
    assert_eq!(after["scale_ins_that_stopped"], 1, "{after}");
    assert_eq!(after["handlers_cut"], 0, "{after}");
    assert_eq!(v["verification"]["after"]["duplicate_effects"], 0);
    // The files, in KEDA's and Kubernetes' words.
    assert_eq!(
        a["files"],
        serde_json::json!(["scaledobject.yaml", "deployment-patch.yaml"])
    );
    let object: yaml_serde::Value = yaml_serde::from_str(
        &std::fs::read_to_string(out.join("scaledobject.yaml")).expect("written"),
    )
    .expect("YAML");
    assert_eq!(object["kind"], "ScaledObject");
    let spec = &object["spec"];
    assert_eq!(spec["minReplicaCount"], 1);
    assert_eq!(spec["maxReplicaCount"], 4);
    let down = &spec["advanced"]["horizontalPodAutoscalerConfig"]["behavior"]["scaleDown"];
    assert_eq!(down["stabilizationWindowSeconds"], 300);
    assert_eq!(spec["triggers"][0]["type"], "aws-sqs-queue");
    assert_eq!(spec["triggers"][0]["metadata"]["scaleOnInFlight"], "false");
    let patch = std::fs::read_to_string(out.join("deployment-patch.yaml")).expect("written");
    assert!(
        patch.ends_with("terminationGracePeriodSeconds: 751\n"),
        "{patch}"
    );
    let md = stdout(&o);
    assert!(md.contains("## Autoscaler (chaos.0.autoscale)"), "{md}");
    assert!(
        md.contains("| grace (terminationGracePeriodSeconds) | 30s | **12m31s** |"),
        "{md}"
    );
}

#[test]
fn the_recommended_sets_run_as_the_after_run_did() {
    // `ackbench run PROFILE --set ...` with sizing's overrides: the scale-in at 315 s tells
    // workers 4, 3, 2 to stop inside their 600 s jobs; with 751 s of grace each exits when its
    // job is done (601-603 s): 3 told, 3 stopped, none killed, none cut, 0 duplicates.
    let profile = root().join("profiles/chaos/autoscale-evening-sqs.yaml");
    let ran = run_profile(
        &profile,
        &["--quiet", "--set", "chaos.0.autoscale.grace=12m31s"],
    );
    assert_eq!(ran.code(), 0, "{}", ran.stderr());
    let s = ran.summary();
    assert_eq!(s["duplicate_effects"], 0, "{s}");
    let events = s["autoscaling"]["scale_events"].as_array().expect("events");
    assert_eq!(events.len(), 1, "{events:?}");
    let e = &events[0];
    assert_eq!(
        (e["at_s"].as_f64(), &e["from"], &e["to"]),
        (Some(315.0), &4.into(), &1.into()),
        "{e}"
    );
    let cost = &e["cost"];
    assert_eq!(
        (&cost["told"], &cost["stopped"], &cost["killed"]),
        (&3.into(), &3.into(), &0.into()),
        "{cost}"
    );
    assert_eq!(cost["interrupted"], 0, "{cost}");
}

/// KEDA's ScaledObject schema, from the CRD shipped in `tests/e2e/data/` (its source named
/// there), made strict as `kubectl apply --validate=strict` is: a field the schema does not
/// name is an error, not pruned.
fn scaled_object_schema() -> jsonschema::Validator {
    let text = std::fs::read_to_string(root().join("tests/e2e/data/keda.sh_scaledobjects.yaml"))
        .expect("the CRD");
    let crd: Value = yaml_serde::from_str(&text).expect("YAML");
    assert_eq!(crd["spec"]["names"]["kind"], "ScaledObject");
    let version = &crd["spec"]["versions"][0];
    assert_eq!(version["name"], "v1alpha1");
    let mut schema = version["schema"]["openAPIV3Schema"].clone();
    strict(&mut schema);
    jsonschema::validator_for(&schema).expect("a valid schema")
}

/// Every object of `schema` that names its properties and neither allows more nor keeps
/// unknown fields refuses others.
fn strict(schema: &mut Value) {
    match schema {
        Value::Object(o) => {
            let keeps = o.contains_key("additionalProperties")
                || o.get("x-kubernetes-preserve-unknown-fields") == Some(&Value::Bool(true));
            if o.contains_key("properties") && !keeps {
                o.insert("additionalProperties".into(), Value::Bool(false));
            }
            o.values_mut().for_each(strict);
        }
        Value::Array(a) => a.iter_mut().for_each(strict),
        _ => {}
    }
}

/// What `validator` finds wrong in `object`, one line each.
fn complaints(validator: &jsonschema::Validator, object: &Value) -> Vec<String> {
    (validator.iter_errors(object))
        .map(|e| format!("{}: {e}", e.instance_path()))
        .collect()
}

#[test]
fn every_scaled_object_size_writes_is_valid_against_kedas_crd() {
    let validator = scaled_object_schema();
    // Each shipped autoscaled profile: SQS (ready, and the morning's), RabbitMQ, Redis Streams.
    for profile in [
        "autoscale-evening-sqs",
        "autoscale-morning-sqs",
        "autoscale-evening-rabbitmq",
        "autoscale-evening-redis-streams",
    ] {
        let dir = tempfile::tempdir().expect("temp dir");
        let out = dir.path().join("sizing");
        let path = format!("profiles/chaos/{profile}.yaml");
        let o = ackbench(&["size", &path, "--out", out.to_str().expect("utf-8")]);
        assert_eq!(o.status.code(), Some(0), "{profile}: {}", stderr(&o));
        let text = std::fs::read_to_string(out.join("scaledobject.yaml")).expect("written");
        let object: Value = yaml_serde::from_str(&text).expect("YAML");
        let wrong = complaints(&validator, &object);
        assert!(wrong.is_empty(), "{profile}:\n{}\n{text}", wrong.join("\n"));
        // The check can fail: a count given as text, and a field KEDA does not know.
        let mut bad = object.clone();
        bad["spec"]["minReplicaCount"] = "one".into();
        bad["spec"]["replicas"] = 3.into();
        let wrong = complaints(&validator, &bad);
        assert_eq!(wrong.len(), 2, "{profile}: {wrong:?}");
        assert!(
            wrong.iter().any(|w| w.starts_with("/spec/minReplicaCount")),
            "{wrong:?}"
        );
    }
}
