//! A field that takes one of a list of words, given a list or a mapping: the error says the
//! words, never serde's internal "Value::Tagged enum"; in the file and after `--set` alike.

use crate::profile_errors::{expect_error, with, BASE};

#[test]
fn mode_given_a_list_names_its_words() {
    expect_error(
        &with("mode: [sim, live]\n"),
        &[],
        "{path}:6:1: mode: invalid type: sequence, expected `sim` or `live`",
    );
    expect_error(
        BASE,
        &["mode={a: 1}"],
        "--set mode={a: 1}: mode: invalid type: map, expected `sim` or `live`",
    );
}

#[test]
fn broker_kind_given_a_mapping_names_its_words() {
    expect_error(
        &with("broker:\n  kind: { sqs: true }\n"),
        &[],
        "{path}:7:3: broker.kind: invalid type: map, expected one of `embedded`, `sqs`, \
         `rabbitmq`, `nats`, `redis-streams`, `kafka`, `kafka-share`",
    );
}

#[test]
fn provider_effect_at_given_a_list_names_its_words() {
    expect_error(
        BASE,
        &["provider.effect_at=[request]"],
        "provider.effect_at: invalid type: sequence, expected `request` or `response`",
    );
}

#[test]
fn latency_dist_given_a_list_names_its_words() {
    const WORDS: &str = "expected one of `fixed`, `uniform`, `lognormal`, `per_message`, `mix`";
    expect_error(
        &with("provider:\n  latency: { dist: [fixed], value: 1s }\n"),
        &[],
        &format!("provider.latency.dist: invalid type: sequence, {WORDS}"),
    );
    // Inside a list of phases too.
    expect_error(
        &with("provider:\n  phases:\n    - { from: 0s, to: 1m, latency: { dist: {fixed: 1}, value: 1s } }\n"),
        &[],
        &format!("provider.phases.0.latency.dist: invalid type: map, {WORDS}"),
    );
}
