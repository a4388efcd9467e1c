//! The sink a run's history goes to by default: folded as it goes when `run.record` says so
//! (`stream`, or `auto` above [`stream::FULL_RECORD_UP_TO`] messages), else kept whole.

use super::sim::accounting::Accounting;
use crate::metrics::stream::{self, StreamSetup, StreamedMetrics};
use crate::metrics::Recording;
use crate::profile::kinds::Settle;
use crate::profile::{Record, Scenario};
use crate::record::{nanos, Event, GaveUp, Nanos, Recorded, RunRecord, RunStart, Seq, Sink};

/// Keeps a run's history as `run.record` says: a stream of its accounting (on a thread of its
/// own, [`Accounting`]) or the whole record.
pub struct Recorder {
    record: Record,
    /// The stream's setup, but for the handlers it expects (known when the run starts).
    setup: StreamSetup,
    /// The delivery limit (`broker.max_deliveries`; 0: none).
    max_deliveries: u32,
    /// A stream of this run gave up: it is made again with its whole record.
    gave_up: bool,
    accounting: Option<Accounting>,
    /// What the accounting folded, once the run's last instant is over.
    stream: Option<StreamedMetrics>,
    recording: Option<Recording>,
}

impl Recorder {
    pub fn new(scenario: &Scenario) -> Recorder {
        Recorder {
            record: scenario.run.record,
            setup: StreamSetup {
                late_after: nanos(scenario.budgets.late_after),
                sample_every: scenario.run.sample_every.map(nanos),
                redrive_at: scenario.redrive.map(nanos),
                chaos_rules: scenario.chaos.len(),
                expected_handlers: 0,
                offsets: scenario.broker.kind.descriptor().can.settle == Settle::Offsets,
            },
            max_deliveries: scenario.broker.max_deliveries,
            gave_up: false,
            accounting: None,
            stream: None,
            recording: None,
        }
    }

    /// What the run left; `None` before it ended.
    pub fn into_recording(self) -> Option<Recording> {
        self.recording
    }
}

impl Sink for Recorder {
    fn start(&mut self, run: RunStart) -> bool {
        self.stream = None;
        if self.gave_up || !stream::streams(self.record, run.planned, !run.foldable) {
            return false;
        }
        let setup = StreamSetup {
            // Deliveries per message: the limit, or a few without one (more are exact too,
            // unless the p99 then lies among ratios let go: the run is made again in full).
            expected_handlers: run.planned.saturating_mul(match self.max_deliveries {
                0 => 4,
                limit => u64::from(limit),
            }),
            ..self.setup
        };
        self.accounting = Some(Accounting::start(StreamedMetrics::new(setup)));
        true
    }

    fn instant(&mut self, now: Nanos, events: &mut Vec<Event>, recorded: Option<Recorded<'_>>) {
        if let Some(a) = &mut self.accounting {
            a.instant(now, events, recorded);
        }
    }

    fn last_instant(
        &mut self,
        now: Nanos,
        events: &mut Vec<Event>,
        mut recorded: Option<Recorded<'_>>,
    ) {
        if let Some(mut a) = self.accounting.take() {
            let again = recorded.as_mut().map(|r| Recorded {
                started: &mut *r.started,
                effects: &mut *r.effects,
                closed: &mut *r.closed,
                batched: &mut *r.batched,
            });
            a.instant(now, events, again);
            self.stream = Some(a.finish(events, recorded));
        }
    }

    fn finish(&mut self, record: RunRecord, key: &dyn Fn(Seq) -> String) -> Result<(), GaveUp> {
        let folded = match self.stream.take() {
            None => None,
            Some(s) => match s.finish(record.end, key) {
                Ok(folded) => Some(Box::new(folded)),
                Err(why) => {
                    self.gave_up = true;
                    return Err(why);
                }
            },
        };
        self.recording = Some(Recording { record, folded });
        Ok(())
    }
}
