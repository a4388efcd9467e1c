//! The sim's timers: what is due when (a worker's sleep or provider answer, a restart, a timed
//! kill, the redrive), earliest first.
//!
//! Timers at one instant run by class (lower first), then in the order they were scheduled: one
//! heap ordered by (due, class and scheduling order packed in one word). The heap holds only
//! those keys and a slot number; what each timer does waits in its slot, so a heap step moves
//! 24 bytes, not the whole timer.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use super::connection::Request;
use super::world::{OpId, OpResult};
use crate::broker::{Handout, Receipt};
use crate::provider::CallId;
use crate::record::{CallOutcome, Nanos, WorkerId};

/// Timer classes: lower runs first at one instant.
pub(super) const CLASS_SUPERVISOR: u8 = 2;
pub(super) const CLASS_HANDLER: u8 = 3;

/// What a timer does when it is due.
#[derive(Debug, Clone)]
pub(super) enum TimerKind {
    Restart {
        worker: WorkerId,
    },
    TimedKill {
        rule: u32,
    },
    /// A `deploy` rule's rollout instant.
    Rollout {
        rule: u32,
    },
    /// An `autoscale` rule's controller looks at the queue.
    Look {
        by: crate::record::ScaledBy,
    },
    /// A worker a scale-out made at `made` starts (its startup is over).
    ScaleOut {
        worker: WorkerId,
        made: Nanos,
    },
    /// The grace of a worker told to stop ends: still there, it is killed.
    GraceEnd {
        worker: WorkerId,
        incarnation: u32,
        rule: u32,
    },
    Redrive,
    Wake {
        worker: WorkerId,
        incarnation: u32,
        op: OpId,
    },
    Answer {
        worker: WorkerId,
        incarnation: u32,
        op: OpId,
        call: CallId,
        outcome: CallOutcome,
    },
    ClientTimeout {
        worker: WorkerId,
        incarnation: u32,
        op: OpId,
        call: CallId,
    },
    /// A hung call after its effect, with `effect_at: response`: the instant its answer would
    /// have left, when the provider's work is done (no one is woken).
    WorkDone {
        call: CallId,
    },
    DelayedKill {
        worker: WorkerId,
        incarnation: u32,
        rule: u32,
    },
    /// An ack a `message` rule held back reaches the broker.
    DelayedAck {
        worker: WorkerId,
        receipt: Receipt,
    },
    /// A delivery a `message` rule held back reaches its worker's receive `op`.
    DelayedDelivery {
        worker: WorkerId,
        incarnation: u32,
        op: OpId,
        handout: Handout,
    },
    /// A `connection` rule's instant: a cut, or a window opening.
    Connection {
        rule: u32,
    },
    /// A worker's request reaches the broker over its connection.
    Arrive {
        worker: WorkerId,
        incarnation: u32,
        op: OpId,
        request: Request,
    },
    /// The broker's answer (or the news of a lost request) reaches a worker.
    Reply {
        worker: WorkerId,
        incarnation: u32,
        op: OpId,
        result: OpResult,
    },
    /// The broker closes a silent connection (RabbitMQ's heartbeat).
    BrokerCloses {
        worker: WorkerId,
        incarnation: u32,
    },
    /// A partition's window closes: the workers it held may be handed messages again.
    Healed,
}

/// Bits of an entry's second key left for the scheduling order (the class takes the top byte).
const ORDER_BITS: u32 = 56;

/// One scheduled timer's place in the heap.
#[derive(Debug)]
struct Entry {
    at: Nanos,
    /// The class in the top byte, the scheduling order below.
    rank: u64,
    /// Where its [`TimerKind`] waits.
    slot: u32,
}

impl Entry {
    /// (due, rank) as one number, so the heap compares without a branch per field.
    #[inline(always)]
    fn key(&self) -> u128 {
        u128::from(self.at) << 64 | u128::from(self.rank)
    }
}

impl PartialEq for Entry {
    fn eq(&self, o: &Self) -> bool {
        self.key() == o.key()
    }
}
impl Eq for Entry {}
impl PartialOrd for Entry {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Entry {
    #[inline(always)]
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        self.key().cmp(&o.key())
    }
}

#[derive(Debug, Default)]
pub(super) struct Timers {
    heap: BinaryHeap<Reverse<Entry>>,
    /// What each scheduled timer does, by slot; a slot is used again once its timer is due.
    kinds: Vec<TimerKind>,
    /// Slots free to use again.
    free: Vec<u32>,
    scheduled: u64,
}

impl Timers {
    /// Schedules `kind` at `at`, after every timer of its class already scheduled there.
    #[inline]
    pub fn schedule(&mut self, at: Nanos, class: u8, kind: TimerKind) {
        self.scheduled += 1;
        debug_assert!(self.scheduled < 1 << ORDER_BITS);
        let rank = u64::from(class) << ORDER_BITS | self.scheduled;
        let slot = match self.free.pop() {
            Some(slot) => {
                self.kinds[slot as usize] = kind;
                slot
            }
            None => {
                self.kinds.push(kind);
                u32::try_from(self.kinds.len() - 1).expect("fewer than 2^32 timers pending")
            }
        };
        self.heap.push(Reverse(Entry { at, rank, slot }));
    }

    /// When the earliest timer is due.
    #[inline]
    pub fn next_at(&self) -> Option<Nanos> {
        self.heap.peek().map(|Reverse(e)| e.at)
    }

    /// The earliest timer, if it is due at or before `t`.
    #[inline]
    pub fn pop_due(&mut self, t: Nanos) -> Option<TimerKind> {
        if self.heap.peek()?.0.at > t {
            return None;
        }
        let Reverse(e) = self.heap.pop()?;
        self.free.push(e.slot);
        // The slot keeps a stand-in until it is used again.
        Some(std::mem::replace(
            &mut self.kinds[e.slot as usize],
            TimerKind::Redrive,
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wake(op: OpId) -> TimerKind {
        TimerKind::Wake {
            worker: 1,
            incarnation: 0,
            op,
        }
    }

    fn op(kind: Option<TimerKind>) -> Option<OpId> {
        match kind? {
            TimerKind::Wake { op, .. } => Some(op),
            TimerKind::Redrive => Some(0),
            other => panic!("unexpected timer {other:?}"),
        }
    }

    #[test]
    fn timers_run_by_instant_then_class_then_scheduling_order() {
        // At 10: wake 1 (handler), the redrive (supervisor), wake 2 (handler); wake 3 at 5.
        // Due order: 5 first; at 10 the supervisor's redrive, then the handlers' in order.
        let mut t = Timers::default();
        t.schedule(10, CLASS_HANDLER, wake(1));
        t.schedule(10, CLASS_SUPERVISOR, TimerKind::Redrive);
        t.schedule(10, CLASS_HANDLER, wake(2));
        t.schedule(5, CLASS_HANDLER, wake(3));
        assert_eq!(t.next_at(), Some(5));
        assert_eq!(op(t.pop_due(4)), None);
        assert_eq!(op(t.pop_due(5)), Some(3));
        assert_eq!(op(t.pop_due(9)), None);
        // Scheduled later at 10: wake 4 comes after wake 2.
        t.schedule(10, CLASS_HANDLER, wake(4));
        let at_10: Vec<_> = std::iter::from_fn(|| t.pop_due(10))
            .map(|k| op(Some(k)))
            .collect();
        assert_eq!(at_10, vec![Some(0), Some(1), Some(2), Some(4)]);
        assert_eq!(t.next_at(), None);
    }

    #[test]
    fn slots_are_used_again_once_their_timers_are_due() {
        // Two timers pending at a time, a thousand times over: two slots, never more; each pop
        // gives back the timer scheduled for that instant (op = its instant).
        let mut t = Timers::default();
        t.schedule(0, CLASS_HANDLER, wake(0));
        for at in 1..=1000 {
            t.schedule(at, CLASS_HANDLER, wake(at));
            assert_eq!(op(t.pop_due(at - 1)), Some(at - 1));
        }
        assert_eq!(op(t.pop_due(1000)), Some(1000));
        assert_eq!((t.kinds.len(), t.free.len(), t.next_at()), (2, 2, None));
    }
}
