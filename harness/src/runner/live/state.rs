//! What a live run knows about its workers while it runs, and the hooks through which the SQS
//! endpoint and the HTTP provider report to it (and let it kill a worker before an answer leaves).

mod copies_out;
mod holdings;
mod keys;
mod lives;
mod message;
mod observe;
mod replicas;
mod stopping;

pub use copies_out::CopiesOut;

pub use message::{HeldAck, HeldDelivery};

use std::sync::{Arc, Mutex, MutexGuard, OnceLock, PoisonError, Weak};

use nix::sys::signal::{killpg, Signal};
use nix::unistd::Pid;

use super::proxy::link::Links;
use super::published::Published;
use crate::broker::sqs::{Delete, SqsHooks};
use crate::chaos::{Faults, PointHit};
use crate::profile::KillPoint;
use crate::provider::http::{LiveClock, LiveHooks};
use crate::record::{
    Event, EventKind, HandlerEnd, Nanos, Seq, Unattributed, UnattributedCall, WorkerExit, WorkerId,
};
use crate::workload::key_reader::KeyReader;
use holdings::{Holdings, Match};
use lives::Lives;

/// How a running worker is stopped.
#[derive(Debug, Clone)]
pub enum Handle {
    /// A worker process, by its process group.
    Process(i32),
    /// A built-in target's task in this process.
    Task(tokio::task::AbortHandle),
}

impl Handle {
    fn kill(&self) {
        match self {
            // The group may be gone already (it died by itself a moment ago): nothing to do then.
            Handle::Process(pgid) => {
                let _ = killpg(Pid::from_raw(*pgid), Signal::SIGKILL);
            }
            Handle::Task(t) => t.abort(),
        }
    }
}

/// One worker, as the supervisor last saw it.
#[derive(Debug, Default, Clone)]
pub struct WorkerState {
    /// How to stop the running incarnation, if one runs.
    pub running: Option<Handle>,
    pub incarnation: u32,
    /// The delivery its handler span is on: (seq, receive count). One per worker, the latest
    /// it received (a handler span ends when the next delivery comes).
    pub handling: Option<(Seq, u32)>,
    /// Every delivery it holds, which its provider calls are matched to by key.
    pub holdings: Holdings,
    /// Set when a kill rule killed the current incarnation (its exit is then no crash).
    pub killed: bool,
    /// The incarnations that were killed (a kill rule, the end of a grace), not stopped: as a
    /// process killed by SIGKILL, such an incarnation sends nothing more to its broker.
    pub dead: Vec<u32>,
    /// The `deploy` rule that told the current incarnation to stop, if one did (its own exit
    /// is then no crash but a stop).
    pub stopping: Option<u32>,
    /// Wakes a built-in target told to stop while it waits for a message.
    pub stop_signal: Arc<tokio::sync::Notify>,
    /// Not part of the fleet (an `autoscale` rule's scale-in removed it, or no replica holds
    /// this number yet): its supervisor does not bring it back.
    pub removed: bool,
    /// When the replica holding this number was made (profile time; 0 for the fleet the run
    /// starts with), and when it started (`None` while starting): what a scale-in ranks it by.
    pub made: Nanos,
    pub ready: Option<Nanos>,
}

impl WorkerState {
    /// A worker of the fleet the run starts with.
    fn starting() -> WorkerState {
        WorkerState {
            ready: Some(0),
            ..WorkerState::default()
        }
    }
}

/// An incarnation the run ended: how to stop it, and the delivery (seq, receive count) its
/// handler span was on.
type Ended = (Option<Handle>, Option<(Seq, u32)>);

/// Shared by the supervisor, the endpoint's hooks and the provider's hooks.
pub struct LiveState {
    pub clock: LiveClock,
    pub queue: String,
    /// Keys of published messages, by seq and by key.
    pub keys: Mutex<keys::PublishedKeys>,
    workers: Mutex<Vec<WorkerState>>,
    faults: Mutex<Faults>,
    /// Worker and handler events the supervisor records (profile time).
    events: Mutex<Vec<Event>>,
    runtime: tokio::runtime::Handle,
    /// This state itself, for kills that happen later (a rule's `delay`).
    me: Weak<LiveState>,
    /// With an ingress load: what the system published itself.
    published: OnceLock<Arc<Published>>,
    /// When the run stopped its workers (profile time), once it has: what happens to a worker
    /// from then on is the run's doing, and nothing is recorded later than this instant.
    stopped_at: OnceLock<Nanos>,
    /// Told of every event recorded, so the run's loop wakes when something happened.
    activity: tokio::sync::Notify,
    /// Provider calls not matched to exactly one delivery their worker held.
    unattributed: Mutex<Vec<UnattributedCall>>,
    /// Worker connections the proxy closed because they broke.
    broken: Mutex<Vec<crate::record::BrokenConnection>>,
    /// With `connection` faults: each worker's link, which its proxied connections follow.
    links: OnceLock<Arc<Links>>,
    /// How a body a worker sends names its message (the embedded SQS endpoint's copies).
    key_reader: OnceLock<Option<KeyReader>>,
    /// The broker's numbers of the run's messages and of the copies workers sent.
    lives: Mutex<Lives>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl LiveState {
    /// The state of a run with `faults` (a `KillSchedule` alone for a run with kills only).
    pub fn new(
        clock: LiveClock,
        queue: &str,
        workers: u32,
        faults: impl Into<Faults>,
    ) -> Arc<LiveState> {
        Arc::new_cyclic(|me| LiveState {
            clock,
            queue: queue.to_string(),
            keys: Mutex::new(keys::PublishedKeys::default()),
            workers: Mutex::new(vec![WorkerState::starting(); workers as usize]),
            faults: Mutex::new(faults.into()),
            events: Mutex::new(Vec::new()),
            runtime: tokio::runtime::Handle::current(),
            me: me.clone(),
            published: OnceLock::new(),
            stopped_at: OnceLock::new(),
            activity: tokio::sync::Notify::new(),
            unattributed: Mutex::new(Vec::new()),
            broken: Mutex::new(Vec::new()),
            links: OnceLock::new(),
            key_reader: OnceLock::new(),
            lives: Mutex::new(Lives::default()),
        })
    }

    /// The run has `connection` faults: its proxies put each worker's connections on its link.
    pub fn set_links(&self, links: Arc<Links>) {
        let _ = self.links.set(links);
    }

    /// Bodies the workers send name their message as `reader` reads them: such a send is a
    /// copy of that message (its retry).
    pub fn follow_copies(&self, reader: Option<KeyReader>) {
        let _ = self.key_reader.set(reader);
    }

    /// A broker event in the run's terms (copies' numbers and deliveries mapped onto their
    /// message's); `None` for the publish of a copy, recorded when it was sent.
    pub fn in_run_terms(&self, kind: EventKind) -> Option<EventKind> {
        lock(&self.lives).event(kind)
    }

    /// `worker` sent message `seq` again to `to`, on any of its connections: 0 when it is its
    /// framework moving the copy it delayed to the queue; else a retry, from the worker's latest
    /// delivery of it (held, or let go of a moment ago: its ack may reach the broker first,
    /// on another connection), whose ack then removes the copy the retry replaced.
    pub fn retiring(&self, worker: WorkerId, seq: Seq, to: crate::record::Republish) -> u32 {
        if lock(&self.lives).moved(seq, to) {
            return 0;
        }
        let delivery = lock(&self.workers)
            .get((worker as usize).wrapping_sub(1))
            .and_then(|s| s.holdings.latest_of(seq))
            .unwrap_or(0);
        lock(&self.lives).retire(seq, delivery);
        delivery
    }

    /// The message of the run a body names, as [`LiveState::follow_copies`] reads it (`None`
    /// when copies are not followed).
    pub fn seq_of_body(&self, body: &[u8]) -> Option<Seq> {
        let reader = self.key_reader.get()?.as_ref()?;
        reader.read(body).and_then(|k| self.seq_of_key(&k))
    }

    /// Whether the ack of delivery `delivery` of `seq` removes a copy a retry replaced.
    pub fn replaced(&self, seq: Seq, delivery: u32) -> bool {
        lock(&self.lives).replaced(seq, delivery)
    }

    /// The workers' links, for a run with `connection` faults.
    pub fn links(&self) -> Option<Arc<Links>> {
        self.links.get().cloned()
    }

    /// From now on, messages clients send to the run's queue are the run's messages.
    pub fn set_published(&self, published: Arc<Published>) {
        let _ = self.published.set(published);
    }

    pub fn record(&self, kind: EventKind) {
        let now = self.clock.now();
        let at = self.stopped_at.get().map_or(now, |&end| now.min(end));
        lock(&self.events).push(Event { at, kind });
        self.activity.notify_one();
    }

    /// Completes when an event was recorded since the last call returned (or now, if one was).
    pub async fn activity(&self) {
        self.activity.notified().await;
    }

    /// The run publishes its next message, with `key` (its seq is the count published so far).
    pub fn publishing(&self, key: &str) {
        lock(&self.keys).push(key.to_string());
    }

    /// The broker dropped the send just announced by [`LiveState::publishing`] (a repeat within
    /// its deduplication window): no message has its key.
    pub fn not_published(&self) {
        lock(&self.keys).pop();
    }

    pub fn take_events(&self) -> Vec<Event> {
        std::mem::take(&mut lock(&self.events))
    }

    pub fn worker(&self, w: WorkerId) -> WorkerState {
        lock(&self.workers)
            .get((w - 1) as usize)
            .cloned()
            .unwrap_or_default()
    }

    /// Incarnation `incarnation` of worker `w` was killed (not stopped, not still running).
    pub fn was_killed(&self, w: WorkerId, incarnation: u32) -> bool {
        lock(&self.workers)
            .get((w as usize).wrapping_sub(1))
            .is_some_and(|s| s.dead.contains(&incarnation))
    }

    pub fn busy(&self) -> bool {
        lock(&self.workers).iter().any(|w| w.handling.is_some())
    }

    /// A new incarnation of `w` runs (as a process group or a task).
    pub fn started(&self, w: WorkerId, handle: Handle) -> u32 {
        let mut ws = lock(&self.workers);
        let s = &mut ws[(w - 1) as usize];
        s.running = Some(handle);
        s.incarnation += 1;
        s.killed = false;
        s.stopping = None;
        s.stop_signal = Arc::new(tokio::sync::Notify::new());
        s.handling = None;
        s.holdings.clear();
        s.incarnation
    }

    /// The current incarnation of `w` ended as `exit`. Records a crash (and returns true)
    /// unless a kill rule caused it, or the run did while stopping its workers (SIGKILL).
    pub fn exited(&self, w: WorkerId, exit: WorkerExit) -> bool {
        let ours =
            self.stopped_at.get().is_some() && exit == WorkerExit::Signal(Signal::SIGKILL as i32);
        let (was_killed, stopped, handling) = {
            let mut ws = lock(&self.workers);
            let s = &mut ws[(w - 1) as usize];
            s.running = None;
            s.holdings.clear();
            if s.killed || ours {
                (true, false, None)
            } else {
                (false, s.stopping.is_some(), s.handling.take())
            }
        };
        if was_killed {
            return false;
        }
        if stopped {
            self.stopped(w, handling);
            return false;
        }
        if let Some((seq, delivery)) = handling {
            self.record(EventKind::HandlerEnded {
                seq,
                worker: w,
                delivery,
                how: HandlerEnd::Crashed,
            });
        }
        self.record(EventKind::WorkerCrashed { worker: w, exit });
        true
    }

    /// The current incarnation of `w` was stopped by the run itself (a built-in target's task
    /// aborted by a kill rule or at the end): nothing to record.
    pub fn ended(&self, w: WorkerId) {
        lock(&self.workers)[(w - 1) as usize].running = None;
    }

    /// Kills the current incarnation of `w` (SIGKILL to its process group) for rule `rule`: the
    /// rule's firing.
    pub fn kill(&self, w: WorkerId, rule: u32) {
        self.kill_for(w, rule, true);
    }

    /// Kills the current incarnation of `w` for rule `rule`; `fired`: the kill is the rule's
    /// firing (a `kill_worker`), not the end of a grace it gave before.
    fn kill_for(&self, w: WorkerId, rule: u32, fired: bool) {
        let Some((running, handling)) = self.end_incarnation(w, |s| s.running.is_some()) else {
            return;
        };
        {
            let mut ws = lock(&self.workers);
            let s = &mut ws[(w - 1) as usize];
            let incarnation = s.incarnation;
            s.dead.push(incarnation);
        }
        if let Some((seq, delivery)) = handling {
            self.record(EventKind::HandlerEnded {
                seq,
                worker: w,
                delivery,
                how: HandlerEnd::Killed,
            });
        }
        if fired {
            self.record(EventKind::FaultFired { worker: w, rule });
        }
        self.record(EventKind::WorkerKilled { worker: w, rule });
        if let Some(handle) = running {
            handle.kill();
        }
    }

    /// Marks the current incarnation of `w` as ended by the run (a kill, a stop), unless it is
    /// already or `ends` says otherwise of it: its holdings let go. How to stop it, and the
    /// delivery its handler span was on.
    fn end_incarnation(
        &self,
        w: WorkerId,
        ends: impl FnOnce(&WorkerState) -> bool,
    ) -> Option<Ended> {
        let mut ws = lock(&self.workers);
        let s = &mut ws[(w - 1) as usize];
        if s.killed || !ends(s) {
            return None;
        }
        s.killed = true;
        s.holdings.clear();
        Some((s.running.clone(), s.handling.take()))
    }

    /// The run stops its workers at `end` (profile time): from now on a worker's death by the
    /// run's SIGKILL is no crash, and nothing is recorded after `end` (a crash noticed while
    /// stopping happened before it). Each supervisor then kills its own worker.
    pub fn stopping(&self, end: Nanos) {
        let _ = self.stopped_at.set(end);
    }

    /// Checks the kill rules at a handler point of `w`; kills now, or later after the rule's
    /// delay. True if the worker dies now, or is dying already (a worker holding several
    /// deliveries reaches points of several at once: only the first is counted).
    pub fn at_point(
        &self,
        point: &KillPoint,
        w: WorkerId,
        seq: Option<Seq>,
        delivery: u32,
    ) -> bool {
        match lock(&self.workers).get((w as usize).wrapping_sub(1)) {
            None => return false,
            // Its incarnation is being killed already (another of its calls was answered a
            // moment before): the point is not the rules' to count, and the answer never leaves.
            Some(s) if s.killed => return true,
            Some(_) => {}
        }
        let key = seq
            .and_then(|s| lock(&self.keys).get(s).map(str::to_string))
            .unwrap_or_default();
        let hit = PointHit {
            point,
            worker: w,
            key: &key,
            delivery,
            now: self.clock.now(),
        };
        let fired = lock(&self.faults).kills.at_point(hit);
        match fired {
            None => false,
            Some((rule, 0)) => {
                self.kill(w, rule);
                true
            }
            Some((rule, delay)) => {
                let incarnation = self.worker(w).incarnation;
                let wall = self.clock.wall(delay);
                let me = self.me.upgrade();
                self.runtime.spawn(async move {
                    tokio::time::sleep(wall).await;
                    if let Some(me) = me {
                        if me.worker(w).incarnation == incarnation {
                            me.kill(w, rule);
                        }
                    }
                });
                false
            }
        }
    }

    /// The delivery of `w` a provider call with effect key `key` (the key of message `seq`, if
    /// one was published with it) belongs to: the one of that key `w` holds, else the latest of
    /// that key it let go of; its receive count, 0 for none. A call that cannot be matched to
    /// exactly one is kept with the reason ([`LiveState::take_unattributed`]).
    pub fn attribute(&self, w: WorkerId, key: &str, seq: Option<Seq>) -> u32 {
        let holdings = match lock(&self.workers).get((w as usize).wrapping_sub(1)) {
            Some(s) => s.holdings.clone(),
            None => return 0,
        };
        let found = {
            let keys = lock(&self.keys);
            holdings.find(|s| keys.get(s) == Some(key))
        };
        let why = match found {
            Match::Held(..) | Match::LetGo(..) => None,
            Match::Ambiguous(..) => Some(Unattributed::Ambiguous),
            Match::NotHeld if seq.is_none() => Some(Unattributed::UnknownKey),
            Match::NotHeld => Some(Unattributed::NotHeld),
        };
        if let Some(why) = why {
            lock(&self.unattributed).push(UnattributedCall {
                at: self.clock.now(),
                worker: w,
                seq,
                why,
            });
        }
        found.delivery()
    }

    /// The calls [`LiveState::attribute`] could not match, in the order they started.
    pub fn take_unattributed(&self) -> Vec<UnattributedCall> {
        std::mem::take(&mut lock(&self.unattributed))
    }

    /// The proxy closed a connection of worker `w` because it broke, for `why` (a frame over
    /// the broker's limits, bytes that are no frame, a panic of its reader).
    pub fn connection_broke(&self, w: WorkerId, why: String) {
        lock(&self.broken).push(crate::record::BrokenConnection {
            at: self.clock.now(),
            worker: w,
            why,
        });
        self.activity.notify_one();
    }

    /// The connections [`LiveState::connection_broke`] was told of, in the order they broke.
    pub fn take_broken(&self) -> Vec<crate::record::BrokenConnection> {
        std::mem::take(&mut lock(&self.broken))
    }

    /// Timed rules (kills `at`, `every`; deploys): the first instant of each, in profile time.
    pub fn timed_faults(&self) -> Vec<(Nanos, crate::chaos::Timed)> {
        lock(&self.faults).timed()
    }

    /// A timed rule's instant came: kill (a busy worker, or the rule's) and say when next.
    pub fn fire_timed(&self, rule: u32) -> Option<Nanos> {
        let (busy, alive): (Vec<WorkerId>, Vec<WorkerId>) = {
            let ws = lock(&self.workers);
            let alive: Vec<WorkerId> = (1..=ws.len() as WorkerId)
                .filter(|&w| ws[(w - 1) as usize].running.is_some())
                .collect();
            let busy = alive
                .iter()
                .copied()
                .filter(|&w| ws[(w - 1) as usize].handling.is_some())
                .collect();
            (busy, alive)
        };
        let candidates = if busy.is_empty() { alive } else { busy };
        let now = self.clock.now();
        let (victim, next) = lock(&self.faults).kills.fire_timed(rule, now, &candidates);
        if let Some(w) = victim {
            self.kill(w, rule);
        }
        next
    }
}

/// Hooks handed to the endpoint and the provider: a handle to the run's state.
#[derive(Clone)]
pub struct StateHooks(pub Arc<LiveState>);

impl SqsHooks for StateHooks {
    fn receive_requested(&self, queue: &str, worker: WorkerId) {
        if queue != self.0.queue || worker as usize > lock(&self.0.workers).len() || worker == 0 {
            return;
        }
        let ended = {
            let mut ws = lock(&self.0.workers);
            let s = &mut ws[(worker - 1) as usize];
            s.holdings.let_go_all();
            s.handling.take()
        };
        if let Some((seq, delivery)) = ended {
            self.0.record(EventKind::HandlerEnded {
                seq,
                worker,
                delivery,
                how: HandlerEnd::Finished,
            });
        }
    }

    fn sent(&self, queue: &str, worker: WorkerId, broker: Seq, body: &str) {
        if queue != self.0.queue {
            return;
        }
        let seq = broker;
        if self.0.published.get().is_none() && self.ours(queue, worker) {
            self.0.copy_sent(worker, broker, body);
            return;
        }
        if let Some(p) = self.0.published.get() {
            let key = p.sent(seq, body);
            lock(&self.0.keys).set(seq, key);
        }
    }

    fn delete(&self, queue: &str, worker: WorkerId, seq: Seq, delivery: u32) -> Delete {
        let (seq, delivery) = lock(&self.0.lives).delivery(seq, delivery);
        match self.ours(queue, worker) {
            true => self.0.delete_fault(worker, seq, delivery),
            false => Delete::Now,
        }
    }

    fn delivery_dropped(&self, queue: &str, worker: WorkerId, seq: Seq, delivery: u32) -> bool {
        let (seq, delivery) = lock(&self.0.lives).delivery(seq, delivery);
        self.ours(queue, worker) && self.0.delivery_dropped(worker, seq, delivery)
    }

    fn delivered(&self, queue: &str, worker: WorkerId, seq: Seq, delivery: u32) -> bool {
        if queue != self.0.queue || worker == 0 || worker as usize > lock(&self.0.workers).len() {
            return false;
        }
        let (seq, delivery) = lock(&self.0.lives).delivered(seq, delivery);
        {
            let mut ws = lock(&self.0.workers);
            let s = &mut ws[(worker - 1) as usize];
            s.handling = Some((seq, delivery));
            s.holdings.received(seq, delivery);
        }
        self.0
            .at_point(&KillPoint::Received, worker, Some(seq), delivery)
    }
}

impl LiveState {
    /// `worker` sent message `broker` to the run's queue: a copy of the message its body names
    /// (a retry), if it names one of the run's.
    fn copy_sent(&self, worker: WorkerId, broker: Seq, body: &str) {
        let Some(seq) = self.seq_of_body(body.as_bytes()) else {
            return;
        };
        let delivery = self.retiring(worker, seq, crate::record::Republish::Queue);
        lock(&self.lives).copied(broker, seq, delivery);
        self.observed_republish(worker, seq, delivery, crate::record::Republish::Queue);
    }
}

impl StateHooks {
    /// Whether `queue` and `worker` are the run's (the endpoint serves other clients too).
    fn ours(&self, queue: &str, worker: WorkerId) -> bool {
        queue == self.0.queue && worker != 0 && worker as usize <= lock(&self.0.workers).len()
    }
}

impl LiveHooks for StateHooks {
    fn attribute(&self, worker: WorkerId, key: &str, seq: Option<Seq>) -> u32 {
        self.0.attribute(worker, key, seq)
    }

    fn at_point(
        &self,
        point: &KillPoint,
        worker: WorkerId,
        seq: Option<Seq>,
        delivery: u32,
    ) -> bool {
        self.0.at_point(point, worker, seq, delivery)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chaos::KillSchedule;

    fn crashes(events: &[Event]) -> Vec<WorkerExit> {
        events
            .iter()
            .filter_map(|e| match e.kind {
                EventKind::WorkerCrashed { exit, .. } => Some(exit),
                _ => None,
            })
            .collect()
    }

    /// A handle that stops nothing real (a finished task): these tests signal no process.
    fn task() -> Handle {
        Handle::Task(tokio::spawn(async {}).abort_handle())
    }

    #[tokio::test]
    async fn the_runs_own_stop_is_no_crash_and_nothing_is_recorded_after_the_end() {
        let s = LiveState::new(LiveClock::new(1.0), "q", 3, KillSchedule::new(&[], 1));
        for w in 1..=3 {
            s.started(w, task());
        }
        // Before the stop, any death nobody asked for is a crash, SIGKILL included (someone
        // else's kill -9).
        assert!(s.exited(1, WorkerExit::Signal(9)));
        s.started(1, task());
        // The run stops its workers at `end`: its own SIGKILL is no crash, and a task aborted
        // by the stop is none either...
        let end = s.clock.now();
        s.stopping(end);
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        assert!(!s.exited(1, WorkerExit::Signal(9)));
        s.ended(2);
        // ...but a worker that had exited by itself just before, and is only noticed now, did
        // crash: recorded at the end instant, not 20 ms later.
        assert!(s.exited(3, WorkerExit::Status(1)));
        let events = s.take_events();
        assert!(events.iter().all(|e| e.at <= end), "{events:?}");
        assert_eq!(events.last().map(|e| e.at), Some(end));
        assert_eq!(
            crashes(&events),
            [WorkerExit::Signal(9), WorkerExit::Status(1)]
        );
    }

    #[tokio::test]
    async fn calls_are_matched_to_the_held_delivery_of_their_key_and_kills_follow_it() {
        // The rule: kill at call_answered on a first delivery, twice at most.
        let mut rule = crate::profile::KillRule::new(crate::profile::KillTrigger::Point(
            KillPoint::CallAnswered,
        ));
        rule.delivery = Some(1);
        rule.times = Some(2);
        let kills = KillSchedule::new(&[crate::profile::ChaosRule::new(rule)], 1);
        let s = LiveState::new(LiveClock::new(1.0), "q", 2, kills);
        for k in ["a", "b", "c"] {
            s.publishing(k);
        }
        s.started(1, task());
        s.started(2, task());
        // Worker 1 holds a (its delivery 2: another worker died holding it) and then b (a first
        // delivery), both at once (unlimited prefetch): b is the latest it received.
        assert!(!s.observed_delivery(1, 1, 2, Nanos::MAX));
        assert!(!s.observed_delivery(1, 2, 1, Nanos::MAX));
        // A call for a is delivery 2 of a: the rule does not fire on it (matched to the latest
        // delivery, b's, it would have killed the worker on a second delivery).
        let d = s.attribute(1, "a", Some(1));
        assert_eq!(d, 2);
        assert!(!s.at_point(&KillPoint::CallAnswered, 1, Some(1), d));
        // A call for b is b's first delivery: the rule fires.
        let d = s.attribute(1, "b", Some(2));
        assert_eq!(d, 1);
        assert!(s.at_point(&KillPoint::CallAnswered, 1, Some(2), d));
        // Another call of the dying worker is answered a moment later: it is not answered, and
        // the rule does not count it (it fires on worker 2 next, its second and last time).
        assert!(s.at_point(&KillPoint::CallAnswered, 1, Some(1), 1));
        s.observed_delivery(2, 3, 1, Nanos::MAX);
        let d = s.attribute(2, "c", Some(3));
        assert!(s.at_point(&KillPoint::CallAnswered, 2, Some(3), d));
        s.started(2, task());
        s.observed_delivery(2, 1, 3, Nanos::MAX);
        s.observed_delivery(2, 2, 1, Nanos::MAX);
        assert!(
            !s.at_point(&KillPoint::CallAnswered, 2, Some(2), 1),
            "times: 2"
        );
        let killed = s
            .take_events()
            .iter()
            .filter(|e| matches!(e.kind, EventKind::WorkerKilled { .. }))
            .count();
        assert_eq!(killed, 2);
        s.started(2, task());
        // The dead incarnation holds nothing, nor does worker 2: a call for c from either, and
        // one with a key nobody published, match no delivery and are kept with the reason.
        assert_eq!(s.attribute(1, "c", Some(3)), 0);
        assert_eq!(s.attribute(2, "c", Some(3)), 0);
        assert_eq!(s.attribute(2, "zzz", None), 0);
        let kept: Vec<_> = s
            .take_unattributed()
            .iter()
            .map(|c| (c.worker, c.seq, c.why))
            .collect();
        assert_eq!(
            kept,
            [
                (1, Some(3), Unattributed::NotHeld),
                (2, Some(3), Unattributed::NotHeld),
                (2, None, Unattributed::UnknownKey),
            ]
        );
    }

    #[tokio::test]
    async fn a_kill_rules_kill_is_no_crash() {
        let s = LiveState::new(LiveClock::new(1.0), "q", 1, KillSchedule::new(&[], 1));
        s.started(1, task());
        s.kill(1, 0);
        assert!(!s.exited(1, WorkerExit::Signal(9)));
        assert!(crashes(&s.take_events()).is_empty());
    }
}
