//! What an `autoscale` rule did to the fleet, read from the record: each change of the replica
//! count (when, by which controller, on what queue length), what each scale-in cost (as a
//! rollout does: workers told to stop, stopped in their grace, killed at its end, deliveries
//! cut, and of their messages the duplicates, lost and late), the most workers running at once
//! and the worker-seconds the fleet ran (what it costs).
//!
//! A scale-in is a wave of [`super::deploys::waves`]: its `Scaled` (to fewer replicas) starts
//! it, each `ReplicaRemoved` tells one of its workers to stop. A scale-out's lag is read from
//! its `ReplicaMade` events and their `WorkerAdded`: how old the oldest message was when the
//! count rose, and when the last of its replicas started.

use serde::{Deserialize, Serialize};

use super::accounting::{per_message, MessageAccount};
use super::deploys::{waves, StopCost, Waves};
use crate::record::{secs_f64, EventKind, MessageRecord, Nanos, RunRecord, ScaledBy, WorkerId};

/// What the fleet did under an `autoscale` rule.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Autoscaling {
    /// The rule's index in the profile's `chaos` list.
    pub rule: u32,
    /// Every change of the replica count, in order.
    pub scale_events: Vec<ScaleEvent>,
    /// The most workers running at once.
    pub workers_max: u32,
    /// Seconds of running workers, summed over the fleet: what it costs.
    pub worker_seconds: f64,
}

/// One change of the replica count.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScaleEvent {
    pub at_s: f64,
    /// `keda` (woken from zero, or to zero after the cooldown) or `hpa` (the queue's count).
    pub by: ScaledBy,
    /// The queue's length the controller read.
    pub metric: u64,
    pub from: u32,
    pub to: u32,
    /// A scale-in: what it cost; absent for a scale-out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost: Option<StopCost>,
    /// A scale-out: how the backlog aged while its replicas started; absent for a scale-in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lag: Option<ScaleOutLag>,
}

/// A scale-out's lag: the age of the oldest message not yet deleted (in flight or waiting, as
/// `max_oldest_age_s` counts it) when the count rose, and when its replicas had started.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScaleOutLag {
    pub oldest_age_s: f64,
    /// Seconds from the rise to the start of the last of its replicas; absent when none
    /// started (each removed first, or the run ended).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_after_s: Option<f64>,
    /// The oldest message's age at that start.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub oldest_age_when_started_s: Option<f64>,
}

/// An `autoscale` rule's scale-ins: a `Scaled` to fewer replicas, then its `ReplicaRemoved`.
const SCALE_INS: Waves = Waves {
    starts: |kind| match *kind {
        EventKind::Scaled { rule, from, to, .. } if to < from => Some(rule),
        _ => None,
    },
    tells: |kind| match *kind {
        EventKind::ReplicaRemoved { worker, rule } => Some((worker, rule)),
        _ => None,
    },
};

/// The fleet's scaling, if the record's run had an `autoscale` rule that scaled (`None`
/// otherwise: a run without one reports nothing new).
pub fn autoscaling(record: &RunRecord, late_after: Nanos) -> Option<Autoscaling> {
    let rule = record.events.iter().find_map(|e| match e.kind {
        EventKind::Scaled { rule, .. } => Some(rule),
        _ => None,
    })?;
    let mut costs = waves(record, late_after, &SCALE_INS).into_iter();
    let ages = OldestAge::of(record);
    let mut starts = scale_out_starts(record).into_iter();
    let scale_events = (record.events.iter())
        .filter_map(|e| match e.kind {
            EventKind::Scaled {
                from,
                to,
                by,
                metric,
                ..
            } => Some(ScaleEvent {
                at_s: secs_f64(e.at),
                by,
                metric,
                from,
                to,
                cost: (to < from).then(|| costs.next().map(|d| d.cost)).flatten(),
                lag: (to > from).then(|| {
                    let started = starts.next().flatten();
                    ScaleOutLag {
                        oldest_age_s: secs_f64(ages.at(e.at)),
                        started_after_s: started.map(|t| secs_f64(t - e.at)),
                        oldest_age_when_started_s: started.map(|t| secs_f64(ages.at(t))),
                    }
                }),
            }),
            _ => None,
        })
        .collect();
    let (workers_max, worker_seconds) = running(record);
    Some(Autoscaling {
        rule,
        scale_events,
        workers_max,
        worker_seconds,
    })
}

/// Each scale-out's last replica start, in the order of the scale-outs: its `ReplicaMade`
/// events follow its `Scaled`; a replica starts at its slot's next `WorkerAdded`, unless a
/// `ReplicaRemoved` of the slot comes first (it never starts). `None` when none started.
fn scale_out_starts(record: &RunRecord) -> Vec<Option<Nanos>> {
    // Per scale-out: its last start so far.
    let mut outs: Vec<Option<Nanos>> = Vec::new();
    // Per slot: the scale-out whose replica it holds, still starting.
    let mut starting: Vec<Option<usize>> = Vec::new();
    for e in &record.events {
        match e.kind {
            EventKind::Scaled { from, to, .. } if to > from => outs.push(None),
            EventKind::ReplicaMade { worker, .. } => {
                let i = (worker - 1) as usize;
                if starting.len() <= i {
                    starting.resize(i + 1, None);
                }
                starting[i] = outs.len().checked_sub(1);
            }
            EventKind::WorkerAdded { worker } | EventKind::ReplicaRemoved { worker, .. } => {
                let added = matches!(e.kind, EventKind::WorkerAdded { .. });
                let Some(out) = starting
                    .get_mut((worker - 1) as usize)
                    .and_then(Option::take)
                else {
                    continue;
                };
                if added {
                    outs[out] = Some(e.at);
                }
            }
            _ => {}
        }
    }
    outs
}

/// The age of the oldest message not yet deleted at an instant: O(messages) per question.
struct OldestAge<'a> {
    messages: &'a [MessageRecord],
    accounts: Vec<MessageAccount>,
}

impl<'a> OldestAge<'a> {
    fn of(record: &'a RunRecord) -> Self {
        OldestAge {
            messages: &record.messages,
            accounts: per_message(record),
        }
    }

    /// A message counts from its publish until it last left the main queue (deleted or
    /// dead-lettered), or to the end when it is still there.
    fn at(&self, t: Nanos) -> Nanos {
        (self.messages.iter().zip(&self.accounts))
            .filter(|(m, a)| {
                let gone = if a.place.in_main_queue() {
                    None
                } else {
                    a.left_queue_at
                };
                let published = !matches!(a.place, super::place::Place::Unpublished);
                published && m.published_at <= t && gone.is_none_or(|g| g > t)
            })
            .map(|(m, _)| t - m.published_at)
            .max()
            .unwrap_or(0)
    }
}

/// The most workers running at once, and the seconds of running workers summed to the run's
/// end. The run starts with workers 1 to `record.workers` running; a worker stops running when
/// it is killed, crashes or stops, and runs again when restarted or added.
pub(crate) fn running(record: &RunRecord) -> (u32, f64) {
    let mut alive: Vec<bool> = vec![true; record.workers as usize];
    let mut now_running = record.workers;
    let mut most = now_running;
    let mut worker_nanos: u128 = 0;
    let mut since: Nanos = 0;
    let mut set = |alive: &mut Vec<bool>, w: WorkerId, up: bool, at: Nanos, n: &mut u32| {
        let i = (w - 1) as usize;
        if alive.len() <= i {
            alive.resize(i + 1, false);
        }
        if alive[i] == up {
            return;
        }
        worker_nanos += u128::from(*n) * u128::from(at - since);
        since = at;
        alive[i] = up;
        *n = if up { *n + 1 } else { *n - 1 };
    };
    for e in &record.events {
        let (w, up) = match e.kind {
            EventKind::WorkerKilled { worker, .. }
            | EventKind::WorkerCrashed { worker, .. }
            | EventKind::WorkerStopped { worker } => (worker, false),
            EventKind::WorkerRestarted { worker } | EventKind::WorkerAdded { worker } => {
                (worker, true)
            }
            _ => continue,
        };
        set(&mut alive, w, up, e.at, &mut now_running);
        most = most.max(now_running);
    }
    worker_nanos += u128::from(now_running) * u128::from(record.end.saturating_sub(since));
    (most, worker_nanos as f64 / 1e9)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::testkit::Rec;
    use crate::record::{AckOutcome, HandlerEnd};

    const S: Nanos = 1_000_000_000;

    fn scaled(from: u32, to: u32, metric: u64) -> EventKind {
        EventKind::Scaled {
            rule: 0,
            from,
            to,
            by: ScaledBy::Hpa,
            metric,
        }
    }

    #[test]
    fn a_scale_in_is_charged_with_the_handlers_it_cut_and_the_fleet_with_its_seconds() {
        // One worker at the start. At 15 s the HPA scales 1 → 3 (workers 2 and 3 start at
        // 20 s); at 100 s it scales 3 → 1: workers 3 and 2 are told to stop. Worker 3 is idle
        // and stops at once; worker 2 handles msg-1 (delivered at 90 s, effect at 91 s) and is
        // killed at 130 s (grace 30 s); msg-1 goes to worker 1 at 140 s, a second effect.
        // Running: 1 worker 0-20 s, 3 to 100 s, 2 to 130 s, 1 to 200 s (the end):
        // 20 + 240 + 60 + 70 = 390 worker-seconds; at most 3.
        let mut r = Rec::new(300.0, 1);
        let m1 = r.publish(80.0);
        r.ev(15.0, scaled(1, 3, 40));
        r.ev(20.0, EventKind::WorkerAdded { worker: 2 });
        r.ev(20.0, EventKind::WorkerAdded { worker: 3 });
        r.deliver(90.0, m1, 2, 1).effect(91.0, Some(m1), 2, 1);
        r.ev(100.0, scaled(3, 1, 0));
        r.ev(100.0, EventKind::ReplicaRemoved { worker: 3, rule: 0 });
        r.ev(100.0, EventKind::WorkerStopped { worker: 3 });
        r.ev(100.0, EventKind::ReplicaRemoved { worker: 2, rule: 0 });
        r.end_handler(130.0, m1, 2, 1, HandlerEnd::Killed);
        r.ev(130.0, EventKind::WorkerKilled { worker: 2, rule: 0 });
        r.deliver(140.0, m1, 1, 2).effect(141.0, Some(m1), 1, 2);
        let got = autoscaling(&r.finish(200.0), 300 * S).expect("it scaled");
        assert_eq!((got.workers_max, got.worker_seconds), (3, 390.0));
        assert_eq!(got.scale_events.len(), 2);
        assert_eq!(got.scale_events[0].cost, None);
        let cut = StopCost {
            told: 2,
            stopped: 1,
            killed: 1,
            interrupted: 1,
            duplicates: 1,
            lost: 0,
            late: 0,
        };
        assert_eq!(got.scale_events[1].cost, Some(cut));
    }

    #[test]
    fn a_scale_out_s_lag_is_the_backlog_s_age_when_it_rose_and_when_its_replicas_started() {
        // One worker; msg-1 published at 0 s, msg-2 at 2 s, msg-3 at 4 s. Worker 1 takes msg-1
        // at 0 s and acks it at 30 s, then takes msg-2. At 10 s the HPA scales 1 -> 3:
        // replicas in slots 2 and 3, both starting at 70 s; a scale-in at 40 s removes slot 3
        // before it started, so slot 2's start (70 s) is the last. At 10 s the oldest message
        // not yet deleted is msg-1 (published at 0 s): 10 s. At 70 s msg-1 is deleted; msg-2
        // (2 s) is in flight on worker 1: 68 s. A second scale-out at 100 s, 1 -> 2, whose
        // replica never starts before the end (120 s): no start.
        let mut r = Rec::new(300.0, 1);
        let (m1, m2, m3) = (r.publish(0.0), r.publish(2.0), r.publish(4.0));
        r.deliver(0.0, m1, 1, 1);
        r.ev(10.0, scaled(1, 3, 3));
        r.ev(10.0, EventKind::ReplicaMade { worker: 2, rule: 0 });
        r.ev(10.0, EventKind::ReplicaMade { worker: 3, rule: 0 });
        r.ack(30.0, m1, 1, 1, AckOutcome::Deleted);
        r.deliver(30.0, m2, 1, 1);
        r.ev(40.0, scaled(3, 2, 1));
        r.ev(40.0, EventKind::ReplicaRemoved { worker: 3, rule: 0 });
        r.ev(70.0, EventKind::WorkerAdded { worker: 2 });
        r.deliver(70.0, m3, 2, 1);
        r.ack(80.0, m3, 2, 1, AckOutcome::Deleted);
        r.ack(90.0, m2, 1, 1, AckOutcome::Deleted);
        r.ev(100.0, scaled(2, 3, 0));
        r.ev(100.0, EventKind::ReplicaMade { worker: 3, rule: 0 });
        let got = autoscaling(&r.finish(120.0), 300 * S).expect("it scaled");
        let lags: Vec<_> = got.scale_events.iter().map(|e| e.lag.clone()).collect();
        let lag = |oldest, started: Option<(f64, f64)>| {
            Some(ScaleOutLag {
                oldest_age_s: oldest,
                started_after_s: started.map(|s| s.0),
                oldest_age_when_started_s: started.map(|s| s.1),
            })
        };
        // The scale-in has no lag; the last scale-out: nothing left at 100 s, never started.
        assert_eq!(lags, [lag(10.0, Some((60.0, 68.0))), None, lag(0.0, None)]);
    }

    #[test]
    fn a_run_that_never_scaled_has_nothing_to_say() {
        let mut r = Rec::new(30.0, 2);
        r.ev(10.0, EventKind::WorkerKilled { worker: 1, rule: 0 });
        assert_eq!(autoscaling(&r.finish(20.0), S), None);
    }
}
