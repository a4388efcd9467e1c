//! Each handler against the lease it actually held, not the queue's configured visibility
//! timeout: the lease of its delivery (a receive may name its own timeout), moved by its own
//! visibility changes (a heartbeat's extensions); and what it did with the message before that
//! lease ended (acked it, handed it back) or what the broker did when it ended first (delivered
//! the message again while the handler still worked, or moved it to the DLQ).
//!
//! A handler **holds** its message from the delivery until it settles it: its first ack of that
//! delivery, or a release (visibility 0); a handler that ends without either held it to its end.
//! It **outlived its lease** when the lease ended before that. The **hold ratio** is the time held
//! over the lease held (the last lease end it had, minus the delivery); `p99_over_visibility` is
//! its p99 over the handlers: above 1 means more than 1% of handlers still held their message
//! when their lease ran out. An ack-before-work handler settles at once (ratio 0); a heartbeat
//! handler's lease grows with it.
//!
//! A delivery the broker took back for another reason than its lease while the handler held it
//! (a RabbitMQ channel or connection that closed: [`crate::record::EventKind::Returned`]) did
//! not outlive its lease: it is counted by what ended it (`returned_by`), and the lease it held
//! is the one it had.
//!
//! Handlers still working when the run stopped are not measured (as for handler latency).

use rustc_hash::FxHashMap as HashMap;
use smallvec::SmallVec;

use serde::{Deserialize, Serialize};

use super::latency::LatencyHistogram;
use crate::record::{
    AckOutcome, EventKind, Nanos, ReturnCounts, ReturnWhy, RunRecord, Seq, WorkerId,
};

/// What the handlers did with their leases: counts over the handlers that ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct HandlerLeases {
    /// Handlers measured: every handler that ended (finished, killed or crashed).
    pub handlers: u64,
    /// Settled by an ack while their lease was still theirs (the message deleted).
    pub acked_in_time: u64,
    /// Handed their message back (visibility 0) while their lease was still theirs.
    pub released: u64,
    /// Moved the end of their lease later at least once before settling (a heartbeat).
    pub extended: u64,
    /// Their lease ended while they still held the message.
    pub outlived: u64,
    /// Of those, the message was delivered again while the handler still held it.
    pub outlived_redelivered: u64,
    /// Of those, the lease's end moved the message to the DLQ.
    pub outlived_dead_lettered: u64,
    /// Their delivery was taken back while they still held it for a reason other than its
    /// lease (a channel or connection that closed; by reason in `returned_by`). Not counted in
    /// `outlived`. Only a live RabbitMQ run tells these.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub returned: u64,
    /// Of those, the message was delivered again while the handler still held it.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub returned_redelivered: u64,
    /// `returned`, by what ended the delivery.
    #[serde(default, skip_serializing_if = "ReturnCounts::is_empty")]
    pub returned_by: ReturnCounts,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// The run's handlers against their leases.
#[derive(Debug, Clone, Default)]
pub struct LeaseAnalysis {
    pub counts: HandlerLeases,
    /// The lease each handler held (its last lease end minus its delivery), microseconds.
    pub effective_lease: LatencyHistogram,
    /// p99 over the handlers of (time held) / (lease held); 0 without handlers.
    pub p99_hold_over_lease: f64,
    /// Overlapping executions: deliveries made while an earlier handler of the same message
    /// was still running (its lease ended under it, or its ack never counted), so that two
    /// workers handled one message at once. Counted when the later delivery is made, whether
    /// or not either handler ends before the run stops.
    pub overlapping: u64,
}

/// One handler in progress.
#[derive(Debug, Clone, Copy)]
struct Open {
    worker: WorkerId,
    delivery: u32,
    start: Nanos,
    /// The end of its lease as it stands (moved by its visibility changes).
    lease_end: Nanos,
    extended: bool,
    /// When the lease ended, if it did while the handler was running.
    lease_ended: Option<Nanos>,
    dead_lettered: bool,
    /// When it settled the message, and how.
    settled: Option<(Nanos, Settled)>,
    /// Delivered again after the lease ended, while this handler still held it.
    redelivered: bool,
    /// What took the delivery back, when the broker said and it was not the lease.
    returned: Option<ReturnWhy>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Settled {
    /// An ack that deleted the message: the receipt was current.
    AckedInTime,
    /// An ack the broker found stale.
    AckedLate,
    Released,
}

impl Open {
    fn holds(&self) -> bool {
        self.settled.is_none()
    }
}

/// Measures every handler of `record` against the lease it held.
pub fn analyse(record: &RunRecord) -> LeaseAnalysis {
    let mut fold = Leases::new(HoldRatios::all());
    for e in &record.events {
        fold.event(e.at, &e.kind);
    }
    fold.finish()
}

/// The handlers of a history against their leases, read one event at a time: what [`analyse`]
/// folds over a whole record, and a streamed run folds as it goes. Memory grows with the
/// handlers in progress and the hold ratios kept ([`HoldRatios`]).
///
/// The handlers in progress of a message are a [`MessageHandlers`]: [`Leases::event`] keeps
/// them in a map by seq; a caller that already keeps a record per message (the streamed
/// accounting's table) keeps them there and hands them to [`Leases::event_on`], one lookup
/// less per event.
pub struct Leases {
    open: HashMap<Seq, MessageHandlers>,
    out: LeaseAnalysis,
    ratios: HoldRatios,
}

/// The handlers in progress of one message: almost always one, kept inline (no allocation per
/// delivery).
#[derive(Debug, Clone, Default)]
pub struct MessageHandlers(SmallVec<[Open; 1]>);

impl Leases {
    pub fn new(ratios: HoldRatios) -> Self {
        Leases {
            open: HashMap::default(),
            out: LeaseAnalysis::default(),
            ratios,
        }
    }

    /// Applies one event at `at`, the message's handlers kept in this fold's own map (only a
    /// delivery makes an entry there; an event about a message without one changes nothing).
    pub fn event(&mut self, at: Nanos, kind: &EventKind) {
        let Some(seq) = kind.seq() else {
            return;
        };
        let list = if matches!(kind, EventKind::Delivered { .. }) {
            self.open.entry(seq).or_default()
        } else {
            match self.open.get_mut(&seq) {
                Some(list) => list,
                None => return,
            }
        };
        on_message(list, at, kind, &mut self.out, &mut self.ratios);
        if list.0.is_empty() {
            self.open.remove(&seq);
        }
    }

    /// Applies one event at `at` about the message whose handlers in progress are `handlers`
    /// (kept by the caller; empty for a message with none).
    #[inline(always)]
    pub fn event_on(&mut self, handlers: &mut MessageHandlers, at: Nanos, kind: &EventKind) {
        on_message(handlers, at, kind, &mut self.out, &mut self.ratios);
    }

    /// Takes what this fold's own map holds of message `seq` (events about it before the caller
    /// kept its record), for [`Leases::event_on`] from now on.
    #[inline]
    pub fn take(&mut self, seq: Seq) -> MessageHandlers {
        if self.open.is_empty() {
            return MessageHandlers::default();
        }
        self.open.remove(&seq).unwrap_or_default()
    }

    /// The analysis; `None` for p99 when the kept ratios could not name it exactly
    /// ([`HoldRatios::tail`]).
    pub fn try_finish(self) -> Option<LeaseAnalysis> {
        let mut out = self.out;
        out.p99_hold_over_lease = self.ratios.p99()?;
        Some(out)
    }

    pub fn finish(self) -> LeaseAnalysis {
        self.try_finish()
            .expect("every hold ratio is kept: the p99 is exact")
    }
}

/// One event about a message with handlers `list` in progress: a delivery opens one, the
/// lease's events and the handler's acks mark it, its end counts it into `out` and `ratios`.
#[inline(always)]
fn on_message(
    list: &mut MessageHandlers,
    at: Nanos,
    kind: &EventKind,
    out: &mut LeaseAnalysis,
    ratios: &mut HoldRatios,
) {
    let list = &mut list.0;
    match *kind {
        EventKind::Delivered {
            worker,
            delivery,
            lease_end,
            ..
        } => {
            for o in list.iter_mut() {
                if o.holds() && o.lease_ended.is_some() {
                    o.redelivered = true;
                }
            }
            list.retain(|o| (o.worker, o.delivery) != (worker, delivery));
            out.overlapping += u64::from(!list.is_empty());
            list.push(Open {
                worker,
                delivery,
                start: at,
                lease_end,
                extended: false,
                lease_ended: None,
                dead_lettered: false,
                settled: None,
                redelivered: false,
                returned: None,
            });
        }
        EventKind::VisibilityChanged {
            delivery,
            lease_end,
            ..
        } => {
            if let Some(o) = current_lease(list, delivery) {
                if lease_end <= at {
                    o.settled = Some((at, Settled::Released));
                } else {
                    o.extended |= lease_end > o.lease_end;
                    o.lease_end = lease_end;
                }
            }
        }
        EventKind::Returned {
            worker,
            delivery,
            why,
            ..
        } if why != ReturnWhy::Lease => {
            let found = list
                .iter_mut()
                .find(|o| (o.worker, o.delivery) == (worker, delivery) && o.lease_ended.is_none());
            if let Some(o) = found {
                o.returned = Some(why);
            }
        }
        EventKind::LeaseExpired { delivery, .. } | EventKind::DeadLettered { delivery, .. } => {
            if let Some(o) = current_lease(list, delivery) {
                o.lease_ended = Some(at);
                if o.holds() && o.returned.is_none() {
                    o.lease_end = o.lease_end.min(at);
                    o.dead_lettered = matches!(kind, EventKind::DeadLettered { .. });
                }
            }
        }
        EventKind::Acked {
            worker,
            delivery,
            outcome,
            ..
        } => {
            let found = list
                .iter_mut()
                .find(|o| (o.worker, o.delivery) == (worker, delivery));
            if let Some(o) = found.filter(|o| o.holds()) {
                let how = if outcome == AckOutcome::Deleted {
                    Settled::AckedInTime
                } else {
                    Settled::AckedLate
                };
                o.settled = Some((at, how));
            }
        }
        EventKind::HandlerEnded {
            worker, delivery, ..
        } => {
            let Some(i) = list
                .iter()
                .position(|o| (o.worker, o.delivery) == (worker, delivery))
            else {
                return;
            };
            // Almost always the message's only handler: popped without a swap.
            let o = if i + 1 == list.len() {
                list.pop().expect("index i is in the list")
            } else {
                list.swap_remove(i)
            };
            let ratio = finish(&o, at, out);
            ratios.push(ratio);
        }
        _ => {}
    }
}

/// The handler of `delivery` whose lease is still running, if one is.
fn current_lease(list: &mut [Open], delivery: u32) -> Option<&mut Open> {
    list.iter_mut()
        .find(|o| o.delivery == delivery && o.lease_ended.is_none())
}

/// Counts a handler that ended at `end`; returns its hold ratio.
fn finish(o: &Open, end: Nanos, out: &mut LeaseAnalysis) -> f64 {
    let c = &mut out.counts;
    c.handlers += 1;
    let (held_until, how) = match o.settled {
        Some((t, how)) => (t, Some(how)),
        None => (end, None),
    };
    match how {
        Some(Settled::AckedInTime) => c.acked_in_time += 1,
        Some(Settled::Released) => c.released += 1,
        _ => {}
    }
    c.extended += u64::from(o.extended);
    let ended_holding = how != Some(Settled::AckedInTime)
        && how != Some(Settled::Released)
        && o.lease_ended.is_some_and(|t| t <= held_until);
    match o.returned {
        Some(why) if ended_holding => {
            let counted = c.returned_by.count(why);
            c.returned += u64::from(counted);
            c.returned_redelivered += u64::from(counted && o.redelivered);
        }
        Some(_) => {}
        None if ended_holding => {
            c.outlived += 1;
            c.outlived_redelivered += u64::from(o.redelivered);
            c.outlived_dead_lettered += u64::from(o.dead_lettered);
        }
        None => {}
    }
    let lease = o.lease_end.saturating_sub(o.start);
    out.effective_lease.record(lease);
    let held = held_until.saturating_sub(o.start);
    held as f64 / lease.max(1) as f64
}

/// The `q`-quantile by nearest rank: the `ceil(q * n)`-th smallest value; 0 for none.
fn nearest_rank(values: &mut [f64], q: f64) -> f64 {
    if values.is_empty() {
        return 0.0;
    }
    let rank = ((q * values.len() as f64).ceil() as usize).clamp(1, values.len());
    let (_, v, _) = values.select_nth_unstable_by(rank - 1, f64::total_cmp);
    *v
}

/// The handlers' hold ratios, for their p99 by nearest rank.
///
/// `all` keeps every ratio. `tail(expected)` keeps the count of every ratio by bucket (the
/// ratio's top 16 bits, which order non-negative floats as their values do) and the exact
/// values only of the top buckets: at least the `K` largest ratios, `K` being how many values
/// the p99 of `expected` handlers leaves at or above it (1%) plus 4,096. A ratio below the `K`
/// largest so far can never be among the `K` largest later (ratios are only added), so the p99
/// is exact whenever the run ends with at most `expected` handlers' worth of tail; `p99` says
/// `None` when it does not.
pub struct HoldRatios {
    kept: Vec<f64>,
    /// The kept count at which to look for buckets to let go again: twice what the last look
    /// left (which may be more than the floor asks when one bucket holds many ratios).
    prune_at: usize,
    /// Counts per bucket (only in `tail`), and the lowest bucket whose values are kept.
    buckets: Option<(Vec<u64>, usize)>,
    /// How many of the largest ratios `tail` keeps at least.
    keep: u64,
    count: u64,
}

const RATIO_BUCKETS: usize = 1 << 16;

fn bucket(r: f64) -> usize {
    // Ratios are non-negative: their bit patterns order as their values.
    (r.max(0.0).to_bits() >> 48) as usize
}

/// Values above the p99 of `n` values by nearest rank, plus the p99 itself.
fn above_p99(n: u64) -> u64 {
    n - ((0.99 * n as f64).ceil() as u64).clamp(1, n.max(1)) + 1
}

impl HoldRatios {
    pub fn all() -> Self {
        HoldRatios {
            kept: Vec::new(),
            prune_at: 0,
            buckets: None,
            keep: 0,
            count: 0,
        }
    }

    /// Ratios of a run expected to have at most `expected` handlers.
    pub fn tail(expected: u64) -> Self {
        HoldRatios {
            kept: Vec::new(),
            prune_at: 0,
            buckets: Some((vec![0; RATIO_BUCKETS], 0)),
            keep: above_p99(expected.max(1)) + 4096,
            count: 0,
        }
    }

    pub fn push(&mut self, r: f64) {
        self.count += 1;
        let Some((counts, floor)) = &mut self.buckets else {
            self.kept.push(r);
            return;
        };
        let b = bucket(r);
        counts[b] += 1;
        if b < *floor {
            return;
        }
        self.kept.push(r);
        let keep = self.keep;
        if self.kept.len() as u64 > 2 * keep && self.kept.len() > self.prune_at {
            // The lowest floor that still keeps at least `keep` values.
            let mut above = 0;
            let mut f = RATIO_BUCKETS;
            while f > *floor && above < keep {
                f -= 1;
                above += counts[f];
            }
            *floor = f;
            let floor = *floor;
            self.kept.retain(|&r| bucket(r) >= floor);
            self.prune_at = 2 * self.kept.len();
        }
    }

    /// The p99 by nearest rank (0 for none); `None` when it lies in a bucket whose values were
    /// let go.
    pub fn p99(mut self) -> Option<f64> {
        let Some((counts, floor)) = &self.buckets else {
            return Some(nearest_rank(&mut self.kept, 0.99));
        };
        if self.count == 0 {
            return Some(0.0);
        }
        let above = above_p99(self.count);
        let below_floor: u64 = counts[..*floor].iter().sum();
        // The p99 is the `above`-th largest value: kept when the kept values number at least
        // that many.
        let kept = self.count - below_floor;
        if kept < above {
            return None;
        }
        let rank = (kept - above) as usize;
        let (_, v, _) = self.kept.select_nth_unstable_by(rank, f64::total_cmp);
        Some(*v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::testkit::{ack_before_work, slow_handler, Rec};
    use crate::profile::StaleAck;
    use crate::record::HandlerEnd;

    #[test]
    fn the_slow_handler_outlives_every_lease() {
        // Deliveries at 0, 30 and 60 s, each with a 30 s lease and 34 s of work. Delivery 1's
        // lease ends at 30 s and delivery 2 starts at once: outlived, redelivered. Same for
        // delivery 2 (delivery 3 at 60 s). Delivery 3's lease ends at 90 s in the DLQ: outlived,
        // dead-lettered, not redelivered. Each held its message 34 s on a 30 s lease.
        let l = analyse(&slow_handler(StaleAck::Reject));
        assert_eq!(
            l.counts,
            HandlerLeases {
                handlers: 3,
                acked_in_time: 0,
                released: 0,
                extended: 0,
                outlived: 3,
                outlived_redelivered: 2,
                outlived_dead_lettered: 1,
                ..HandlerLeases::default()
            }
        );
        assert_eq!(l.p99_hold_over_lease, 34.0 / 30.0);
        assert_eq!(l.effective_lease.summary().max, 30000.0);
        // Delivery 2 (30 s) comes while delivery 1 works until 34 s, delivery 3 (60 s) while
        // delivery 2 works until 64 s: two overlapping executions.
        assert_eq!(l.overlapping, 2);
    }

    #[test]
    fn a_redelivery_after_its_handler_ended_does_not_overlap() {
        // Delivery 1 at 0 s: the worker is killed at 6 s (its handler ends), the lease runs
        // out at 30 s and delivery 2 comes at 30 s to another worker: one message, never two
        // handlers at once. Delivery 3 at 31 s (a duplicate the broker made, as after a
        // rebalance) while delivery 2 still works (until 40 s): one overlap.
        let mut r = Rec::new(30.0, 3);
        let m = r.publish(0.0);
        r.deliver(0.0, m, 1, 1)
            .kill(6.0, 1)
            .end_handler(6.0, m, 1, 1, HandlerEnd::Killed)
            .expire(30.0, m, 1)
            .deliver(30.0, m, 2, 2)
            .deliver(31.0, m, 3, 3)
            .ack(40.0, m, 2, 2, AckOutcome::StaleRejected)
            .end_handler(40.0, m, 2, 2, HandlerEnd::Finished)
            .ack(41.0, m, 3, 3, AckOutcome::Deleted)
            .end_handler(41.0, m, 3, 3, HandlerEnd::Finished);
        assert_eq!(analyse(&r.finish(50.0)).overlapping, 1);
        // A heartbeat's one handler overlaps nothing.
        assert_eq!(analyse(&heartbeat().finish(40.0)).overlapping, 0);
    }

    #[test]
    fn handlers_a_caller_keeps_per_message_count_as_the_map_counts() {
        // The slow handler's history (three handlers, each outliving its lease, see above) read
        // with every message's handlers kept by the caller from its first event on, as the
        // streamed accounting keeps them in its table: the same counts, the same p99.
        let record = slow_handler(StaleAck::Reject);
        let mut fold = Leases::new(HoldRatios::all());
        let mut kept: std::collections::BTreeMap<Seq, MessageHandlers> = Default::default();
        for e in &record.events {
            let Some(seq) = e.kind.seq() else {
                continue;
            };
            let handlers = kept.entry(seq).or_insert_with(|| fold.take(seq));
            fold.event_on(handlers, e.at, &e.kind);
        }
        assert!(fold.open.is_empty(), "nothing went through the map");
        let by_caller = fold.finish();
        let by_map = analyse(&record);
        assert_eq!(by_caller.counts, by_map.counts);
        assert_eq!(by_caller.counts.handlers, 3);
        assert_eq!(by_caller.p99_hold_over_lease, by_map.p99_hold_over_lease);
    }

    #[test]
    fn ack_before_work_settles_at_once() {
        // Three handlers, each acks the instant it receives (held 0 s of a 30 s lease); the
        // kill at 0.5 s and the work after the ack do not hold the message.
        let l = analyse(&ack_before_work());
        assert_eq!(
            (l.counts.handlers, l.counts.acked_in_time, l.counts.outlived),
            (3, 3, 0)
        );
        assert_eq!(l.p99_hold_over_lease, 0.0);
    }

    /// One message, a heartbeat handler: delivered at 0 s with a 30 s lease, extended at 10, 20
    /// and 30 s to end 30 s later each time, acked at 35 s.
    fn heartbeat() -> Rec {
        let mut r = Rec::new(30.0, 1);
        let m = r.publish(0.0);
        r.deliver(0.0, m, 1, 1);
        for t in [10.0, 20.0, 30.0] {
            r.change_visibility(t, m, 1, 1, t + 30.0);
        }
        r.ack(35.0, m, 1, 1, AckOutcome::Deleted)
            .end_handler(35.0, m, 1, 1, HandlerEnd::Finished);
        r
    }

    #[test]
    fn a_heartbeat_holds_the_lease_it_extended() {
        // The lease held ends at 60 s: 35 s held of 60 s, in time, extended.
        let l = analyse(&heartbeat().finish(40.0));
        assert_eq!(
            l.counts,
            HandlerLeases {
                handlers: 1,
                acked_in_time: 1,
                extended: 1,
                ..HandlerLeases::default()
            }
        );
        assert_eq!(l.p99_hold_over_lease, 35.0 / 60.0);
        assert_eq!(l.effective_lease.summary().max, 60000.0);
    }

    #[test]
    fn a_release_settles_and_a_handler_that_lets_go_holds_to_its_end() {
        let mut r = Rec::new(30.0, 2);
        let (m1, m2) = (r.publish(0.0), r.publish(0.0));
        // Message 1: handed back at 3 s (a release ends the lease at once: 3 s held of 30 s).
        r.deliver(0.0, m1, 1, 1)
            .change_visibility(3.0, m1, 1, 1, 3.0)
            .expire(3.0, m1, 1)
            .end_handler(3.0, m1, 1, 1, HandlerEnd::Finished);
        // Message 2: the worker is killed at 6 s without an ack (6 s held of 30 s); its lease
        // runs out at 30 s, after the handler: not outlived.
        r.deliver(0.0, m2, 2, 1)
            .kill(6.0, 2)
            .end_handler(6.0, m2, 2, 1, HandlerEnd::Killed)
            .expire(30.0, m2, 1);
        let l = analyse(&r.finish(40.0));
        assert_eq!(
            l.counts,
            HandlerLeases {
                handlers: 2,
                released: 1,
                ..HandlerLeases::default()
            }
        );
        // Ratios 0.1 and 0.2: the p99 of two is the larger.
        assert_eq!(l.p99_hold_over_lease, 6.0 / 30.0);
    }

    #[test]
    fn a_lease_shortened_by_the_receive_is_the_one_held() {
        // A receive that asked for a 5 s lease and work of 8 s: outlived, not redelivered (no
        // other worker), the ack stale; 8 s held of 5 s.
        let mut r = Rec::new(30.0, 1);
        let m = r.publish(0.0);
        r.deliver_for(0.0, m, 1, 1, 5.0)
            .expire(5.0, m, 1)
            .ack(8.0, m, 1, 1, AckOutcome::StaleRejected)
            .end_handler(8.0, m, 1, 1, HandlerEnd::Finished);
        let l = analyse(&r.finish(10.0));
        assert_eq!((l.counts.outlived, l.counts.outlived_redelivered), (1, 0));
        assert_eq!(l.p99_hold_over_lease, 8.0 / 5.0);
        assert_eq!(l.effective_lease.summary().max, 5000.0);
    }

    #[test]
    fn a_delivery_returned_by_its_own_connection_close_did_not_outlive_its_lease() {
        // A consumer on a 1,800 s consumer timeout with prefetch 2. Messages 1 and 2 are both
        // delivered to worker 1 at 0 s (delivery 2's hand-out ends message 1's handler span: its
        // handler is the one of message 2 from then). At 1 s it acks message 1 and closes its
        // connection, the ack overtaken by the close: the broker returns both (delivery 1 of
        // each), and the ack of message 1 comes stale after it. Worker 1 connects again: message
        // 2 is delivered again at 2 s, message 1 at 2 s, which is acked at 3 s.
        //
        // Handlers: (m1, d1) ended at 0 s by m2's hand-out, unsettled, its delivery returned at
        // 1 s, after its end: neither outlived nor returned. (m2, d1): held until 2 s (the next
        // hand-out ends it, just before that delivery: not redelivered while held), returned at
        // 1 s by the connection close: returned 1. (m2, d2) ends at m1's hand-out at 2 s;
        // (m1, d2) acked in time. 4 handlers, 1 acked in time, none outlived, 1 returned by the
        // connection close.
        let mut r = Rec::new(1800.0, 1);
        let (m1, m2) = (r.publish(0.0), r.publish(0.0));
        r.deliver(0.0, m1, 1, 1)
            .end_handler(0.0, m1, 1, 1, HandlerEnd::Finished)
            .deliver(0.0, m2, 1, 1)
            .take_back(1.0, m1, 1, 1, ReturnWhy::ConnectionClosed)
            .take_back(1.0, m2, 1, 1, ReturnWhy::ConnectionClosed)
            .ack(1.0, m1, 1, 1, AckOutcome::StaleRejected)
            .end_handler(2.0, m2, 1, 1, HandlerEnd::Finished)
            .deliver(2.0, m2, 1, 2)
            .end_handler(2.0, m2, 1, 2, HandlerEnd::Finished)
            .deliver(2.0, m1, 1, 2)
            .ack(3.0, m1, 1, 2, AckOutcome::Deleted)
            .end_handler(3.0, m1, 1, 2, HandlerEnd::Finished);
        let l = analyse(&r.finish(4.0));
        assert_eq!(
            l.counts,
            HandlerLeases {
                handlers: 4,
                acked_in_time: 1,
                returned: 1,
                returned_by: ReturnCounts {
                    connection_closed: 1,
                    ..ReturnCounts::default()
                },
                ..HandlerLeases::default()
            }
        );
        // The lease held is the consumer timeout's (not cut at the close): m2's first handler
        // held 2 s of 1,800 s, the largest ratio of the four.
        assert_eq!(l.effective_lease.summary().max, 1_800_000.0);
        assert_eq!(l.p99_hold_over_lease, 2.0 / 1800.0);
    }

    #[test]
    fn the_consumer_timeout_named_by_the_broker_is_the_lease() {
        // Delivered at 0 s on a 30 s consumer timeout; the broker closes the channel at 30 s
        // saying the acknowledgement timed out (a return for `Lease`); the handler acks at 34 s,
        // stale: outlived its lease, as without the reason, and no return counted.
        let mut r = Rec::new(30.0, 1);
        let m = r.publish(0.0);
        r.deliver(0.0, m, 1, 1)
            .take_back(30.0, m, 1, 1, ReturnWhy::Lease)
            .ack(34.0, m, 1, 1, AckOutcome::StaleRejected)
            .end_handler(34.0, m, 1, 1, HandlerEnd::Finished);
        let l = analyse(&r.finish(40.0));
        assert_eq!((l.counts.outlived, l.counts.returned), (1, 0));
        assert!(l.counts.returned_by.is_empty());
        assert_eq!(l.p99_hold_over_lease, 34.0 / 30.0);
    }

    #[test]
    fn each_close_is_counted_by_its_reason_and_a_nack_is_a_release() {
        // Five messages, one worker each, delivered at 0 s on a 30 s lease. m1: the worker closes
        // the channel at 1 s and its handler ends at 2 s. m2: the broker refuses an ack on the
        // channel at 1 s (its handler ends at 2 s). m3: the connection ends at 1 s (the handler
        // at 2 s). m4: the worker nacks at 1 s (a release, then the return for the nack).
        // m5: the worker acks at 1 s, then closes its channel at 1.5 s (nothing held then).
        // m1 is delivered again at 1.5 s to worker 6, while m1's first handler still runs
        // (redelivered), and that handler never ends (not measured).
        // Returned: 3 (one each of channel closed, ack refused, connection lost), 1 of them
        // redelivered; released 1; acked in time 1; outlived 0.
        let mut r = Rec::new(30.0, 6);
        let m: Vec<Seq> = (0..5).map(|_| r.publish(0.0)).collect();
        for (i, &seq) in m.iter().enumerate() {
            r.deliver(0.0, seq, i as WorkerId + 1, 1);
        }
        let whys = [
            ReturnWhy::ChannelClosed,
            ReturnWhy::AckRefused,
            ReturnWhy::ConnectionLost,
        ];
        for (i, why) in whys.into_iter().enumerate() {
            r.take_back(1.0, m[i], i as WorkerId + 1, 1, why);
        }
        r.deliver(1.5, m[0], 6, 2);
        for (i, &seq) in m[..3].iter().enumerate() {
            r.end_handler(2.0, seq, i as WorkerId + 1, 1, HandlerEnd::Finished);
        }
        r.change_visibility(1.0, m[3], 4, 1, 1.0)
            .take_back(1.0, m[3], 4, 1, ReturnWhy::Nack)
            .end_handler(1.0, m[3], 4, 1, HandlerEnd::Finished)
            .ack(1.0, m[4], 5, 1, AckOutcome::Deleted)
            .end_handler(1.0, m[4], 5, 1, HandlerEnd::Finished);
        let l = analyse(&r.finish(3.0));
        assert_eq!(
            l.counts,
            HandlerLeases {
                handlers: 5,
                acked_in_time: 1,
                released: 1,
                returned: 3,
                returned_redelivered: 1,
                returned_by: ReturnCounts {
                    channel_closed: 1,
                    ack_refused: 1,
                    connection_lost: 1,
                    ..ReturnCounts::default()
                },
                ..HandlerLeases::default()
            }
        );
    }

    #[test]
    fn the_p99_is_the_nearest_rank() {
        // 200 values 1..=200: rank ceil(0.99 * 200) = 198.
        let mut v: Vec<f64> = (1..=200).rev().map(f64::from).collect();
        assert_eq!(nearest_rank(&mut v, 0.99), 198.0);
        assert_eq!(nearest_rank(&mut [], 0.99), 0.0);
        assert_eq!(nearest_rank(&mut [7.0], 0.99), 7.0);
    }

    #[test]
    fn handlers_still_running_are_not_measured() {
        let mut r = Rec::new(30.0, 1);
        let m = r.publish(0.0);
        r.deliver(0.0, m, 1, 1).expire(30.0, m, 1);
        let l = analyse(&r.finish(100.0));
        assert_eq!(l.counts, HandlerLeases::default());
        assert_eq!(l.p99_hold_over_lease, 0.0);
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig { cases: 64, .. Default::default() })]

        /// The ratios' p99 kept by bucket is the p99 of every ratio: 20,000 ratios, many equal
        /// (a release's 0, a full lease's 1), the rest spread; the late ones may be all small.
        #[test]
        fn the_tail_names_the_p99_of_every_ratio(
            values in proptest::collection::vec(
                proptest::prop_oneof![
                    proptest::strategy::Just(0.0f64),
                    proptest::strategy::Just(1.0f64),
                    0.0f64..3.0,
                ],
                1..20_000,
            ),
            shrink_late in proptest::bool::ANY,
        ) {
            let (mut all, mut tail) = (HoldRatios::all(), HoldRatios::tail(values.len() as u64));
            let n = values.len();
            for (i, v) in values.into_iter().enumerate() {
                let v = if shrink_late && i > n / 2 { v / 1000.0 } else { v };
                all.push(v);
                tail.push(v);
            }
            proptest::prop_assert_eq!(tail.p99(), all.p99());
        }
    }

    #[test]
    fn the_tail_keeps_what_its_expected_count_needs_and_says_so_past_it() {
        // Expected 1,000,000 handlers: it keeps the 10,001 + 4,096 = 14,097 largest at least.
        // 20,000 ratios of 3.0, then 2,000,000 of 1.0: the 3.0s alone are more than 14,097, so
        // the floor rises to 3.0's bucket and no 1.0 is kept. The p99 of 2,020,000 ratios is
        // the 20,201st largest, a 1.0, below the 20,000 kept: past the expected count, `None`.
        let mut tail = HoldRatios::tail(1_000_000);
        for _ in 0..20_000 {
            tail.push(3.0);
        }
        for _ in 0..2_000_000 {
            tail.push(1.0);
        }
        assert_eq!(tail.p99(), None);
        // The same ratios expected: it keeps 20,201 + 4,096 = 24,297 at least: the 3.0s and
        // the 1.0s' bucket, so the p99 is named exactly.
        let mut tail = HoldRatios::tail(2_020_000);
        for _ in 0..20_000 {
            tail.push(3.0);
        }
        for _ in 0..2_000_000 {
            tail.push(1.0);
        }
        assert_eq!(tail.p99(), Some(1.0));
    }
}
