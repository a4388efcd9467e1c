//! A consumer group that formed after records were published and never read one of them
//! (Kafka): what a consumer that starts at the log's end does (`auto.offset.reset=latest`, the
//! Java client's and aiokafka's default) when its group has no committed offset. The run's
//! group is new, so nothing is committed, and every record published before the group's first
//! rebalance lies before where such a consumer starts: unread, unfinished.
//!
//! Found from the record alone: the first `Rebalanced` (the group formed) after the first
//! `Published`, and not one of the records published before it ever `Delivered`.

use serde::{Deserialize, Serialize};

use super::seconds;
use crate::record::{EventKind, RunRecord, Seq};

/// summary.json's `late_group`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LateGroup {
    /// When the group formed (its first rebalance), seconds from the start of the run.
    pub formed_s: f64,
    /// When the first record was published.
    pub first_publish_s: f64,
    /// Records published before the group formed, none of them ever fetched.
    pub unread: u64,
}

/// The late group of `record`, if its group formed after records it then never read.
pub fn late_group(record: &RunRecord) -> Option<LateGroup> {
    let formed = record
        .events
        .iter()
        .find(|e| matches!(e.kind, EventKind::Rebalanced { .. }))?
        .at;
    let mut first_publish = None;
    let mut before: Vec<Seq> = Vec::new();
    for e in &record.events {
        if let EventKind::Published { seq } = e.kind {
            first_publish.get_or_insert(e.at);
            if e.at < formed {
                before.push(seq);
            }
        }
    }
    if before.is_empty() {
        return None;
    }
    before.sort_unstable();
    let read = record.events.iter().any(|e| match e.kind {
        EventKind::Delivered { seq, .. } => before.binary_search(&seq).is_ok(),
        _ => false,
    });
    (!read).then(|| LateGroup {
        formed_s: seconds(formed),
        first_publish_s: seconds(first_publish.unwrap_or(0)),
        unread: before.len() as u64,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::{Event, RebalanceWhy};

    const S: u64 = 1_000_000_000;

    fn published(at: u64, seq: Seq) -> Event {
        Event {
            at,
            kind: EventKind::Published { seq },
        }
    }

    fn delivered(at: u64, seq: Seq) -> Event {
        Event {
            at,
            kind: EventKind::Delivered {
                seq,
                worker: 1,
                delivery: 1,
                lease_end: u64::MAX,
            },
        }
    }

    fn formed(at: u64) -> Event {
        Event {
            at,
            kind: EventKind::Rebalanced {
                generation: 1,
                members: 2,
                moved: 2,
                why: RebalanceWhy::Join,
            },
        }
    }

    fn record(events: Vec<Event>) -> RunRecord {
        RunRecord {
            events,
            ..RunRecord::default()
        }
    }

    #[test]
    fn a_group_formed_after_the_publishes_that_read_nothing_is_late() {
        // 20 records every 100 ms from 0 s (the last at 1.9 s); the group forms at 3.2 s and,
        // starting at the log's end, reads none: 20 unread.
        let mut events: Vec<Event> = (0..20)
            .map(|i| published(i * S / 10, i as Seq + 1))
            .collect();
        events.push(formed(3 * S + S / 5));
        assert_eq!(
            late_group(&record(events.clone())),
            Some(LateGroup {
                formed_s: 3.2,
                first_publish_s: 0.0,
                unread: 20
            })
        );
        // Records published after it formed and read do not change that: the 20 before it
        // stay unread.
        events.push(published(4 * S, 21));
        events.push(delivered(4 * S + 1, 21));
        assert_eq!(late_group(&record(events)).map(|l| l.unread), Some(20));
    }

    #[test]
    fn a_group_that_read_a_record_published_before_it_formed_is_not_late() {
        // Reading from the log's start: record 1, published at 0 s, fetched at 3.3 s.
        let events = vec![
            published(0, 1),
            published(S, 2),
            formed(3 * S),
            delivered(3 * S + S / 10, 1),
        ];
        assert_eq!(late_group(&record(events)), None);
    }

    #[test]
    fn no_group_or_a_group_formed_before_the_first_publish_is_not_late() {
        assert_eq!(late_group(&record(vec![published(0, 1)])), None);
        // Formed at 1 s, the first record at 2 s, never read: not this (nothing lay before
        // where the group started).
        assert_eq!(
            late_group(&record(vec![formed(S), published(2 * S, 1)])),
            None
        );
        assert_eq!(late_group(&record(Vec::new())), None);
    }
}
