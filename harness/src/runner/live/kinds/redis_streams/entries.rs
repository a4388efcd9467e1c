//! The run's stream entries as the proxy has seen them: each entry id's seq (recorded when
//! ackbench publishes it, before the XADD), how many times the server delivered it (XREADGROUP
//! `>` and every claim that is not JUSTID add one, as the server counts them in the pending
//! entries list), who holds its latest delivery, and whether it was acked or moved to the dead
//! stream. Shared by every worker's proxy connections.
//!
//! A consumer's XADD of a message of the run to the run's stream (its own retry) is a new entry,
//! a copy: its deliveries continue its message's (the copy's first is the message's next).
//!
//! It also keeps when each pending entry becomes claimable (its `min_idle` after the latest
//! delivery or touch, on the claimer's tick): the instant a consumer may take it, which the sim
//! model records as the lease's expiry. Redis says nothing at that instant, so the expiry is
//! recorded when the entry is next seen (claimed, acked, moved) or when the run ends.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Mutex, PoisonError};

use crate::record::{Event, EventKind, Nanos, Seq, WorkerId};
use crate::runner::live::state::CopiesOut;

/// Where an entry is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntryPlace {
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
    pub place: EntryPlace,
    /// When the entry becomes claimable, while it is pending and that has not been recorded.
    pub claimable_at: Option<Nanos>,
}

#[derive(Debug, Default)]
struct Table {
    entries: HashMap<String, Entry>,
    /// Lease expiries (entries that became claimable), in the order found.
    expired: Vec<Event>,
    /// Copies of each message workers added whose entry id is not known yet.
    copies_sent: CopiesOut,
    /// Whether any worker added a copy: the run's own ids `0-<seq>` may be below the stream's
    /// top now, so its later entries are added with `*`.
    copied: bool,
    /// The run's messages added with `*` whose entry id is not known yet.
    awaiting: std::collections::HashSet<Seq>,
}

/// The entry table.
#[derive(Debug, Default)]
pub struct Entries(Mutex<Table>);

impl Entries {
    /// Entry `id` is message `seq` (the tests' stream; a run's ids come from [`Entries::next_id`]).
    #[cfg(test)]
    pub fn published(&self, id: String, seq: Seq) {
        self.lock().entries.insert(id, Entry::new(seq, 0));
    }

    /// A worker is adding a copy of message `seq` to the stream (its retry).
    pub fn copy_sent(&self, seq: Seq) {
        let mut t = self.lock();
        t.copies_sent.sent(seq);
        t.copied = true;
    }

    /// The id the run adds message `seq` with: `0-<seq>`, known before the XADD, until a worker
    /// added a copy; then `*`, the id learnt from the reply or from the entry's fields when a
    /// worker reads it first ([`Entries::found`]).
    pub fn next_id(&self, seq: Seq) -> String {
        let mut t = self.lock();
        if t.copied {
            t.awaiting.insert(seq);
            return "*".to_string();
        }
        let id = format!("0-{seq}");
        t.entries.insert(id.clone(), Entry::new(seq, 0));
        id
    }

    /// The run's XADD of `seq` with an id of its own was refused (a worker's copy took the
    /// stream's top past it): it goes again with `*`.
    pub fn readd(&self, id: &str, seq: Seq) {
        let mut t = self.lock();
        t.entries.remove(id);
        t.copied = true;
        t.awaiting.insert(seq);
    }

    /// Entry `id` holds message `seq`: when the run does not know it, it is the run's own
    /// entry added with `*`, or else, when a copy of `seq` was sent, that copy, its deliveries
    /// counted on from the message's. Returns whether `id` is known now.
    pub fn found(&self, id: &str, seq: Seq) -> bool {
        let mut t = self.lock();
        if t.entries.contains_key(id) {
            return true;
        }
        if t.awaiting.remove(&seq) {
            t.entries.insert(id.to_string(), Entry::new(seq, 0));
            return true;
        }
        if !t.copies_sent.found(seq) {
            return false;
        }
        let before = (t.entries.values())
            .filter(|e| e.seq == seq)
            .map(|e| e.deliveries)
            .max()
            .unwrap_or(0);
        t.entries.insert(id.to_string(), Entry::new(seq, before));
        true
    }

    /// Whether the run knows entry `id`.
    pub fn knows(&self, id: &str) -> bool {
        self.lock().entries.contains_key(id)
    }

    /// Runs `f` on entry `id` at `now` (profile time), if the run published it, after
    /// recording the expiry of its lease if that came before.
    pub fn with<T>(&self, id: &str, now: Nanos, f: impl FnOnce(&mut Entry) -> T) -> Option<T> {
        let mut t = self.lock();
        let Table {
            entries, expired, ..
        } = &mut *t;
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
        let Table {
            entries, expired, ..
        } = &mut *t;
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
            .filter(|e| e.place == EntryPlace::Unsettled)
            .count() as u64
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Table> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Entry {
    /// Message `seq`'s entry, delivered `deliveries` times so far (a copy: its message's).
    fn new(seq: Seq, deliveries: u32) -> Entry {
        Entry {
            seq,
            deliveries,
            owner: None,
            held: BTreeMap::new(),
            place: EntryPlace::Unsettled,
            claimable_at: None,
        }
    }

    /// The lease expiry due by `now`, once.
    fn expiry(&mut self, now: Nanos) -> Option<Event> {
        let at = self
            .claimable_at
            .filter(|&t| t <= now && self.place == EntryPlace::Unsettled)?;
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
    fn a_copys_deliveries_continue_its_messages() {
        let t = Entries::default();
        t.published("0-1".into(), 1);
        // Message 1's delivery 1 fails; its handler adds a copy, then acks the entry.
        assert_eq!(t.delivered("0-1", 1, true, 0, 30), Some((1, 1)));
        t.copy_sent(1);
        // The copy's id comes back as 5-0 (or is first seen in another worker's read).
        assert!(t.found("5-0", 1));
        assert!(t.found("5-0", 1), "known now");
        // Its first delivery is message 1's delivery 2.
        assert_eq!(t.delivered("5-0", 2, true, 5, 35), Some((1, 2)));
        // No second copy was sent: another unknown entry naming message 1 is not the run's.
        assert!(!t.found("6-0", 1));
        assert!(!t.knows("6-0"));
        // The original entry acked, the copy pending: one unsettled.
        t.with("0-1", 6, |e| e.place = EntryPlace::Acked);
        assert_eq!(t.unsettled(), 1);
        // Since a worker added a copy, the run adds message 2 with `*`: its entry is found by
        // its fields (or the reply) as message 2's own, delivery 1 first.
        assert_eq!(t.next_id(2), "*");
        assert!(t.found("9-0", 2));
        assert_eq!(t.delivered("9-0", 1, true, 9, 39), Some((2, 1)));
    }

    #[test]
    fn a_refused_id_of_the_runs_is_added_again_with_a_star() {
        let t = Entries::default();
        assert_eq!(t.next_id(1), "0-1");
        assert!(t.knows("0-1"));
        t.readd("0-1", 1);
        assert!(!t.knows("0-1"));
        assert_eq!(t.next_id(2), "*");
        assert!(t.found("7-0", 1) && t.found("7-1", 2));
        assert_eq!(t.delivered("7-1", 1, true, 0, 30), Some((2, 1)));
    }

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
        t.with("0-7", 50, |e| e.place = EntryPlace::Acked);
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
