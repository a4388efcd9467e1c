//! An `autoscale` rule on virtual time. At each look of a controller (KEDA's poll, the HPA's
//! sync) the queue is read from the broker (messages visible, and leased) and the fleet is the
//! workers whose replica has not been removed. A scale-out makes replicas in the lowest free
//! slots (a new slot when none is free), each started once its `startup` is over; a scale-in
//! tells the replicas the ReplicaSet ranks first to stop, as a `deploy` does (stop signal,
//! grace, kill), and the supervisor never brings them back.
//!
//! These only mark slots and schedule timers; the executor starts the workers a `ScaleOut`
//! timer names and polls those told to stop.

use super::world::{TimerKind, WorkerSlot, World, CLASS_SUPERVISOR};
use crate::chaos::autoscale::QueueLength;
use crate::record::{Event, EventKind, ScaledBy, WorkerId};

impl World {
    /// Controller `by` looks at the queue: the workers a scale-in told to stop (to poll).
    pub fn look(&mut self, by: ScaledBy) -> Vec<WorkerId> {
        let now = self.now;
        let counts = self.broker.counts();
        let queue = QueueLength {
            ready: counts.visible,
            in_flight: counts.leased,
        };
        let replicas = self.workers.iter().filter(|s| !s.removed).count() as u32;
        let (scale, next) = self.faults.autoscale.look(by, now, queue, replicas);
        self.schedule(next, CLASS_SUPERVISOR, TimerKind::Look { by });
        let (Some(scale), Some(rule)) = (scale, self.faults.autoscale.rule()) else {
            return Vec::new();
        };
        self.events.push(Event {
            at: now,
            kind: scale.event(rule),
        });
        if scale.to > scale.from {
            for _ in scale.from..scale.to {
                self.make_replica(rule);
            }
            return Vec::new();
        }
        let fleet: Vec<_> = (self.workers.iter())
            .filter(|s| !s.removed)
            .map(|s| (s.id, s.made, s.ready))
            .collect();
        let n = (scale.from - scale.to) as usize;
        let victims = self.faults.autoscale.to_remove(fleet, n);
        victims
            .into_iter()
            .filter(|&w| self.remove_replica(w, rule))
            .collect()
    }

    /// A scale-out's replica: in the lowest slot no replica holds and no worker still runs in
    /// (one told to stop may be in its grace), started after the rule's startup.
    fn make_replica(&mut self, rule: u32) {
        let now = self.now;
        let free = self.workers.iter().position(|s| s.removed && !s.alive);
        let id = match free {
            Some(i) => i as WorkerId + 1,
            None => {
                let id = self.workers.len() as WorkerId + 1;
                let mut slot = WorkerSlot::new(id);
                slot.alive = false;
                self.workers.push(slot);
                self.waiting.grow(id as usize);
                id
            }
        };
        let s = self.slot(id);
        s.removed = false;
        s.made = now;
        s.ready = None;
        self.events.push(Event {
            at: now,
            kind: EventKind::ReplicaMade { worker: id, rule },
        });
        let at = now + self.faults.autoscale.startup();
        let timer = TimerKind::ScaleOut {
            worker: id,
            made: now,
        };
        self.schedule(at, CLASS_SUPERVISOR, timer);
    }

    /// A scale-in removes `w`'s replica: a running worker is told to stop (true: to poll); one
    /// still starting, or dead and waiting for its restart, simply never starts again.
    fn remove_replica(&mut self, w: WorkerId, rule: u32) -> bool {
        let s = self.slot(w);
        s.removed = true;
        if !s.alive {
            return false;
        }
        let grace = self.faults.autoscale.grace();
        self.tell_to_stop(
            w,
            rule,
            grace,
            EventKind::ReplicaRemoved { worker: w, rule },
        )
    }
}
