//! The run variables: the `ACKBENCH_*` variables a live run puts in the environment of each
//! worker process (`consumer.command`), by broker kind. Named here, once, so that a profile's
//! `consumer.env` can be checked against them before a run ([`super::env_value`]), and each
//! kind's module (`runner/live/kinds/`) sets its workers' variables by these names. A kind's
//! other variables (an SQS client's `AWS_*`) are its client library's, not run variables.

/// The worker's own base URL of the provider (ends in `/`).
pub const PROVIDER_URL: &str = "ACKBENCH_PROVIDER_URL";
/// The worker's number, from 1.
pub const WORKER: &str = "ACKBENCH_WORKER";
/// `run.time_scale`: wall seconds per profile second.
pub const TIME_SCALE: &str = "ACKBENCH_TIME_SCALE";
/// The run's folder of state the workers share.
pub const STATE_DIR: &str = "ACKBENCH_STATE_DIR";
/// SQS: the queue's URL.
pub const QUEUE_URL: &str = "ACKBENCH_QUEUE_URL";
/// RabbitMQ: the worker's AMQP URL (its own proxy port, `broker.url`'s credentials and vhost).
pub const AMQP_URL: &str = "ACKBENCH_AMQP_URL";
/// RabbitMQ: the run's queue.
pub const QUEUE: &str = "ACKBENCH_QUEUE";
/// NATS: the worker's own proxy port, as a URL.
pub const NATS_URL: &str = "ACKBENCH_NATS_URL";
/// NATS and Redis Streams: the run's stream.
pub const STREAM: &str = "ACKBENCH_STREAM";
/// NATS: the stream's durable pull consumer; Redis Streams: the worker's consumer name.
pub const CONSUMER: &str = "ACKBENCH_CONSUMER";
/// NATS: the stream's subject.
pub const SUBJECT: &str = "ACKBENCH_SUBJECT";
/// Redis Streams: the worker's own proxy port, as a URL.
pub const REDIS_URL: &str = "ACKBENCH_REDIS_URL";
/// Redis Streams: where an entry goes after its last delivery.
pub const DEAD_STREAM: &str = "ACKBENCH_DEAD_STREAM";
/// Redis Streams and Kafka: the consumer group.
pub const GROUP: &str = "ACKBENCH_GROUP";
/// Redis Streams' claim rules and the run's start (Unix ms), as docs/live.md's worker table says.
pub const MIN_IDLE_MS: &str = "ACKBENCH_MIN_IDLE_MS";
pub const CLAIM_EVERY_MS: &str = "ACKBENCH_CLAIM_EVERY_MS";
pub const MAX_DELIVERIES: &str = "ACKBENCH_MAX_DELIVERIES";
pub const RUN_START_MS: &str = "ACKBENCH_RUN_START_MS";
/// Kafka: the worker's own proxy port, as `host:port` (`bootstrap.servers`).
pub const BOOTSTRAP_SERVERS: &str = "ACKBENCH_BOOTSTRAP_SERVERS";
/// Kafka: the run's topic.
pub const TOPIC: &str = "ACKBENCH_TOPIC";
/// Kafka: the profile's consumer settings, each named after the consumer configuration it is
/// (docs/live.md's worker table); durations in milliseconds of the worker's clock.
pub const MAX_POLL_INTERVAL_MS: &str = "ACKBENCH_MAX_POLL_INTERVAL_MS";
pub const SESSION_TIMEOUT_MS: &str = "ACKBENCH_SESSION_TIMEOUT_MS";
pub const HEARTBEAT_INTERVAL_MS: &str = "ACKBENCH_HEARTBEAT_INTERVAL_MS";
pub const MAX_POLL_RECORDS: &str = "ACKBENCH_MAX_POLL_RECORDS";
pub const ENABLE_AUTO_COMMIT: &str = "ACKBENCH_ENABLE_AUTO_COMMIT";
pub const AUTO_COMMIT_INTERVAL_MS: &str = "ACKBENCH_AUTO_COMMIT_INTERVAL_MS";
pub const PARTITION_ASSIGNMENT_STRATEGY: &str = "ACKBENCH_PARTITION_ASSIGNMENT_STRATEGY";
/// Kafka: `group.instance.id` with `static_membership`, empty without.
pub const GROUP_INSTANCE_ID: &str = "ACKBENCH_GROUP_INSTANCE_ID";

/// What every kind's workers are told.
pub const EVERY_KIND: &[&str] = &[PROVIDER_URL, WORKER, TIME_SCALE, STATE_DIR];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profile::scenario::BrokerKind;

    /// A resolved kind of each descriptor, in the table's order.
    fn every_kind() -> Vec<BrokerKind> {
        crate::profile::kinds::KINDS
            .iter()
            .map(|k| {
                let text = format!(
                    "run: {{ duration: 1m }}\nbroker: {{ kind: {} }}\nworkload: {{ arrival: \
                     {{ every: 1s }} }}\nconsumer: {{ target: ack-after-work }}\n",
                    k.name
                );
                crate::profile::load_str("p.yaml", &text, &[])
                    .expect("a profile of the kind")
                    .broker
                    .kind
            })
            .collect()
    }

    #[test]
    fn the_table_of_kinds_names_each_kind_with_its_own_variables() {
        let kinds = every_kind();
        let table = crate::profile::kinds::KINDS;
        assert_eq!(kinds.len(), table.len());
        for (kind, descriptor) in kinds.iter().zip(table) {
            assert_eq!(kind.descriptor(), *descriptor);
            let all = kind.run_variables();
            assert_eq!(&all[..EVERY_KIND.len()], EVERY_KIND);
            assert_eq!(&all[EVERY_KIND.len()..], descriptor.run_variables);
        }
    }

    #[test]
    fn every_run_variable_is_named_ackbench_and_told_once_per_kind() {
        for kind in every_kind() {
            let mut names = kind.run_variables();
            assert!(names.iter().all(|n| n.starts_with("ACKBENCH_")));
            let before = names.len();
            names.sort_unstable();
            names.dedup();
            assert_eq!(names.len(), before, "{}", kind.name());
        }
    }

    #[test]
    fn a_variable_is_told_by_the_kinds_that_have_it() {
        assert_eq!(crate::profile::kinds::telling(AMQP_URL), ["rabbitmq"]);
        assert_eq!(
            crate::profile::kinds::telling(STREAM),
            ["nats", "redis-streams"]
        );
        assert_eq!(
            crate::profile::kinds::telling(GROUP),
            ["redis-streams", "kafka"]
        );
        assert!(crate::profile::kinds::telling(PROVIDER_URL).is_empty());
        assert!(crate::profile::kinds::telling("ACKBENCH_NOPE").is_empty());
    }
}
