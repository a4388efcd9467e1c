//! The messages a streamed run still accounts for: published and not yet folded.
//!
//! Messages are published in seq order and mostly settle in it, so they live in a ring from the
//! oldest one not yet folded; a message that stays (a long backlog's head, a wedged handler, a
//! DLQ entry waiting for a redrive) while the ring grows past [`RING`] moves to a map of its own,
//! so the ring does not grow behind it. A seq below the ring's start that is not in that map was
//! folded.

use std::collections::VecDeque;

use rustc_hash::FxHashMap as HashMap;

use crate::metrics::accounting::MessageAccount;
use crate::record::{Nanos, Seq};

/// Ring slots kept before a message that holds the ring's front moves aside.
const RING: usize = 1 << 16;

/// What the stream keeps of one message until it is folded.
#[derive(Debug, Clone, Default)]
pub struct Msg {
    pub published_at: Nanos,
    /// Effects, first effect, place, last departure from the queue, refusal, first deleting
    /// ack: what the batch analysis keeps per message.
    pub account: MessageAccount,
    /// Handler spans of it still open.
    pub spans: u32,
    /// Provider calls about it that can still have an effect.
    pub calls: u32,
    /// Redrives of it so far.
    pub redrives: u32,
    /// Its effects when it was first redriven.
    pub effects_at_redrive: Option<u32>,
    /// The (redrives before, delivery) of each call about it: a second call of one delivery is
    /// a handler's retry.
    pub calls_seen: CallsSeen,
    /// Listed among the messages the current instant touched (listed once however often).
    pub dirty: bool,
}

/// A small set of (redrives before, delivery) pairs: one inline, the rest (a redelivered
/// message's) on the heap.
#[derive(Debug, Clone, Default)]
pub struct CallsSeen {
    first: Option<(u32, u32)>,
    more: Vec<(u32, u32)>,
}

impl CallsSeen {
    /// Adds a pair; false when it was there already.
    pub fn insert(&mut self, epoch: u32, delivery: u32) -> bool {
        let pair = (epoch, delivery);
        match self.first {
            None => {
                self.first = Some(pair);
                true
            }
            Some(p) if p == pair => false,
            Some(_) if self.more.contains(&pair) => false,
            Some(_) => {
                self.more.push(pair);
                true
            }
        }
    }
}

/// Where a seq stands.
pub enum Lookup<'a> {
    Open(&'a mut Msg),
    /// Counted and let go.
    Folded,
    /// Not published (yet): names no message, as a record's seq beyond its messages.
    Unpublished,
}

#[derive(Debug, Default)]
pub struct Table {
    /// Seq of `ring[0]`.
    base: Seq,
    /// Messages from `base` on; `None`: folded.
    ring: VecDeque<Option<Msg>>,
    /// Open messages below `base`.
    aside: HashMap<Seq, Msg>,
}

impl Table {
    /// Message `seq` (the next seq) published at `at`.
    pub fn publish(&mut self, seq: Seq, at: Nanos) {
        if self.ring.is_empty() && self.aside.is_empty() && self.base == 0 {
            self.base = seq;
        }
        debug_assert_eq!(seq as usize, self.base as usize + self.ring.len());
        self.ring.push_back(Some(Msg {
            published_at: at,
            ..Msg::default()
        }));
        if self.ring.len() > RING {
            if let Some(Some(front)) = self.ring.pop_front() {
                self.aside.insert(self.base, front);
            }
            self.base += 1;
            self.trim();
        }
    }

    /// Messages published so far.
    pub fn published(&self) -> Seq {
        if self.base == 0 {
            0
        } else {
            self.base + self.ring.len() as Seq - 1
        }
    }

    /// Whether `seq` names a published message.
    pub fn is_published(&self, seq: Seq) -> bool {
        seq >= 1 && seq <= self.published()
    }

    pub fn lookup(&mut self, seq: Seq) -> Lookup<'_> {
        if !self.is_published(seq) {
            return Lookup::Unpublished;
        }
        if seq >= self.base {
            return match &mut self.ring[(seq - self.base) as usize] {
                Some(m) => Lookup::Open(m),
                None => Lookup::Folded,
            };
        }
        match self.aside.get_mut(&seq) {
            Some(m) => Lookup::Open(m),
            None => Lookup::Folded,
        }
    }

    /// The open message `seq`, read only; `None` when folded or unpublished.
    pub fn get(&self, seq: Seq) -> Option<&Msg> {
        if !self.is_published(seq) {
            return None;
        }
        if seq >= self.base {
            return self.ring[(seq - self.base) as usize].as_ref();
        }
        self.aside.get(&seq)
    }

    /// Takes message `seq` out if it is open and `ready` says it may be folded.
    pub fn take_if(&mut self, seq: Seq, ready: impl FnOnce(&mut Msg) -> bool) -> Option<Msg> {
        if !self.is_published(seq) {
            return None;
        }
        let taken = if seq >= self.base {
            let slot = &mut self.ring[(seq - self.base) as usize];
            if !slot.as_mut().is_some_and(ready) {
                return None;
            }
            slot.take()
        } else {
            if !self.aside.get_mut(&seq).is_some_and(ready) {
                return None;
            }
            self.aside.remove(&seq)
        };
        self.trim();
        taken
    }

    /// Drops folded slots from the ring's front.
    fn trim(&mut self) {
        while matches!(self.ring.front(), Some(None)) {
            self.ring.pop_front();
            self.base += 1;
        }
    }

    /// The seqs of every open message, in no particular order.
    pub fn open_seqs(&self) -> Vec<Seq> {
        let ring = self
            .ring
            .iter()
            .enumerate()
            .filter(|(_, m)| m.is_some())
            .map(|(i, _)| self.base + i as Seq);
        self.aside.keys().copied().chain(ring).collect()
    }

    /// Every open message, the table left empty.
    pub fn drain(&mut self) -> impl Iterator<Item = Msg> + '_ {
        self.aside
            .drain()
            .map(|(_, m)| m)
            .chain(self.ring.drain(..).flatten())
    }
}
