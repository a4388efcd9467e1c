//! An `autoscale` rule in a live run, kept as the sim keeps it (`runner/sim/autoscale.rs`): the
//! fleet is the worker numbers whose replica has not been removed. A scale-out makes replicas
//! in the lowest numbers no replica holds and no worker still runs in, each started once the
//! rule's `startup` is over ([`crate::runner::live::autoscale`] waits for it); a scale-in tells
//! the replicas the ReplicaSet ranks first to stop, as a `deploy` does (the rule's signal, its
//! grace, then the kill), and their supervisors never bring them back.

use super::{lock, LiveState, WorkerState};
use crate::chaos::autoscale::{Controller, QueueLength};
use crate::record::{EventKind, Nanos, WorkerId};

/// What a controller's look did to the fleet.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Looked {
    /// The replicas a scale-out made: (worker, made), each to start after the rule's startup.
    pub made: Vec<(WorkerId, Nanos)>,
    /// The controller's next look (profile time).
    pub next: Nanos,
}

/// A scale-out needs a worker number beyond those the run opened.
#[derive(Debug, thiserror::Error)]
#[error(
    "the autoscaled fleet needed worker number {0}, beyond the {1} a live run opens (twice the \
     larger of consumer.workers and the rule's max): scale-ins and scale-outs came faster than \
     the removed replicas' grace let them go"
)]
pub struct NoFreeNumber(WorkerId, u32);

impl LiveState {
    /// Each controller's first look (KEDA's poll, the HPA's sync); none without a rule.
    pub fn autoscale_looks(&self) -> Vec<(Nanos, Controller)> {
        lock(&self.faults).autoscale.timed()
    }

    /// From a scale-out to its replicas' start.
    pub fn autoscale_startup(&self) -> Nanos {
        lock(&self.faults).autoscale.startup()
    }

    /// Opens worker numbers up to `slots`, beyond the fleet the run starts with: no replica
    /// holds them until a scale-out makes one.
    pub fn open_slots(&self, slots: u32) {
        let mut ws = lock(&self.workers);
        let removed = WorkerState {
            removed: true,
            ..WorkerState::default()
        };
        let n = (slots as usize).max(ws.len());
        ws.resize(n, removed);
    }

    /// Controller `by`'s look due at `at` (profile time) finds `queue`: its change recorded
    /// (`Scaled`, at the instant it is made), the replicas a scale-in removes told to stop
    /// (`ReplicaRemoved`), those a scale-out makes named (`ReplicaMade`) for the caller to start
    /// after the rule's startup. The controller keeps its own time by `at`, so its looks stay
    /// on their period however late each one runs.
    pub fn look(
        &self,
        by: Controller,
        at: Nanos,
        queue: QueueLength,
    ) -> Result<Looked, NoFreeNumber> {
        let replicas = lock(&self.workers).iter().filter(|s| !s.removed).count() as u32;
        let (scale, next, rule) = {
            let mut faults = lock(&self.faults);
            let (scale, next) = faults.autoscale.look(by, at, queue, replicas);
            (scale, next, faults.autoscale.rule())
        };
        let mut looked = Looked {
            made: Vec::new(),
            next,
        };
        let (Some(scale), Some(rule)) = (scale, rule) else {
            return Ok(looked);
        };
        self.record(scale.event(rule));
        if scale.to > scale.from {
            for _ in scale.from..scale.to {
                looked.made.push(self.make_replica(rule, at)?);
            }
            return Ok(looked);
        }
        let fleet: Vec<_> = {
            let ws = lock(&self.workers);
            (1..=ws.len() as WorkerId)
                .zip(ws.iter())
                .filter(|(_, s)| !s.removed)
                .map(|(w, s)| (w, s.made, s.ready))
                .collect()
        };
        let n = (scale.from - scale.to) as usize;
        let victims = lock(&self.faults).autoscale.to_remove(fleet, n);
        for w in victims {
            self.remove_replica(w, rule);
        }
        Ok(looked)
    }

    /// A scale-out's replica, made at `now`: in the lowest number no replica holds and no
    /// worker still runs in (one told to stop may be in its grace).
    fn make_replica(&self, rule: u32, now: Nanos) -> Result<(WorkerId, Nanos), NoFreeNumber> {
        let w = {
            let mut ws = lock(&self.workers);
            let opened = ws.len() as u32;
            let free = ws
                .iter()
                .position(|s| s.removed && s.running.is_none())
                .ok_or(NoFreeNumber(opened + 1, opened))?;
            let s = &mut ws[free];
            s.removed = false;
            s.made = now;
            s.ready = None;
            free as WorkerId + 1
        };
        self.record(EventKind::ReplicaMade { worker: w, rule });
        Ok((w, now))
    }

    /// A scale-in removes `w`'s replica: a running worker is told to stop; one still starting,
    /// or dead and waiting for its restart, never starts again.
    fn remove_replica(&self, w: WorkerId, rule: u32) {
        lock(&self.workers)[(w - 1) as usize].removed = true;
        let (grace, signal) = {
            let faults = lock(&self.faults);
            (faults.autoscale.grace(), faults.autoscale.signal())
        };
        let told = EventKind::ReplicaRemoved { worker: w, rule };
        self.tell_to_stop(w, rule, grace, signal, told);
    }

    /// The replica made at `made` in number `w` starts now (`WorkerAdded`), unless a scale-in
    /// removed it meanwhile: whether to start it.
    pub fn replica_ready(&self, w: WorkerId, made: Nanos) -> bool {
        {
            let mut ws = lock(&self.workers);
            let s = &mut ws[(w - 1) as usize];
            if s.removed || s.made != made || s.running.is_some() {
                return false;
            }
            s.ready = Some(self.clock.now());
        }
        self.record(EventKind::WorkerAdded { worker: w });
        true
    }

    /// The replica made at `made` still holds number `w`: its supervisor may (re)start it.
    pub fn holds(&self, w: WorkerId, made: Nanos) -> bool {
        let ws = lock(&self.workers);
        ws.get((w - 1) as usize)
            .is_some_and(|s| !s.removed && s.made == made)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::time::Duration;

    use super::*;
    use crate::chaos::Faults;
    use crate::profile::{AutoscaleRule, ChaosRule};
    use crate::provider::http::LiveClock;
    use crate::record::{Event, ScaledBy};
    use crate::runner::live::state::Handle;

    const S: Nanos = 1_000_000_000;

    /// A run of `workers` workers with `slots` numbers open and an autoscale rule, target 1,
    /// 1 to 4 replicas, no scale-down window; workers 1..=`workers` running.
    fn fleet(workers: u32, slots: u32) -> Arc<LiveState> {
        let mut rule = AutoscaleRule {
            min: 1,
            max: 4,
            ..AutoscaleRule::new(1)
        };
        rule.scale_down.stabilization = Duration::ZERO;
        let faults = Faults::new(&[ChaosRule::new(rule)], 1);
        let state = LiveState::new(LiveClock::new(1.0), "q", workers, faults);
        state.open_slots(slots);
        for w in 1..=workers {
            state.started(w, Handle::Task(tokio::spawn(async {}).abort_handle()));
        }
        state
    }

    fn kinds(events: Vec<Event>) -> Vec<EventKind> {
        events.into_iter().map(|e| e.kind).collect()
    }

    fn ready(n: u64) -> QueueLength {
        QueueLength {
            ready: n,
            in_flight: 0,
        }
    }

    #[tokio::test]
    async fn a_scale_out_takes_the_lowest_free_numbers_and_a_scale_in_the_youngest_replicas() {
        // 2 workers, 4 ready at the HPA's sync at 15 s: 4 / target 1 = 4 (the HPA adds up to
        // 4 pods or 100% per 15 s): 2 -> 4, replicas made in numbers 3 and 4, to start later.
        let state = fleet(2, 8);
        let looked = state
            .look(ScaledBy::Hpa, 15 * S, ready(4))
            .expect("free numbers");
        assert_eq!(looked.made, [(3, 15 * S), (4, 15 * S)]);
        assert_eq!(looked.next, 30 * S);
        let scaled = EventKind::Scaled {
            rule: 0,
            from: 2,
            to: 4,
            by: ScaledBy::Hpa,
            metric: 4,
        };
        let made = |worker| EventKind::ReplicaMade { worker, rule: 0 };
        assert_eq!(kinds(state.take_events()), [scaled, made(3), made(4)]);
        // Replica 3 starts (and runs); replica 4 is still starting.
        assert!(state.replica_ready(3, 15 * S));
        state.started(3, Handle::Task(tokio::spawn(async {}).abort_handle()));
        assert_eq!(
            kinds(state.take_events()),
            [EventKind::WorkerAdded { worker: 3 }]
        );
        // At 30 s nothing is ready: the minimum, 1 (the HPA removes up to 100% per 15 s):
        // 4 -> 1. The ReplicaSet removes the one not ready first (4: never started, nothing
        // to tell), then the youngest ready (3, made at 15 s), then of workers 1 and 2 (equal)
        // the higher: 2. Workers 3 and 2 are told to stop.
        let looked = state
            .look(ScaledBy::Hpa, 30 * S, ready(0))
            .expect("a scale-in");
        assert!(looked.made.is_empty());
        let removed = |worker| EventKind::ReplicaRemoved { worker, rule: 0 };
        let scaled = EventKind::Scaled {
            rule: 0,
            from: 4,
            to: 1,
            by: ScaledBy::Hpa,
            metric: 0,
        };
        assert_eq!(kinds(state.take_events()), [scaled, removed(3), removed(2)]);
        // None of them is started again; replica 4 never starts.
        assert!(!state.replica_ready(4, 15 * S));
        assert_eq!(
            (1..=4)
                .map(|w| state.holds(w, state.worker(w).made))
                .collect::<Vec<_>>(),
            [true, false, false, false]
        );
    }

    #[tokio::test]
    async fn a_scale_out_past_the_numbers_opened_fails_naming_them() {
        // 1 worker, 2 numbers open, 4 ready: 1 -> 4 needs numbers 2, 3 and 4: 3 is past them.
        let state = fleet(1, 2);
        let e = state
            .look(ScaledBy::Hpa, 15 * S, ready(4))
            .expect_err("no free number");
        assert!(
            e.to_string()
                .starts_with("the autoscaled fleet needed worker number 3, beyond the 2"),
            "{e}"
        );
    }
}
