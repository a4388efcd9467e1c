//! The target's own database: the tables the store-backed targets use, behind a transaction.
//!
//! In sim mode it lives in memory; a transaction is atomic and takes no virtual time (no I/O).
//! A row that *is* the effect (an order written, a seat sold) is written with
//! [`Tables::write_effect`], so the harness counts it in the same effect ledger as provider calls.

use std::collections::{HashMap, HashSet};
use std::future::Future;
use std::time::Duration;

/// `seats.status` for the status-fence target.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SeatStatus {
    /// Every seat starts held for its order.
    #[default]
    Held,
    Sold,
}

/// A row of `claims` (claim-then-send): who claimed the work when, and when it was done.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Claim {
    pub claimed_at: Duration,
    pub sent_at: Option<Duration>,
}

/// The tables of the reference targets.
#[derive(Debug, Default)]
pub struct Tables {
    /// `handled_messages(key primary key)` (dedupe-table).
    pub handled: HashSet<String>,
    /// `seats(key, status)` (status-fence).
    pub seats: HashMap<String, SeatStatus>,
    /// `claims(key, claimed_at, sent_at)` (claim-then-send).
    pub claims: HashMap<String, Claim>,
    effects: Vec<String>,
}

impl Tables {
    /// Writes the row that is this message's effect.
    pub fn write_effect(&mut self, key: &str) {
        self.effects.push(key.to_string());
    }

    /// Effect rows written since the last call (the harness records them after a commit).
    pub fn take_effects(&mut self) -> Vec<String> {
        std::mem::take(&mut self.effects)
    }
}

/// A transactional store bound to one worker.
pub trait Store {
    /// Runs `f` as one transaction: all of it commits, or (if the worker dies first) none.
    fn transaction<T>(&self, f: impl FnOnce(&mut Tables) -> T) -> impl Future<Output = T>;
}
