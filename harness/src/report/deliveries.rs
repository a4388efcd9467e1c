//! deliveries.csv: the worker timeline of a small run, one row per delivery a worker handled,
//! from its `Delivered` to the end of its handler, with what became of it.
//!
//! Recorded only for runs of up to [`MAX_MESSAGES`] messages: beyond that one bar per delivery
//! no longer reads as a picture.

use std::collections::HashMap;
use std::io::{self, Write};

use serde::{Deserialize, Serialize};

use crate::metrics::handlers::for_each_span;
use crate::metrics::seconds;
use crate::profile::KindWords;
use crate::record::{AckOutcome, EventKind, HandlerEnd, Nanos, Seq, WorkerId};

/// Runs with at most this many messages get a worker timeline (and keep their full record,
/// which it is drawn from).
pub const MAX_MESSAGES: u64 = crate::metrics::stream::FULL_RECORD_UP_TO;

/// ... and at most this many deliveries (a few messages crash-looping for hours make more bars
/// than a chart can show).
pub const MAX_DELIVERIES: usize = 2000;

/// The file's name inside the report folder.
pub const FILE: &str = "deliveries.csv";

/// What became of one delivery, as the worker timeline colours it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// Its ack deleted the message: the work is done and acknowledged.
    Acked,
    /// Its ack came after the lease had ended (the receipt was stale).
    StaleAck,
    /// The target refused the message as poison and acked it unprocessed.
    Rejected,
    /// A chaos rule killed the worker during the handler.
    Killed,
    /// The target died by itself (e.g. on a poison message).
    Crashed,
    /// The handler ended without an ack: it handed the message back (changed its visibility)
    /// or left it to its lease.
    Deferred,
    /// The handler was still working when the run stopped.
    Running,
}

impl Outcome {
    /// Every outcome, in legend order.
    pub const ALL: [Outcome; 7] = [
        Outcome::Acked,
        Outcome::StaleAck,
        Outcome::Rejected,
        Outcome::Killed,
        Outcome::Crashed,
        Outcome::Deferred,
        Outcome::Running,
    ];

    /// The legend's words, in the kind's words `w` where they differ.
    pub fn label(self, w: &KindWords) -> String {
        match self {
            Outcome::Acked => format!("acked ({} {})", w.message.0, w.settled_short),
            Outcome::StaleAck => w.stale.legend.to_string(),
            Outcome::Rejected => "rejected as poison".into(),
            Outcome::Killed => "worker killed".into(),
            Outcome::Crashed => "worker crashed".into(),
            Outcome::Deferred => "deferred (no ack)".into(),
            Outcome::Running => "still running at the end".into(),
        }
    }
}

/// One delivery on the worker timeline. Times in seconds from the start of the run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Delivery {
    pub worker: WorkerId,
    /// The message's key.
    pub key: String,
    pub seq: Seq,
    /// The message's receive count at this delivery (1 = first).
    pub delivery: u32,
    pub start_s: f64,
    pub end_s: f64,
    pub outcome: Outcome,
}

/// Every handler span of the run with its outcome, by worker then start; `None` for a run of
/// more than [`MAX_MESSAGES`] messages or [`MAX_DELIVERIES`] deliveries, or a streamed run's
/// (whose record keeps no events).
pub fn deliveries<'a>(run: impl Into<crate::metrics::View<'a>>) -> Option<Vec<Delivery>> {
    let run = run.into();
    let record = run.record;
    if record.messages.len() as u64 > MAX_MESSAGES || run.folded.is_some() {
        return None;
    }
    let mut acks: HashMap<(WorkerId, Seq, u32), AckOutcome> = HashMap::new();
    let mut rejected: HashMap<(WorkerId, Seq), Vec<Nanos>> = HashMap::new();
    for e in &record.events {
        match e.kind {
            EventKind::Acked {
                seq,
                worker,
                delivery,
                outcome,
            } => {
                // A current ack wins over a stale one of the same delivery.
                let slot = acks.entry((worker, seq, delivery)).or_insert(outcome);
                if outcome == AckOutcome::Deleted {
                    *slot = outcome;
                }
            }
            EventKind::Rejected { seq, worker } => {
                rejected.entry((worker, seq)).or_default().push(e.at)
            }
            _ => {}
        }
    }
    let mut rows = Vec::new();
    for_each_span(record, |span| {
        let was_rejected = rejected
            .get(&(span.worker, span.seq))
            .is_some_and(|ts| ts.iter().any(|&t| span.start <= t && t <= span.end));
        let outcome = match (span.how, acks.get(&(span.worker, span.seq, span.delivery))) {
            (Some(HandlerEnd::Killed), _) => Outcome::Killed,
            (Some(HandlerEnd::Crashed), _) => Outcome::Crashed,
            _ if was_rejected => Outcome::Rejected,
            (_, Some(AckOutcome::Deleted)) => Outcome::Acked,
            (_, Some(_)) => Outcome::StaleAck,
            (None, None) => Outcome::Running,
            (Some(HandlerEnd::Finished), None) => Outcome::Deferred,
        };
        let key = record
            .messages
            .get((span.seq as usize).wrapping_sub(1))
            .map_or_else(|| format!("#{}", span.seq), |m| m.key.to_string());
        rows.push(Delivery {
            worker: span.worker,
            key,
            seq: span.seq,
            delivery: span.delivery,
            start_s: seconds(span.start),
            end_s: seconds(span.end),
            outcome,
        });
    });
    if rows.len() > MAX_DELIVERIES {
        return None;
    }
    // Stable: deliveries of one worker that start together stay in the order they ended.
    rows.sort_by(|a, b| {
        a.worker
            .cmp(&b.worker)
            .then(a.start_s.total_cmp(&b.start_s))
    });
    Some(rows)
}

/// Writes deliveries.csv (header `worker,key,seq,delivery,start_s,end_s,outcome`).
pub fn write_csv(rows: &[Delivery], w: &mut dyn Write) -> io::Result<()> {
    let mut csv = csv::Writer::from_writer(w);
    if rows.is_empty() {
        csv.write_record([
            "worker", "key", "seq", "delivery", "start_s", "end_s", "outcome",
        ])?;
    }
    for row in rows {
        csv.serialize(row)?;
    }
    csv.flush()
}

/// Reads deliveries.csv's text back.
pub fn read_csv(text: &str) -> Result<Vec<Delivery>, String> {
    csv::Reader::from_reader(text.as_bytes())
        .deserialize()
        .collect::<Result<Vec<Delivery>, _>>()
        .map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::testkit::{slow_handler, Rec};
    use crate::profile::StaleAck;

    #[test]
    fn the_slow_handler_acks_stale_three_times() {
        let rows = deliveries(&slow_handler(StaleAck::Reject)).unwrap_or_default();
        let got: Vec<_> = rows
            .iter()
            .map(|d| (d.worker, d.delivery, d.start_s, d.end_s, d.outcome))
            .collect();
        assert_eq!(got.len(), 3);
        assert!(got.iter().all(|r| r.4 == Outcome::StaleAck), "{got:?}");
        assert!(rows.iter().all(|d| d.key == "msg-1"));
    }

    #[test]
    fn every_outcome_is_told_apart() {
        let mut r = Rec::new(10.0, 2);
        let (m1, m2, m3, m4) = (
            r.publish(0.0),
            r.publish(0.0),
            r.publish(0.0),
            r.publish(0.0),
        );
        r.deliver(0.0, m1, 1, 1)
            .ack(1.0, m1, 1, 1, AckOutcome::Deleted)
            .end_handler(1.0, m1, 1, 1, HandlerEnd::Finished);
        r.deliver(0.0, m2, 2, 1)
            .kill(2.0, 2)
            .end_handler(2.0, m2, 2, 1, HandlerEnd::Killed);
        r.deliver(1.0, m3, 1, 1)
            .crash(3.0, 1)
            .end_handler(3.0, m3, 1, 1, HandlerEnd::Crashed);
        r.restart(4.0, 1)
            .deliver(4.0, m4, 1, 1)
            .reject(4.0, m4, 1)
            .ack(4.0, m4, 1, 1, AckOutcome::Deleted);
        r.end_handler(4.0, m4, 1, 1, HandlerEnd::Finished);
        r.deliver(4.0, m3, 1, 2)
            .end_handler(5.0, m3, 1, 2, HandlerEnd::Finished);
        r.expire(10.0, m2, 1).deliver(10.0, m2, 2, 2);
        let rec = r.finish(12.0);
        let rows = deliveries(&rec).unwrap_or_default();
        let got: Vec<_> = rows
            .iter()
            .map(|d| (d.worker, d.key.as_str(), d.delivery, d.outcome))
            .collect();
        assert_eq!(
            got,
            vec![
                (1, "msg-1", 1, Outcome::Acked),
                (1, "msg-3", 1, Outcome::Crashed),
                (1, "msg-4", 1, Outcome::Rejected),
                (1, "msg-3", 2, Outcome::Deferred),
                (2, "msg-2", 1, Outcome::Killed),
                (2, "msg-2", 2, Outcome::Running),
            ]
        );
        assert_eq!(rows[5].end_s, 12.0);
    }

    #[test]
    fn a_large_run_has_no_timeline() {
        let mut r = Rec::new(10.0, 1);
        for _ in 0..=MAX_MESSAGES {
            r.publish(0.0);
        }
        assert!(deliveries(&r.finish(1.0)).is_none());
        let mut r = Rec::new(10.0, 1);
        let m = r.publish(0.0);
        for i in 0..=MAX_DELIVERIES {
            let t = i as f64;
            r.deliver(t, m, 1, i as u32 + 1).end_handler(
                t,
                m,
                1,
                i as u32 + 1,
                HandlerEnd::Crashed,
            );
        }
        assert!(deliveries(&r.finish(1e4)).is_none());
        assert_eq!(
            deliveries(&crate::record::RunRecord::default()),
            Some(vec![])
        );
    }

    #[test]
    fn the_csv_reads_back_and_quotes_keys() {
        let rows = vec![Delivery {
            worker: 1,
            key: "order,\"7\"".into(),
            seq: 1,
            delivery: 2,
            start_s: 0.5,
            end_s: 34.000001,
            outcome: Outcome::StaleAck,
        }];
        let mut out = Vec::new();
        write_csv(&rows, &mut out).unwrap_or_else(|e| panic!("{e}"));
        let text = String::from_utf8_lossy(&out);
        assert_eq!(
            text,
            "worker,key,seq,delivery,start_s,end_s,outcome\n1,\"order,\"\"7\"\"\",1,2,0.5,34.000001,stale_ack\n"
        );
        assert_eq!(read_csv(&text), Ok(rows));
        let mut empty = Vec::new();
        write_csv(&[], &mut empty).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(read_csv(&String::from_utf8_lossy(&empty)), Ok(vec![]));
    }
}
