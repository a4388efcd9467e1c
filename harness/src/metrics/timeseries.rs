//! The run over time: counts sampled on a fixed virtual interval, so a user sees *when* it went
//! wrong (effects, duplicates, DLQ depth, in-flight, age of the oldest message), not only that it
//! did.
//!
//! One sweep over the events and the effects, in time order: O(events + effects log effects +
//! samples), whatever the number of messages.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use super::place::{index_of, Place, Places};
use crate::record::{earliest, EventKind, Nanos, RunRecord};

const SECOND: Nanos = 1_000_000_000;

/// The round intervals [`default_interval`] chooses from.
pub const ROUND_INTERVALS: [Nanos; 9] = [
    SECOND,
    5 * SECOND,
    10 * SECOND,
    30 * SECOND,
    60 * SECOND,
    300 * SECOND,
    600 * SECOND,
    1800 * SECOND,
    3600 * SECOND,
];

/// The most samples [`default_interval`] aims for.
pub const MAX_SAMPLES: u64 = 1000;

/// The state of the run at one instant `t`, after every event at or before `t`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Sample {
    pub t: Nanos,
    /// Messages published so far.
    pub published: u64,
    /// Effects so far, for published keys.
    pub effects: u64,
    /// Effects so far beyond the first of their key.
    pub duplicate_effects: u64,
    /// Messages in the main queue and not leased (a message published with a delay counts here).
    pub visible: u64,
    /// Messages under a lease.
    pub in_flight: u64,
    /// DLQ depth.
    pub dlq: u64,
    /// DLQ entries whose key already had an effect.
    pub dlq_with_effect: u64,
    /// Age of the oldest message in the main queue (visible or in flight); 0 if it is empty.
    pub oldest_age: Nanos,
    /// Worker kills so far.
    pub worker_kills: u64,
    /// Worker crashes so far.
    pub worker_crashes: u64,
}

/// A round interval (1 s, 5 s, 10 s, 30 s, 1 m, 5 m, 10 m, 30 m, 1 h) giving at most
/// [`MAX_SAMPLES`] samples over the run; beyond 1 h, whole hours.
pub fn default_interval(record: &RunRecord) -> Nanos {
    default_interval_over(record.end)
}

/// [`default_interval`] for a run of length `end`.
pub fn default_interval_over(end: Nanos) -> Nanos {
    let fits = |every: Nanos| end.div_ceil(every) < MAX_SAMPLES;
    ROUND_INTERVALS
        .iter()
        .copied()
        .find(|&every| fits(every))
        .unwrap_or_else(|| {
            let hour = 3600 * SECOND;
            end.div_ceil(hour * (MAX_SAMPLES - 1)).max(1) * hour
        })
}

/// The sample instants: 0, `every`, 2 `every`, ... below `end`, then `end` itself (the last,
/// maybe partial, bucket).
pub fn sample_times(end: Nanos, every: Nanos) -> impl Iterator<Item = Nanos> {
    let every = every.max(1);
    let below = end.div_ceil(every);
    (0..below)
        .map(move |k| k * every)
        .chain(std::iter::once(end))
}

/// Samples the run every `every` nanoseconds from 0 to its end (see [`sample_times`]); `every` =
/// 0 takes [`default_interval`]. A streamed record was sampled as it ran, every `run.sample_every`
/// or every [`default_interval`]: `every` must be that interval (or a multiple of it).
pub fn timeseries<'a>(run: impl Into<super::View<'a>>, every: Nanos) -> Vec<Sample> {
    let run = run.into();
    let record = run.record;
    let every = if every == 0 {
        default_interval(record)
    } else {
        every
    };
    if let Some(f) = run.folded {
        return f.samples(every);
    }
    let mut sweep = Sweep::new(record);
    sample_times(record.end, every)
        .map(|t| sweep.sample_at(t))
        .collect()
}

/// The sweep's running state.
struct Sweep<'a> {
    record: &'a RunRecord,
    places: Places,
    /// Per message: an effect for its key has happened (kept at the key's first message).
    effected: Vec<bool>,
    /// Each message's key's first message, when some key has more than one ([`super::copies`]).
    first_of_key: Option<Vec<usize>>,
    /// Effects of published keys, by time: (at, message index).
    effects: Vec<(Nanos, usize)>,
    next_event: usize,
    next_effect: usize,
    /// Messages per place.
    in_place: [u64; 6],
    sample: Sample,
    /// Every message below this index is out of the main queue for good, unless redriven.
    oldest: usize,
    /// Redriven messages (published at, index): they re-enter the main queue behind `oldest`.
    redriven: Redriven<usize>,
}

impl<'a> Sweep<'a> {
    fn new(record: &'a RunRecord) -> Self {
        let n = record.messages.len();
        let first_of_key = super::copies::first_of_key(record);
        let key_of = |i: usize| first_of_key.as_ref().map_or(i, |f| f[i]);
        let mut effects: Vec<(Nanos, usize)> = record
            .ledger
            .effects
            .iter()
            .filter_map(|e| Some((e.at, key_of(index_of(e.seq?, n)?))))
            .collect();
        // Stable: the ledger is usually in time order already, and then this is linear.
        effects.sort_by_key(|&(at, _)| at);
        let mut in_place = [0; 6];
        in_place[Place::Unpublished.slot()] = n as u64;
        Sweep {
            record,
            places: Places::new(n),
            effected: vec![false; n],
            first_of_key,
            effects,
            next_event: 0,
            next_effect: 0,
            in_place,
            sample: Sample::default(),
            oldest: 0,
            redriven: Redriven::default(),
        }
    }

    /// Applies everything up to `t` (inclusive) and reads the state.
    fn sample_at(&mut self, t: Nanos) -> Sample {
        while let Some(e) = self
            .record
            .events
            .get(self.next_event)
            .filter(|e| e.at <= t)
        {
            self.next_event += 1;
            self.event(&e.kind);
        }
        while let Some(&(_, i)) = self
            .effects
            .get(self.next_effect)
            .filter(|&&(at, _)| at <= t)
        {
            self.next_effect += 1;
            self.effect(i);
        }
        let s = &mut self.sample;
        s.t = t;
        s.visible = self.in_place[Place::Visible.slot()];
        s.in_flight = self.in_place[Place::InFlight.slot()];
        s.dlq = self.in_place[Place::DeadLettered.slot()];
        let oldest_published = self.oldest_published();
        self.sample.oldest_age = oldest_published.map_or(0, |p| t.saturating_sub(p));
        self.sample
    }

    fn event(&mut self, kind: &EventKind) {
        match kind {
            EventKind::Published { .. } => self.sample.published += 1,
            EventKind::WorkerKilled { .. } => self.sample.worker_kills += 1,
            EventKind::WorkerCrashed { .. } => self.sample.worker_crashes += 1,
            _ => {}
        }
        let Some(m) = self.places.apply(kind) else {
            return;
        };
        self.in_place[m.from.slot()] -= 1;
        self.in_place[m.to.slot()] += 1;
        let key = self.first_of_key.as_ref().map_or(m.index, |f| f[m.index]);
        if self.effected[key] {
            if m.to == Place::DeadLettered {
                self.sample.dlq_with_effect += 1;
            } else if m.from == Place::DeadLettered {
                self.sample.dlq_with_effect -= 1;
            }
        }
        if m.from == Place::DeadLettered && m.to.in_main_queue() {
            let published_at = self.published_at(m.index);
            self.redriven.push(published_at, m.index);
        }
    }

    fn effect(&mut self, i: usize) {
        self.sample.effects += 1;
        if self.effected[i] {
            self.sample.duplicate_effects += 1;
        } else {
            self.effected[i] = true;
            if self.places.get(i) == Place::DeadLettered {
                self.sample.dlq_with_effect += 1;
            }
        }
    }

    fn published_at(&self, i: usize) -> Nanos {
        self.record.messages.get(i).map_or(0, |m| m.published_at)
    }

    /// When the oldest message in the main queue was published.
    ///
    /// Messages enter the main queue in publish order, so the oldest is the first one (by seq)
    /// still there: `oldest` only moves forward past messages that left (amortised O(1)). A
    /// redriven message re-enters behind it and waits in a min-heap, dropped lazily once it
    /// leaves again.
    fn oldest_published(&mut self) -> Option<Nanos> {
        while matches!(
            self.places.get(self.oldest),
            Place::Deleted | Place::DeadLettered
        ) {
            self.oldest += 1;
        }
        let in_order = self
            .places
            .get(self.oldest)
            .in_main_queue()
            .then(|| self.published_at(self.oldest));
        let places = &self.places;
        self.redriven
            .oldest(in_order, |i| places.get(i).in_main_queue())
    }
}

/// Messages a redrive put back in the main queue, by when they were published: they re-enter it
/// behind the in-order cursor of the oldest message. One that leaves again is dropped lazily.
#[derive(Debug)]
pub struct Redriven<I>(BinaryHeap<Reverse<(Nanos, I)>>);

impl<I: Ord + Copy> Default for Redriven<I> {
    fn default() -> Self {
        Redriven(BinaryHeap::new())
    }
}

impl<I: Ord + Copy> Redriven<I> {
    pub fn push(&mut self, published_at: Nanos, id: I) {
        self.0.push(Reverse((published_at, id)));
    }

    /// When the oldest message in the main queue was published: the in-order one's
    /// (`in_order`) or a redriven one's still there (`in_queue`), whichever is earlier.
    pub fn oldest(
        &mut self,
        in_order: Option<Nanos>,
        in_queue: impl Fn(I) -> bool,
    ) -> Option<Nanos> {
        while let Some(&Reverse((_, i))) = self.0.peek() {
            if in_queue(i) {
                break;
            }
            self.0.pop();
        }
        let redriven = self.0.peek().map(|&Reverse((p, _))| p);
        earliest(in_order, redriven)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::testkit::{s, slow_handler, Rec};
    use crate::profile::StaleAck;
    use crate::record::{AckOutcome, HandlerEnd};

    #[test]
    fn sample_times_end_with_the_last_partial_bucket() {
        let times = |end, every| sample_times(end, every).collect::<Vec<_>>();
        assert_eq!(times(25, 10), vec![0, 10, 20, 25]);
        assert_eq!(times(20, 10), vec![0, 10, 20]);
        assert_eq!(times(0, 10), vec![0]);
        assert_eq!(times(5, 10), vec![0, 5]);
    }

    #[test]
    fn default_interval_is_round_and_keeps_under_a_thousand_samples() {
        let at = |end_s: u64| {
            default_interval(&RunRecord {
                end: end_s * SECOND,
                ..RunRecord::default()
            })
        };
        assert_eq!(at(0), SECOND);
        assert_eq!(at(998), SECOND);
        assert_eq!(at(1000), 5 * SECOND);
        assert_eq!(at(2 * 3600), 10 * SECOND); // the 90 m incident plus its 30 m drain
        assert_eq!(at(3 * 3600), 30 * SECOND);
        assert_eq!(at(999 * 3600), 3600 * SECOND);
        assert_eq!(at(2000 * 3600), 3 * 3600 * SECOND);
        for end_s in [1, 59, 999, 1001, 5000, 86_400, 10_000_000] {
            let r = RunRecord {
                end: end_s * SECOND,
                ..RunRecord::default()
            };
            assert!(sample_times(r.end, default_interval(&r)).count() as u64 <= MAX_SAMPLES);
        }
    }

    #[test]
    fn the_slow_handler_every_ten_seconds() {
        // Delivery 1 at 0 s, 2 at 30 s, 3 at 60 s (an email each, at receive), DLQ at 90 s, the
        // run ends at 94 s.
        let r = slow_handler(StaleAck::Reject);
        let got = timeseries(&r, s(10.0));
        let row = |t: f64, effects, dups, in_flight, dlq, dlq_fx, age: f64| Sample {
            t: s(t),
            published: 1,
            effects,
            duplicate_effects: dups,
            visible: 0,
            in_flight,
            dlq,
            dlq_with_effect: dlq_fx,
            oldest_age: s(age),
            worker_kills: 0,
            worker_crashes: 0,
        };
        let want = vec![
            row(0.0, 1, 0, 1, 0, 0, 0.0),
            row(10.0, 1, 0, 1, 0, 0, 10.0),
            row(20.0, 1, 0, 1, 0, 0, 20.0),
            row(30.0, 2, 1, 1, 0, 0, 30.0),
            row(40.0, 2, 1, 1, 0, 0, 40.0),
            row(50.0, 2, 1, 1, 0, 0, 50.0),
            row(60.0, 3, 2, 1, 0, 0, 60.0),
            row(70.0, 3, 2, 1, 0, 0, 70.0),
            row(80.0, 3, 2, 1, 0, 0, 80.0),
            row(90.0, 3, 2, 0, 1, 1, 0.0),
            row(94.0, 3, 2, 0, 1, 1, 0.0),
        ];
        assert_eq!(got, want);
    }

    #[test]
    fn a_tiny_run_with_a_kill_a_dlq_entry_without_effect_and_a_redrive() {
        // Lease 10 s, limit 1, 1 worker.
        // m1 published 0 s, received 0 s, worker killed 2 s, DLQ at 10 s (no effect), its email
        //    sent at 17 s by a handler still holding it, redriven at 20 s, received 20 s, acked
        //    21 s.
        // m2 published 5 s, visible until received 21 s, acked 22 s (effect 22 s).
        // m3 published 12 s, never received.
        let mut r = Rec::new(10.0, 1);
        let m1 = r.publish(0.0);
        r.deliver(0.0, m1, 1, 1)
            .kill(2.0, 1)
            .end_handler(2.0, m1, 1, 1, HandlerEnd::Killed);
        let m2 = r.publish(5.0);
        r.dead_letter(10.0, m1, 1);
        let m3 = r.publish(12.0);
        r.effect(17.0, Some(m1), 1, 1);
        r.redrive(20.0, m1)
            .deliver(20.0, m1, 1, 1)
            .ack(21.0, m1, 1, 1, AckOutcome::Deleted);
        r.deliver(21.0, m2, 1, 1).effect(22.0, Some(m2), 1, 1).ack(
            22.0,
            m2,
            1,
            1,
            AckOutcome::Deleted,
        );
        let rec = r.finish(25.0);
        assert_eq!(m3, 3);
        let got = timeseries(&rec, s(5.0));
        let t = |x: f64| s(x);
        #[rustfmt::skip]
        let want = [
            // t, published, effects, dups, visible, in_flight, dlq, dlq_fx, oldest age, kills
            (t(0.0), 1, 0, 0, 0, 1, 0, 0, t(0.0), 0),
            (t(5.0), 2, 0, 0, 1, 1, 0, 0, t(5.0), 1),
            (t(10.0), 2, 0, 0, 1, 0, 1, 0, t(5.0), 1),   // m1 in the DLQ; m2 is the oldest
            (t(15.0), 3, 0, 0, 2, 0, 1, 0, t(10.0), 1),
            (t(20.0), 3, 1, 0, 2, 1, 0, 0, t(20.0), 1),  // effect at 17 s; m1 redriven, leased
            (t(25.0), 3, 2, 0, 1, 0, 0, 0, t(13.0), 1),  // m1, m2 deleted; m3 waits
        ];
        let got: Vec<_> = got
            .iter()
            .map(|x| {
                (
                    x.t,
                    x.published,
                    x.effects,
                    x.duplicate_effects,
                    x.visible,
                    x.in_flight,
                    x.dlq,
                    x.dlq_with_effect,
                    x.oldest_age,
                    x.worker_kills,
                )
            })
            .collect();
        assert_eq!(got, want);
    }

    #[test]
    fn dlq_with_effect_counts_effects_that_come_after_the_move() {
        // m1 DLQ at 10 s without effect; its email arrives at 12 s: with effect from then on.
        let mut r = Rec::new(10.0, 1);
        let m1 = r.publish(0.0);
        r.deliver(0.0, m1, 1, 1)
            .dead_letter(10.0, m1, 1)
            .effect(12.0, Some(m1), 1, 1);
        let got: Vec<_> = timeseries(&r.finish(15.0), s(5.0))
            .iter()
            .map(|x| (x.dlq, x.dlq_with_effect))
            .collect();
        assert_eq!(got, vec![(0, 0), (0, 0), (1, 0), (1, 1)]);
    }

    #[test]
    fn an_empty_run_has_one_sample() {
        assert_eq!(
            timeseries(&RunRecord::default(), 0),
            vec![Sample::default()]
        );
    }
}
