//! A FIFO queue's message groups (`workload.groups`), replayed from the broker's events: per
//! group its messages, its largest backlog, and how long it was blocked behind its head.
//!
//! A group is *blocked* while one of its messages is in flight and another waits visible behind
//! it: head-of-line blocking, the time a slow or poison head holds back the rest of its group
//! (other groups are not held back by it). The backlog is the group's messages in the main queue
//! (visible or in flight).

use serde::{Deserialize, Serialize};

use super::place::{Place, Places};
use crate::record::{Nanos, RunRecord};

/// One message group of the run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupAccount {
    /// `group-1`, `group-2`, ...
    pub group: String,
    /// Broker messages published into it.
    pub messages: u64,
    /// The most of its messages in the main queue at once.
    pub max_backlog: u64,
    /// Time during which a message of it was in flight and another waited behind it.
    pub blocked: Nanos,
}

/// A group as summary.json writes it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GroupSummary {
    pub group: String,
    pub messages: u64,
    pub max_backlog: u64,
    /// Head-of-line blocking time, seconds.
    pub blocked_s: f64,
}

impl From<&GroupAccount> for GroupSummary {
    fn from(g: &GroupAccount) -> Self {
        GroupSummary {
            group: g.group.clone(),
            messages: g.messages,
            max_backlog: g.max_backlog,
            blocked_s: super::seconds(g.blocked),
        }
    }
}

#[derive(Debug, Clone, Copy, Default)]
struct Live {
    in_flight: u64,
    visible: u64,
    max_backlog: u64,
    blocked_since: Option<Nanos>,
    blocked: Nanos,
    messages: u64,
}

/// Every group of the run, in group order; empty when the workload names no groups.
pub fn groups(record: &RunRecord) -> Vec<GroupAccount> {
    let Some(sends) = &record.publishes else {
        return Vec::new();
    };
    let n = record.messages.len();
    let mut group_of: Vec<Option<usize>> = vec![None; n];
    let mut live: Vec<Live> = Vec::new();
    for s in sends {
        if let (Some(seq), Some(g)) = (s.seq, s.group) {
            let g = g as usize;
            if let Some(slot) = group_of.get_mut(seq as usize - 1) {
                *slot = Some(g);
                if g >= live.len() {
                    live.resize(g + 1, Live::default());
                }
                live[g].messages += 1;
            }
        }
    }
    if live.is_empty() {
        return Vec::new();
    }
    let mut places = Places::new(n);
    for e in &record.events {
        let Some(m) = places.apply(&e.kind) else {
            continue;
        };
        let Some(g) = group_of[m.index] else {
            continue;
        };
        let l = &mut live[g];
        for (place, d) in [(m.from, -1i64), (m.to, 1)] {
            let slot = match place {
                Place::InFlight => &mut l.in_flight,
                Place::Visible => &mut l.visible,
                _ => continue,
            };
            *slot = slot.saturating_add_signed(d);
        }
        l.max_backlog = l.max_backlog.max(l.in_flight + l.visible);
        let blocked = l.in_flight > 0 && l.visible > 0;
        match (blocked, l.blocked_since) {
            (true, None) => l.blocked_since = Some(e.at),
            (false, Some(since)) => {
                l.blocked += e.at.saturating_sub(since);
                l.blocked_since = None;
            }
            _ => {}
        }
    }
    live.iter()
        .enumerate()
        .map(|(i, l)| GroupAccount {
            group: format!("group-{}", i + 1),
            messages: l.messages,
            max_backlog: l.max_backlog,
            blocked: l.blocked
                + l.blocked_since
                    .map_or(0, |since| record.end.saturating_sub(since)),
        })
        .collect()
}
