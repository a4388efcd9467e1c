//! The consumer group's rebalances as the proxy sees them on the wire: each JoinGroup answer
//! (a member joins generation `g`), each Heartbeat or commit answered REBALANCE_IN_PROGRESS
//! (the coordinator asks the member to rejoin), each LeaveGroup, each commit fenced with
//! UNKNOWN_MEMBER_ID or ILLEGAL_GENERATION. The broker's DescribeGroups is not asked: Tansu
//! lists no members in it (docs/kafka-live.md).

use std::collections::BTreeSet;
use std::sync::{Mutex, PoisonError};

use crate::record::{Nanos, WorkerId};

/// Kafka's error codes the group's answers carry.
pub mod code {
    pub const ILLEGAL_GENERATION: i16 = 22;
    pub const UNKNOWN_MEMBER_ID: i16 = 25;
    pub const REBALANCE_IN_PROGRESS: i16 = 27;
    pub const FENCED_INSTANCE_ID: i16 = 82;
    pub const STALE_MEMBER_EPOCH: i16 = 113;

    /// The coordinator refused a commit because the member is no longer the partition's owner.
    pub fn fences(code: i16) -> bool {
        matches!(
            code,
            ILLEGAL_GENERATION | UNKNOWN_MEMBER_ID | FENCED_INSTANCE_ID | STALE_MEMBER_EPOCH
        )
    }
}

/// One thing the group did, at profile time `at`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Happened {
    Joined {
        generation: i32,
    },
    /// SyncGroup's answer: member `member` of `generation` owns these partitions of the topic.
    Assigned {
        generation: i32,
        member: String,
        partitions: Vec<i32>,
    },
    AskedToRejoin,
    Left,
    CommitFenced {
        error: i16,
    },
}

#[derive(Default)]
pub struct GroupLog(Mutex<Vec<(Nanos, WorkerId, Happened)>>);

impl GroupLog {
    pub fn add(&self, at: Nanos, worker: WorkerId, what: Happened) {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push((at, worker, what));
    }

    pub fn entries(&self) -> Vec<(Nanos, WorkerId, Happened)> {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// The report's lines about the group: how many generations the members joined (one per
    /// rebalance after the first), how often they were asked to rejoin, left, or were fenced.
    pub fn notes(&self) -> Vec<String> {
        let entries = self.entries();
        let generations: BTreeSet<i32> = entries
            .iter()
            .filter_map(|(_, _, h)| match h {
                Happened::Joined { generation } => Some(*generation),
                _ => None,
            })
            .collect();
        let count = |f: fn(&Happened) -> bool| entries.iter().filter(|(_, _, h)| f(h)).count();
        let asked = count(|h| matches!(h, Happened::AskedToRejoin));
        let left = count(|h| matches!(h, Happened::Left));
        let fenced = count(|h| matches!(h, Happened::CommitFenced { .. }));
        if entries.is_empty() {
            return Vec::new();
        }
        let rebalances = generations.len().saturating_sub(1);
        vec![format!(
            "consumer group: {} generation(s) joined ({rebalances} rebalance(s) after the \
             first), {asked} answer(s) REBALANCE_IN_PROGRESS, {left} LeaveGroup, {fenced} \
             commit(s) fenced",
            generations.len()
        )]
    }
}

/// The partitions of `topic` a SyncGroup answer's assignment gives the member (the consumer
/// protocol's assignment: a version, then the topics and their partitions); none when it cannot
/// be read.
pub fn assigned(assignment: &bytes::Bytes, topic: &str) -> Vec<i32> {
    use kafka_protocol::messages::ConsumerProtocolAssignment;
    use kafka_protocol::protocol::Decodable;
    let mut buf = assignment.clone();
    if buf.len() < 2 {
        return Vec::new();
    }
    let version = i16::from_be_bytes([buf[0], buf[1]]);
    let _ = bytes::Buf::get_i16(&mut buf);
    let Ok(a) = ConsumerProtocolAssignment::decode(&mut buf, version.clamp(0, 3)) else {
        return Vec::new();
    };
    let mut partitions: Vec<i32> = a
        .assigned_partitions
        .iter()
        .filter(|t| t.topic.as_str() == topic)
        .flat_map(|t| t.partitions.iter().copied())
        .collect();
    partitions.sort_unstable();
    partitions
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_notes_count_generations_and_what_ended_them() {
        let log = GroupLog::default();
        // Workers 1 and 2 join generation 1; worker 1 leaves; worker 2 is asked to rejoin and
        // joins generation 2; worker 1 comes back, its old commit fenced, and joins generation 3.
        log.add(10, 1, Happened::Joined { generation: 1 });
        log.add(11, 2, Happened::Joined { generation: 1 });
        log.add(20, 1, Happened::Left);
        log.add(21, 2, Happened::AskedToRejoin);
        log.add(24, 2, Happened::Joined { generation: 2 });
        log.add(
            25,
            1,
            Happened::CommitFenced {
                error: code::UNKNOWN_MEMBER_ID,
            },
        );
        log.add(30, 1, Happened::Joined { generation: 3 });
        // Generations {1, 2, 3}: 3 joined, 2 rebalances after the first.
        assert_eq!(
            log.notes(),
            vec![
                "consumer group: 3 generation(s) joined (2 rebalance(s) after the first), 1 \
                  answer(s) REBALANCE_IN_PROGRESS, 1 LeaveGroup, 1 commit(s) fenced"
                    .to_string()
            ]
        );
        assert!(GroupLog::default().notes().is_empty());
    }

    #[test]
    fn only_a_lost_membership_fences_a_commit() {
        assert!(code::fences(code::UNKNOWN_MEMBER_ID));
        assert!(code::fences(code::ILLEGAL_GENERATION));
        // Rebalance in progress: the commit may be retried after the rejoin, not fenced yet.
        assert!(!code::fences(code::REBALANCE_IN_PROGRESS));
        assert!(!code::fences(0));
    }
}
