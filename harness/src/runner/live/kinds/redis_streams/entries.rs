//! The run's stream entries as the proxy has seen them: each entry id's seq (recorded when
//! ackbench publishes it, before the XADD), how many times the server delivered it (XREADGROUP
//! `>` and every claim that is not JUSTID add one, as the server counts them in the pending
//! entries list), who holds its latest delivery, and whether it was acked or moved to the dead
//! stream. Shared by every worker's proxy connections.
//!
//! It also keeps when each pending entry becomes claimable (its `min_idle` after the latest
//! delivery or touch, on the claimer's tick): the instant a consumer may take it, which the sim
//! model records as the lease's expiry. Redis says nothing at that instant, so the expiry is
//! recorded when the entry is next seen (claimed, acked, moved) or when the run ends.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Mutex, PoisonError};

use crate::record::{Event, EventKind, Nanos, Seq, WorkerId};

/// Where an entry is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Place {
    /// In the stream, not acked (new, or in a consumer's pending entries list).
    Unsettled,
    /// XACK accepted it.
    Acked,
    /// A consumer moved it to the dead stream.
    Dead,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub seq: Seq,
    /// The server's delivery count.
    pub deliveries: u32,
    /// The worker that holds the entry now (by the latest claim or read).
    pub owner: Option<WorkerId>,
    /// The latest delivery each worker received.
    pub held: BTreeMap<WorkerId, u32>,
    pub place: Place,
    /// When the entry becomes claimable, while it is pending and that has not been recorded.
    pub claimable_at: Option<Nanos>,
}

#[derive(Debug, Default)]
struct Table {
    entries: HashMap<String, Entry>,
    /// Lease expiries (entries that became claimable), in the order found.
    expired: Vec<Event>,
}

/// The entry table.
#[derive(Debug, Default)]
pub struct Entries(Mutex<Table>);

impl Entries {
    /// Entry `id` is message `seq`.
    pub fn published(&self, id: String, seq: Seq) {
        self.lock().entries.insert(
            id,
            Entry {
                seq,
                deliveries: 0,
                owner: None,
                held: BTreeMap::new(),
                place: Place::Unsettled,
                claimable_at: None,
            },
        );
    }

    /// Runs `f` on entry `id` at `now` (profile time), if the run published it, after
    /// recording the expiry of its lease if that came before.
    pub fn with<T>(&self, id: &str, now: Nanos, f: impl FnOnce(&mut Entry) -> T) -> Option<T> {
        let mut t = self.lock();
        let Table { entries, expired } = &mut *t;
        let e = entries.get_mut(id)?;
        expired.extend(e.expiry(now));
        Some(f(e))
    }

    /// The server delivered `id` to `worker` at `now` (`counted`: the delivery count went up),
    /// claimable again at `claimable_at`: (seq, delivery number).
    pub fn delivered(
        &self,
        id: &str,
        worker: WorkerId,
        counted: bool,
        now: Nanos,
        claimable_at: Nanos,
    ) -> Option<(Seq, u32)> {
        self.with(id, now, |e| {
            if counted {
                e.deliveries += 1;
            }
            e.owner = Some(worker);
            e.held.insert(worker, e.deliveries);
            e.claimable_at = Some(claimable_at);
            (e.seq, e.deliveries)
        })
    }

    /// Every lease expiry up to `end` (the pending entries' too), in time order.
    pub fn expiries(&self, end: Nanos) -> Vec<Event> {
        let mut t = self.lock();
        let Table { entries, expired } = &mut *t;
        for e in entries.values_mut() {
            expired.extend(e.expiry(end));
        }
        let mut out = std::mem::take(expired);
        out.sort_by_key(|e| e.at);
        out
    }

    /// Entries neither acked nor moved to the dead stream.
    pub fn unsettled(&self) -> u64 {
        self.lock()
            .entries
            .values()
            .filter(|e| e.place == Place::Unsettled)
            .count() as u64
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Table> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Entry {
    /// The lease expiry due by `now`, once.
    fn expiry(&mut self, now: Nanos) -> Option<Event> {
        let at = self
            .claimable_at
            .filter(|&t| t <= now && self.place == Place::Unsettled)?;
        self.claimable_at = None;
        Some(Event {
            at,
            kind: EventKind::LeaseExpired {
                seq: self.seq,
                delivery: self.deliveries,
            },
        })
    }

    /// The delivery `worker` holds (its latest), or the entry's latest when it never got one.
    pub fn delivery_of(&self, worker: WorkerId) -> u32 {
        self.held.get(&worker).copied().unwrap_or(self.deliveries)
    }

    /// True when `worker` holds the entry's latest delivery.
    pub fn is_current(&self, worker: WorkerId) -> bool {
        self.owner == Some(worker) && self.held.get(&worker) == Some(&self.deliveries)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claims_count_deliveries_and_move_the_entry() {
        let t = Entries::default();
        t.published("0-7".into(), 7);
        // XREADGROUP > by worker 1 at 0: delivery 1, claimable at 30; XCLAIM by worker 2 at
        // 31: delivery 2 (the lease of delivery 1 expired at 30), claimable at 61.
        assert_eq!(t.delivered("0-7", 1, true, 0, 30), Some((7, 1)));
        assert_eq!(t.delivered("0-7", 2, true, 31, 61), Some((7, 2)));
        let e = t.with("0-7", 31, |e| e.clone()).unwrap();
        // Worker 1 still holds delivery 1, no longer the current one; worker 2's is.
        assert_eq!((e.delivery_of(1), e.is_current(1)), (1, false));
        assert_eq!((e.delivery_of(2), e.is_current(2)), (2, true));
        // A JUSTID grab by worker 3 at 40 moves the entry without a delivery.
        assert_eq!(t.delivered("0-7", 3, false, 40, 70), Some((7, 2)));
        assert!(!t.with("0-7", 40, |e| e.is_current(2)).unwrap());
        assert_eq!(t.delivered("9-9", 1, true, 40, 70), None);
        // Acked at 50: no expiry at 70. The run ends at 100: one expiry, delivery 1's at 30.
        t.with("0-7", 50, |e| e.place = Place::Acked);
        let expired: Vec<_> = t.expiries(100).iter().map(|e| (e.at, e.kind)).collect();
        assert_eq!(
            expired,
            [(
                30,
                EventKind::LeaseExpired {
                    seq: 7,
                    delivery: 1
                }
            )]
        );
    }
}
