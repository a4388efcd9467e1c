//! The keys of the run's published messages, by seq and by key: a delivery's body names its
//! message by key, and the lookup is a map, not a scan of every message published.

use std::collections::HashMap;

use crate::record::Seq;

#[derive(Debug, Default)]
pub struct PublishedKeys {
    /// Index seq - 1; an empty key for a seq whose message is not known (yet).
    by_seq: Vec<String>,
    /// The first seq published with each key.
    first: HashMap<String, Seq>,
}

impl PublishedKeys {
    /// The next message (seq: the count so far, plus one) has `key`.
    pub fn push(&mut self, key: String) {
        let seq = self.by_seq.len() as Seq + 1;
        self.first.entry(key.clone()).or_insert(seq);
        self.by_seq.push(key);
    }

    /// The last message pushed was not published after all.
    pub fn pop(&mut self) {
        let Some(key) = self.by_seq.pop() else {
            return;
        };
        let seq = self.by_seq.len() as Seq + 1;
        if self.first.get(&key) == Some(&seq) {
            self.first.remove(&key);
        }
    }

    /// Message `seq` has `key` (seqs before it not yet known are left empty).
    pub fn set(&mut self, seq: Seq, key: String) {
        let len = (seq as usize).saturating_sub(1).max(self.by_seq.len());
        self.by_seq.resize(len, String::new());
        self.push(key);
    }

    /// The key of message `seq`.
    pub fn get(&self, seq: Seq) -> Option<&str> {
        self.by_seq
            .get((seq as usize).wrapping_sub(1))
            .map(String::as_str)
    }

    /// The first message published with `key`.
    pub fn seq_of(&self, key: &str) -> Option<Seq> {
        self.first.get(key).copied()
    }

    /// Every key, by seq.
    #[cfg(test)]
    pub fn by_seq(&self) -> &[String] {
        &self.by_seq
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_names_the_first_message_published_with_it() {
        let mut k = PublishedKeys::default();
        // msg-1 (seq 1), msg-2 (seq 2), msg-1 again (seq 3): msg-1 is seq 1.
        for key in ["msg-1", "msg-2", "msg-1"] {
            k.push(key.into());
        }
        assert_eq!((k.seq_of("msg-1"), k.seq_of("msg-2")), (Some(1), Some(2)));
        assert_eq!((k.get(3), k.get(4), k.get(0)), (Some("msg-1"), None, None));
        // A dropped send (seq 3 popped) leaves seq 1 for msg-1; msg-9 was never published.
        k.pop();
        assert_eq!((k.seq_of("msg-1"), k.seq_of("msg-9")), (Some(1), None));
        // msg-2 popped: no message has it.
        k.pop();
        assert_eq!(k.seq_of("msg-2"), None);
        // Seq 5 known before seqs 2 to 4: they stay empty, not named by any key.
        k.set(5, "msg-5".into());
        assert_eq!(k.by_seq(), ["msg-1", "", "", "", "msg-5"]);
        assert_eq!(k.seq_of("msg-5"), Some(5));
    }
}
