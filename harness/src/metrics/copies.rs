//! A key published more than once: a retrying producer whose retry the broker did not drop
//! (`workload.producer`) leaves one broker message per accepted send, all with the message's
//! key. Effects are counted by key, so the accounting reads a key's messages as one: see
//! [`super::accounting::per_message`].

use std::collections::{HashMap, HashSet};

use crate::record::RunRecord;

/// For each message (index `seq - 1`), the index of its key's first message; `None` when every
/// key has one message (always, for a run without the producer's sends recorded).
pub fn first_of_key(record: &RunRecord) -> Option<Vec<usize>> {
    record.publishes.as_ref()?;
    let mut first: HashMap<&crate::record::Key, usize> =
        HashMap::with_capacity(record.messages.len());
    let of: Vec<usize> = record
        .messages
        .iter()
        .enumerate()
        .map(|(i, m)| *first.entry(&m.key).or_insert(i))
        .collect();
    of.iter().enumerate().any(|(i, &f)| i != f).then_some(of)
}

/// What the producer's sends came to at the broker.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PublishCounts {
    /// Sends the broker accepted beyond the first of their message's key (each a second broker
    /// message for a key), summed over the keys.
    pub duplicate_publishes: u64,
    /// Sends the broker dropped as duplicates (inside its deduplication window).
    pub publishes_deduplicated: u64,
}

/// The counts of a run whose sends were recorded ([`RunRecord::publishes`]); `None` otherwise.
pub fn publish_counts(record: &RunRecord) -> Option<PublishCounts> {
    let sends = record.publishes.as_ref()?;
    let mut keys = HashSet::new();
    let mut c = PublishCounts::default();
    for s in sends {
        match s.seq {
            None => c.publishes_deduplicated += 1,
            Some(_) => {
                if !keys.insert(s.planned) {
                    c.duplicate_publishes += 1;
                }
            }
        }
    }
    Some(c)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::{MessageRecord, PublishRecord};

    fn send(planned: u32, attempt: u32, seq: Option<u32>) -> PublishRecord {
        PublishRecord {
            at: u64::from(attempt),
            planned,
            attempt,
            seq,
            acknowledged: attempt == 4,
            group: None,
        }
    }

    fn message(key: &str) -> MessageRecord {
        MessageRecord {
            key: key.into(),
            published_at: 0,
            poison: false,
        }
    }

    #[test]
    fn two_keys_of_the_domain_example_against_a_five_minute_window() {
        // Per key: attempts 1 (accepted), 2 and 3 (dropped), 4 (accepted, a second message).
        // Two keys: 4 broker messages; 2 duplicate publishes; 4 dropped.
        let r = RunRecord {
            messages: ["msg-1", "msg-2", "msg-1", "msg-2"].map(message).to_vec(),
            publishes: Some(vec![
                send(1, 1, Some(1)),
                send(2, 1, Some(2)),
                send(1, 2, None),
                send(2, 2, None),
                send(1, 3, None),
                send(2, 3, None),
                send(1, 4, Some(3)),
                send(2, 4, Some(4)),
            ]),
            ..RunRecord::default()
        };
        assert_eq!(
            publish_counts(&r),
            Some(PublishCounts {
                duplicate_publishes: 2,
                publishes_deduplicated: 4
            })
        );
        assert_eq!(first_of_key(&r), Some(vec![0, 1, 0, 1]));
    }

    #[test]
    fn without_recorded_sends_or_repeats_there_is_nothing_to_fold() {
        let mut r = RunRecord {
            messages: ["msg-1", "msg-2"].map(message).to_vec(),
            ..RunRecord::default()
        };
        assert_eq!((first_of_key(&r), publish_counts(&r)), (None, None));
        r.publishes = Some(vec![send(1, 1, Some(1)), send(2, 1, Some(2))]);
        assert_eq!(first_of_key(&r), None);
        assert_eq!(publish_counts(&r), Some(PublishCounts::default()));
    }
}
