//! The group's rebalances as the run's events, from what the proxy saw on the wire
//! ([`super::group::GroupLog`]): one `Rebalanced` per generation whose assignment a member
//! received (SyncGroup), at the last of its members' assignments, with
//!
//! - `members`: the members assigned in it;
//! - `moved`: the partitions whose owner (member id) differs from the previous generation's
//!   (the first generation's: every partition it assigned);
//! - `why`: a member joined when no member of the previous generation is missing; otherwise a
//!   missing member that sent LeaveGroup since left on its own (librdkafka leaves the group when
//!   `max.poll.interval.ms` is exceeded), and one that did not was removed when its session
//!   timed out. A built-in target's killed consumer sends no LeaveGroup ([`super::killed`]); one
//!   stopped by a `deploy` closes its consumer and leaves: its rebalance reads as the poll
//!   interval's.

use std::collections::{BTreeMap, BTreeSet};

use super::group::Happened;
use crate::record::{Event, EventKind, Nanos, RebalanceWhy, WorkerId};

/// One generation as its members' assignments tell it.
#[derive(Default)]
struct Generation {
    at: Nanos,
    /// Member id -> (its worker, the partitions it owns).
    members: BTreeMap<String, (WorkerId, Vec<i32>)>,
}

/// The `Rebalanced` events of a group log (entries in time order).
pub fn rebalances(log: &[(Nanos, WorkerId, Happened)]) -> Vec<Event> {
    let mut generations: BTreeMap<i32, Generation> = BTreeMap::new();
    for (at, worker, h) in log {
        if let Happened::Assigned {
            generation,
            member,
            partitions,
        } = h
        {
            let g = generations.entry(*generation).or_default();
            g.at = g.at.max(*at);
            g.members
                .insert(member.clone(), (*worker, partitions.clone()));
        }
    }
    let mut events = Vec::new();
    let mut owners: BTreeMap<i32, String> = BTreeMap::new();
    let mut before: Option<&Generation> = None;
    let mut since: Nanos = 0;
    for (number, g) in &generations {
        let now: BTreeMap<i32, String> = g
            .members
            .iter()
            .flat_map(|(m, (_, ps))| ps.iter().map(move |p| (*p, m.clone())))
            .collect();
        let partitions: BTreeSet<i32> = owners.keys().chain(now.keys()).copied().collect();
        let moved = partitions
            .iter()
            .filter(|p| owners.get(p) != now.get(p))
            .count() as u32;
        let why = why(log, before, g, since);
        events.push(Event {
            at: g.at,
            kind: EventKind::Rebalanced {
                generation: (*number).max(0) as u32,
                members: g.members.len() as u32,
                moved,
                why,
            },
        });
        owners = now;
        before = Some(g);
        since = g.at;
    }
    events
}

fn why(
    log: &[(Nanos, WorkerId, Happened)],
    before: Option<&Generation>,
    g: &Generation,
    since: Nanos,
) -> RebalanceWhy {
    let Some(before) = before else {
        return RebalanceWhy::Join;
    };
    let missing: Vec<WorkerId> = before
        .members
        .iter()
        .filter(|(m, _)| !g.members.contains_key(*m))
        .map(|(_, (w, _))| *w)
        .collect();
    if missing.is_empty() {
        return RebalanceWhy::Join;
    }
    let left = log.iter().any(|(at, w, h)| {
        *at >= since && *at <= g.at && missing.contains(w) && matches!(h, Happened::Left)
    });
    if left {
        RebalanceWhy::MaxPollInterval
    } else {
        RebalanceWhy::SessionTimeout
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn assigned(generation: i32, member: &str, partitions: &[i32]) -> Happened {
        Happened::Assigned {
            generation,
            member: member.to_string(),
            partitions: partitions.to_vec(),
        }
    }

    fn kinds(events: &[Event]) -> Vec<(Nanos, EventKind)> {
        events.iter().map(|e| (e.at, e.kind)).collect()
    }

    #[test]
    fn each_generation_is_a_rebalance_with_what_moved_and_why() {
        let log = vec![
            // Generation 1: a (worker 1) takes partitions 0 and 1, then b (worker 2) joins.
            (10, 1, assigned(1, "a", &[0, 1])),
            // Generation 2: a keeps 0, b takes 1: one moved, a member joined.
            (20, 1, assigned(2, "a", &[0])),
            (21, 2, assigned(2, "b", &[1])),
            // Worker 1 leaves (its poll interval exceeded); generation 3: b owns both.
            (30, 1, Happened::Left),
            (33, 2, assigned(3, "b", &[0, 1])),
            // Worker 1 rejoins as c: generation 4, c gets 0 back.
            (40, 2, assigned(4, "b", &[1])),
            (41, 1, assigned(4, "c", &[0])),
            // Worker 2 dies without leaving: generation 5, c owns both.
            (60, 1, assigned(5, "c", &[0, 1])),
        ];
        let rebalanced = |generation, members, moved, why| EventKind::Rebalanced {
            generation,
            members,
            moved,
            why,
        };
        assert_eq!(
            kinds(&rebalances(&log)),
            vec![
                // Both partitions went from nobody to a.
                (10, rebalanced(1, 1, 2, RebalanceWhy::Join)),
                // Partition 1: a -> b.
                (21, rebalanced(2, 2, 1, RebalanceWhy::Join)),
                // Partition 0: a -> b; a missing and it sent LeaveGroup at 30.
                (33, rebalanced(3, 1, 1, RebalanceWhy::MaxPollInterval)),
                // Partition 0: b -> c; nobody missing (b stayed).
                (41, rebalanced(4, 2, 1, RebalanceWhy::Join)),
                // Partition 1: b -> c; b missing, no LeaveGroup from worker 2.
                (60, rebalanced(5, 1, 1, RebalanceWhy::SessionTimeout)),
            ]
        );
    }

    #[test]
    fn no_assignment_no_rebalance() {
        assert!(rebalances(&[(5, 1, Happened::Joined { generation: 1 })]).is_empty());
    }
}
