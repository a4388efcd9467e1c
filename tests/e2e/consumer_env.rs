//! `consumer.env` values naming a run variable (`${ACKBENCH_...}`) that the profile's broker
//! kind does not give: `ackbench check` and `ackbench run` refuse them (exit 2), naming the
//! place, the field and the run variables the kind gives; and `ackbench run --help` says how
//! to run your own consumer.

use crate::common::{ackbench, stderr, temp_profile};

/// A live profile on broker kind `kind` whose consumer command's env is `env` (from line 9).
fn profile(kind: &str, env: &str) -> String {
    format!(
        "name: env-e2e\nmode: live\nbroker: {{ kind: {kind} }}\nrun: {{ duration: 1s }}\n\
         workload: {{ arrival: {{ every: 1s }}, count: 1 }}\nconsumer:\n  command: [python3, \
         worker.py]\n  env:\n{env}"
    )
}

/// `ackbench SUBCOMMAND` on `text`: asserts exit 2 and returns stderr, the profile's path
/// written `{path}`.
fn refused(subcommand: &str, text: &str) -> String {
    let (dir, path) = temp_profile(text);
    let path = path.display().to_string();
    let out_dir = dir.path().join("out").display().to_string();
    let args = match subcommand {
        "run" => vec!["run", path.as_str(), "--out", out_dir.as_str(), "--quiet"],
        _ => vec![subcommand, path.as_str()],
    };
    let out = ackbench(&args);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{subcommand}: {err}");
    err.replace(&path, "{path}")
}

const SQS_VARIABLES: &str = "ACKBENCH_PROVIDER_URL, ACKBENCH_WORKER, ACKBENCH_TIME_SCALE, \
                             ACKBENCH_STATE_DIR, ACKBENCH_QUEUE_URL";

#[test]
fn a_run_variable_that_does_not_exist_is_refused_by_check_and_run() {
    let text = profile("sqs", "    EMAIL_API_URL: \"${ACKBENCH_NOPE}send\"\n");
    let expected = format!(
        "{{path}}:9:20: consumer.env.EMAIL_API_URL: `${{ACKBENCH_NOPE}}` is not a run variable; \
         the run variables of broker kind sqs are {SQS_VARIABLES}"
    );
    for subcommand in ["check", "run"] {
        let err = refused(subcommand, &text);
        assert!(err.contains(&expected), "{subcommand}: {err}");
    }
}

#[test]
fn another_kinds_run_variable_is_refused_naming_that_kind() {
    let text = profile("sqs", "    CELERY_BROKER_URL: \"${ACKBENCH_AMQP_URL}\"\n");
    let err = refused("check", &text);
    assert!(
        err.contains(&format!(
            "{{path}}:9:24: consumer.env.CELERY_BROKER_URL: `${{ACKBENCH_AMQP_URL}}` is a run \
             variable of broker kind rabbitmq, not of sqs; the run variables of broker kind sqs \
             are {SQS_VARIABLES}"
        )),
        "{err}"
    );
    // The same variable on its own kind checks ok.
    let (_dir, path) = temp_profile(&profile(
        "rabbitmq",
        "    CELERY_BROKER_URL: \"${ACKBENCH_AMQP_URL}\"\n",
    ));
    let out = ackbench(&["check", &path.display().to_string()]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}

#[test]
fn run_help_says_how_to_run_your_own_consumer() {
    let out = ackbench(&["run", "--help"]);
    assert_eq!(out.status.code(), Some(0));
    let help = crate::common::stdout(&out);
    for words in [
        "Your own consumer, unmodified (mode: live)",
        "command: [python3, worker.py]",
        "EMAIL_API_URL: \"${ACKBENCH_PROVIDER_URL}send\"",
        "docs/live.md, \"Worker environment, by broker kind\"",
        "$${ writes a literal ${",
        "WORKER LOGS",
    ] {
        assert!(help.contains(words), "run --help lacks {words:?}:\n{help}");
    }
}
