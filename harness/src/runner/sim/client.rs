//! The traits targets are written against, implemented on virtual time for one worker.

use std::cell::RefCell;
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll};
use std::time::Duration;

use ackbench_targets::message::Order;
use ackbench_targets::{
    Delivery, ProviderClient, ProviderError, QueueClient, QueueError, ReplyId, Runtime,
    SendRequest, Store, Tables,
};
use rand::RngExt;

use super::connection::Request;
use super::world::{Doom, Handling, OpId, OpResult, TimerKind, World, CLASS_HANDLER};
use crate::broker::Receipt;
use crate::profile::{EffectAt, KillPoint};
use crate::provider::ledger::CallStart;
use crate::provider::CallFacts;
use crate::record::{
    nanos, AckOutcome, EffectSource, Event, EventKind, HandlerEnd, Republish, WorkerId,
};

/// One worker's view of the sim world: its queue client ([`ackbench_targets::QueueClient`]),
/// provider client ([`ackbench_targets::ProviderClient`]), runtime and store, on virtual time.
#[derive(Clone)]
pub struct SimClient {
    pub(super) world: Rc<RefCell<World>>,
    pub(super) worker: WorkerId,
}

impl SimClient {
    /// Records that this worker's handler of delivery `delivery` of `seq` published it again to
    /// `to`; returns how many events the run holds then.
    fn republished(&self, seq: crate::record::Seq, delivery: Option<u32>, to: Republish) -> usize {
        let mut w = self.world.borrow_mut();
        let at = w.now;
        w.events.push(Event {
            at,
            kind: EventKind::Republished {
                seq,
                worker: self.worker,
                delivery: delivery.unwrap_or(0),
                to,
            },
        });
        w.events.len()
    }

    /// The worker this client belongs to (1-based).
    pub fn worker(&self) -> WorkerId {
        self.worker
    }
}

/// Waits until the executor completes operation `op` of this worker.
struct OpWait {
    world: Rc<RefCell<World>>,
    worker: WorkerId,
    op: OpId,
}

impl Future for OpWait {
    type Output = OpResult;

    fn poll(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<OpResult> {
        let mut w = self.world.borrow_mut();
        let results = &mut w.slot(self.worker).results;
        match results.iter().position(|(id, _)| *id == self.op) {
            Some(i) => Poll::Ready(results.swap_remove(i).1),
            None => Poll::Pending,
        }
    }
}

impl SimClient {
    fn wait(&self, op: OpId) -> OpWait {
        OpWait {
            world: self.world.clone(),
            worker: self.worker,
            op,
        }
    }

    /// Sends `request` on the worker's connection when a connection fault is in its way now
    /// ([`super::connection`]): the operation to wait for; `None`: it acts on the broker now.
    fn on_connection(&self, request: Request) -> Option<OpId> {
        let mut w = self.world.borrow_mut();
        if !w.connection_in_the_way(self.worker) {
            return None;
        }
        let op = w.new_op();
        w.send_request(self.worker, op, request);
        Some(op)
    }

    /// The broker's answer to operation `op`, once it is back.
    async fn answer(&self, op: OpId) -> Result<(), QueueError> {
        let OpResult::Queue(result) = self.wait(op).await else {
            unreachable!("a broker operation completes with its answer")
        };
        result
    }

    /// An operation that never completes: the worker is doomed and will be dropped.
    fn never(&self) -> OpWait {
        let op = self.world.borrow_mut().new_op();
        self.wait(op)
    }
}

impl QueueClient for SimClient {
    type Receipt = Receipt;

    async fn receive(&self) -> Result<Delivery<Receipt>, QueueError> {
        let op = {
            let mut w = self.world.borrow_mut();
            w.end_handler(self.worker, HandlerEnd::Finished);
            let op = w.new_op();
            let batch = w.broker.held_from_poll(self.worker) > 0;
            let slot = w.slot(self.worker);
            // Results of operations the last handler abandoned (a heartbeat's sleep outlived by
            // its call) are never awaited: drop them.
            slot.results.clear();
            if slot.stopping && !batch {
                // Told to stop: it fetches nothing more and exits (the operation never ends).
                // One in the middle of its last poll's batch finishes the batch first, as a
                // consumer that checks its stop flag between polls does.
                slot.doom = Some(Doom::Stopped);
            } else if w.connection_in_the_way(self.worker) {
                w.send_request(self.worker, op, Request::Receive);
            } else {
                w.waiting.insert((self.worker - 1) as usize, op);
            }
            op
        };
        let OpResult::Delivery(h) = self.wait(op).await else {
            unreachable!("a receive completes with a delivery")
        };
        let body = self.world.borrow().body(h.receipt.seq);
        Ok(Delivery {
            receipt: h.receipt,
            body,
            receive_count: h.receive_count,
        })
    }

    async fn ack(&self, receipt: &Receipt) -> Result<(), QueueError> {
        if let Some(op) = self.on_connection(Request::Ack(*receipt)) {
            return self.answer(op).await;
        }
        let mut w = self.world.borrow_mut();
        let w = &mut *w;
        if w.ack_fault(self.worker, *receipt) {
            // Dropped or held back by a `message` rule: the consumer is told it succeeded.
            return Ok(());
        }
        match w.broker.ack(w.now, *receipt, self.worker, &mut w.events) {
            Ok(_) => Ok(()),
            Err(_) => Err(QueueError::StaleReceipt),
        }
    }

    async fn change_visibility(
        &self,
        receipt: &Receipt,
        timeout: Duration,
    ) -> Result<(), QueueError> {
        self.release(receipt, timeout).await
    }

    async fn release(&self, receipt: &Receipt, delay: Duration) -> Result<(), QueueError> {
        if let Some(op) = self.on_connection(Request::Release(*receipt, nanos(delay))) {
            return self.answer(op).await;
        }
        let mut w = self.world.borrow_mut();
        let w = &mut *w;
        w.broker
            .release(w.now, *receipt, self.worker, nanos(delay), &mut w.events)
            .map_err(|_| QueueError::StaleReceipt)
    }

    fn held_from_poll(&self) -> u32 {
        self.world.borrow().broker.held_from_poll(self.worker)
    }

    /// The message goes back to the broker, handed out again `delay` from now (a release, its
    /// delivery count going on as a republished copy's does live), recorded as republished
    /// by this delivery's handler: to a delay queue, or with no delay to the queue.
    async fn republish(&self, receipt: &Receipt, delay: Duration) -> Result<(), QueueError> {
        let delivery = self.world.borrow().broker.receive_count(receipt.seq);
        self.release(receipt, delay).await?;
        *self
            .world
            .borrow_mut()
            .retries
            .entry(receipt.seq)
            .or_insert(0) += 1;
        let to = if delay.is_zero() {
            Republish::Queue
        } else {
            Republish::Delayed
        };
        self.republished(receipt.seq, delivery, to);
        Ok(())
    }

    /// The framework's dead-letter queue takes a copy, and the delivery's ack removes the one
    /// it replaced (recorded as such), as a framework giving up does live.
    async fn dead_letter(&self, receipt: &Receipt) -> Result<(), QueueError> {
        let delivery = self.world.borrow().broker.receive_count(receipt.seq);
        let at = self.republished(receipt.seq, delivery, Republish::DeadLetter);
        let acked = self.ack(receipt).await;
        let mut w = self.world.borrow_mut();
        for e in w.events.iter_mut().skip(at) {
            if let EventKind::Acked {
                seq,
                outcome: outcome @ AckOutcome::Deleted,
                ..
            } = &mut e.kind
            {
                if *seq == receipt.seq {
                    *outcome = AckOutcome::Superseded;
                }
            }
        }
        acked
    }

    fn retries(&self, receipt: &Receipt) -> u32 {
        self.world
            .borrow()
            .retries
            .get(&receipt.seq)
            .copied()
            .unwrap_or(0)
    }

    async fn extend(&self, receipt: &Receipt, lease: Duration) -> Result<(), QueueError> {
        if let Some(op) = self.on_connection(Request::Extend(*receipt, nanos(lease))) {
            return self.answer(op).await;
        }
        let mut w = self.world.borrow_mut();
        let w = &mut *w;
        w.broker
            .extend(w.now, *receipt, self.worker, nanos(lease), &mut w.events)
            .map_err(|_| QueueError::StaleReceipt)
    }
}

impl ProviderClient for SimClient {
    async fn send(&self, req: SendRequest<'_>) -> Result<ReplyId, ProviderError> {
        let op = {
            let mut w = self.world.borrow_mut();
            let w = &mut *w;
            let now = w.now;
            let seq = w.seq_for(self.worker, req.key);
            let slot = w.slot(self.worker);
            let (incarnation, delivery) =
                (slot.incarnation, slot.handling.map_or(0, |h| h.delivery));
            let plan = w.provider.plan(&CallFacts {
                at: now,
                seq,
                key: req.key,
                delivery,
            });
            let call = w.ledger.start_call(CallStart {
                seq,
                // The message's own key is not copied: the record reads it from the message.
                key: seq.is_none().then(|| req.key.to_string()),
                worker: self.worker,
                delivery,
                at: now,
                outcome: plan.outcome,
                works: plan.works,
            });
            w.slot(self.worker).open_calls.push(call);
            if w.kill_point(self.worker, &KillPoint::CallStarted, seq, delivery) {
                None
            } else {
                let op = w.new_op();
                let worker = self.worker;
                // A hang after the effect, its effect with its answer: the work is done when the
                // answer would have left, unless the client gave up before.
                if plan.latency.is_none()
                    && plan.works
                    && w.provider.effect_at == EffectAt::Response
                    && w.http_timeout.is_none_or(|t| plan.ready <= t)
                {
                    w.schedule(
                        now + plan.ready,
                        CLASS_HANDLER,
                        TimerKind::WorkDone { call },
                    );
                }
                // The client's own timeout ends the wait first if it is shorter than the answer
                // (or the answer never comes); without one, a hung call waits for ever.
                match (w.http_timeout, plan.latency) {
                    (Some(t), latency) if latency.is_none_or(|l| t < l) => w.schedule(
                        now + t,
                        CLASS_HANDLER,
                        TimerKind::ClientTimeout {
                            worker,
                            incarnation,
                            op,
                            call,
                        },
                    ),
                    (_, Some(latency)) => w.schedule(
                        now + latency,
                        CLASS_HANDLER,
                        TimerKind::Answer {
                            worker,
                            incarnation,
                            op,
                            call,
                            outcome: plan.outcome,
                        },
                    ),
                    (_, None) => {}
                }
                Some((op, call))
            }
        };
        let Some((op, call)) = op else {
            self.never().await;
            unreachable!("a doomed worker is never polled again")
        };
        match self.wait(op).await {
            OpResult::Call(Ok(())) => Ok(ReplyId(call as u64)),
            OpResult::Call(Err(e)) => Err(e),
            other => unreachable!("a provider call completes with a call result, got {other:?}"),
        }
    }
}

impl Runtime for SimClient {
    fn now(&self) -> Duration {
        Duration::from_nanos(self.world.borrow().now)
    }

    async fn sleep(&self, d: Duration) {
        let op = {
            let mut w = self.world.borrow_mut();
            let op = w.new_op();
            let incarnation = w.slot(self.worker).incarnation;
            let at = w.now + nanos(d);
            w.schedule(
                at,
                CLASS_HANDLER,
                TimerKind::Wake {
                    worker: self.worker,
                    incarnation,
                    op,
                },
            );
            op
        };
        self.wait(op).await;
    }

    async fn checkpoint(&self, name: &'static str) {
        let doomed = {
            let mut w = self.world.borrow_mut();
            let handling: Option<Handling> = w.slot(self.worker).handling;
            match handling {
                Some(h) if !w.faults.kills.is_empty() => {
                    let point = KillPoint::Checkpoint(name.to_string());
                    w.kill_point(self.worker, &point, Some(h.seq), h.delivery)
                }
                _ => false,
            }
        };
        if doomed {
            self.never().await;
        }
    }

    fn random(&self) -> f64 {
        self.world.borrow_mut().target_rng.random()
    }

    fn record_rejected(&self, body: &str) {
        let mut w = self.world.borrow_mut();
        // The message the worker holds; the body's own key only if it holds none.
        let held = w.slot(self.worker).handling.map(|h| h.seq);
        let seq = held.or_else(|| Order::key_of(body).and_then(|k| w.seq_of(&k)));
        if let Some(seq) = seq {
            let at = w.now;
            w.events.push(Event {
                at,
                kind: EventKind::Rejected {
                    seq,
                    worker: self.worker,
                },
            });
        }
    }
}

impl Store for SimClient {
    /// Runs at once (no I/O time); effect rows written become Store effects in the ledger.
    async fn transaction<T>(&self, f: impl FnOnce(&mut Tables) -> T) -> T {
        let mut w = self.world.borrow_mut();
        let w = &mut *w;
        let out = f(&mut w.tables);
        let delivery = w.slot(self.worker).handling.map_or(0, |h| h.delivery);
        for key in w.tables.take_effects() {
            let seq = w.seq_for(self.worker, &key);
            w.ledger
                .effect(seq, w.now, self.worker, delivery, EffectSource::Store);
        }
        out
    }
}
