//! The broker's per-message table: every message ever published (sim runs and live runs, whose
//! event logs need each message's delivery count until the end), or only the messages not yet
//! settled (a long-running SQS endpoint, whose memory must not grow with every message sent).

use std::collections::HashMap;

use super::state::MessageState;
use crate::record::Seq;

#[derive(Debug, Clone)]
pub(super) struct Message {
    pub state: MessageState,
    /// Deliveries since publish (or since the last redrive).
    pub receive_count: u32,
    /// Deliveries ever; the last receipt's nonce.
    pub nonce: u32,
    /// Its message group on a FIFO queue with groups (0 otherwise).
    pub group: u32,
}

/// Messages by seq (numbered from 1 in publish order).
#[derive(Debug, Clone)]
pub(super) enum Table {
    /// Every message ever published, message `seq` at index `seq - 1`.
    All(Vec<Message>),
    /// Only messages still held (delayed, visible, leased, or dead-lettered and not yet taken);
    /// a seq at or below `published` that is not in `held` was deleted or taken from the DLQ.
    Held {
        held: HashMap<Seq, Message>,
        published: Seq,
    },
}

impl Table {
    pub fn all() -> Table {
        Table::All(Vec::new())
    }

    pub fn held() -> Table {
        Table::Held {
            held: HashMap::new(),
            published: 0,
        }
    }

    /// Messages published so far.
    pub fn published(&self) -> usize {
        match self {
            Table::All(v) => v.len(),
            Table::Held { published, .. } => *published as usize,
        }
    }

    /// Messages the table holds in memory.
    pub fn held_count(&self) -> usize {
        match self {
            Table::All(v) => v.len(),
            Table::Held { held, .. } => held.len(),
        }
    }

    /// Appends a message; returns its seq.
    pub fn push(&mut self, m: Message) -> Seq {
        match self {
            Table::All(v) => {
                v.push(m);
                Seq::try_from(v.len()).expect("fewer than 2^32 messages")
            }
            Table::Held { held, published } => {
                *published = published.checked_add(1).expect("fewer than 2^32 messages");
                held.insert(*published, m);
                *published
            }
        }
    }

    pub fn get(&self, seq: Seq) -> Option<&Message> {
        match self {
            Table::All(v) => seq.checked_sub(1).and_then(|i| v.get(i as usize)),
            Table::Held { held, .. } => held.get(&seq),
        }
    }

    pub fn get_mut(&mut self, seq: Seq) -> Option<&mut Message> {
        match self {
            Table::All(v) => seq.checked_sub(1).and_then(|i| v.get_mut(i as usize)),
            Table::Held { held, .. } => held.get_mut(&seq),
        }
    }

    /// True when `seq` was published but is no longer held (only a `Held` table forgets).
    pub fn forgotten(&self, seq: Seq) -> bool {
        match self {
            Table::All(_) => false,
            Table::Held { held, published } => {
                seq >= 1 && seq <= *published && !held.contains_key(&seq)
            }
        }
    }

    /// Forgets a settled message (a `Held` table only; an `All` table keeps it). The map gives
    /// back its room once it holds under a quarter of what it has room for, so a burst of
    /// messages does not keep its peak size for the rest of the broker's life.
    pub fn forget(&mut self, seq: Seq) {
        if let Table::Held { held, .. } = self {
            held.remove(&seq);
            if held.capacity() > 1024 && held.len() < held.capacity() / 4 {
                held.shrink_to(held.len() * 2);
            }
        }
    }

    /// Seqs of the messages whose state matches `pick`, in publish order.
    pub fn seqs_where(&self, pick: impl Fn(MessageState) -> bool) -> Vec<Seq> {
        match self {
            Table::All(v) => v
                .iter()
                .enumerate()
                .filter(|(_, m)| pick(m.state))
                .map(|(i, _)| Seq::try_from(i + 1).expect("fewer than 2^32 messages"))
                .collect(),
            Table::Held { held, .. } => {
                let mut seqs: Vec<Seq> = held
                    .iter()
                    .filter(|(_, m)| pick(m.state))
                    .map(|(&s, _)| s)
                    .collect();
                seqs.sort_unstable();
                seqs
            }
        }
    }
}
