//! A `deploy` on virtual time: a worker told to stop takes no more messages; one that holds none
//! exits at once, one that holds a delivery exits when its handler asks for the next (the
//! built-in targets stop fetching and finish the handler they are in). At the end of its grace a
//! worker still there is killed. Once a replaced worker is restarted, the rollout tells the next.
//!
//! These only mark workers (`WorkerSlot::stopping`, `doom`); the executor polls each worker they
//! return, which buries the doomed ones.

use super::world::{Doom, TimerKind, World, CLASS_SUPERVISOR};
use crate::record::{Event, EventKind, Nanos, WorkerId};

impl World {
    /// A rollout instant of `rule` came: the workers told to stop now (to poll).
    pub fn rollout(&mut self, rule: u32) -> Vec<WorkerId> {
        let now = self.now;
        let (started, next) = self.faults.deploys.start(rule, now);
        if let Some(next) = next {
            self.schedule(next, CLASS_SUPERVISOR, TimerKind::Rollout { rule });
        }
        let Some(started) = started else {
            return Vec::new();
        };
        self.events.push(Event {
            at: now,
            kind: EventKind::DeployStarted { rule },
        });
        started
            .stop
            .into_iter()
            .filter(|&w| self.deploy_tells(w, rule))
            .collect()
    }

    /// Worker `w` was restarted (or removed for good by a scale-in): the next workers its
    /// rollouts tell to stop (to poll).
    pub fn replaced(&mut self, w: WorkerId) -> Vec<WorkerId> {
        let next = self.faults.deploys.back(w);
        next.into_iter()
            .filter(|&(rule, n)| self.deploy_tells(n, rule))
            .map(|(_, n)| n)
            .collect()
    }

    /// Deploy rule `rule` tells `w` to stop (recorded as the rule's firing).
    fn deploy_tells(&mut self, w: WorkerId, rule: u32) -> bool {
        let grace = self.faults.deploys.grace(rule);
        self.tell_to_stop(w, rule, grace, EventKind::FaultFired { worker: w, rule })
    }

    /// Sends rule `rule`'s stop signal to `w` (recorded as `told`) and schedules the end of its
    /// `grace`; false when `w` is not there to be told (dead: it comes back by its own restart)
    /// or already told.
    pub(super) fn tell_to_stop(
        &mut self,
        w: WorkerId,
        rule: u32,
        grace: Nanos,
        told: EventKind,
    ) -> bool {
        let now = self.now;
        let slot = self.slot(w);
        if !slot.alive || slot.stopping || slot.doom.is_some() {
            return false;
        }
        slot.stopping = true;
        let incarnation = slot.incarnation;
        if slot.handling.is_none() {
            // Waiting for a message (or between two): nothing to finish.
            slot.doom = Some(Doom::Stopped);
        }
        self.waiting.remove((w - 1) as usize);
        self.events.push(Event {
            at: now,
            kind: told,
        });
        let end = now + grace;
        let timer = TimerKind::GraceEnd {
            worker: w,
            incarnation,
            rule,
        };
        self.schedule(end, CLASS_SUPERVISOR, timer);
        true
    }

    /// The grace of a worker told to stop ended: if that incarnation is still there, it is
    /// killed (by the rule that told it); returns whether to poll it.
    pub fn grace_ended(&mut self, worker: WorkerId, incarnation: u32, rule: u32) -> bool {
        let slot = self.slot(worker);
        if !slot.alive || slot.incarnation != incarnation || !slot.stopping {
            return false;
        }
        slot.doom.get_or_insert(Doom::Killed { rule });
        true
    }
}
