//! Streaming accounting: the same metrics as the batch analysis of a whole [`RunRecord`], folded
//! from the history as a sim run makes it, so a run's memory is what is in flight plus what the
//! reports need, not every event, call and effect it ever had.
//!
//! The run hands every item to [`StreamedMetrics`] in time order, each instant's events first, then the
//! calls it started and closed, then its effects (the order the batch analysis reads a record in
//! wherever order matters). Per message, [`table`] keeps what the accounting, the latencies, the
//! redrive account, the retries count, the time series, the leases and the anomaly checker
//! need, in one record an event finds by one lookup, only while something can still happen to
//! it: a message is **folded** (counted into the totals and let go) once it is settled
//! (deleted, or dead-lettered with no redrive still to come), no handler span of it is open, no
//! provider call about it can still have an effect, and no fetched batch holds it (Kafka: the
//! broker says so, [`StreamedMetrics::batched`]). Handler spans, leases, anomalies, kills
//! and crashes fold as the batch analysis does, by the same code ([`super::handlers::Spans`],
//! [`super::leases::Leases`], [`super::anomalies::Checker`]; the last two are handed the
//! message's part of its record instead of finding it in a map of their own).
//!
//! Exactness: every count equals the batch analysis of the same run's full record (checked by
//! proptest in `runner/sim/proptests_stream.rs` and byte for byte on the shipped profiles). Two things would
//! break it, and both are detected rather than let through ([`GaveUp`]): an item about a
//! message already folded (a model that delivers a deleted message it did not say a batch
//! holds), and a p99 of hold ratios
//! that lies among the ratios let go ([`super::leases::HoldRatios::tail`]). The run is then
//! made again with the full record, which the seed makes identical.

mod series;
mod table;

use super::accounting::{self, Accounting};
use super::anomalies::{Anomaly, Checker};
use super::chaos;
use super::crashes::{self, Crash};
use super::handlers::{SpanStep, Spans};
use super::latency::Latencies;
use super::leases::{HoldRatios, LeaseAnalysis, Leases};
use super::place::{destination, moves, Place};
use super::rebalances::{Rebalance, RebalanceLog};
use super::redrive::{self, RedriveAccount};
use super::Sample;
use crate::record::{Batched, EffectRecord, Event, EventKind, Nanos, Seq, StartedCall};

pub use series::SampleGrid;
use table::{Lookup, Msg, Table};

/// Runs of at most this many planned messages keep their full record by default
/// (`--record auto`): small enough to keep, and the worker timeline is drawn from it.
pub const FULL_RECORD_UP_TO: u64 = 50;

/// How a run keeps its history (`ackbench run --record`).
pub use crate::profile::Record;

/// Whether a sim run of `planned` messages streams its accounting under `record`. A run that
/// `needs_full` its record keeps it: one whose producer's sends are modelled (`workload.producer`,
/// `broker.fifo`: its keys' copies and message groups are read from it), or with a `deploy`
/// (what each rollout cost is read from its messages).
pub fn streams(record: Record, planned: u64, needs_full: bool) -> bool {
    !needs_full
        && match record {
            Record::Full => false,
            Record::Stream => true,
            Record::Auto => planned > FULL_RECORD_UP_TO,
        }
}

/// Why a streamed run could not be accounted exactly; the run is made again with its full
/// record.
pub use crate::record::GaveUp;

/// What a streamed run folded: everything the batch analysis computes from a full record,
/// beside the record's own description of the run.
#[derive(Debug, Clone)]
pub struct Folded {
    pub counts: Accounting,
    pub latencies: Latencies,
    pub leases: LeaseAnalysis,
    pub redrive: RedriveAccount,
    /// Kills per chaos rule (by index).
    pub chaos_fired: Vec<u64>,
    pub crashes: Vec<Crash>,
    pub anomalies: Vec<Anomaly>,
    pub series: SampleGrid,
    /// A consumer group's rebalances (Kafka), each with the records processed twice in its
    /// generation.
    pub rebalances: Vec<Rebalance>,
}

/// What a stream needs to know of the run before it starts.
#[derive(Debug, Clone, Copy)]
pub struct StreamSetup {
    /// A first effect later than this after its publish is late (`budgets.late_after`).
    pub late_after: Nanos,
    /// The time series' interval (`run.sample_every`); `None`: a round interval chosen from the
    /// run's length when it ends.
    pub sample_every: Option<Nanos>,
    /// When an operator's redrive takes the DLQ back (`redrive.at`), if the run has one: until
    /// then a dead-lettered message is not settled for good.
    pub redrive_at: Option<Nanos>,
    /// Chaos rules of the run.
    pub chaos_rules: usize,
    /// Handlers the run is expected to have at most (its planned messages times their delivery
    /// limit): the hold ratios kept for an exact p99 ([`HoldRatios::tail`]).
    pub expected_handlers: u64,
    /// The broker settles by committed offsets (Kafka): see [`Checker::new`].
    pub offsets: bool,
}

/// The metrics of one run, folded as it goes (the streaming accumulator).
pub struct StreamedMetrics {
    setup: StreamSetup,
    table: Table,
    counts: Accounting,
    latencies: Latencies,
    spans: Spans,
    leases: Leases,
    /// The broker settles by committed offsets (Kafka): no ack tells a message failed.
    offsets: bool,
    checker: Checker,
    redrive: RedriveAccount,
    chaos_fired: Vec<u64>,
    crashes: Vec<Crash>,
    rebalances: RebalanceLog,
    series: series::Series,
    /// Effects of every key, published or not.
    all_effects: u64,
    /// The redrive has been made (its instant is over): dead-lettered messages settle.
    redrive_done: bool,
    /// Messages the current instant touched, to settle when it ends.
    dirty: Vec<Seq>,
    gave_up: Option<GaveUp>,
}

impl StreamedMetrics {
    pub fn new(setup: StreamSetup) -> StreamedMetrics {
        StreamedMetrics {
            table: Table::default(),
            counts: Accounting {
                late_after: setup.late_after,
                ..Accounting::default()
            },
            latencies: Latencies::default(),
            spans: Spans::default(),
            leases: Leases::new(HoldRatios::tail(setup.expected_handlers)),
            checker: Checker::new(setup.offsets),
            offsets: setup.offsets,
            redrive: RedriveAccount::default(),
            chaos_fired: vec![0; setup.chaos_rules],
            crashes: Vec::new(),
            rebalances: RebalanceLog::default(),
            series: series::Series::new(setup.sample_every),
            all_effects: 0,
            redrive_done: setup.redrive_at.is_none(),
            dirty: Vec::new(),
            gave_up: None,
            setup,
        }
    }

    /// Time has come to `now`: every item before it has been handed over. Samples the series at
    /// its instants before `now`, and settles the DLQ once the redrive's instant is over.
    #[inline]
    pub fn advance(&mut self, now: Nanos) {
        self.series.advance(now, &self.table);
        if !self.redrive_done && self.setup.redrive_at.is_some_and(|r| now > r) {
            self.redrive_done = true;
            self.dirty.extend(self.table.open_seqs());
            self.end_instant();
        }
    }

    /// One broker or worker event. The run-wide folds read it first; then, for an event about
    /// a message, everything kept of that message is found by one lookup and updated in place.
    pub fn event(&mut self, e: &Event) {
        let (at, kind) = (e.at, &e.kind);
        self.counts.count_event(at, kind);
        chaos::count_kill(&mut self.chaos_fired, kind);
        self.crashes.extend(crashes::crash(at, kind));
        self.rebalances.event(at, kind);
        self.series.count_event(kind);
        if let EventKind::Published { seq } = *kind {
            let (handlers, seen) = (self.leases.take(seq), self.checker.take(seq));
            self.table.publish(seq, at, handlers, seen);
        }
        let (ended, step) = self.spans.step(e);
        if let Some(s) = &ended {
            self.latencies.span(s);
            self.counts.worker_busy += s.duration();
        }
        if let EventKind::Redriven { seq } = *kind {
            self.redrive.redriven += u64::from(self.table.is_published(seq));
        }
        let Some(seq) = kind.seq() else { return };
        let opened = matches!(step, Some(SpanStep::Opened(_)));
        let m = match self.table.lookup(seq) {
            Lookup::Open(m) => m,
            // A seq that names no message (yet): the checker and the leases keep what they
            // know of it themselves, and hand it over if it is published.
            Lookup::Unpublished => {
                self.checker.event(at, kind);
                self.leases.event(at, kind);
                return;
            }
            // A folded message is deleted or dead-lettered for good: no event but a redrive
            // moves it, and the spans, leases and checker hold nothing of it. A delivery, a
            // handler's end, an ack or a redrive of it would change counts already made.
            Lookup::Folded => {
                let what = if opened {
                    "a delivery"
                } else if ended.is_some() {
                    "a handler's end"
                } else if accounting::event_seq(kind).is_some() {
                    "an ack or a refusal"
                } else if matches!(kind, EventKind::Redriven { .. }) {
                    "a redrive"
                } else {
                    return;
                };
                self.gave_up.get_or_insert_with(|| {
                    GaveUp(format!(
                        "{what} about message {seq} came after it was settled and counted"
                    ))
                });
                return;
            }
        };
        self.checker.event_on(&mut m.seen, seq, at, kind);
        self.leases.event_on(&mut m.handlers, at, kind);
        m.spans = m.spans + u32::from(opened) - u32::from(ended.is_some());
        match *kind {
            EventKind::Acked { .. } | EventKind::Rejected { .. }
                if accounting::event_seq(kind).is_some() =>
            {
                m.account.event(at, kind);
            }
            EventKind::Redriven { .. } => {
                m.redrives += 1;
                m.effects_at_redrive.get_or_insert(m.account.effects);
            }
            _ => {}
        }
        if let Some((_, to)) = destination(kind) {
            let from = m.account.place;
            if moves(kind, from, to) {
                m.account.moved(at, from, to);
                self.series.moved(seq, m, from, to);
            }
        }
        if !std::mem::replace(&mut m.dirty, true) {
            self.dirty.push(seq);
        }
    }

    /// A provider call started; if it may still have an effect after this instant, it can
    /// until [`StreamedMetrics::call_closed`].
    pub fn call_started(&mut self, c: &StartedCall) {
        let Some(seq) = c.seq else { return };
        let retries = &mut self.counts.handler_retries;
        // As [`crate::metrics::accounting::per_message`]: offsets settle without an ack.
        let offsets = self.offsets;
        with_open(
            &mut self.table,
            &mut self.gave_up,
            seq,
            "a provider call",
            |m| {
                if c.delivery > 0 {
                    *retries += u64::from(!m.calls_seen.insert(m.redrives, c.delivery));
                }
                m.calls += u32::from(c.may_have_effect);
                if let Some(t) = c.fails_from.filter(|_| !offsets) {
                    m.account.failed_call(t);
                }
            },
        );
    }

    /// A call that could still have an effect no longer can (answered, abandoned, timed out).
    pub fn call_closed(&mut self, seq: Option<Seq>) {
        let Some(seq) = seq else { return };
        self.open(seq, "a call's end", |m| m.calls -= 1);
    }

    /// Fetched batches holding a settled record changed (Kafka): while one holds it, it may be
    /// handed out again, so it is not folded.
    pub fn batched(&mut self, b: Batched) {
        match u32::try_from(b.change) {
            Ok(n) => with_open(
                &mut self.table,
                &mut self.gave_up,
                b.seq,
                "a batched record",
                |m| m.batched += n,
            ),
            Err(_) => self.open(b.seq, "a record leaving its batch", |m| m.batched -= 1),
        }
    }

    /// One effect.
    pub fn effect(&mut self, e: &EffectRecord) {
        self.all_effects += 1;
        let Some(seq) = e.seq else { return };
        let (series, rebalances) = (&mut self.series, &mut self.rebalances);
        with_open(&mut self.table, &mut self.gave_up, seq, "an effect", |m| {
            series.effect(m);
            rebalances.effect(e.at, m.account.effects);
            m.account.effect(e.at);
        });
    }

    /// The instant's items are all handed over: folds every message they touched that nothing
    /// more can happen to.
    pub fn end_instant(&mut self) {
        let mut dirty = std::mem::take(&mut self.dirty);
        for seq in dirty.drain(..) {
            self.settle(seq);
        }
        self.dirty = dirty;
    }

    /// Applies `f` to open message `seq` and marks it for [`StreamedMetrics::end_instant`] (once per
    /// instant).
    fn open(&mut self, seq: Seq, what: &str, f: impl FnOnce(&mut Msg)) {
        let mut first = false;
        with_open(&mut self.table, &mut self.gave_up, seq, what, |m| {
            f(m);
            first = !std::mem::replace(&mut m.dirty, true);
        });
        if first {
            self.dirty.push(seq);
        }
    }

    /// Folds message `seq` if nothing more can happen to it.
    fn settle(&mut self, seq: Seq) {
        let redrive_done = self.redrive_done;
        let (counts, latencies, redrive) =
            (&mut self.counts, &mut self.latencies, &mut self.redrive);
        self.table.fold_if(
            seq,
            |m| {
                m.dirty = false;
                let settled = match m.account.place {
                    Place::Deleted => true,
                    Place::DeadLettered => redrive_done,
                    _ => false,
                };
                settled && m.spans == 0 && m.calls == 0 && m.batched == 0
            },
            |m| fold(counts, latencies, redrive, m, 0),
        );
    }

    /// Ends the stream at `end`: the messages still open are counted as they stand, the spans
    /// still open end with the run. `key` names a message in the anomalies.
    pub fn finish(mut self, end: Nanos, key: impl Fn(Seq) -> String) -> Result<Folded, GaveUp> {
        self.end_instant();
        if let Some(why) = self.gave_up.take() {
            return Err(why);
        }
        let series = std::mem::replace(&mut self.series, series::Series::new(None));
        let series = series.finish(end, &self.table);
        let (counts, latencies, redrive) =
            (&mut self.counts, &mut self.latencies, &mut self.redrive);
        for m in self.table.drain() {
            fold(counts, latencies, redrive, &m, end);
        }
        let busy = &mut self.counts.worker_busy;
        self.spans.finish(end, |s| *busy += s.duration());
        self.counts.close(self.all_effects);
        let leases = self
            .leases
            .try_finish()
            .ok_or_else(|| GaveUp("the p99 of hold over lease lies among ratios let go".into()))?;
        Ok(Folded {
            counts: self.counts,
            latencies: self.latencies,
            leases,
            redrive: self.redrive,
            chaos_fired: self.chaos_fired,
            crashes: self.crashes,
            anomalies: self.checker.finish(key),
            series,
            rebalances: self.rebalances.into_rows(),
        })
    }
}

/// Counts one message into the totals as it stands at `end` (a settled message is out of the
/// main queue, so `end` is not read for it).
fn fold(
    counts: &mut Accounting,
    latencies: &mut Latencies,
    redrives: &mut RedriveAccount,
    m: &Msg,
    end: Nanos,
) {
    counts.add_message(&m.account, m.published_at, end);
    latencies.message(&m.account, m.published_at);
    if m.redrives > 0 {
        let before = m.effects_at_redrive.unwrap_or(0);
        let after = m.account.effects - before;
        redrives.duplicate_effects += redrive::duplicates(before.into(), after.into());
    }
}

/// Applies `f` to open message `seq`; an item about a folded message gives the stream up.
fn with_open(
    table: &mut Table,
    gave_up: &mut Option<GaveUp>,
    seq: Seq,
    what: &str,
    f: impl FnOnce(&mut Msg),
) {
    match table.lookup(seq) {
        Lookup::Open(m) => f(m),
        Lookup::Folded => {
            gave_up.get_or_insert_with(|| {
                GaveUp(format!(
                    "{what} about message {seq} came after it was settled and counted"
                ))
            });
        }
        Lookup::Unpublished => {}
    }
}

impl Folded {
    /// The time series every `every` (as [`super::timeseries`] samples a full record).
    pub fn samples(&self, every: Nanos) -> Vec<Sample> {
        self.series.samples(every)
    }
}
