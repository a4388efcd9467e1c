//! Provider calls of a live run that could not be matched to one delivery their worker held
//! ([`crate::record::UnattributedCall`]), counted by reason.

use serde::{Deserialize, Serialize};

use crate::record::{RunRecord, Unattributed};

/// How many calls could not be matched to one held delivery, by reason.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct UnattributedCalls {
    /// Their key names no published message.
    pub unknown_key: u64,
    /// Their worker held no delivery of their message (nor had let go of one lately).
    pub not_held: u64,
    /// Their worker held several deliveries of their key: counted against the latest.
    pub ambiguous: u64,
}

impl UnattributedCalls {
    /// The calls of `record` that were not matched to one held delivery.
    pub fn of(record: &RunRecord) -> Self {
        let mut n = UnattributedCalls::default();
        for c in &record.unattributed_calls {
            *n.count_mut(c.why) += 1;
        }
        n
    }

    fn count_mut(&mut self, why: Unattributed) -> &mut u64 {
        match why {
            Unattributed::UnknownKey => &mut self.unknown_key,
            Unattributed::NotHeld => &mut self.not_held,
            Unattributed::Ambiguous => &mut self.ambiguous,
        }
    }

    /// The count of one reason.
    pub fn count(&self, why: Unattributed) -> u64 {
        match why {
            Unattributed::UnknownKey => self.unknown_key,
            Unattributed::NotHeld => self.not_held,
            Unattributed::Ambiguous => self.ambiguous,
        }
    }

    /// Every call that was not matched.
    pub fn total(&self) -> u64 {
        self.unknown_key + self.not_held + self.ambiguous
    }

    /// True when every call was matched (summary.json then leaves the field out).
    pub fn is_none(&self) -> bool {
        self.total() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::UnattributedCall;

    #[test]
    fn calls_are_counted_by_reason() {
        // Two calls named a message their worker held no delivery of, one a key nobody
        // published, none an ambiguous key: 3 in all.
        let call = |why| UnattributedCall {
            at: 0,
            worker: 1,
            seq: None,
            why,
        };
        let r = RunRecord {
            unattributed_calls: vec![
                call(Unattributed::NotHeld),
                call(Unattributed::UnknownKey),
                call(Unattributed::NotHeld),
            ],
            ..RunRecord::default()
        };
        let n = UnattributedCalls::of(&r);
        assert_eq!((n.unknown_key, n.not_held, n.ambiguous), (1, 2, 0));
        assert_eq!(n.total(), 3);
        assert!(!n.is_none());
        assert!(UnattributedCalls::of(&RunRecord::default()).is_none());
    }
}
