//! Workers, as the broker knows them: by the access key id their SDK signs with.
//!
//! A worker started by ackbench signs with its worker number as access key id (`3`, or
//! `worker-3`), and gets that number as its [`WorkerId`]. Any other access key id (a user's own
//! consumer, or no credentials at all: `anonymous`) is given a number from
//! [`FIRST_NAMED`] upward, in the order the broker first sees it.

use std::collections::HashMap;

use crate::record::WorkerId;

/// The first number given to an access key id that names no worker number.
pub const FIRST_NAMED: WorkerId = 10_001;

/// The access key ids seen so far and their worker ids.
#[derive(Debug, Default)]
pub struct Workers {
    by_key: HashMap<String, WorkerId>,
    next_named: WorkerId,
}

impl Workers {
    /// The worker id of an access key id (`None`: the request had no credentials).
    pub fn id(&mut self, access_key: Option<&str>) -> WorkerId {
        let key = access_key.unwrap_or("anonymous");
        if let Some(&id) = self.by_key.get(key) {
            return id;
        }
        let id = match worker_number(key) {
            Some(n) => n,
            None => {
                if self.next_named < FIRST_NAMED {
                    self.next_named = FIRST_NAMED;
                }
                let id = self.next_named;
                self.next_named = self.next_named.saturating_add(1);
                id
            }
        };
        self.by_key.insert(key.to_string(), id);
        id
    }

    /// Every access key id seen, with its worker id, by worker id.
    pub fn all(&self) -> Vec<(String, WorkerId)> {
        let mut v: Vec<_> = self.by_key.iter().map(|(k, &id)| (k.clone(), id)).collect();
        v.sort_by_key(|&(_, id)| id);
        v
    }
}

/// `3`, `worker-3`, `worker_3` or `worker3` (any case) -> 3. Worker numbers start at 1 and stay
/// below [`FIRST_NAMED`].
pub fn worker_number(key: &str) -> Option<WorkerId> {
    let lower = key.to_ascii_lowercase();
    let digits = lower
        .strip_prefix("worker")
        .map(|r| r.trim_start_matches(['-', '_']))
        .unwrap_or(&lower);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits
        .parse::<WorkerId>()
        .ok()
        .filter(|&n| (1..FIRST_NAMED).contains(&n))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbered_keys_keep_their_number_and_names_get_new_ones() {
        assert_eq!(worker_number("3"), Some(3));
        assert_eq!(worker_number("worker-3"), Some(3));
        assert_eq!(worker_number("Worker_12"), Some(12));
        assert_eq!(worker_number("worker7"), Some(7));
        assert_eq!(worker_number("0"), None);
        assert_eq!(worker_number("AKIAIOSFODNN7EXAMPLE"), None);
        assert_eq!(worker_number("worker-"), None);
        let mut w = Workers::default();
        assert_eq!(w.id(Some("worker-2")), 2);
        assert_eq!(w.id(Some("alice")), FIRST_NAMED);
        assert_eq!(w.id(None), FIRST_NAMED + 1);
        assert_eq!(w.id(Some("alice")), FIRST_NAMED);
        assert_eq!(w.all().len(), 3);
    }
}
