//! `ackbench check` on broken `connection` rules: exit code 2 and a message naming the field,
//! as in [`crate::profile_errors`]. BASE has one worker; its run ends at 10m + 30m = 40m.

use crate::profile_errors::{expect_error, with};

/// BASE with one connection rule (line 7) written `rule`.
fn rule(rule: &str) -> String {
    with(&format!("chaos:\n  - connection: {rule}\n"))
}

#[test]
fn an_unknown_fault_is_refused_naming_the_three() {
    expect_error(
        &rule("{ fault: flap, at: 1m }"),
        &[],
        "{path}:7:26: chaos.0.connection.fault: must be one of cut, latency, partition, got \
         \"flap\"",
    );
}

#[test]
fn each_fault_needs_its_time_and_a_latency_its_delay() {
    expect_error(
        &rule("{ fault: cut }"),
        &[],
        "chaos.0.connection: give one of at, every, as in { fault: cut, at: 30s } or \
         { fault: cut, every: 5m }",
    );
    expect_error(
        &rule("{ fault: partition, for: 1m }"),
        &[],
        "chaos.0.connection.from: required: the instant the fault starts, e.g. 30s",
    );
    expect_error(
        &rule("{ fault: latency, from: 1m }"),
        &[],
        "chaos.0.connection.delay: required: the time added to each frame, e.g. 200ms",
    );
    expect_error(
        &rule("{ fault: latency, from: 1m, delay: 0s }"),
        &[],
        "chaos.0.connection.delay: must be more than 0s, got 0s",
    );
}

#[test]
fn a_key_of_another_fault_is_refused() {
    expect_error(
        &rule("{ fault: cut, at: 1m, frames: hold }"),
        &[],
        "chaos.0.connection.frames: is not a key of a cut: a cut takes at or every (with from, \
         to, times), workers, optional",
    );
}

#[test]
fn what_the_run_never_reaches_selects_nothing() {
    expect_error(
        &rule("{ fault: cut, at: 1m, workers: [2] }"),
        &[],
        "chaos.0.connection.workers.0: selects nothing: must be a worker number from 1 to \
         consumer.workers (1), got 2",
    );
    expect_error(
        &rule("{ fault: cut, at: 45m }"),
        &[],
        "chaos.0.connection.at: selects nothing: the cut would come at 45m, and the run ends at \
         40m (run.duration + run.drain)",
    );
    expect_error(
        &rule("{ fault: partition, from: 39m, for: 2m }"),
        &[],
        "chaos.0.connection.for: the window would close at 41m, after the run's end at 40m \
         (run.duration + run.drain)",
    );
}

#[test]
fn a_live_run_whose_path_cannot_see_connections_is_refused_with_the_reason() {
    expect_error(
        &rule("{ fault: cut, at: 1m }").replace(
            "name: e2e\n",
            "name: e2e\nmode: live\nbroker: { kind: sqs, endpoint: \"http://127.0.0.1:5000\" }\n",
        ),
        &[],
        "chaos.0.connection: a live run on sqs cannot act on the workers' connections: the \
         observing proxy in front of an endpoint of your own (broker.endpoint) reads whole HTTP \
         requests and answers",
    );
}
