//! The messages a streamed run still accounts for: published and not yet folded.
//!
//! Messages are published in seq order and mostly settle in it, so they live in a
//! [`SeqWindow`]: a message that stays (a long backlog's head, a wedged handler, a DLQ entry
//! waiting for a redrive) moves out of the window's way. A published seq the window no longer
//! holds was folded.

use crate::metrics::accounting::MessageAccount;
use crate::metrics::anomalies::Seen;
use crate::metrics::leases::MessageHandlers;
use crate::record::{Nanos, Seq};
use crate::seq_window::SeqWindow;

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
    /// Fetched batches that hold it though it is settled (Kafka, [`crate::record::Batched`]):
    /// each may still hand it out.
    pub batched: u32,
    /// Redrives of it so far.
    pub redrives: u32,
    /// Its effects when it was first redriven.
    pub effects_at_redrive: Option<u32>,
    /// The (redrives before, delivery) of each call about it: a second call of one delivery is
    /// a handler's retry.
    pub calls_seen: CallsSeen,
    /// Listed among the messages the current instant touched (listed once however often).
    pub dirty: bool,
    /// Its handlers in progress, against their leases ([`crate::metrics::leases::Leases`]).
    pub handlers: MessageHandlers,
    /// What the anomaly checker knows of it ([`crate::metrics::anomalies::Checker`]).
    pub seen: Seen,
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
    open: SeqWindow<Msg>,
}

impl Table {
    /// Message `seq` (the next seq) published at `at`, with what the leases and the checker
    /// knew of it already (nothing, unless events named it before its publish).
    #[inline]
    pub fn publish(&mut self, seq: Seq, at: Nanos, handlers: MessageHandlers, seen: Seen) {
        let pushed = self.open.push(Msg {
            published_at: at,
            handlers,
            seen,
            ..Msg::default()
        });
        debug_assert_eq!(seq, pushed, "messages are published in seq order");
    }

    /// Whether `seq` names a published message.
    pub fn is_published(&self, seq: Seq) -> bool {
        self.open.was_pushed(seq)
    }

    #[inline]
    pub fn lookup(&mut self, seq: Seq) -> Lookup<'_> {
        if !self.is_published(seq) {
            return Lookup::Unpublished;
        }
        match self.open.get_mut(seq) {
            Some(m) => Lookup::Open(m),
            None => Lookup::Folded,
        }
    }

    /// The open message `seq`, read only; `None` when folded or unpublished.
    pub fn get(&self, seq: Seq) -> Option<&Msg> {
        self.open.get(seq)
    }

    /// Folds message `seq` if it is open and `ready` says it may be: `fold` reads it where it
    /// lies, then it is let go. True if it was folded.
    #[inline]
    pub fn fold_if(
        &mut self,
        seq: Seq,
        ready: impl FnOnce(&mut Msg) -> bool,
        fold: impl FnOnce(&Msg),
    ) -> bool {
        let Some(m) = self.open.get_mut(seq) else {
            return false;
        };
        if !ready(m) {
            return false;
        }
        fold(m);
        self.open.remove(seq)
    }

    /// The seqs of every open message, ascending.
    pub fn open_seqs(&self) -> Vec<Seq> {
        self.open.seqs_where(|_| true)
    }

    /// Every open message, the table left empty.
    pub fn drain(&mut self) -> impl Iterator<Item = Msg> + '_ {
        self.open.drain()
    }
}
