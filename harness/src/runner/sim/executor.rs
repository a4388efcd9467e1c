//! The sim executor: advances virtual time event by event and polls the workers.

use std::cell::RefCell;
use std::rc::Rc;
use std::task::{Context, Poll, Waker};

use ackbench_targets::ProviderError;
use smallvec::SmallVec;

use super::client::SimClient;
use super::consumer::{Consumer, Task};
use super::message_faults::HandedOut;
use super::world::{Doom, Handling, OpResult, TimerKind, World, CLASS_HANDLER, CLASS_SUPERVISOR};
use crate::broker::setup;
use crate::chaos::connection::{Route, Toward};
use crate::chaos::{Faults, Timed};
use crate::profile::{KillPoint, Scenario};
use crate::provider::{EffectLedger, ProviderModel};
use crate::record::{
    nanos, CallOutcome, EventKind, HandlerEnd, Nanos, RunRecord, RunStart, Seq, Sink, WorkerExit,
    WorkerId,
};
use crate::runner::{Interrupt, Progress, RunError};
use crate::seed;
use crate::workload;

/// Instants between two progress reports.
const PROGRESS_EVERY: u64 = 8192;

struct Executor {
    world: Rc<RefCell<World>>,
    consumer: Consumer,
    redrive_at: Option<u64>,
    /// One task per worker (index id - 1); `None` while the worker is dead.
    tasks: Vec<Option<Task>>,
}

/// Rounds of timers and hand-outs at one instant after which a run is stopped as one that
/// cannot go on: a real run's instants take a few rounds (one per message handed back and taken
/// again); only messages that go round without time passing reach this.
const MAX_ROUNDS_AT_ONE_INSTANT: u64 = 1_000_000;

/// Runs `scenario` on virtual time and hands what it recorded to `sink`; stops after the
/// instant during which `interrupt` is triggered, with the record marked incomplete.
pub fn run(
    scenario: &Scenario,
    sink: &mut dyn Sink,
    progress: &mut dyn FnMut(Progress),
    interrupt: &Interrupt,
) -> Result<(), RunError> {
    let target = setup::builtin_target(scenario)
        .ok_or_else(|| RunError::UnknownTarget(scenario.consumer.target.clone()))?;
    run_consumer(
        scenario,
        &Consumer::Builtin(target),
        sink,
        progress,
        interrupt,
    )
}

/// [`run`] with `consumer` in every worker instead of the profile's `consumer.target`.
pub(crate) fn run_consumer(
    scenario: &Scenario,
    consumer: &Consumer,
    sink: &mut dyn Sink,
    progress: &mut dyn FnMut(Progress),
    interrupt: &Interrupt,
) -> Result<(), RunError> {
    let b = &scenario.broker;
    let plan = workload::plan(scenario);
    // A fault whose costs are read from the whole record (a deploy's rollouts).
    let full_record_faults = crate::profile::faults::needs_full_record(&scenario.chaos);
    let folds = sink.start(RunStart {
        planned: plan.len() as u64,
        foldable: plan.sends.is_none() && !full_record_faults,
    });
    let ledger = match folds {
        true => EffectLedger::streaming(scenario.provider.effect_at),
        false => EffectLedger::new(scenario.provider.effect_at),
    };
    let world = World::new(
        setup::model(b),
        ProviderModel::new(&scenario.provider, scenario.seed),
        ledger,
        Faults::new(&scenario.chaos, scenario.seed),
        plan,
        scenario.consumer.workers,
        seed::stream(scenario.seed, "target"),
        nanos(scenario.consumer.restart_after),
        scenario.consumer.options.http_timeout.map(nanos),
        folds,
    );
    let mut world = world;
    world.silence = setup::silence(b);
    let mut ex = Executor {
        world: Rc::new(RefCell::new(world)),
        consumer: consumer.clone(),
        redrive_at: scenario.redrive.map(nanos),
        tasks: (0..scenario.consumer.workers).map(|_| None).collect(),
    };
    let publish_end = nanos(scenario.run.duration);
    let hard_end = publish_end.saturating_add(nanos(scenario.run.drain));
    let (end, stopped) = ex.run_until(hard_end, sink, progress, interrupt);

    // Worker tasks hold clients that point at the world: they are gone once the run ends.
    ex.tasks.clear();
    let mut world = Rc::try_unwrap(ex.world)
        .ok()
        .expect("no worker outlives the run")
        .into_inner();
    world.flush_last(sink);
    let publishes = world.plan.sends.is_some().then_some(world.publishes);
    let record = RunRecord {
        publishes,
        messages: world.messages,
        events: world.events,
        ledger: world.ledger.into_ledger(),
        end,
        publish_end,
        incomplete: stopped,
        ..RunRecord::described(scenario)
    };
    let (published, plan) = (world.published, &world.plan);
    let key = |seq: Seq| match seq {
        1.. if seq <= published => plan.message_key(seq).to_string(),
        _ => format!("#{seq}"),
    };
    match sink.finish(record, &key) {
        Ok(()) => Ok(()),
        // The seed makes the same run again: this time the sink keeps its whole record.
        Err(_) => run_consumer(scenario, consumer, sink, progress, interrupt),
    }
}

impl Executor {
    /// Runs instant after instant until drained or `hard_end`, or until `interrupt` is
    /// triggered (checked between instants: every instant run is run whole); returns the end
    /// instant and, for a run that stopped before its end, why (an interruption, or an
    /// instant that never ends).
    fn run_until(
        &mut self,
        hard_end: u64,
        sink: &mut dyn Sink,
        progress: &mut dyn FnMut(Progress),
        interrupt: &Interrupt,
    ) -> (u64, Option<String>) {
        {
            let mut w = self.world.borrow_mut();
            for (at, timed) in w.faults.timed() {
                let timer = match timed {
                    Timed::Kill(rule) => TimerKind::TimedKill { rule },
                    Timed::Deploy(rule) => TimerKind::Rollout { rule },
                    Timed::Connection(rule) => TimerKind::Connection { rule },
                    Timed::Autoscale(by) => TimerKind::Look { by },
                };
                w.schedule(at, CLASS_SUPERVISOR, timer);
            }
            if let Some(at) = self.redrive_at {
                w.redrive_pending = true;
                w.schedule(at, CLASS_SUPERVISOR, TimerKind::Redrive);
            }
        }
        let ids: Vec<WorkerId> = self.world.borrow().workers.iter().map(|s| s.id).collect();
        for id in ids {
            self.start(id);
        }
        let mut instants: u64 = 0;
        let mut stopped = None;
        // The next instant anything is due; each instant says its successor as it ends.
        let mut next = self.world.borrow().next_due();
        loop {
            if interrupt.requested() {
                stopped = Some(super::super::interrupt::REASON.to_string());
                break;
            }
            instants += 1;
            if instants.is_multiple_of(PROGRESS_EVERY) {
                progress(self.world.borrow().progress());
            }
            let Some(at) = next else {
                // Nothing more can happen, yet something is left (a visible message nobody can
                // take, a handler stuck for ever): time runs on to the drain limit.
                self.world.borrow_mut().now = hard_end;
                break;
            };
            if at > hard_end {
                self.world.borrow_mut().now = hard_end;
                break;
            }
            let result = self.instant(at);
            self.world.borrow_mut().flush(sink);
            match result {
                Ok(after) => next = after,
                Err(why) => {
                    stopped = Some(why);
                    break;
                }
            }
            if self.world.borrow().is_drained() {
                break;
            }
        }
        self.tasks.clear();
        let now = self.world.borrow().now;
        (now, stopped)
    }

    /// Everything that happens at instant `now`, in the documented order (ARCHITECTURE.md, "The
    /// sim executor"); returns the next instant anything is due (after `now`), or an error when
    /// the instant would never end (see [`MAX_ROUNDS_AT_ONE_INSTANT`]).
    fn instant(&mut self, now: u64) -> Result<Option<u64>, String> {
        {
            let mut w = self.world.borrow_mut();
            let w = &mut *w;
            w.now = now;
            w.publish_due();
            w.broker.advance(now, &mut w.events);
        }
        let mut rounds: u64 = 0;
        loop {
            rounds += 1;
            if rounds > MAX_ROUNDS_AT_ONE_INSTANT {
                return Err(format!(
                    "stopped because virtual time could not pass: more than \
                     {MAX_ROUNDS_AT_ONE_INSTANT} rounds of hand-outs came at one instant \
                     (a consumer that hands a message back at once, as `on_poison: release` \
                     does, with no delivery limit to end it)"
                ));
            }
            loop {
                let timer = self.world.borrow_mut().pop_timer_due(now);
                let Some(timer) = timer else { break };
                self.fire(timer);
            }
            if !self.hand_out() && !self.world.borrow_mut().broker.take_repoll() {
                let next = self.world.borrow().next_due();
                if next.is_none_or(|t| t > now) {
                    return Ok(next);
                }
            }
        }
    }

    /// One round of hand-outs: each idle worker in ascending id gets the front visible message,
    /// then those workers run in ascending id. Returns whether anything was handed out.
    fn hand_out(&mut self) -> bool {
        // A hand-out a `message` rule dropped or held back: another round may hand out more.
        let mut faulted = false;
        let handed: SmallVec<[WorkerId; 8]> = {
            let mut w = self.world.borrow_mut();
            let w = &mut *w;
            let mut handed = SmallVec::new();
            let mut from = 0;
            while w.broker.can_hand_out() {
                // A consumer whose receive would change nothing is passed over.
                let next = w.waiting.next_from_except(from, w.broker.idle_receivers());
                #[cfg(test)]
                check_passed_over(w, from, next.unwrap_or(usize::MAX));
                let Some(i) = next else {
                    break;
                };
                from = i + 1;
                let (id, op) = (w.workers[i].id, w.waiting.op(i));
                let Some(op) = op.filter(|_| w.workers[i].alive) else {
                    continue;
                };
                let connections = &w.faults.connections;
                if !connections.is_empty() && connections.partitioned(id, w.now) {
                    // Its fetch cannot reach the broker now.
                    continue;
                }
                let Some(h) = w.broker.receive(w.now, id, &mut w.events) else {
                    // This consumer may take nothing more now (RabbitMQ prefetch, NATS
                    // max_ack_pending); the next one may.
                    continue;
                };
                match w.delivery_fault(id, op, h) {
                    HandedOut::Now => {}
                    HandedOut::Dropped => {
                        faulted = true;
                        continue;
                    }
                    HandedOut::Later => {
                        faulted = true;
                        w.waiting.remove(i);
                        continue;
                    }
                }
                w.waiting.remove(i);
                let slot = &mut w.workers[i];
                slot.handling = Some(Handling {
                    seq: h.receipt.seq,
                    delivery: h.receive_count,
                });
                let incarnation = slot.incarnation;
                let route = (!w.faults.connections.is_empty())
                    .then(|| w.faults.connections.route(id, w.now, Toward::Worker));
                match route {
                    Some(Route::At(at)) if at > w.now => {
                        // The delivery reaches the worker later (a latency).
                        let result = OpResult::Delivery(h);
                        let reply = TimerKind::Reply {
                            worker: id,
                            incarnation,
                            op,
                            result,
                        };
                        w.schedule(at, CLASS_HANDLER, reply);
                    }
                    _ => {
                        w.workers[i].results.push((op, OpResult::Delivery(h)));
                        handed.push(id);
                    }
                }
                w.kill_point(
                    id,
                    &KillPoint::Received,
                    Some(h.receipt.seq),
                    h.receive_count,
                );
            }
            handed
        };
        for &id in &handed {
            self.poll(id);
        }
        !handed.is_empty() || faulted
    }

    /// Applies one due timer.
    fn fire(&mut self, kind: TimerKind) {
        let mut w = self.world.borrow_mut();
        let current = |w: &mut World, id: WorkerId, inc: u32| {
            let s = w.slot(id);
            s.alive && s.incarnation == inc
        };
        let wake = match kind {
            TimerKind::Restart { worker } => {
                drop(w);
                self.restart(worker);
                return;
            }
            TimerKind::Redrive => {
                let w = &mut *w;
                w.redrive_pending = false;
                w.broker.redrive(w.now, &mut w.events);
                return;
            }
            TimerKind::TimedKill { rule } => {
                let busy: Vec<WorkerId> = w
                    .workers
                    .iter()
                    .filter(|s| s.alive && s.handling.is_some())
                    .map(|s| s.id)
                    .collect();
                let alive: Vec<WorkerId> =
                    w.workers.iter().filter(|s| s.alive).map(|s| s.id).collect();
                let now = w.now;
                let candidates = if busy.is_empty() { alive } else { busy };
                let (victim, next) = w.faults.kills.fire_timed(rule, now, &candidates);
                if let Some(next) = next {
                    w.schedule(next, CLASS_SUPERVISOR, TimerKind::TimedKill { rule });
                }
                let Some(victim) = victim else { return };
                w.doom(victim, rule);
                victim
            }
            TimerKind::Rollout { rule } => {
                let told = w.rollout(rule);
                drop(w);
                for id in told {
                    self.poll(id);
                }
                return;
            }
            TimerKind::Look { by } => {
                let told = w.look(by);
                drop(w);
                for id in told {
                    self.poll(id);
                }
                return;
            }
            TimerKind::ScaleOut { worker, made } => {
                drop(w);
                self.scale_out(worker, made);
                return;
            }
            TimerKind::GraceEnd {
                worker,
                incarnation,
                rule,
            } => {
                if !w.grace_ended(worker, incarnation, rule) {
                    return;
                }
                worker
            }
            TimerKind::Connection { rule } => {
                w.connection_fault(rule);
                return;
            }
            TimerKind::Healed => return,
            TimerKind::BrokerCloses {
                worker,
                incarnation,
            } => {
                w.broker_closes(worker, incarnation);
                return;
            }
            TimerKind::Arrive {
                worker,
                incarnation,
                op,
                request,
            } => match w.arrive(worker, incarnation, op, request) {
                Some(id) => id,
                None => return,
            },
            TimerKind::Reply {
                worker,
                incarnation,
                op,
                result,
            } => match w.reply(worker, incarnation, op, result) {
                Some(id) => id,
                None => return,
            },
            TimerKind::DelayedKill {
                worker,
                incarnation,
                rule,
            } => {
                if !current(&mut w, worker, incarnation) {
                    return;
                }
                w.doom(worker, rule);
                worker
            }
            TimerKind::DelayedAck { worker, receipt } => {
                w.delayed_ack(worker, receipt);
                return;
            }
            TimerKind::DelayedDelivery {
                worker,
                incarnation,
                op,
                handout,
            } => {
                if !w.delayed_delivery(worker, incarnation, op, handout) {
                    return;
                }
                worker
            }
            TimerKind::Wake {
                worker,
                incarnation,
                op,
            } => {
                if !current(&mut w, worker, incarnation) {
                    return;
                }
                w.slot(worker).results.push((op, OpResult::Unit));
                worker
            }
            TimerKind::ClientTimeout {
                worker,
                incarnation,
                op,
                call,
            } => {
                if !current(&mut w, worker, incarnation) {
                    return;
                }
                w.ledger.abandon(call, CallOutcome::TimedOut);
                let s = w.slot(worker);
                s.open_calls.retain(|&c| c != call);
                s.results
                    .push((op, OpResult::Call(Err(ProviderError::Timeout))));
                worker
            }
            TimerKind::WorkDone { call } => {
                let now = w.now;
                w.ledger.work_done(call, now);
                return;
            }
            TimerKind::Answer {
                worker,
                incarnation,
                op,
                call,
                outcome,
            } => {
                if !current(&mut w, worker, incarnation) {
                    return;
                }
                let now = w.now;
                let answered = w.ledger.answer(call, now);
                w.slot(worker).open_calls.retain(|&c| c != call);
                let (seq, delivery) =
                    answered.expect("a current worker's open call is in the ledger");
                if !w.kill_point(worker, &KillPoint::CallAnswered, seq, delivery) {
                    let result = match outcome {
                        CallOutcome::Error(status) => Err(ProviderError::Status(status)),
                        CallOutcome::Reset => Err(ProviderError::Unavailable(
                            "connection closed without an answer".into(),
                        )),
                        _ => Ok(()),
                    };
                    w.slot(worker).results.push((op, OpResult::Call(result)));
                }
                worker
            }
        };
        drop(w);
        self.poll(wake);
    }

    /// Starts (or restarts) worker `id`'s task and runs it until it waits.
    fn start(&mut self, id: WorkerId) {
        let client = SimClient {
            world: self.world.clone(),
            worker: id,
        };
        let i = (id - 1) as usize;
        if self.tasks.len() <= i {
            self.tasks.resize_with(i + 1, || None);
        }
        self.tasks[i] = Some(self.consumer.task(client));
        self.poll(id);
    }

    /// A worker a scale-out made at `made` starts, unless a scale-in removed it meanwhile.
    fn scale_out(&mut self, id: WorkerId, made: Nanos) {
        {
            let mut w = self.world.borrow_mut();
            let now = w.now;
            let s = w.slot(id);
            if s.alive || s.removed || s.made != made {
                return;
            }
            s.alive = true;
            s.incarnation += 1;
            s.ready = Some(now);
            w.events.push(crate::record::Event {
                at: now,
                kind: EventKind::WorkerAdded { worker: id },
            });
        }
        self.start(id);
    }

    fn restart(&mut self, id: WorkerId) {
        let told = {
            let mut w = self.world.borrow_mut();
            let now = w.now;
            let s = w.slot(id);
            // Removed by a scale-in, or its slot taken by a replica still starting: no restart.
            if s.alive || s.removed || s.ready.is_none() {
                return;
            }
            s.alive = true;
            s.incarnation += 1;
            w.events.push(crate::record::Event {
                at: now,
                kind: EventKind::WorkerRestarted { worker: id },
            });
            w.replaced(id)
        };
        self.start(id);
        for next in told {
            self.poll(next);
        }
    }

    /// Polls worker `id` until it waits; buries it if it crashed or a kill doomed it.
    fn poll(&mut self, id: WorkerId) {
        let i = (id - 1) as usize;
        let doomed_before = self.world.borrow_mut().slot(id).doom;
        let outcome = match (doomed_before, self.tasks[i].as_mut()) {
            (Some(_), _) | (_, None) => Poll::Pending,
            (None, Some(task)) => task.as_mut().poll(&mut Context::from_waker(Waker::noop())),
        };
        let mut w = self.world.borrow_mut();
        let gone = match outcome {
            Poll::Ready(_crash) => {
                self.tasks[i] = None;
                w.bury(
                    id,
                    HandlerEnd::Crashed,
                    EventKind::WorkerCrashed {
                        worker: id,
                        exit: WorkerExit::TargetCrashed,
                    },
                )
            }
            Poll::Pending => match w.slot(id).doom {
                Some(Doom::Killed { rule }) => {
                    self.tasks[i] = None;
                    w.bury(
                        id,
                        HandlerEnd::Killed,
                        EventKind::WorkerKilled { worker: id, rule },
                    )
                }
                Some(Doom::Stopped) => {
                    self.tasks[i] = None;
                    let stopped = EventKind::WorkerStopped { worker: id };
                    w.bury(id, HandlerEnd::Finished, stopped)
                }
                None => false,
            },
        };
        if gone {
            // Removed by a scale-in: no restart will tell a rollout it is back; it goes on now.
            let told = w.replaced(id);
            drop(w);
            for next in told {
                self.poll(next);
            }
        }
    }
}

/// In test builds: every waiting consumer from slot `from` up to `to` that a round passed over
/// would have received nothing and changed nothing.
#[cfg(test)]
fn check_passed_over(w: &World, from: usize, to: usize) {
    let mut k = from;
    while let Some(j) = w.waiting.next_from(k).filter(|&j| j < to) {
        if w.workers[j].alive {
            w.broker.check_passed_over(w.now, w.workers[j].id);
        }
        k = j + 1;
    }
}
