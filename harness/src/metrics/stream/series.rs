//! The time series of a streamed run, sampled as the run goes.
//!
//! A sample at `t` is the state after every item at or before `t` ([`super::super::timeseries`]):
//! the stream samples each grid instant before it hands over the first item after it. The
//! interval of a run without `run.sample_every` is chosen from the run's length, unknown until
//! it ends; the round intervals each divide the next (1 s, 5 s, 10 s, 30 s, 1 m, 5 m, 10 m, 30 m,
//! 1 h), so the grid starts at 1 s and coarsens as the run grows (keeping the samples at
//! multiples of the new step) to the interval the run's length so far would choose, at most an
//! hour. Whole hours beyond that are multiples of an hour: the run's interval is then read off
//! the hourly grid when it ends. Memory: under twice 1,000 samples, or one an hour.

use super::table::{Msg, Table};
use crate::metrics::place::Place;
use crate::metrics::timeseries::{default_interval_over, Redriven, Sample};
use crate::record::{EventKind, Nanos, Seq};

const HOUR: Nanos = 3_600_000_000_000;

/// A streamed run's samples: at every multiple of `step` below the run's end, then at its end.
#[derive(Debug, Clone, Default)]
pub struct SampleGrid {
    step: Nanos,
    grid: Vec<Sample>,
    last: Sample,
}

impl SampleGrid {
    /// The grid's interval: [`SampleGrid::samples`] takes a multiple of it.
    pub fn step(&self) -> Nanos {
        self.step
    }

    /// The samples every `every` (a multiple of the grid's step) from 0 to the end, as
    /// [`crate::metrics::timeseries`] samples a record.
    pub fn samples(&self, every: Nanos) -> Vec<Sample> {
        assert!(
            every > 0 && every.is_multiple_of(self.step.max(1)),
            "a streamed run's samples are every {} ns; asked every {every} ns",
            self.step
        );
        self.grid
            .iter()
            .filter(|s| s.t.is_multiple_of(every))
            .copied()
            .chain(std::iter::once(self.last))
            .collect()
    }
}

pub struct Series {
    /// `run.sample_every`, fixed; `None`: the grid coarsens with the run.
    fixed: Option<Nanos>,
    step: Nanos,
    /// The next grid instant to sample.
    next: Nanos,
    grid: Vec<Sample>,
    sample: Sample,
    /// Messages per place (by [`Place::slot`]).
    in_place: [u64; 6],
    /// The first seq that may still be in the main queue (in seq order).
    oldest: Seq,
    /// Redriven messages (published at, seq): back in the main queue behind `oldest`.
    redriven: Redriven<Seq>,
}

impl Series {
    pub fn new(fixed: Option<Nanos>) -> Series {
        Series {
            fixed,
            step: fixed.unwrap_or(1_000_000_000).max(1),
            next: 0,
            grid: Vec::new(),
            sample: Sample::default(),
            in_place: [0; 6],
            oldest: 1,
            redriven: Redriven::default(),
        }
    }

    /// Samples every grid instant before `now`.
    pub fn advance(&mut self, now: Nanos, table: &Table) {
        if self.next >= now {
            return;
        }
        if self.fixed.is_none() {
            let step = default_interval_over(now.saturating_sub(1)).min(HOUR);
            if step > self.step {
                self.step = step;
                self.grid.retain(|s| s.t.is_multiple_of(step));
                self.next = self.next.next_multiple_of(step);
            }
        }
        while self.next < now {
            let t = self.next;
            let s = self.sample_at(t, table);
            self.grid.push(s);
            self.next += self.step;
        }
    }

    /// Counts what an event says of the run as a whole.
    #[inline]
    pub fn count_event(&mut self, kind: &EventKind) {
        match kind {
            EventKind::Published { .. } => self.sample.published += 1,
            EventKind::WorkerKilled { .. } => self.sample.worker_kills += 1,
            EventKind::WorkerCrashed { .. } => self.sample.worker_crashes += 1,
            _ => {}
        }
    }

    /// Message `seq` (`m`, already moved) went from `from` to `to`.
    pub fn moved(&mut self, seq: Seq, m: &Msg, from: Place, to: Place) {
        self.in_place[from.slot()] = self.in_place[from.slot()].saturating_sub(1);
        self.in_place[to.slot()] += 1;
        if m.account.effects > 0 {
            if to == Place::DeadLettered {
                self.sample.dlq_with_effect += 1;
            } else if from == Place::DeadLettered {
                self.sample.dlq_with_effect -= 1;
            }
        }
        if from == Place::DeadLettered && to.in_main_queue() {
            self.redriven.push(m.published_at, seq);
        }
    }

    /// An effect for message `m`, before the message counts it.
    pub fn effect(&mut self, m: &Msg) {
        self.sample.effects += 1;
        if m.account.effects > 0 {
            self.sample.duplicate_effects += 1;
        } else if m.account.place == Place::DeadLettered {
            self.sample.dlq_with_effect += 1;
        }
    }

    fn sample_at(&mut self, t: Nanos, table: &Table) -> Sample {
        let s = &mut self.sample;
        s.t = t;
        s.visible = self.in_place[Place::Visible.slot()];
        s.in_flight = self.in_place[Place::InFlight.slot()];
        s.dlq = self.in_place[Place::DeadLettered.slot()];
        let oldest = self.oldest_published(table);
        self.sample.oldest_age = oldest.map_or(0, |p| t.saturating_sub(p));
        self.sample
    }

    /// When the oldest message in the main queue was published: the first seq still there
    /// (folded messages are out of it for good), or a redriven one.
    fn oldest_published(&mut self, table: &Table) -> Option<Nanos> {
        let place = |seq: Seq| match table.get(seq) {
            Some(m) => m.account.place,
            None if table.is_published(seq) => Place::Deleted,
            None => Place::Unpublished,
        };
        while matches!(place(self.oldest), Place::Deleted | Place::DeadLettered) {
            self.oldest += 1;
        }
        let in_order = table
            .get(self.oldest)
            .filter(|m| m.account.place.in_main_queue())
            .map(|m| m.published_at);
        self.redriven
            .oldest(in_order, |seq| place(seq).in_main_queue())
    }

    /// The grid and the sample at `end` (every item handed over).
    pub fn finish(mut self, end: Nanos, table: &Table) -> SampleGrid {
        self.advance(end, table);
        let last = self.sample_at(end, table);
        let step = match self.fixed {
            Some(every) => every,
            None => default_interval_over(end),
        };
        let mut grid = self.grid;
        if step % self.step == 0 {
            grid.retain(|s| s.t % step == 0);
        }
        SampleGrid {
            step: if step % self.step == 0 {
                step
            } else {
                self.step
            },
            grid,
            last,
        }
    }
}
