//! A consumer group's rebalances over time (Kafka): each one's instant, generation, members,
//! partitions moved and why, with the records processed twice during its generation.
//!
//! **Processed twice during a generation**: the effects beyond their key's first that happened
//! from the rebalance that started the generation up to the next one (an effect at the instant
//! of a rebalance is the new generation's). A rebalance after `max.poll.interval.ms` hands the
//! partitions over from the last committed offset: the records since that commit are done again
//! by the new owner, and by the removed member that goes on with its batch, in the generation
//! that follows. Over a run the rows add up to the duplicate effects after the first rebalance:
//! on Kafka, every duplicate (a consumer cannot read before its group's first rebalance).
//!
//! The same code folds a full record ([`log`]) and a streamed run ([`RebalanceLog::event`] and
//! [`RebalanceLog::effect`], in the stream's order: an instant's events before its effects).

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use super::place::index_of;
use super::seconds;
use crate::record::{EventKind, Nanos, RebalanceWhy, RunRecord};

/// One rebalance, as summary.json's `rebalance_log` lists it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Rebalance {
    /// When the group coordinator completed it, seconds from the start of the run.
    pub at_s: f64,
    pub generation: u32,
    pub members: u32,
    /// Partitions that changed owner.
    pub moved: u32,
    /// `join`, `max_poll_interval` or `session_timeout`.
    pub why: RebalanceWhy,
    /// Effects beyond their key's first from this rebalance up to the next.
    pub processed_twice: u64,
}

/// The rebalances so far, and the instants they happened at (for attributing effects).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RebalanceLog {
    rows: Vec<Rebalance>,
    at: Vec<Nanos>,
}

impl RebalanceLog {
    /// One event of the run: a completed rebalance starts a row.
    #[inline]
    pub fn event(&mut self, at: Nanos, kind: &EventKind) {
        if let EventKind::Rebalanced {
            generation,
            members,
            moved,
            why,
        } = *kind
        {
            self.rows.push(Rebalance {
                at_s: seconds(at),
                generation,
                members,
                moved,
                why,
                processed_twice: 0,
            });
            self.at.push(at);
        }
    }

    /// An effect at `at` whose key had `before` effects already: a second (or later) one
    /// counts in the generation it happened in.
    #[inline]
    pub fn effect(&mut self, at: Nanos, before: u32) {
        if before == 0 {
            return;
        }
        let i = self.at.partition_point(|&t| t <= at);
        if let Some(row) = i.checked_sub(1).and_then(|i| self.rows.get_mut(i)) {
            row.processed_twice += 1;
        }
    }

    pub fn into_rows(self) -> Vec<Rebalance> {
        self.rows
    }
}

/// The rebalances of a full record, each with the records processed twice in its generation. A
/// key published more than once (a retrying producer) counts its effects once, by its first
/// message.
pub fn log(record: &RunRecord) -> Vec<Rebalance> {
    let mut log = RebalanceLog::default();
    for e in &record.events {
        log.event(e.at, &e.kind);
    }
    if log.rows.is_empty() {
        return Vec::new();
    }
    let n = record.messages.len();
    let first = super::copies::first_of_key(record);
    let mut seen: HashMap<usize, u32> = HashMap::new();
    let mut effects: Vec<(Nanos, usize)> = record
        .ledger
        .effects
        .iter()
        .filter_map(|e| {
            let i = e.seq.and_then(|q| index_of(q, n))?;
            Some((e.at, first.as_ref().map_or(i, |f| f[i])))
        })
        .collect();
    effects.sort_by_key(|&(at, _)| at);
    for (at, key) in effects {
        let before = seen.entry(key).or_insert(0);
        log.effect(at, *before);
        *before += 1;
    }
    log.into_rows()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::testkit::{s, Rec};

    fn rebalanced(generation: u32, why: RebalanceWhy) -> EventKind {
        EventKind::Rebalanced {
            generation,
            members: 1,
            moved: 1,
            why,
        }
    }

    #[test]
    fn each_second_effect_counts_in_the_generation_it_happened_in() {
        // Rebalances at 3 s (a join) and 443 s (a removed member). Message 1's effects at 38 s
        // and 443 s: its second is at the rebalance's instant, so generation 2's. Message 2's
        // at 73 s and 478 s: generation 2's. Message 3's single effect at 100 s counts nowhere,
        // and neither does an effect of a key no message has. So 0 and 2.
        let mut r = Rec::new(300.0, 2);
        let (m1, m2, m3) = (r.publish(0.0), r.publish(1.0), r.publish(2.0));
        r.ev(3.0, rebalanced(1, RebalanceWhy::Join))
            .ev(443.0, rebalanced(2, RebalanceWhy::MaxPollInterval))
            .effect(38.0, Some(m1), 1, 1)
            .effect(73.0, Some(m2), 1, 1)
            .effect(100.0, Some(m3), 1, 1)
            .effect(443.0, Some(m1), 2, 2)
            .effect(478.0, Some(m2), 2, 2)
            .effect(500.0, None, 2, 1);
        let rows = log(&r.finish(600.0));
        assert_eq!(rows.len(), 2);
        assert_eq!((rows[0].at_s, rows[0].generation), (3.0, 1));
        assert_eq!(rows[1].why, RebalanceWhy::MaxPollInterval);
        assert_eq!(
            rows.iter().map(|r| r.processed_twice).collect::<Vec<_>>(),
            [0, 2]
        );
        // Streamed in the same order (an instant's events before its effects): the same rows.
        let mut streamed = RebalanceLog::default();
        streamed.event(s(3.0), &rebalanced(1, RebalanceWhy::Join));
        streamed.effect(s(38.0), 0);
        streamed.effect(s(73.0), 0);
        streamed.event(s(443.0), &rebalanced(2, RebalanceWhy::MaxPollInterval));
        streamed.effect(s(443.0), 1);
        streamed.effect(s(478.0), 1);
        assert_eq!(streamed.into_rows(), rows);
    }

    #[test]
    fn a_run_without_rebalances_has_no_log() {
        // Duplicates but no rebalance (another kind): nothing to attribute them to.
        let mut r = Rec::new(30.0, 1);
        let m = r.publish(0.0);
        r.effect(1.0, Some(m), 1, 1).effect(31.0, Some(m), 1, 2);
        assert!(log(&r.finish(60.0)).is_empty());
        let mut streamed = RebalanceLog::default();
        streamed.effect(s(31.0), 1);
        assert!(streamed.into_rows().is_empty());
    }
}
