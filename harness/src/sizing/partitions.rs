//! A consumer group's partitions against its workers (Kafka): the coordinator gives each
//! partition to one member, so a group cannot keep more members busy than the topic has
//! partitions; the others sit idle, waiting for a rebalance to hand them one. `ackbench size`
//! recommends at least as many partitions as the workers it recommends, and checks the workers
//! against the partitions now and after.
//!
//! A kind whose workers share a partition's messages (every queue, a Kafka share group) has no
//! such bound ([`crate::profile::BrokerSpec::group_partitions`] is `None`), and none of this
//! applies to it.

use serde::Serialize;

use super::checks::{Check, Status};

/// The name of the check (sizing.json).
pub const CHECK: &str = "workers_within_partitions";

/// The partitions of a consumer group's topic, now and recommended, for `workers` workers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct PartitionSizing {
    pub current: u32,
    /// At least `workers`: one partition for each worker to read.
    pub recommended: u32,
    /// The workers recommended.
    pub workers: u32,
    /// The workers now, and how many of them sit idle on the current partitions.
    pub workers_current: u32,
    pub idle_current: u32,
}

/// The partitions for `workers` workers on a consumer group of `partitions` partitions
/// (`None`: the kind has no such bound, and nothing is sized).
pub fn size_partitions(
    partitions: Option<u32>,
    workers_current: u32,
    workers: u32,
) -> Option<PartitionSizing> {
    let current = partitions?;
    Some(PartitionSizing {
        current,
        recommended: current.max(workers),
        workers,
        workers_current,
        idle_current: workers_current.saturating_sub(current),
    })
}

impl PartitionSizing {
    /// Why, in one sentence.
    pub fn reason(&self) -> String {
        let now = if self.idle_current > 0 {
            format!(
                "now {} of the {} workers {} idle on {} {}",
                self.idle_current,
                self.workers_current,
                sit(self.idle_current),
                self.current,
                partitions(self.current)
            )
        } else {
            format!(
                "now {} {} for {} workers",
                self.current,
                partitions(self.current),
                self.workers_current
            )
        };
        let rec = if self.recommended > self.current {
            format!(
                "{} {} give each of the {} workers one to read (a live topic's partitions can \
                 only be raised, and raising them sends keys to other partitions); with the \
                 {} {} there are, {} of the {} workers would sit idle",
                self.recommended,
                partitions(self.recommended),
                self.workers,
                self.current,
                partitions(self.current),
                self.workers - self.current,
                self.workers
            )
        } else {
            format!(
                "{} {} already give each of the {} workers one to read",
                self.current,
                partitions(self.current),
                self.workers
            )
        };
        format!(
            "A consumer group gives each partition to one member, so members past the \
             partitions sit idle ({now}); {rec}."
        )
    }
}

fn sit(n: u32) -> &'static str {
    if n == 1 {
        "sits"
    } else {
        "sit"
    }
}

fn partitions(n: u32) -> &'static str {
    if n == 1 {
        "partition"
    } else {
        "partitions"
    }
}

/// The check of `workers` workers against `partitions` (`None`: the kind has no such bound,
/// and there is no check).
pub fn check(partitions: Option<u32>, workers: u32) -> Option<Check> {
    let p = partitions?;
    Some(if workers <= p {
        Check {
            name: CHECK,
            status: Status::Pass,
            detail: format!(
                "{workers} workers on {p} {}: each member can be given a partition to read",
                self::partitions(p)
            ),
        }
    } else {
        Check {
            name: CHECK,
            status: Status::Fail,
            detail: format!(
                "{workers} workers on {p} {}: a consumer group gives each partition to one \
                 member, so {} of them {} idle",
                self::partitions(p),
                workers - p,
                sit(workers - p)
            ),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn partitions_rise_to_the_workers() {
        // 2 workers now on 1 partition: 2 - 1 = 1 idle. 4 workers recommended: max(1, 4) = 4
        // partitions.
        let p = size_partitions(Some(1), 2, 4).unwrap();
        assert_eq!(
            (p.current, p.recommended, p.idle_current, p.workers),
            (1, 4, 1, 4)
        );
        assert_eq!(
            p.reason(),
            "A consumer group gives each partition to one member, so members past the \
             partitions sit idle (now 1 of the 2 workers sits idle on 1 partition); 4 partitions \
             give each of the 4 workers one to read (a live topic's partitions can only be \
             raised, and raising them sends keys to other partitions); with the 1 partition \
             there are, 3 of the 4 workers would sit idle."
        );
        // 6 partitions for 4 workers: kept (max(6, 4) = 6), none idle (4 - 6 saturates at 0).
        let p = size_partitions(Some(6), 4, 4).unwrap();
        assert_eq!((p.recommended, p.idle_current), (6, 0));
        assert!(p
            .reason()
            .ends_with("6 partitions already give each of the 4 workers one to read."));
        // A kind without the bound: nothing sized.
        assert_eq!(size_partitions(None, 2, 4), None);
    }

    #[test]
    fn workers_past_the_partitions_fail_the_check() {
        // 3 workers, 1 partition: 3 - 1 = 2 idle.
        let c = check(Some(1), 3).unwrap();
        assert_eq!(c.status, Status::Fail);
        assert_eq!(
            c.detail,
            "3 workers on 1 partition: a consumer group gives each partition to one member, so \
             2 of them sit idle"
        );
        // 4 workers, 4 partitions: one each.
        assert_eq!(check(Some(4), 4).unwrap().status, Status::Pass);
        assert_eq!(check(None, 40), None);
    }
}
