//! Which calls a provider phase selects: a time window, and optionally the call's effect key,
//! its attempt (the n-th call the provider received for that key over the whole run) and the
//! delivery of its message it was made in.

use std::collections::{HashMap, HashSet};

use crate::profile::Phase;
use crate::record::{nanos, Nanos, Seq};

/// A call as the provider sees it when it arrives.
#[derive(Debug, Clone, Copy)]
pub struct CallFacts<'a> {
    pub at: Nanos,
    /// The published message the key names, if any.
    pub seq: Option<Seq>,
    /// The call's effect key.
    pub key: &'a str,
    /// Receive count of the delivery the call was made in (0: its worker held none).
    pub delivery: u32,
}

/// A phase's selectors.
#[derive(Debug, Clone)]
pub struct Selection {
    from: Nanos,
    /// Exclusive; `u64::MAX`: the end of the run.
    to: Nanos,
    keys: Option<HashSet<String>>,
    attempts: Option<Vec<u32>>,
    delivery: Option<u32>,
}

impl Selection {
    pub fn of(p: &Phase) -> Selection {
        Selection {
            from: nanos(p.from),
            to: p.to.map_or(u64::MAX, nanos),
            keys: p.keys.as_ref().map(|k| k.iter().cloned().collect()),
            attempts: p.attempts.clone(),
            delivery: p.delivery,
        }
    }

    /// Whether the phase selects `call`, the `attempt`-th call for its key.
    pub fn selects(&self, call: &CallFacts<'_>, attempt: u32) -> bool {
        self.from <= call.at
            && call.at < self.to
            && self.keys.as_ref().is_none_or(|k| k.contains(call.key))
            && self.delivery.is_none_or(|d| d == call.delivery)
            && self.attempts.as_ref().is_none_or(|a| a.contains(&attempt))
    }
}

/// How many calls the provider has received for each key, kept only for the keys an
/// `attempt` selector can ask about (every key when one such phase names no keys).
#[derive(Debug, Clone, Default)]
pub struct Attempts {
    /// `None`: no phase selects by attempt; nothing is counted.
    counted: Option<Counted>,
    by_seq: HashMap<Seq, u32>,
    by_text: HashMap<String, u32>,
}

#[derive(Debug, Clone)]
enum Counted {
    Every,
    Only(HashSet<String>),
}

impl Attempts {
    pub fn for_phases(phases: &[Phase]) -> Attempts {
        let mut only = HashSet::new();
        let mut every = false;
        let mut any = false;
        for p in phases.iter().filter(|p| p.attempts.is_some()) {
            any = true;
            match &p.keys {
                Some(keys) => only.extend(keys.iter().cloned()),
                None => every = true,
            }
        }
        let counted = match (any, every) {
            (false, _) => None,
            (true, true) => Some(Counted::Every),
            (true, false) => Some(Counted::Only(only)),
        };
        Attempts {
            counted,
            ..Attempts::default()
        }
    }

    /// Counts `call` and returns its attempt number for its key (0 when its key is not counted).
    pub fn count(&mut self, call: &CallFacts<'_>) -> u32 {
        let counted = match &self.counted {
            None => false,
            Some(Counted::Every) => true,
            Some(Counted::Only(keys)) => keys.contains(call.key),
        };
        if !counted {
            return 0;
        }
        let n = match call.seq {
            Some(seq) => self.by_seq.entry(seq).or_insert(0),
            None => self.by_text.entry(call.key.to_string()).or_insert(0),
        };
        *n += 1;
        *n
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    const S: u64 = 1_000_000_000;

    fn call(at: u64, key: &str, delivery: u32) -> CallFacts<'_> {
        let seq = key.strip_prefix("msg-").and_then(|n| n.parse().ok());
        CallFacts {
            at: at * S,
            seq,
            key,
            delivery,
        }
    }

    fn phase(keys: Option<&[&str]>, attempts: Option<&[u32]>, delivery: Option<u32>) -> Phase {
        Phase {
            keys: keys.map(|k| k.iter().map(|s| s.to_string()).collect()),
            attempts: attempts.map(<[u32]>::to_vec),
            delivery,
            ..Phase::default()
        }
    }

    /// The calls each phase selects among `calls`, attempts counted as the provider counts
    /// them.
    fn selected(phases: &[Phase], calls: &[CallFacts<'_>]) -> Vec<Vec<usize>> {
        let mut attempts = Attempts::for_phases(phases);
        let sel: Vec<Selection> = phases.iter().map(Selection::of).collect();
        let mut out = vec![Vec::new(); phases.len()];
        for (i, c) in calls.iter().enumerate() {
            let n = attempts.count(c);
            for (p, s) in sel.iter().enumerate() {
                if s.selects(c, n) {
                    out[p].push(i);
                }
            }
        }
        out
    }

    #[test]
    fn keys_select_only_their_calls_for_the_whole_run() {
        // Calls 0..4: msg-1 at 0 s, msg-2 at 1 s, msg-1 at 2 s, msg-3 at 3 s, msg-2 at 4 s.
        // keys [msg-1, msg-3] with no window: calls 0, 2 (msg-1) and 3 (msg-3): 3 calls.
        let calls = [
            call(0, "msg-1", 1),
            call(1, "msg-2", 1),
            call(2, "msg-1", 1),
            call(3, "msg-3", 1),
            call(4, "msg-2", 2),
        ];
        let p = phase(Some(&["msg-1", "msg-3"]), None, None);
        assert_eq!(selected(&[p], &calls), vec![vec![0, 2, 3]]);
    }

    #[test]
    fn an_attempt_counts_every_call_for_its_key_across_deliveries() {
        // msg-7's calls: delivery 1 at 0 s (attempt 1), its in-handler retry at 2 s (attempt 2),
        // delivery 2 at 40 s (attempt 3), its retry at 42 s (attempt 4). msg-8 between them at
        // 1 s is its own attempt 1. attempt [2, 3] with keys [msg-7]: calls 2 (msg-7's 2nd) and
        // 3 (msg-7's 3rd, in delivery 2): 2 calls; msg-8's first call is not msg-7's.
        let calls = [
            call(0, "msg-7", 1),
            call(1, "msg-8", 1),
            call(2, "msg-7", 1),
            call(40, "msg-7", 2),
            call(42, "msg-7", 2),
        ];
        let p = phase(Some(&["msg-7"]), Some(&[2, 3]), None);
        assert_eq!(selected(&[p], &calls), vec![vec![2, 3]]);
        // attempt 1 without keys: each key's first call: calls 0 (msg-7) and 1 (msg-8).
        let p = phase(None, Some(&[1]), None);
        assert_eq!(selected(&[p], &calls), vec![vec![0, 1]]);
    }

    #[test]
    fn a_delivery_selects_the_calls_made_within_it() {
        // delivery 2: calls 3 and 4 (msg-7's second delivery, its call and its retry); a call
        // made while its worker held no delivery of its message (delivery 0) is in none.
        let calls = [
            call(0, "msg-7", 1),
            call(2, "msg-7", 1),
            call(40, "msg-7", 2),
            call(42, "msg-7", 2),
            call(43, "msg-7", 0),
        ];
        let p = phase(None, None, Some(2));
        assert_eq!(selected(&[p], &calls), vec![vec![2, 3]]);
        // delivery 2 and attempt 4: only call 3, msg-7's 4th call and the 2nd in delivery 2.
        let p = phase(None, Some(&[4]), Some(2));
        assert_eq!(selected(&[p], &calls), vec![vec![3]]);
    }

    #[test]
    fn selectors_narrow_a_time_window() {
        // Window 1 s to 41 s (exclusive) with keys [msg-7]: of msg-7's calls at 0, 2, 40 and 42
        // s, those at 2 and 40 s. Attempts count every call, in the window or not: with
        // attempt 1 in the same window nothing is selected (msg-7's attempt 1 is at 0 s).
        let calls = [
            call(0, "msg-7", 1),
            call(2, "msg-7", 1),
            call(40, "msg-7", 2),
            call(42, "msg-7", 2),
        ];
        let window = |p: Phase| Phase {
            from: Duration::from_secs(1),
            to: Some(Duration::from_secs(41)),
            ..p
        };
        let keyed = window(phase(Some(&["msg-7"]), None, None));
        let first = window(phase(Some(&["msg-7"]), Some(&[1]), None));
        assert_eq!(selected(&[keyed, first], &calls), vec![vec![1, 2], vec![]]);
    }

    #[test]
    fn only_the_keys_an_attempt_selector_names_are_counted() {
        // attempt 1 for msg-1 only: msg-1 counted (1, 2), msg-2 never (0, 0).
        let phases = [phase(Some(&["msg-1"]), Some(&[1]), None)];
        let mut a = Attempts::for_phases(&phases);
        let counts: Vec<u32> = [
            call(0, "msg-1", 1),
            call(0, "msg-2", 1),
            call(1, "msg-1", 1),
            call(1, "msg-2", 1),
        ]
        .iter()
        .map(|c| a.count(c))
        .collect();
        assert_eq!(counts, vec![1, 0, 2, 0]);
        // No attempt selector: nothing counted.
        let mut none = Attempts::for_phases(&[phase(Some(&["msg-1"]), None, None)]);
        assert_eq!(none.count(&call(0, "msg-1", 1)), 0);
        // A key never published is counted by its text.
        let mut every = Attempts::for_phases(&[phase(None, Some(&[2]), None)]);
        let order = call(0, "order-9", 1);
        assert_eq!((every.count(&order), every.count(&order)), (1, 2));
    }
}
