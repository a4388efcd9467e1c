//! The profile's consumer settings, once, as Kafka's consumer configuration names them: what
//! a worker process is told (its run variables) and what the built-in targets' consumer is
//! configured with are the same table, so both consumers of a run are set alike.
//!
//! Durations are in wall milliseconds: a live Kafka run gives its consumers the run's wall
//! time (the broker's group timers run on the wall clock).

use std::time::Duration;

use crate::profile::run_variables as var;
use crate::profile::{KafkaAssignment, KafkaSpec};
use crate::record::WorkerId;

/// One consumer setting: its run variable, its consumer configuration name, its value.
pub type Setting = (&'static str, &'static str, String);

/// What a run's consumers are configured with.
#[derive(Debug, Clone)]
pub struct ConsumerSettings {
    pub max_poll_interval: Duration,
    pub spec: KafkaSpec,
}

/// librdkafka's `partition.assignment.strategy` (and the Java client's short name).
pub fn strategy(a: KafkaAssignment) -> &'static str {
    match a {
        KafkaAssignment::Range => "range",
        KafkaAssignment::CooperativeSticky => "cooperative-sticky",
    }
}

/// The `group.instance.id` of worker `w` with static membership.
pub fn instance_id(w: WorkerId) -> String {
    format!("worker-{w}")
}

impl ConsumerSettings {
    /// The settings of worker `w` (every worker's are the same but `group.instance.id`).
    /// `max.poll.records` has no librdkafka setting: a consumer reads it as how many records
    /// one poll takes (`consume(num_messages)`).
    pub fn of(&self, w: WorkerId) -> Vec<Setting> {
        let ms = |d: Duration| d.as_millis().to_string();
        let s = &self.spec;
        let instance = if s.static_membership {
            instance_id(w)
        } else {
            String::new()
        };
        vec![
            (
                var::MAX_POLL_INTERVAL_MS,
                "max.poll.interval.ms",
                ms(self.max_poll_interval),
            ),
            (
                var::SESSION_TIMEOUT_MS,
                "session.timeout.ms",
                ms(s.session_timeout),
            ),
            (
                var::HEARTBEAT_INTERVAL_MS,
                "heartbeat.interval.ms",
                ms(s.heartbeat_interval),
            ),
            (
                var::MAX_POLL_RECORDS,
                "max.poll.records",
                s.max_poll_records.to_string(),
            ),
            (
                var::ENABLE_AUTO_COMMIT,
                "enable.auto.commit",
                s.enable_auto_commit.to_string(),
            ),
            (
                var::AUTO_COMMIT_INTERVAL_MS,
                "auto.commit.interval.ms",
                ms(s.auto_commit_interval),
            ),
            (
                var::PARTITION_ASSIGNMENT_STRATEGY,
                "partition.assignment.strategy",
                strategy(s.assignment).to_string(),
            ),
            (var::GROUP_INSTANCE_ID, "group.instance.id", instance),
        ]
    }

    /// The settings of worker `w` as librdkafka takes them: those it has, the empty
    /// `group.instance.id` left out.
    pub fn librdkafka(&self, w: WorkerId) -> Vec<(&'static str, String)> {
        self.of(w)
            .into_iter()
            .filter(|(_, name, value)| *name != "max.poll.records" && !value.is_empty())
            .map(|(_, name, value)| (name, value))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(static_membership: bool) -> ConsumerSettings {
        ConsumerSettings {
            max_poll_interval: Duration::from_secs(8),
            spec: KafkaSpec {
                partitions: 2,
                session_timeout: Duration::from_secs(6),
                heartbeat_interval: Duration::from_secs(1),
                max_poll_records: 10,
                enable_auto_commit: false,
                auto_commit_interval: Duration::from_millis(5000),
                assignment: KafkaAssignment::CooperativeSticky,
                static_membership,
            },
        }
    }

    #[test]
    fn each_setting_is_told_by_its_consumer_configuration_name() {
        let all = settings(true).of(3);
        let get = |name: &str| {
            all.iter()
                .find(|(_, n, _)| *n == name)
                .map(|(v, _, value)| (*v, value.as_str()))
                .unwrap()
        };
        assert_eq!(
            get("max.poll.interval.ms"),
            (var::MAX_POLL_INTERVAL_MS, "8000")
        );
        assert_eq!(get("session.timeout.ms").1, "6000");
        assert_eq!(get("heartbeat.interval.ms").1, "1000");
        assert_eq!(get("max.poll.records").1, "10");
        assert_eq!(get("enable.auto.commit").1, "false");
        assert_eq!(get("partition.assignment.strategy").1, "cooperative-sticky");
        assert_eq!(get("group.instance.id").1, "worker-3");
    }

    #[test]
    fn librdkafka_gets_neither_max_poll_records_nor_an_empty_instance_id() {
        let names: Vec<&str> = settings(false)
            .librdkafka(1)
            .iter()
            .map(|(n, _)| *n)
            .collect();
        // 8 settings, less max.poll.records and the empty group.instance.id.
        assert_eq!(names.len(), 6);
        assert!(!names.contains(&"max.poll.records"));
        assert!(!names.contains(&"group.instance.id"));
        assert!(settings(true)
            .librdkafka(2)
            .contains(&("group.instance.id", "worker-2".to_string())));
    }
}
