//! `ackbench check` on broken chaos rules: exit code 2 and a message naming the field, as in
//! [`crate::profile_errors`]: an unknown fault, a rule that selects nothing, a grace the run
//! cannot hold.

use crate::profile_errors::{expect_error, with};

#[test]
fn an_unknown_fault_is_refused_naming_the_faults() {
    expect_error(
        &with("chaos:\n  - restart_all: { at: 5m }\n"),
        &[],
        "{path}:7:5: chaos.0.restart_all: unknown field `restart_all`, expected one of \
         `kill_worker`, `deploy`, `message`, `connection`",
    );
}

#[test]
fn a_deploy_that_selects_nothing_is_refused() {
    // consumer.workers is 1 in BASE: a worker 2 is no worker of this run.
    expect_error(
        &with("chaos:\n  - deploy: { at: 5m, workers: [2] }\n"),
        &[],
        "{path}:7:33: chaos.0.deploy.workers.0: selects nothing: must be a worker number from 1 \
         to consumer.workers (1), got 2",
    );
    // The run ends at 10m + 30m (run.drain's default): a rollout at 45m never comes.
    expect_error(
        &with("chaos:\n  - deploy: { at: 45m }\n"),
        &[],
        "{path}:7:19: chaos.0.deploy.at: selects nothing: the first rollout would start at 45m, \
         and the run ends at 40m (run.duration + run.drain)",
    );
}

#[test]
fn a_grace_longer_than_the_run_is_refused() {
    expect_error(
        &with("chaos:\n  - deploy: { at: 5m, grace: 1h }\n"),
        &["run.drain=1m"],
        "chaos.0.deploy.grace: must be shorter than the run (11m: run.duration + run.drain), \
         got 1h: no worker could reach the end of its grace",
    );
}
