//! Recovery time: how long a message held by a dead worker waits before it is delivered again.
//!
//! Measured when the run has deaths (chaos kills, or a target that crashed): the largest, over
//! the handlers that died, of the time from the death to the next delivery of the message they
//! held. A run without deaths still has a worst case: a worker that dies right after it
//! received leaves its message hidden for the whole lease, so the recovery time is the
//! visibility timeout itself.

use std::collections::HashMap;

use serde::Serialize;

use crate::metrics::seconds;
use crate::record::{EventKind, HandlerEnd, Nanos, RunRecord, Seq};

/// Where a recovery time comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum RecoverySource {
    /// Measured: death to next delivery, the worst over the run's deaths.
    Kills,
    /// The run had no death that was followed by a delivery: the worst case is the lease.
    Lease,
    /// No measured death, on a broker that requeues a dead consumer's deliveries at once
    /// (RabbitMQ): the worst case is no wait at all.
    Requeue,
    /// No measured death, on a broker whose dead consumer's messages move when its session
    /// times out (Kafka's `session.timeout.ms`, not `max.poll.interval.ms`): the worst case is
    /// the session timeout.
    Session,
}

impl RecoverySource {
    pub fn as_str(self) -> &'static str {
        match self {
            RecoverySource::Kills => "kills",
            RecoverySource::Lease => "lease",
            RecoverySource::Requeue => "requeue",
            RecoverySource::Session => "session",
        }
    }
}

/// A run's recovery time.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Recovery {
    /// Seconds (microsecond resolution).
    pub time_s: f64,
    pub source: RecoverySource,
    /// Handlers that died holding a message (killed or crashed).
    pub deaths: u64,
    /// Of those, the messages never delivered again (dead-lettered, or the run ended first).
    pub unrecovered: u64,
}

/// The recovery time of a run.
pub fn recovery(record: &RunRecord) -> Recovery {
    let mut deaths: Vec<(usize, Seq, Nanos)> = Vec::new();
    let mut deliveries: HashMap<Seq, Vec<(usize, Nanos)>> = HashMap::new();
    for (i, e) in record.events.iter().enumerate() {
        match e.kind {
            EventKind::HandlerEnded {
                seq,
                how: HandlerEnd::Killed | HandlerEnd::Crashed,
                ..
            } => deaths.push((i, seq, e.at)),
            EventKind::Delivered { seq, .. } => deliveries.entry(seq).or_default().push((i, e.at)),
            _ => {}
        }
    }
    let mut worst: Option<Nanos> = None;
    let mut unrecovered = 0;
    for &(i, seq, at) in &deaths {
        let next = deliveries
            .get(&seq)
            .and_then(|d| d.iter().find(|(j, _)| *j > i))
            .map(|&(_, t)| t.saturating_sub(at));
        match next {
            Some(wait) => worst = Some(worst.map_or(wait, |w| w.max(wait))),
            None => unrecovered += 1,
        }
    }
    let (time, source) = match worst {
        Some(w) => (w, RecoverySource::Kills),
        None => (record.lease, RecoverySource::Lease),
    };
    Recovery {
        time_s: seconds(time),
        source,
        deaths: deaths.len() as u64,
        unrecovered,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::Event;

    const S: u64 = 1_000_000_000;

    fn ev(at: u64, kind: EventKind) -> Event {
        Event { at: at * S, kind }
    }

    fn delivered(seq: Seq, delivery: u32) -> EventKind {
        EventKind::Delivered {
            seq,
            worker: 1,
            delivery,
            lease_end: 0,
        }
    }

    fn died(seq: Seq, how: HandlerEnd) -> EventKind {
        EventKind::HandlerEnded {
            seq,
            worker: 1,
            delivery: 1,
            how,
        }
    }

    #[test]
    fn without_deaths_the_worst_case_is_the_lease() {
        let r = RunRecord {
            lease: 30 * S,
            events: vec![ev(0, delivered(1, 1))],
            ..RunRecord::default()
        };
        let got = recovery(&r);
        assert_eq!(
            (got.time_s, got.source, got.deaths),
            (30.0, RecoverySource::Lease, 0)
        );
    }

    #[test]
    fn the_worst_wait_from_a_death_to_the_next_delivery() {
        // msg 1 killed at 1 s, delivered again at 30 s (29 s); msg 2 crashed at 5 s, delivered
        // again at 45 s (40 s); msg 3 killed at 50 s on its last delivery: never again.
        let r = RunRecord {
            lease: 30 * S,
            events: vec![
                ev(0, delivered(1, 1)),
                ev(1, died(1, HandlerEnd::Killed)),
                ev(2, delivered(2, 1)),
                ev(5, died(2, HandlerEnd::Crashed)),
                ev(30, delivered(1, 2)),
                ev(45, delivered(2, 2)),
                ev(46, delivered(3, 3)),
                ev(50, died(3, HandlerEnd::Killed)),
            ],
            ..RunRecord::default()
        };
        let got = recovery(&r);
        assert_eq!(
            got,
            Recovery {
                time_s: 40.0,
                source: RecoverySource::Kills,
                deaths: 3,
                unrecovered: 1
            }
        );
    }
}
