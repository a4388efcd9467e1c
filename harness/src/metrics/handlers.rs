//! Handler spans: from a worker's `Delivered` to its matching `HandlerEnded`.

use std::collections::HashMap;

use crate::record::{Event, EventKind, HandlerEnd, Nanos, RunRecord, Seq, WorkerId};

/// One handler's work on one delivery.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Span {
    pub worker: WorkerId,
    pub seq: Seq,
    pub delivery: u32,
    pub start: Nanos,
    /// When it ended, or the run's end for a handler still working when the run stopped.
    pub end: Nanos,
    /// How it ended; `None` when the run stopped first.
    pub how: Option<HandlerEnd>,
}

impl Span {
    pub fn duration(&self) -> Nanos {
        self.end.saturating_sub(self.start)
    }
}

/// Calls `f` with every handler span: first each ended span at its `HandlerEnded`, in event
/// order, then every span still open when the run stopped (ended at `record.end`, `how: None`),
/// in the order they started.
///
/// A span is matched by (worker, seq, delivery). A worker works on one message at a time, so only
/// spans in progress are kept: memory grows with the workers, not with the run. A `HandlerEnded`
/// without a matching `Delivered` is no span.
pub fn for_each_span(record: &RunRecord, mut f: impl FnMut(Span)) {
    let mut spans = Spans::default();
    for e in &record.events {
        if let Some(s) = spans.event(e) {
            f(s);
        }
    }
    spans.finish(record.end, f);
}

/// The handler spans of a history read one event at a time: what [`for_each_span`] folds over
/// a whole record, and a streamed run folds as it goes.
#[derive(Default)]
pub struct Spans {
    open: OpenSpans,
}

/// What one event did to the spans.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SpanStep {
    /// A span started for this message.
    Opened(Seq),
    /// A delivery the same worker already had open restarted its span (no new span).
    Restarted,
}

impl Spans {
    /// Applies one event; returns the span it ended, if it ended one.
    pub fn event(&mut self, e: &Event) -> Option<Span> {
        self.step(e).0
    }

    /// [`Spans::event`], saying also whether the event opened a span.
    #[inline]
    pub fn step(&mut self, e: &Event) -> (Option<Span>, Option<SpanStep>) {
        match e.kind {
            EventKind::Delivered {
                seq,
                worker,
                delivery,
                ..
            } => {
                let step = if self.open.insert((worker, seq, delivery), e.at) {
                    SpanStep::Opened(seq)
                } else {
                    SpanStep::Restarted
                };
                (None, Some(step))
            }
            EventKind::HandlerEnded {
                seq,
                worker,
                delivery,
                how,
            } => {
                let span = self.open.remove((worker, seq, delivery)).map(|start| Span {
                    worker,
                    seq,
                    delivery,
                    start,
                    end: e.at,
                    how: Some(how),
                });
                (span, None)
            }
            _ => (None, None),
        }
    }

    /// Calls `f` with every span still open, ended at `end` (`how: None`), in the order they
    /// started.
    pub fn finish(self, end: Nanos, mut f: impl FnMut(Span)) {
        let mut rest: Vec<_> = self.open.into_vec();
        rest.sort_unstable_by_key(|&(key, start)| (start, key));
        for ((worker, seq, delivery), start) in rest {
            f(Span {
                worker,
                seq,
                delivery,
                start,
                end: end.max(start),
                how: None,
            });
        }
    }
}

/// Spans in progress, by worker: a worker works on one message at a time, so each list holds
/// one span, rarely more; looking one up costs an index, not a hash.
#[derive(Default)]
struct OpenSpans {
    by_worker: Vec<Vec<(Seq, u32, Nanos)>>,
    /// Workers with ids too large to index (live workers named by foreign access keys).
    others: HashMap<(WorkerId, Seq, u32), Nanos>,
}

/// Worker ids below this are indexed directly.
const INDEXED_WORKERS: WorkerId = 1 << 16;

impl OpenSpans {
    /// Opens a span; false when the same span was open already (its start moves).
    fn insert(&mut self, (worker, seq, delivery): (WorkerId, Seq, u32), start: Nanos) -> bool {
        if worker >= INDEXED_WORKERS {
            return self.others.insert((worker, seq, delivery), start).is_none();
        }
        let w = worker as usize;
        if w >= self.by_worker.len() {
            self.by_worker.resize_with(w + 1, Vec::new);
        }
        let list = &mut self.by_worker[w];
        match list
            .iter_mut()
            .find(|(s, d, _)| (*s, *d) == (seq, delivery))
        {
            Some(open) => {
                open.2 = start;
                false
            }
            None => {
                list.push((seq, delivery, start));
                true
            }
        }
    }

    fn remove(&mut self, (worker, seq, delivery): (WorkerId, Seq, u32)) -> Option<Nanos> {
        if worker >= INDEXED_WORKERS {
            return self.others.remove(&(worker, seq, delivery));
        }
        let list = self.by_worker.get_mut(worker as usize)?;
        let i = list
            .iter()
            .position(|(s, d, _)| (*s, *d) == (seq, delivery))?;
        Some(list.swap_remove(i).2)
    }

    fn into_vec(self) -> Vec<((WorkerId, Seq, u32), Nanos)> {
        let mut out: Vec<_> = self.others.into_iter().collect();
        for (w, list) in self.by_worker.into_iter().enumerate() {
            out.extend(list.into_iter().map(|(s, d, t)| ((w as WorkerId, s, d), t)));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::testkit::{s, Rec};

    #[test]
    fn spans_match_by_worker_seq_and_delivery_and_open_ones_end_with_the_run() {
        let mut r = Rec::new(30.0, 2);
        let m = r.publish(0.0);
        r.deliver(0.0, m, 1, 1);
        r.expire(30.0, m, 1).deliver(30.0, m, 2, 2);
        // Ends of a delivery nobody received, and of the wrong worker, are no spans.
        r.end_handler(31.0, m, 1, 2, HandlerEnd::Finished);
        r.end_handler(32.0, m, 2, 1, HandlerEnd::Finished);
        r.end_handler(34.0, m, 1, 1, HandlerEnd::Killed);
        let rec = r.finish(50.0);
        let mut spans = Vec::new();
        for_each_span(&rec, |sp| spans.push(sp));
        assert_eq!(
            spans,
            vec![
                Span {
                    worker: 1,
                    seq: 1,
                    delivery: 1,
                    start: 0,
                    end: s(34.0),
                    how: Some(HandlerEnd::Killed)
                },
                Span {
                    worker: 2,
                    seq: 1,
                    delivery: 2,
                    start: s(30.0),
                    end: s(50.0),
                    how: None
                },
            ]
        );
        assert_eq!(spans[1].duration(), s(20.0));
    }
}
