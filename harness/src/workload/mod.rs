//! The workload: when messages are published, their keys and bodies, which are poison, and the
//! request templates of an HTTP ingress load (a profile type, [`crate::profile::template`]).
//!
//! [`plan`] turns the workload section into a list of publishes before the run starts, so the
//! runner only replays it. Arrival gaps and poison fractions draw from the seed's `workload`
//! stream.

mod arrival;
mod poison;
pub mod producer;

pub use crate::profile::template::{Fill, Slot, Template, TemplateError};
pub use arrival::arrival_times;
pub use poison::poison_flags;
pub use producer::Attempt;

use crate::profile::{Scenario, WorkloadSpec};
use crate::record::{nanos, Key, Nanos, Seq};

/// The publishes of a run, in order.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    /// Publish instants, ascending; message `seq` is published at `at[seq - 1]`.
    pub at: Vec<Nanos>,
    /// Explicit keys (`workload.keys`); `None` = `msg-<seq>`.
    keys: Option<Vec<String>>,
    /// Poison flag per message.
    pub poison: Vec<bool>,
    /// Every send of the producer, in time order, when the run models the producer's retries
    /// or the broker's deduplication (`workload.producer`, `broker.fifo`): then message `seq` of
    /// the plan may reach the broker several times, and broker messages are numbered by accepted
    /// send, not by plan. `None`: message `seq` is published once, at `at[seq - 1]`.
    pub sends: Option<Vec<Attempt>>,
    /// `workload.groups`: message groups, round robin in plan order.
    pub groups: Option<u32>,
}

impl Plan {
    /// Messages planned (keys), whatever number of sends reach the broker.
    pub fn len(&self) -> usize {
        self.at.len()
    }

    /// Sends to make: one per message, or the producer's attempts.
    pub fn send_count(&self) -> usize {
        self.sends.as_ref().map_or(self.at.len(), Vec::len)
    }

    /// When send number `i` (0-based, time order) goes out.
    pub fn send_at(&self, i: usize) -> Option<Nanos> {
        match &self.sends {
            Some(s) => s.get(i).map(|a| a.at),
            None => self.at.get(i).copied(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.at.is_empty()
    }

    /// True when the profile names the keys (`workload.keys`).
    pub fn has_explicit_keys(&self) -> bool {
        self.keys.is_some()
    }

    /// The key of message `seq`.
    pub fn key(&self, seq: Seq) -> String {
        match &self.keys {
            Some(k) => k[(seq - 1) as usize].clone(),
            None => format!("msg-{seq}"),
        }
    }

    /// The key of message `seq` as the record keeps it (a default key is its number).
    pub fn message_key(&self, seq: Seq) -> Key {
        match &self.keys {
            Some(k) => Key::from(k[(seq - 1) as usize].as_str()),
            None => Key::numbered(seq),
        }
    }

    /// The FIFO message group of plan message `seq`: round robin over `workload.groups`, or one
    /// group per message.
    pub fn group(&self, seq: Seq) -> u32 {
        match self.groups {
            Some(n) => (seq - 1) % n,
            None => seq - 1,
        }
    }

    /// The body a consumer receives for message `seq`.
    pub fn body(&self, seq: Seq) -> String {
        ackbench_targets::message::body(
            &self.key(seq),
            u64::from(seq),
            self.poison[(seq - 1) as usize],
        )
    }
}

/// Plans the publishes of `scenario`: arrivals within `run.duration`, capped by `count` (and by
/// the number of explicit keys, if any).
pub fn plan(scenario: &Scenario) -> Plan {
    let w: &WorkloadSpec = &scenario.workload;
    let mut rng = crate::seed::stream(scenario.seed, "workload");
    let mut cap = w.count.unwrap_or(u64::MAX);
    if let Some(k) = &w.keys {
        cap = cap.min(k.len() as u64);
    }
    let at = arrival_times(&w.arrival, nanos(scenario.run.duration), cap, &mut rng);
    let keys = w.keys.as_ref().map(|k| k[..at.len()].to_vec());
    let poison = poison_flags(&w.poison, at.len(), keys.as_deref(), &mut rng);
    let mut plan = Plan {
        at,
        keys,
        poison,
        sends: None,
        groups: w.groups,
    };
    plan.sends = match &w.producer {
        Some(p) => Some(producer::attempts(
            p,
            plan.at.iter().copied(),
            |i| plan.key(i as Seq + 1),
            &mut crate::seed::stream(scenario.seed, "producer"),
        )),
        None if scenario.broker.fifo.is_some() => {
            Some(producer::single_attempts(plan.at.iter().copied()))
        }
        None => None,
    };
    plan
}

#[cfg(test)]
mod tests {
    use super::*;
    use ackbench_targets::message::{Body, Order};

    #[test]
    fn a_typed_body_reads_as_the_planned_text_and_keys_as_written() {
        // Three explicit keys, one JSON must escape and one spelled like a default key; message
        // 2 is poison (its text lacks `email`).
        let plan = Plan {
            at: vec![0, 1, 2],
            keys: Some(vec!["a\"b".into(), "msg-07".into(), "msg-3".into()]),
            poison: vec![false, true, false],
            sends: None,
            groups: None,
        };
        for seq in [1, 3] {
            let typed = Body::Order(Order::of(plan.key(seq), u64::from(seq)));
            assert_eq!(typed.text(), plan.body(seq));
            assert_eq!(
                *typed.order().unwrap(),
                Order::parse(&plan.body(seq)).unwrap()
            );
        }
        assert!(Order::parse(&plan.body(2)).is_err());
        // Keys: "msg-07" stays text, "msg-3" is the number 3; both read as written.
        assert_eq!(plan.message_key(2).to_string(), "msg-07");
        assert_eq!(plan.message_key(3), Key::numbered(3));
        assert!(plan.message_key(1).is("a\"b"));
    }
}
