//! Provider calls a live run could not match to one delivery their worker held.
//!
//! A live run learns which deliveries a worker holds from its broker (the endpoint's hooks, a
//! protocol proxy), and which message a provider call is about from the call's effect key. A
//! call is matched to the delivery of that key the worker holds; when that cannot be done
//! exactly, the call is kept here with the reason, and the report says so instead of guessing.

use super::{Nanos, Seq, WorkerId};

/// Why a call could not be matched to exactly one held delivery.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Unattributed {
    /// Its key names no published message: the call is counted against no delivery (its
    /// effects are `unmatched_effects`).
    UnknownKey,
    /// The worker held no delivery of the message with that key, and had let go of none
    /// lately: the call is counted against no delivery (receive count 0).
    NotHeld,
    /// The worker held several deliveries whose messages have that key (the producer published
    /// it more than once): the call is counted against the latest of them.
    Ambiguous,
}

impl Unattributed {
    /// Every reason, in the order the report names them.
    pub const ALL: [Unattributed; 3] = [
        Unattributed::UnknownKey,
        Unattributed::NotHeld,
        Unattributed::Ambiguous,
    ];

    /// What happened, after "N provider calls ...".
    pub fn words(self) -> &'static str {
        match self {
            Unattributed::UnknownKey => "named a key no published message has",
            Unattributed::NotHeld => "named a message their worker held no delivery of",
            Unattributed::Ambiguous => {
                "named a key of several deliveries their worker held (counted against the latest)"
            }
        }
    }
}

/// One provider call that could not be matched to exactly one held delivery.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnattributedCall {
    /// When the call started.
    pub at: Nanos,
    pub worker: WorkerId,
    /// The message its key names, if any.
    pub seq: Option<Seq>,
    pub why: Unattributed,
}
