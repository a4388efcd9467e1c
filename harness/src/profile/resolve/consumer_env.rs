//! `consumer.env` (and the arguments of `consumer.command`): the extra environment of each
//! worker process, each value read as an
//! [`EnvValue`] whose `${ACKBENCH_...}` must be a run variable of the profile's broker kind
//! ([`crate::profile::run_variables`]).

use std::collections::BTreeMap;

use crate::profile::env_value::EnvValue;
use crate::profile::path::FieldPath;
use crate::profile::problem::Problem;
use crate::profile::scalar::Text;
use crate::profile::scenario::BrokerSpec;

/// Reads every value of `consumer.env` (at `path`), in name order.
pub fn resolve(
    raw: BTreeMap<String, Text>,
    broker: &BrokerSpec,
    path: &FieldPath,
) -> Result<Vec<(String, EnvValue)>, Problem> {
    raw.into_iter()
        .map(|(name, text)| {
            let at = path.key(&name);
            let value =
                EnvValue::parse(&text.0).map_err(|e| Problem::new(at.clone(), e.to_string()))?;
            check_variables(&value, broker, &at)?;
            Ok((name, value))
        })
        .collect()
}

/// Checks the arguments of `consumer.command` (at `path`) as [`resolve`] checks values: an
/// argument may name the worker's run variables too (`-n w${ACKBENCH_WORKER}@%h`).
pub fn check_arguments(
    argv: &[String],
    broker: &BrokerSpec,
    path: &FieldPath,
) -> Result<(), Problem> {
    for (i, arg) in argv.iter().enumerate() {
        let at = path.index(i);
        let value = EnvValue::parse(arg).map_err(|e| Problem::new(at.clone(), e.to_string()))?;
        check_variables(&value, broker, &at)?;
    }
    Ok(())
}

/// Refuses the first variable `value` names that the kind's workers are not told.
fn check_variables(value: &EnvValue, broker: &BrokerSpec, at: &FieldPath) -> Result<(), Problem> {
    let told = broker.kind.run_variables();
    let Some(name) = value.variables().find(|v| !told.contains(v)) else {
        return Ok(());
    };
    let kind = broker.kind.name();
    let whose = match crate::profile::kinds::telling(name).as_slice() {
        [] => "is not a run variable".to_string(),
        [one] => format!("is a run variable of broker kind {one}, not of {kind}"),
        many => format!(
            "is a run variable of broker kinds {}, not of {kind}",
            many.join(", ")
        ),
    };
    Err(Problem::new(
        at.clone(),
        format!(
            "`${{{name}}}` {whose}; the run variables of broker kind {kind} are {} (docs/live.md, \
             \"Worker environment, by broker kind\"; `$${{` writes a literal `${{`)",
            told.join(", ")
        ),
    ))
}

#[cfg(test)]
mod tests {
    use crate::profile::testutil::{error, scenario};

    /// A live profile on `broker` whose consumer command has `env` (from line 7).
    fn profile(broker: &str, env: &str) -> String {
        format!(
            "mode: live\nbroker: {broker}\nrun: {{ duration: 10m }}\nworkload: {{ arrival: {{ \
             every: 1s }} }}\nconsumer:\n  command: [python3, c.py]\n  env:\n{env}"
        )
    }

    #[test]
    fn values_are_read_with_their_run_variables() {
        let s = scenario(&profile(
            "{ kind: sqs }",
            "    EMAIL_API_URL: \"${ACKBENCH_PROVIDER_URL}send\"\n    QUEUE: \"${ACKBENCH_QUEUE_URL}\"\n    \
             HOME_TOO: \"${HOME}\"\n",
        ));
        // As one worker is given them, in name order.
        let run = [
            ("ACKBENCH_PROVIDER_URL", "http://127.0.0.1:9/w/1/"),
            ("ACKBENCH_QUEUE_URL", "http://127.0.0.1:8/q/ackbench"),
        ]
        .map(|(k, v)| (k.to_string(), v.to_string()));
        let env: Vec<(String, String)> = s
            .consumer
            .env
            .iter()
            .map(|(k, v)| (k.clone(), v.expand(&run).unwrap()))
            .collect();
        assert_eq!(
            env,
            [
                ("EMAIL_API_URL", "http://127.0.0.1:9/w/1/send"),
                ("HOME_TOO", "${HOME}"),
                ("QUEUE", "http://127.0.0.1:8/q/ackbench"),
            ]
            .map(|(k, v)| (k.to_string(), v.to_string()))
        );
        let celery = scenario(&profile(
            "{ kind: rabbitmq }",
            "    CELERY_BROKER_URL: \"${ACKBENCH_AMQP_URL}\"\n",
        ));
        assert_eq!(
            celery.consumer.env[0].1.variables().collect::<Vec<_>>(),
            ["ACKBENCH_AMQP_URL"]
        );
    }

    #[test]
    fn an_unknown_run_variable_is_refused_with_the_kinds_variables() {
        assert_eq!(
            error(&profile(
                "{ kind: sqs }",
                "    API: \"${ACKBENCH_NOPE}/x\"\n"
            )),
            "p.yaml:8:10: consumer.env.API: `${ACKBENCH_NOPE}` is not a run variable; the run \
             variables of broker kind sqs are ACKBENCH_PROVIDER_URL, ACKBENCH_WORKER, \
             ACKBENCH_TIME_SCALE, ACKBENCH_STATE_DIR, ACKBENCH_QUEUE_URL (docs/live.md, \
             \"Worker environment, by broker kind\"; `$${` writes a literal `${`)"
        );
    }

    #[test]
    fn another_kinds_run_variable_is_refused_naming_its_kind() {
        assert_eq!(
            error(&profile(
                "{ kind: sqs }",
                "    CELERY_BROKER_URL: \"${ACKBENCH_AMQP_URL}\"\n"
            )),
            "p.yaml:8:24: consumer.env.CELERY_BROKER_URL: `${ACKBENCH_AMQP_URL}` is a run \
             variable of broker kind rabbitmq, not of sqs; the run variables of broker kind sqs \
             are ACKBENCH_PROVIDER_URL, ACKBENCH_WORKER, ACKBENCH_TIME_SCALE, \
             ACKBENCH_STATE_DIR, ACKBENCH_QUEUE_URL (docs/live.md, \"Worker environment, by \
             broker kind\"; `$${` writes a literal `${`)"
        );
        let e = error(&profile(
            "{ kind: rabbitmq }",
            "    S: \"${ACKBENCH_STREAM}\"\n",
        ));
        assert!(
            e.starts_with(
                "p.yaml:8:8: consumer.env.S: `${ACKBENCH_STREAM}` is a run variable of broker \
                 kinds nats, redis-streams, not of rabbitmq; the run variables of broker kind \
                 rabbitmq are ACKBENCH_PROVIDER_URL, ACKBENCH_WORKER, ACKBENCH_TIME_SCALE, \
                 ACKBENCH_STATE_DIR, ACKBENCH_AMQP_URL, ACKBENCH_QUEUE ("
            ),
            "{e}"
        );
    }

    #[test]
    fn an_escaped_or_unclosed_opening() {
        let s = scenario(&profile(
            "{ kind: sqs }",
            "    RAW: \"$${ACKBENCH_NOPE}\"\n",
        ));
        assert_eq!(s.consumer.env[0].1.variables().count(), 0);
        assert_eq!(
            error(&profile(
                "{ kind: sqs }",
                "    Q: \"${ACKBENCH_QUEUE_URL\"\n"
            )),
            "p.yaml:8:8: consumer.env.Q: `${ACKBENCH_QUEUE_URL` is not closed: a run variable is \
             written `${ACKBENCH_NAME}` (letters, digits and _), and `$${` writes a literal `${`"
        );
    }

    #[test]
    fn command_arguments_may_name_run_variables_and_are_checked_the_same_way() {
        let text = |arg: &str| {
            format!(
                "mode: live\nbroker: {{ kind: rabbitmq }}\nrun: {{ duration: 10m }}\nworkload: {{ \
                 arrival: {{ every: 1s }} }}\nconsumer:\n  command: [celery, worker, -n, \"{arg}\"]\n"
            )
        };
        let s = scenario(&text("w${ACKBENCH_WORKER}@%h"));
        assert_eq!(s.consumer.command.unwrap()[3], "w${ACKBENCH_WORKER}@%h");
        let e = error(&text("w${ACKBENCH_NOPE}@%h"));
        assert!(
            e.contains("p.yaml:6:33: consumer.command.3: `${ACKBENCH_NOPE}` is not a run variable"),
            "{e}"
        );
    }

    #[test]
    fn a_set_override_is_checked_the_same_way() {
        let text = profile("{ kind: nats }", "    A: b\n");
        let e = crate::profile::load_str(
            "p.yaml",
            &text,
            &["consumer.env.URL=${ACKBENCH_QUEUE_URL}".to_string()],
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.starts_with(
                "--set consumer.env.URL=${ACKBENCH_QUEUE_URL}: consumer.env.URL: \
                 `${ACKBENCH_QUEUE_URL}` is a run variable of broker kind sqs, not of nats"
            ),
            "{e}"
        );
    }
}
