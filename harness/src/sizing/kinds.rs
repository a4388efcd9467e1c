//! `--vary broker.kind=...`: the same profile on another broker kind, its lease and delivery
//! limit carried over by meaning.
//!
//! | the profile's (by meaning) | sqs | rabbitmq | nats | redis-streams |
//! |---|---|---|---|---|
//! | lease | `visibility_timeout` | (none: `consumer_timeout` keeps its default) | `ack_wait` | `min_idle` |
//! | deliveries allowed, N (0 = no limit) | `max_receives: N` | `delivery_limit: N - 1` (0 stays 0) | `max_deliver: N` | `max_deliveries: N` |
//!
//! Kafka (`kafka`) takes neither: its `max_poll_interval` is a guard between polls, and it has
//! no delivery limit.
//!
//! RabbitMQ has no lease: its consumer timeout is a guard against stuck consumers, counted in
//! minutes, so a 30 s lease does not become a 30 s consumer timeout. Every other key of the
//! profile's kind (`stale_ack`, `backoff`, `queue_type`, ...) is left out: the new kind gets its
//! own defaults. A point of the profile's own kind runs the profile unchanged.

use crate::profile::kinds::{self, LeaseRole};
use crate::profile::{format_duration, BrokerSpec};

/// The `--set` overrides that put `base`'s broker on kind `kind` (as a profile names it).
pub fn carried_over(base: &BrokerSpec, kind: &str) -> Vec<String> {
    // Not a kind: the profile's own check names the kinds.
    let Some(kind) = kinds::named(kind) else {
        return Vec::new();
    };
    if base.kind.descriptor() == kind {
        return Vec::new();
    }
    // Every broker key back to unset, then the new kind's lease and limit.
    let mut sets: Vec<String> = kinds::KINDS
        .iter()
        .flat_map(|k| k.keys.iter())
        .map(|k| format!("broker.{k}=null"))
        .collect();
    match kind.lease.role {
        LeaseRole::Lease => sets.push(format!(
            "broker.{}={}",
            kind.lease.key,
            format_duration(base.lease)
        )),
        LeaseRole::StuckConsumerGuard | LeaseRole::PollInterval => {}
    }
    if let Some(limit) = &kind.limit {
        sets.push(format!(
            "broker.{}={}",
            limit.key,
            limit.value(base.max_deliveries)
        ));
    }
    sets
}

#[cfg(test)]
mod tests {
    use super::*;

    fn thursday() -> BrokerSpec {
        crate::profile::load_str(
            "t.yaml",
            "run: { duration: 1m }\nbroker: { kind: sqs, visibility_timeout: 30s, max_receives: 3, \
             stale_ack: ignore }\nworkload: { arrival: { every: 1s } }\nconsumer: { target: \
             ack-after-work }\n",
            &[],
        )
        .unwrap()
        .broker
    }

    fn tail(sets: Vec<String>) -> Vec<String> {
        sets.into_iter().filter(|s| !s.ends_with("=null")).collect()
    }

    #[test]
    fn the_lease_and_limit_carry_over_by_meaning() {
        let b = thursday();
        assert_eq!(carried_over(&b, "sqs"), Vec::<String>::new());
        assert_eq!(carried_over(&b, "embedded"), Vec::<String>::new());
        assert_eq!(
            tail(carried_over(&b, "nats")),
            ["broker.ack_wait=30s", "broker.max_deliver=3"]
        );
        assert_eq!(
            tail(carried_over(&b, "redis-streams")),
            ["broker.min_idle=30s", "broker.max_deliveries=3"]
        );
        // 3 deliveries = 2 returns allowed; no lease.
        assert_eq!(
            tail(carried_over(&b, "rabbitmq")),
            ["broker.delivery_limit=2"]
        );
        // The result is a valid profile of the new kind, with the same meanings.
        for kind in ["nats", "redis-streams", "rabbitmq"] {
            let mut sets = carried_over(&b, kind);
            sets.push(format!("broker.kind={kind}"));
            let s = crate::profile::load_str(
                "t.yaml",
                "run: { duration: 1m }\nbroker: { kind: sqs, visibility_timeout: 30s, \
                 max_receives: 3, stale_ack: ignore }\nworkload: { arrival: { every: 1s } }\n\
                 consumer: { target: ack-after-work }\n",
                &sets,
            )
            .unwrap();
            assert_eq!(s.broker.kind.name(), kind);
            assert_eq!(s.broker.max_deliveries, 3, "{kind}");
        }
    }
}
