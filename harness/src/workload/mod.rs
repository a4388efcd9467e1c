//! The workload: when messages are published, their keys and bodies, which are poison, and the
//! request templates of an HTTP ingress load (a profile type, [`crate::profile::template`]).
//!
//! [`plan`] turns the workload section into the run's publishes before the run starts, so the
//! runner only replays it. Arrival gaps and poison fractions draw from the seed's `workload`
//! stream. A generated workload (`every`, `rate_per_s`, poison `none`, `first`, `fraction`,
//! `keys`, default keys) takes the same memory for any number of messages: the plan keeps how
//! to make each instant and flag, and makes them when asked, the same for every seed as when
//! they were all drawn before the run. Lists the profile writes out (`arrival: at`,
//! `workload.keys`) and the producer's sends are kept as lists.

mod arrival;
#[cfg(feature = "live")]
pub mod key_reader;
// What a live run publishes; a build without live mode renders no message.
#[cfg_attr(not(feature = "live"), allow(dead_code))]
pub mod message;
mod poison;
pub mod producer;
#[cfg(test)]
mod tests_lazy;
#[cfg(test)]
mod tests_message;

#[cfg(feature = "live")]
pub use crate::profile::template::Fill;
pub use producer::Attempt;

use crate::profile::{Scenario, WorkloadSpec};
use crate::record::{nanos, Key, Nanos, Seq};
use arrival::Arrivals;
use poison::Selection;

/// The publishes of a run, in order.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    /// Publish instants, ascending; message `seq` is published at arrival `seq - 1`.
    arrivals: Arrivals,
    /// Explicit keys (`workload.keys`); `None` = `msg-<seq>`.
    keys: Option<Vec<String>>,
    /// Which messages are poison.
    poison: Selection,
    /// Every send of the producer, in time order, when the run models the producer's retries
    /// or the broker's deduplication (`workload.producer`, `broker.fifo`): then message `seq` of
    /// the plan may reach the broker several times, and broker messages are numbered by accepted
    /// send, not by plan. `None`: message `seq` is published once, at
    /// [`Plan::publish_at`]`(seq - 1)`.
    pub sends: Option<Vec<Attempt>>,
    /// `workload.groups`: message groups, round robin in plan order.
    pub groups: Option<u32>,
}

impl Plan {
    /// Messages planned (keys), whatever number of sends reach the broker.
    pub fn len(&self) -> usize {
        self.arrivals.len()
    }

    /// Sends to make: one per message, or the producer's attempts.
    pub fn send_count(&self) -> usize {
        self.sends.as_ref().map_or(self.len(), Vec::len)
    }

    /// When send number `i` (0-based, time order) goes out. Reading every send in order is
    /// cheaper with a [`SendCursor`].
    #[cfg_attr(not(feature = "live"), allow(dead_code))]
    pub fn send_at(&self, i: usize) -> Option<Nanos> {
        match &self.sends {
            Some(s) => s.get(i).map(|a| a.at),
            None => self.publish_at(i),
        }
    }

    /// When message `i + 1` is first published (`i` 0-based, plan order). A rate's instant is
    /// walked from the nearest of the instants it keeps (one per 1024 messages); reading them in
    /// order is cheaper with [`Plan::arrivals`].
    #[cfg_attr(not(feature = "live"), allow(dead_code))]
    pub fn publish_at(&self, i: usize) -> Option<Nanos> {
        self.arrivals.at(i)
    }

    /// Every message's first publish instant, in plan order.
    pub fn arrivals(&self) -> impl ExactSizeIterator<Item = Nanos> + '_ {
        Instants {
            arrivals: &self.arrivals,
            cursor: self.arrivals.cursor(),
            left: self.len(),
        }
    }

    /// True when the profile names the keys (`workload.keys`).
    pub fn has_explicit_keys(&self) -> bool {
        self.keys.is_some()
    }

    /// The key of message `seq`.
    pub fn key(&self, seq: Seq) -> String {
        self.with_key(seq, str::to_string)
    }

    /// `f` of the key of message `seq`, a default key written on the stack (no allocation).
    pub fn with_key<T>(&self, seq: Seq, f: impl FnOnce(&str) -> T) -> T {
        match &self.keys {
            Some(k) => f(&k[(seq - 1) as usize]),
            None => f(crate::record::key::NumberedText::new(seq).as_str()),
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

    /// Whether message `seq` (1-based, plan order) is poison. Constant time for every
    /// selection (a fraction seeks the message's draw); [`SendCursor::advance`] reads the
    /// flags in order without seeking.
    pub fn poison(&self, seq: Seq) -> bool {
        self.poison.is_poison(seq)
    }

    /// The body a consumer receives for message `seq`.
    pub fn body(&self, seq: Seq) -> String {
        ackbench_targets::message::body(&self.key(seq), u64::from(seq), self.poison(seq))
    }
}

/// The arrivals of a plan read in order ([`Plan::arrivals`]).
struct Instants<'a> {
    arrivals: &'a Arrivals,
    cursor: arrival::Cursor,
    left: usize,
}

impl Iterator for Instants<'_> {
    type Item = Nanos;

    fn next(&mut self) -> Option<Nanos> {
        let t = self.cursor.at(self.arrivals)?;
        self.cursor.step(self.arrivals);
        self.left -= 1;
        Some(t)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.left, Some(self.left))
    }
}

impl ExactSizeIterator for Instants<'_> {}

/// Reads a plan's sends in time order, each in constant time and memory: when the next goes
/// out, and whether the message it sends is poison. Made by [`SendCursor::new`] for one plan
/// and used with that plan only.
#[derive(Debug, Clone)]
pub struct SendCursor {
    /// Sends made.
    sent: usize,
    /// When the next send goes out; `None` when every send is made.
    next_at: Option<Nanos>,
    /// Without listed sends: the arrivals and poison flags, at message `sent + 1`.
    arrivals: arrival::Cursor,
    poison: poison::Cursor,
}

impl SendCursor {
    /// At the plan's first send.
    pub fn new(plan: &Plan) -> SendCursor {
        let arrivals = plan.arrivals.cursor();
        SendCursor {
            sent: 0,
            next_at: match &plan.sends {
                Some(s) => s.first().map(|a| a.at),
                None => arrivals.at(&plan.arrivals),
            },
            arrivals,
            poison: plan.poison.cursor(),
        }
    }

    /// Sends made so far.
    pub fn sent(&self) -> usize {
        self.sent
    }

    /// When the next send goes out; `None` once every send is made.
    pub fn next_at(&self) -> Option<Nanos> {
        self.next_at
    }

    /// Makes the next send (there must be one) and returns whether the message it sends is
    /// poison: the next message's flag, or with listed sends the flag of the send's message.
    pub fn advance(&mut self, plan: &Plan) -> bool {
        match &plan.sends {
            Some(s) => {
                let planned = s[self.sent].planned;
                self.sent += 1;
                self.next_at = s.get(self.sent).map(|a| a.at);
                plan.poison(planned)
            }
            None => {
                assert!(self.sent < plan.len(), "every planned message is sent");
                self.sent += 1;
                self.arrivals.step(&plan.arrivals);
                self.next_at = self.arrivals.at(&plan.arrivals);
                self.poison.next(&plan.poison)
            }
        }
    }
}

/// Plans the publishes of `scenario`: arrivals within `run.duration`, capped by `count` (and by
/// the number of explicit keys, if any).
pub fn plan(scenario: &Scenario) -> Plan {
    plan_of(
        &scenario.workload,
        nanos(scenario.run.duration),
        scenario.seed,
        scenario.broker.fifo.is_some(),
    )
}

/// The plan of workload `w` over `duration` with `seed`; `fifo`: the broker is a FIFO queue
/// (every send listed, for its deduplication).
fn plan_of(w: &WorkloadSpec, duration: Nanos, seed: u64, fifo: bool) -> Plan {
    let mut rng = crate::seed::stream(seed, "workload");
    let mut cap = w.count.unwrap_or(u64::MAX);
    if let Some(k) = &w.keys {
        cap = cap.min(k.len() as u64);
    }
    let arrivals = Arrivals::new(&w.arrival, duration, cap, &mut rng);
    let keys = w.keys.as_ref().map(|k| k[..arrivals.len()].to_vec());
    // The poison fractions draw on from where the arrivals left the stream.
    let poison = Selection::new(&w.poison, arrivals.len(), keys.as_deref(), &rng);
    let mut plan = Plan {
        arrivals,
        keys,
        poison,
        sends: None,
        groups: w.groups,
    };
    plan.sends = match &w.producer {
        Some(p) => Some(producer::attempts(
            p,
            plan.arrivals(),
            |i| plan.key(i as Seq + 1),
            &mut crate::seed::stream(seed, "producer"),
        )),
        None if fifo => Some(producer::single_attempts(plan.arrivals())),
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
            arrivals: Arrivals::listed(vec![0, 1, 2]),
            keys: Some(vec!["a\"b".into(), "msg-07".into(), "msg-3".into()]),
            poison: Selection::Listed(vec![2]),
            sends: None,
            groups: None,
        };
        for seq in [1, 3] {
            let typed = Body::Order(Order::of(&plan.key(seq), u64::from(seq)));
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
