//! Where a run puts its history as it makes it: a [`Sink`]. The whole record keeps every
//! message, event, call and effect (`FullRecord` in tests); a stream folds them instant by
//! instant and keeps only what is in flight (`runner::Recorder`, `metrics::stream`). The record
//! itself holds events only: what is computed from them lives beside it, in the sink.

use super::{EffectRecord, Event, Nanos, RunRecord, Seq, StartedCall};

/// What a run tells its sink before it starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RunStart {
    /// Messages the run plans to publish.
    pub planned: u64,
    /// Whether the run can hand its history over instant by instant: a sim run whose producer's
    /// sends are not modelled (their copies and groups are read from the whole record).
    pub foldable: bool,
}

/// What a folding run recorded beside its events and has not handed over, in the order it is
/// handed over: the effect ledger's lists, and the broker's changes of [`Batched`] records; the
/// lists are the run's own, for the sink to read and to take.
pub struct Recorded<'a> {
    pub started: &'a mut Vec<StartedCall>,
    pub effects: &'a mut Vec<EffectRecord>,
    pub closed: &'a mut Vec<Option<Seq>>,
    pub batched: &'a mut Vec<Batched>,
}

/// A change in how many fetched batches hold a record already settled (Kafka: a consumer works
/// through the batch its last poll returned even after a commit passed some of its records, and
/// hands them out again). While a batch holds it, a settled record can still be delivered, so a
/// stream keeps it open. Not an event: the record does not hold it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Batched {
    pub seq: Seq,
    /// `n` > 0: settled (committed) while `n` batches held it; -1: one of them handed it out
    /// or was dropped.
    pub change: i32,
}

/// Why a sink could not fold a run exactly; the run is made again, and the sink then keeps its
/// whole record (the seed makes the same run).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GaveUp(pub String);

impl std::fmt::Display for GaveUp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// What a run hands its history to.
pub trait Sink {
    /// The run starts: whether the sink folds its history as it goes (only if
    /// [`RunStart::foldable`]); `false`: the run keeps the whole record and hands it over at
    /// [`Sink::finish`].
    fn start(&mut self, run: RunStart) -> bool;

    /// Instant `now` is over (a folding sink only): its events are the last of `events`, its
    /// calls and effects the last of `recorded`'s lists. The sink takes what it folds out of
    /// them (swapping lists, not copying), when it likes.
    fn instant(&mut self, now: Nanos, events: &mut Vec<Event>, recorded: Option<Recorded<'_>>) {
        let _ = (now, events, recorded);
    }

    /// The last instant `now` is over (a folding sink only): as [`Sink::instant`], and the sink
    /// takes everything left.
    fn last_instant(
        &mut self,
        now: Nanos,
        events: &mut Vec<Event>,
        recorded: Option<Recorded<'_>>,
    ) {
        let _ = (now, events, recorded);
    }

    /// The run is over. `record` is what it kept: its whole history, or (a folding sink) only
    /// its description; `key` names message `seq`. `Err`: the folds could not be exact; the
    /// run is made again and [`Sink::start`] then answers `false`.
    fn finish(&mut self, record: RunRecord, key: &dyn Fn(Seq) -> String) -> Result<(), GaveUp>;
}

/// The whole record: every message, event, call and effect, handed over when the run ends.
#[cfg(test)]
#[derive(Debug, Default)]
pub struct FullRecord {
    record: Option<RunRecord>,
}

#[cfg(test)]
impl FullRecord {
    /// The record of the run it was handed to; `None` before the run ended.
    pub fn into_record(self) -> Option<RunRecord> {
        self.record
    }
}

#[cfg(test)]
impl Sink for FullRecord {
    fn start(&mut self, _: RunStart) -> bool {
        false
    }

    fn finish(&mut self, record: RunRecord, _: &dyn Fn(Seq) -> String) -> Result<(), GaveUp> {
        self.record = Some(record);
        Ok(())
    }
}
