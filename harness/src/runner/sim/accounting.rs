//! A streamed sim run's accounting on a thread of its own: the run's events and the ledger's
//! records pile up where the run records them, each instant's end is marked, and every few
//! thousand events the lists are handed to the thread whole (swapped for emptied ones, nothing
//! copied), which folds them into the run's [`StreamedMetrics`] while the run goes on.
//!
//! The stream is a pure function of the items it is handed, in their order: the thread hands it
//! what the run would hand it in line at the end of each instant (time has come to the
//! instant; its events; the calls it started; its effects; the calls it closed; the broker's
//! batched records; the instant's end), so what it folds is the same, byte for byte. Batches go over a bounded channel and
//! come back emptied for reuse, so the run holds a few batches in flight whatever its length,
//! and a run that records faster than its accounting folds waits for it rather than queueing
//! without bound. On a machine with one core, or when the thread cannot be started, the run
//! folds each batch itself as it hands it over.

use std::sync::mpsc::{self, Receiver, SyncSender};
use std::thread::{self, JoinHandle};

use crate::metrics::stream::StreamedMetrics;
use crate::provider::ledger::Recorded;
use crate::record::{Batched, EffectRecord, Event, Nanos, Seq, StartedCall};

/// Events a batch collects before it is handed to the thread: enough that a hand-over (a wake
/// of the thread) is rare, few enough that the batches in flight stay small.
const BATCH_EVENTS: usize = 4 * 1024;

/// Batches handed over and not yet folded before the run waits for its accounting.
const BATCHES_IN_FLIGHT: usize = 2;

/// Where one instant's items end in a [`Batch`]'s lists (each list's length after it).
#[derive(Debug, Clone, Copy)]
struct InstantEnd {
    now: Nanos,
    events: usize,
    started: usize,
    effects: usize,
    closed: usize,
    batched: usize,
}

/// Instants' items in recording order, each list in one piece.
#[derive(Debug, Default)]
struct Batch {
    instants: Vec<InstantEnd>,
    events: Vec<Event>,
    started: Vec<StartedCall>,
    effects: Vec<EffectRecord>,
    closed: Vec<Option<Seq>>,
    batched: Vec<Batched>,
}

impl Batch {
    fn clear(&mut self) {
        self.instants.clear();
        self.events.clear();
        self.started.clear();
        self.effects.clear();
        self.closed.clear();
        self.batched.clear();
    }

    /// Hands every instant of the batch to `stream`, in order.
    fn fold_into(&self, stream: &mut StreamedMetrics) {
        let (mut e, mut s, mut f, mut c, mut b) = (0, 0, 0, 0, 0);
        for end in &self.instants {
            stream.advance(end.now);
            for event in &self.events[e..end.events] {
                stream.event(event);
            }
            for call in &self.started[s..end.started] {
                stream.call_started(call);
            }
            for effect in &self.effects[f..end.effects] {
                stream.effect(effect);
            }
            for &seq in &self.closed[c..end.closed] {
                stream.call_closed(seq);
            }
            for &batched in &self.batched[b..end.batched] {
                stream.batched(batched);
            }
            stream.end_instant();
            (e, s, f, c, b) = (
                end.events,
                end.started,
                end.effects,
                end.closed,
                end.batched,
            );
        }
    }
}

/// The run's side of its accounting.
pub(crate) struct Accounting {
    /// Where each instant not handed over yet ends in the run's lists.
    instants: Vec<InstantEnd>,
    folder: Folder,
}

/// Who folds what the run hands over.
enum Folder {
    /// The accounting thread.
    Thread {
        full: Option<SyncSender<Batch>>,
        emptied: Receiver<Batch>,
        thread: JoinHandle<Option<Box<StreamedMetrics>>>,
    },
    /// The run itself, as it hands a batch over: on a machine with one core, or when no thread
    /// could be started (the same folds, in the same order).
    InLine {
        stream: Box<StreamedMetrics>,
        batch: Batch,
    },
}

impl Accounting {
    /// Starts the thread that folds into `stream`; folds in line if the machine has one core
    /// or the thread cannot be started.
    pub fn start(stream: StreamedMetrics) -> Accounting {
        let cores = thread::available_parallelism().map_or(1, |n| n.get());
        if cores < 2 {
            return Accounting::in_line(Box::new(stream));
        }
        Accounting::on_thread(Box::new(stream)).unwrap_or_else(Accounting::in_line)
    }

    /// Starts the thread that folds into `stream`; `Err` gives the stream back if it cannot be
    /// started.
    fn on_thread(stream: Box<StreamedMetrics>) -> Result<Accounting, Box<StreamedMetrics>> {
        let (full, to_fold) = mpsc::sync_channel::<Batch>(BATCHES_IN_FLIGHT);
        let (give_back, emptied) = mpsc::channel::<Batch>();
        // The stream goes to the thread once it runs, so it stays here if it cannot be started.
        let (hand, take) = mpsc::sync_channel::<Box<StreamedMetrics>>(1);
        let spawned = thread::Builder::new()
            .name("ackbench-accounting".into())
            .spawn(move || {
                let mut stream = take.recv().ok()?;
                for mut batch in to_fold {
                    batch.fold_into(&mut stream);
                    batch.clear();
                    // The run may have ended already; the batch is then simply dropped.
                    let _ = give_back.send(batch);
                }
                Some(stream)
            });
        let Ok(thread) = spawned else {
            return Err(stream);
        };
        hand.send(stream)
            .expect("the accounting thread takes its stream first");
        Ok(Accounting {
            instants: Vec::new(),
            folder: Folder::Thread {
                full: Some(full),
                emptied,
                thread,
            },
        })
    }

    /// Folds in line, as the run hands each batch over.
    pub fn in_line(stream: Box<StreamedMetrics>) -> Accounting {
        Accounting {
            instants: Vec::new(),
            folder: Folder::InLine {
                stream,
                batch: Batch::default(),
            },
        }
    }

    /// Instant `now` is over: its items are the last in `events` and in what the ledger
    /// `recorded` (which hold the run's items not handed over yet, in order).
    pub fn instant(&mut self, now: Nanos, events: &mut Vec<Event>, recorded: Option<Recorded<'_>>) {
        let lens = recorded.as_ref().map_or((0, 0, 0, 0), |r| {
            (
                r.started.len(),
                r.effects.len(),
                r.closed.len(),
                r.batched.len(),
            )
        });
        self.instants.push(InstantEnd {
            now,
            events: events.len(),
            started: lens.0,
            effects: lens.1,
            closed: lens.2,
            batched: lens.3,
        });
        if events.len() >= BATCH_EVENTS {
            self.hand_over(events, recorded);
        }
    }

    /// Hands the run's lists over to be folded, leaving emptied ones (or new ones) in their
    /// place.
    fn hand_over(&mut self, events: &mut Vec<Event>, recorded: Option<Recorded<'_>>) {
        let take = |batch: &mut Batch| {
            std::mem::swap(&mut batch.instants, &mut self.instants);
            std::mem::swap(&mut batch.events, events);
            if let Some(r) = recorded {
                std::mem::swap(&mut batch.started, r.started);
                std::mem::swap(&mut batch.effects, r.effects);
                std::mem::swap(&mut batch.closed, r.closed);
                std::mem::swap(&mut batch.batched, r.batched);
            }
        };
        match &mut self.folder {
            Folder::Thread { full, emptied, .. } => {
                let mut batch = emptied.try_recv().unwrap_or_default();
                take(&mut batch);
                // The thread is gone only if it panicked; `finish` reports that.
                if full.as_ref().is_some_and(|f| f.send(batch).is_err()) {
                    *full = None;
                }
            }
            Folder::InLine { stream, batch } => {
                take(batch);
                batch.fold_into(stream);
                batch.clear();
            }
        }
    }

    /// Hands over what is left (every instant ended), waits for everything to be folded and
    /// returns the stream. A panic of the thread is the run's.
    pub fn finish(
        mut self,
        events: &mut Vec<Event>,
        recorded: Option<Recorded<'_>>,
    ) -> StreamedMetrics {
        if !self.instants.is_empty() {
            self.hand_over(events, recorded);
        }
        match self.folder {
            Folder::InLine { stream, .. } => *stream,
            Folder::Thread { full, thread, .. } => {
                drop(full);
                match thread.join() {
                    Ok(stream) => *stream.expect("the accounting thread took its stream"),
                    Err(panic) => std::panic::resume_unwind(panic),
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::stream::StreamSetup;
    use crate::record::{AckOutcome, EffectSource, EventKind, HandlerEnd};

    fn setup() -> StreamSetup {
        StreamSetup {
            late_after: 10,
            sample_every: Some(5),
            redrive_at: None,
            chaos_rules: 0,
            expected_handlers: 1000,
            offsets: false,
        }
    }

    type Instant = (Nanos, Vec<Event>, Vec<StartedCall>, Vec<EffectRecord>);

    /// Message `seq`'s life, in three instants: published at 10·seq; delivered to worker 1 at
    /// +1, which calls the provider; at +2 the effect, the ack and the handler's end. Every
    /// third message has its effect twice (a duplicate).
    fn history(messages: u32) -> Vec<Instant> {
        let mut instants = Vec::new();
        for seq in 1..=messages {
            let t = u64::from(seq) * 10;
            let ev = |at, kind| Event { at, kind };
            instants.push((t, vec![ev(t, EventKind::Published { seq })], vec![], vec![]));
            let call = StartedCall {
                seq: Some(seq),
                delivery: 1,
                may_have_effect: false,
                fails_from: None,
            };
            let delivered = EventKind::Delivered {
                seq,
                worker: 1,
                delivery: 1,
                lease_end: t + 30,
            };
            instants.push((t + 1, vec![ev(t + 1, delivered)], vec![call], vec![]));
            let effect = EffectRecord {
                seq: Some(seq),
                at: t + 2,
                worker: 1,
                delivery: 1,
                source: EffectSource::Provider,
            };
            let effects = match seq % 3 {
                0 => vec![effect.clone(), effect],
                _ => vec![effect],
            };
            let acked = EventKind::Acked {
                seq,
                worker: 1,
                delivery: 1,
                outcome: AckOutcome::Deleted,
            };
            let ended = EventKind::HandlerEnded {
                seq,
                worker: 1,
                delivery: 1,
                how: HandlerEnd::Finished,
            };
            instants.push((
                t + 2,
                vec![ev(t + 2, acked), ev(t + 2, ended)],
                vec![],
                effects,
            ));
        }
        instants
    }

    /// Folds `instants` as a run records them, through `accounting`; returns what it folded
    /// and how many times the run's lists were handed over before the end.
    fn fold_by(accounting: Accounting, instants: Vec<Instant>) -> (StreamedMetrics, usize) {
        let mut accounting = accounting;
        // The run's own lists, which the instants' items are recorded into.
        let (mut events, mut started, mut effects, mut closed, mut batched) =
            (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
        let mut handed_over = 0;
        for (now, e, s, f) in instants {
            events.extend(e);
            started.extend(s);
            effects.extend(f);
            let before = events.len();
            let recorded = Recorded {
                started: &mut started,
                effects: &mut effects,
                closed: &mut closed,
                batched: &mut batched,
            };
            accounting.instant(now, &mut events, Some(recorded));
            handed_over += usize::from(events.len() < before);
        }
        let recorded = Recorded {
            started: &mut started,
            effects: &mut effects,
            closed: &mut closed,
            batched: &mut batched,
        };
        let stream = accounting.finish(&mut events, Some(recorded));
        assert!(events.is_empty() && started.is_empty() && effects.is_empty());
        (stream, handed_over)
    }

    /// Folded on the thread, or in line batch by batch, across several batches, a history
    /// gives what it gives folded instant by instant.
    #[test]
    fn the_thread_folds_what_the_run_would_fold_in_line() {
        // 6,000 messages, 3 instants and 4 events each: 24,000 events, more than one batch.
        let instants = history(6_000);
        let mut inline = StreamedMetrics::new(setup());
        for (now, events, started, effects) in &instants {
            inline.advance(*now);
            for e in events {
                inline.event(e);
            }
            for c in started {
                inline.call_started(c);
            }
            for e in effects {
                inline.effect(e);
            }
            inline.end_instant();
        }
        let key = |seq: Seq| format!("msg-{seq}");
        let a = inline.finish(60_010, key).expect("exact");
        // 6,000 messages, each delivered once and deleted; 6,000 + 2,000 effects, one
        // duplicate for each third message.
        assert_eq!(a.counts.messages, 6_000);
        assert_eq!(a.counts.deliveries, 6_000);
        assert_eq!(a.counts.effects, 8_000);
        assert_eq!(a.counts.duplicate_effects, 2_000);
        assert_eq!(a.counts.lost + a.counts.unfinished + a.counts.dlq, 0);
        let on_thread = Accounting::on_thread(Box::new(StreamedMetrics::new(setup())))
            .unwrap_or_else(|_| panic!("the test starts a thread"));
        let in_line = Accounting::in_line(Box::new(StreamedMetrics::new(setup())));
        for accounting in [on_thread, in_line] {
            let (b, handed_over) = fold_by(accounting, instants.clone());
            // 24,000 events in batches of 4,096: handed over 5 times (after 4,096 x 1..5
            // events; each instant ends on a whole message, so a batch holds a few more),
            // the rest when it ends.
            assert_eq!(handed_over, 5);
            let b = b.finish(60_010, key).expect("exact");
            assert_eq!(format!("{:?}", a.counts), format!("{:?}", b.counts));
            assert_eq!(
                format!("{:?}", a.series.samples(5)),
                format!("{:?}", b.series.samples(5))
            );
        }
    }
}
