//! A `deploy` in a live run: a worker told to stop gets the rule's signal (a process, to its
//! process group; a built-in target's task, through its client, which then fetches nothing more
//! and exits once its handler is done or at once while it waits for a message); at the end of
//! its grace an incarnation still running is killed (SIGKILL). Once a replaced worker is back,
//! the rollout tells the next.

use std::sync::Arc;

use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;

use super::{lock, Handle, LiveState};
use crate::profile::StopSignal;
use crate::record::{EventKind, HandlerEnd, Nanos, Seq, WorkerId};

impl LiveState {
    /// A rollout instant of `rule` came: tells its first workers to stop; the rule's next instant.
    pub fn rollout(&self, rule: u32) -> Option<Nanos> {
        let now = self.clock.now();
        let (started, next) = lock(&self.faults).deploys.start(rule, now);
        if let Some(started) = started {
            self.record(EventKind::DeployStarted { rule });
            for w in started.stop {
                self.deploy_tells(w, rule);
            }
        }
        next
    }

    /// Worker `w` runs: again after a death or a stop (`restart`, recorded), or for the first
    /// time. A rollout that found it not running yet counts it replaced; the next workers its
    /// rollouts replace are told to stop.
    pub fn running(&self, w: WorkerId, restart: bool) {
        if restart {
            self.record(EventKind::WorkerRestarted { worker: w });
        }
        let next = lock(&self.faults).deploys.back(w);
        for (rule, n) in next {
            self.deploy_tells(n, rule);
        }
    }

    /// Worker `w`'s replica, removed by a scale-in, is gone for good: the rollouts waiting for
    /// it go on (the sim's `replaced`), telling their next workers to stop.
    pub fn gone(&self, w: WorkerId) {
        let next = lock(&self.faults).deploys.back(w);
        for (rule, n) in next {
            self.deploy_tells(n, rule);
        }
    }

    /// Deploy rule `rule` tells `w` to stop (recorded as the rule's firing).
    fn deploy_tells(&self, w: WorkerId, rule: u32) {
        let (grace, signal) = {
            let faults = lock(&self.faults);
            (faults.deploys.grace(rule), faults.deploys.signal(rule))
        };
        self.tell_to_stop(
            w,
            rule,
            grace,
            signal,
            EventKind::FaultFired { worker: w, rule },
        );
    }

    /// Sends `signal` to the running incarnation of `w` for rule `rule`, recorded as `told`
    /// (none running, or one already dying or told: nothing), and kills it at the end of
    /// `grace` if it still runs.
    pub(super) fn tell_to_stop(
        &self,
        w: WorkerId,
        rule: u32,
        grace: Nanos,
        signal: StopSignal,
        told: EventKind,
    ) {
        let (handle, incarnation, wake) = {
            let mut ws = lock(&self.workers);
            let Some(s) = ws.get_mut((w as usize).wrapping_sub(1)) else {
                return;
            };
            let Some(handle) = s
                .running
                .clone()
                .filter(|_| !s.killed && s.stopping.is_none())
            else {
                return;
            };
            s.stopping = Some(rule);
            (handle, s.incarnation, s.stop_signal.clone())
        };
        self.record(told);
        match handle {
            Handle::Process(pgid) => {
                let signal = match signal {
                    StopSignal::Term => Signal::SIGTERM,
                    StopSignal::Int => Signal::SIGINT,
                };
                // To the program ackbench started (its group's leader) only, as Kubernetes
                // signals a container's main process: the program tells its own children (a
                // pool, a forked worker) what its shutdown does. The kill at the grace's end
                // takes the whole group. It may be gone already (it died a moment ago): its exit
                // says so.
                let _ = kill(Pid::from_raw(pgid), signal);
            }
            Handle::Task(_) => wake.notify_one(),
        }
        let wall = self.clock.wall(grace);
        let me = self.me.upgrade();
        self.runtime.spawn(async move {
            tokio::time::sleep(wall).await;
            if let Some(me) = me {
                let current = me.worker(w);
                if current.incarnation == incarnation && current.running.is_some() {
                    me.kill_for(w, rule, false);
                }
            }
        });
    }

    /// What wakes the built-in target `w` when it is told to stop, and whether it was told.
    pub fn stop_request(&self, w: WorkerId) -> (bool, Arc<tokio::sync::Notify>) {
        let ws = lock(&self.workers);
        let s = &ws[(w - 1) as usize];
        (s.stopping.is_some(), s.stop_signal.clone())
    }

    /// The built-in target `w`, told to stop, exits by itself: recorded, and its task ended.
    pub fn stop_task(&self, w: WorkerId) {
        // From here its end is the stop's, not a kill's or a crash's.
        let Some((running, handling)) = self.end_incarnation(w, |s| s.stopping.is_some()) else {
            return;
        };
        self.stopped(w, handling);
        if let Some(handle) = running {
            handle.kill();
        }
    }

    /// Worker `w`, told to stop, exited by itself; `handling` the delivery its last handler
    /// span was on.
    pub(super) fn stopped(&self, w: WorkerId, handling: Option<(Seq, u32)>) {
        if let Some((seq, delivery)) = handling {
            self.record(EventKind::HandlerEnded {
                seq,
                worker: w,
                delivery,
                how: HandlerEnd::Finished,
            });
        }
        self.record(EventKind::WorkerStopped { worker: w });
    }
}
