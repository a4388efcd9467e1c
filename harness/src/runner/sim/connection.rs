//! `connection` faults on virtual time: a worker's broker operations (its fetch, ack, extension,
//! release) travel as requests on its connection, which a latency delays, a partition holds (or
//! drops) and a cut closes. Only a run with connection rules takes this path: without one every
//! operation reaches the broker at the instant it is made, as it always did.
//!
//! What the broker does with a connection is the kind's ([`BrokerModel::connection_closed`],
//! [`Silence`]): a cut closes it (RabbitMQ requeues the worker's unacked deliveries, a Kafka
//! share group releases its records; the other kinds hold nothing on it); a partition silences
//! it (RabbitMQ's heartbeat closes it two `heartbeat`s after the window opens, a Kafka member
//! silent for its session timeout is removed; the others' own timers run as ever). Held frames
//! reach the broker when the window closes and are judged by the broker's state then (a stale
//! receipt is refused by the kind's rule); a partition that drops them closes the connection
//! as it ends, as a cut does.
//!
//! [`BrokerModel::connection_closed`]: crate::broker::BrokerModel::connection_closed

use ackbench_targets::QueueError;

use super::world::{OpId, OpResult, TimerKind, World, CLASS_HANDLER, CLASS_SUPERVISOR};
use crate::broker::setup::Silence;
use crate::broker::Receipt;
use crate::chaos::connection::{Act, Route, Toward};
use crate::record::{Event, EventKind, Nanos, WorkerId};

/// A worker's request to the broker, on its way.
#[derive(Debug, Clone, Copy)]
pub(super) enum Request {
    /// A fetch: the worker waits for a hand-out once it arrives.
    Receive,
    Ack(Receipt),
    Release(Receipt, Nanos),
    Extend(Receipt, Nanos),
}

impl World {
    /// Whether `worker`'s requests made now take the connection's path: a run with connection
    /// rules, and something in the way of a request or its answer at this instant.
    pub fn connection_in_the_way(&self, worker: WorkerId) -> bool {
        let c = &self.faults.connections;
        !c.is_empty()
            && (c.route(worker, self.now, Toward::Broker) != Route::At(self.now)
                || c.route(worker, self.now, Toward::Worker) != Route::At(self.now))
    }

    /// Sends `request` on `worker`'s connection for operation `op`: it arrives when its route
    /// says; a dropped one ends the operation with an error when the window closes (a dropped
    /// fetch is made again then: the client reconnects and polls).
    pub fn send_request(&mut self, worker: WorkerId, op: OpId, request: Request) {
        let incarnation = self.slot(worker).incarnation;
        let route = self
            .faults
            .connections
            .route(worker, self.now, Toward::Broker);
        let kind = match (route, request) {
            (Route::At(at), _) | (Route::Lost { known_at: at }, Request::Receive) => (
                at,
                TimerKind::Arrive {
                    worker,
                    incarnation,
                    op,
                    request,
                },
            ),
            (Route::Lost { known_at }, _) => (
                known_at,
                TimerKind::Reply {
                    worker,
                    incarnation,
                    op,
                    result: OpResult::Queue(Err(lost())),
                },
            ),
        };
        self.schedule(kind.0, CLASS_HANDLER, kind.1);
    }

    /// `request` reaches the broker now. A fetch makes its worker wait for a hand-out; an ack,
    /// release or extension acts on the broker's state now (even for a worker that died since:
    /// its frame was on the wire), and its answer goes back by its own route. Returns the
    /// worker to poll when its answer is there at once.
    pub fn arrive(
        &mut self,
        worker: WorkerId,
        incarnation: u32,
        op: OpId,
        request: Request,
    ) -> Option<WorkerId> {
        let now = self.now;
        let current = {
            let s = self.slot(worker);
            s.alive && s.incarnation == incarnation
        };
        let result = match request {
            Request::Receive => {
                if current {
                    self.waiting.insert((worker - 1) as usize, op);
                }
                return None;
            }
            Request::Ack(r) => self
                .broker
                .ack(now, r, worker, &mut self.events)
                .map(|_| ())
                .map_err(|_| QueueError::StaleReceipt),
            Request::Release(r, delay) => self
                .broker
                .release(now, r, worker, delay, &mut self.events)
                .map_err(|_| QueueError::StaleReceipt),
            Request::Extend(r, lease) => self
                .broker
                .extend(now, r, worker, lease, &mut self.events)
                .map_err(|_| QueueError::StaleReceipt),
        };
        if !current {
            return None;
        }
        let result = match self.faults.connections.route(worker, now, Toward::Worker) {
            Route::At(at) if at == now => {
                self.slot(worker)
                    .results
                    .push((op, OpResult::Queue(result)));
                return Some(worker);
            }
            Route::At(at) => (at, OpResult::Queue(result)),
            Route::Lost { known_at } => (known_at, OpResult::Queue(Err(lost()))),
        };
        self.schedule(
            result.0,
            CLASS_HANDLER,
            TimerKind::Reply {
                worker,
                incarnation,
                op,
                result: result.1,
            },
        );
        None
    }

    /// The answer of operation `op` reaches its worker; returns it to poll if it is still the
    /// incarnation that asked.
    pub fn reply(
        &mut self,
        worker: WorkerId,
        incarnation: u32,
        op: OpId,
        result: OpResult,
    ) -> Option<WorkerId> {
        let s = self.slot(worker);
        if !s.alive || s.incarnation != incarnation {
            return None;
        }
        s.results.push((op, result));
        Some(worker)
    }

    /// Connection rule `rule`'s instant came: each selected live worker's connection is cut, or
    /// its window opens (one firing per worker). Under a partition the broker may give the
    /// worker up ([`Silence`]).
    pub fn connection_fault(&mut self, rule: u32) {
        let now = self.now;
        let (act, next) = self.faults.connections.fire(rule, now);
        if let Some(next) = next {
            self.schedule(next, CLASS_SUPERVISOR, TimerKind::Connection { rule });
        }
        let Some(act) = act else { return };
        let (workers, cut, partition_until, drops) = match act {
            Act::Cut(workers) => (workers, true, None, false),
            Act::Opens {
                workers,
                partition_until,
                drops,
            } => (workers, false, partition_until, drops),
        };
        if let Some(until) = partition_until.filter(|&u| u != Nanos::MAX) {
            // A worker waiting for a hand-out gets one again once the window closes.
            self.schedule(until, CLASS_SUPERVISOR, TimerKind::Healed);
        }
        for w in workers {
            let slot = self.slot(w);
            if !slot.alive {
                continue;
            }
            let incarnation = slot.incarnation;
            self.events.push(Event {
                at: now,
                kind: EventKind::FaultFired { worker: w, rule },
            });
            if cut {
                self.broker.connection_closed(now, w, &mut self.events);
            } else if let Some(until) = partition_until {
                self.silenced(w, incarnation, until);
                if drops && until != Nanos::MAX {
                    // What was lost breaks the connection: both sides see it close at the end.
                    self.schedule(
                        until,
                        CLASS_SUPERVISOR,
                        TimerKind::BrokerCloses {
                            worker: w,
                            incarnation,
                        },
                    );
                }
            }
        }
    }

    /// Worker `w`'s connection is silent from now until `until`: what the broker does of it.
    fn silenced(&mut self, w: WorkerId, incarnation: u32, until: Nanos) {
        let now = self.now;
        match self.silence {
            Silence::Nothing => {}
            Silence::Closes { after } if until.saturating_sub(now) >= after => self.schedule(
                now + after,
                CLASS_SUPERVISOR,
                TimerKind::BrokerCloses {
                    worker: w,
                    incarnation,
                },
            ),
            Silence::StopsHeartbeats { removed_after }
                if until.saturating_sub(now) >= removed_after =>
            {
                self.broker.consumer_died(now, w, &mut self.events);
            }
            Silence::Closes { .. } | Silence::StopsHeartbeats { .. } => {}
        }
    }

    /// The broker closes worker `w`'s connection (RabbitMQ's heartbeat, or the end of a
    /// partition that dropped frames), if `w` is the incarnation it was.
    pub fn broker_closes(&mut self, w: WorkerId, incarnation: u32) {
        let s = self.slot(w);
        if s.alive && s.incarnation == incarnation {
            let now = self.now;
            self.broker.connection_closed(now, w, &mut self.events);
        }
    }
}

/// What a worker is told of a request its connection lost.
fn lost() -> QueueError {
    QueueError::Unavailable("connection lost".into())
}
