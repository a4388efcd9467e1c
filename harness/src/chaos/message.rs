//! `message`: drop or delay the ack, or the delivery, of the deliveries a rule selects.
//!
//! A byte-level fault cannot aim at one message; ackbench sees each delivery and each ack (in
//! the sim's broker model, and live where the kind's path allows), so it can. Selection narrows
//! by `delivery` (the D-th delivery of the message), `keys`, `seq`, `from`/`to` and `times`;
//! `probability` is drawn (from the seed's `message` stream) only for deliveries or acks every
//! other selector matched, so a rule's draws shift neither another rule's nor a kill's.
//!
//! What a firing does is the runner's: a dropped ack never reaches the broker (the consumer is
//! told it succeeded), a delayed one reaches it `delay` later (the broker judges it then, by its
//! kind's rules for a late ack); a dropped delivery is leased and counted but never handed to
//! the consumer, a delayed one is handed `delay` later with its lease running.

use std::collections::HashSet;

use rand::RngExt;
use rand_chacha::ChaCha8Rng;

use crate::profile::{ChaosRule, MessageRule};
use crate::record::{nanos, Nanos, Seq};
use crate::seed;

/// A delivery handed out, or the ack of one, as a rule sees it.
#[derive(Debug, Clone, Copy)]
pub struct MessageHit<'a> {
    pub seq: Seq,
    pub key: &'a str,
    /// The delivery's number for its message (1 for the first).
    pub delivery: u32,
    pub now: Nanos,
}

/// A rule fired: its index in the `chaos` list, and how long it holds the ack or delivery back
/// (`None`: dropped).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fired {
    pub rule: u32,
    pub delay: Option<Nanos>,
}

#[derive(Debug, Clone)]
struct Rule {
    index: u32,
    rule: MessageRule,
    keys: Option<HashSet<String>>,
    seq: Option<HashSet<Seq>>,
    fired: u64,
}

/// The `message` rules of a run and how often each has fired.
#[derive(Debug, Clone)]
pub struct MessageSchedule {
    rules: Vec<Rule>,
    rng: ChaCha8Rng,
}

impl Default for MessageSchedule {
    fn default() -> Self {
        MessageSchedule::new(&[], 0)
    }
}

impl MessageSchedule {
    pub fn new(chaos: &[ChaosRule], seed: u64) -> MessageSchedule {
        let rules = super::rules_of::<MessageRule>(chaos)
            .map(|(index, r)| Rule {
                index,
                keys: r.keys.as_ref().map(|k| k.iter().cloned().collect()),
                seq: r.seq.as_ref().map(|s| s.iter().copied().collect()),
                rule: r.clone(),
                fired: 0,
            })
            .collect();
        MessageSchedule {
            rules,
            rng: seed::stream(seed, "message"),
        }
    }

    #[cfg_attr(not(feature = "live"), allow(dead_code))] // read by the live runner only
    pub fn is_empty(&self) -> bool {
        self.rules.is_empty()
    }

    /// Whether some rule acts on acks (else only deliveries are looked at).
    pub fn on_acks(&self) -> bool {
        self.rules.iter().any(|r| r.rule.action.on_ack())
    }

    /// Whether some rule acts on deliveries.
    pub fn on_deliveries(&self) -> bool {
        self.rules.iter().any(|r| !r.rule.action.on_ack())
    }

    /// A consumer acks a delivery: the first ack rule that fires.
    pub fn ack(&mut self, hit: MessageHit<'_>) -> Option<Fired> {
        self.first(hit, true)
    }

    /// The broker hands a delivery out: the first delivery rule that fires.
    pub fn delivery(&mut self, hit: MessageHit<'_>) -> Option<Fired> {
        self.first(hit, false)
    }

    fn first(&mut self, hit: MessageHit<'_>, ack: bool) -> Option<Fired> {
        for i in 0..self.rules.len() {
            let r = &self.rules[i];
            let m = &r.rule;
            let selected = m.action.on_ack() == ack
                && m.from.is_none_or(|f| hit.now >= nanos(f))
                && m.to.is_none_or(|t| hit.now < nanos(t))
                && m.times.is_none_or(|t| r.fired < t)
                && m.delivery.is_none_or(|d| d == hit.delivery)
                && r.keys.as_ref().is_none_or(|k| k.contains(hit.key))
                && r.seq.as_ref().is_none_or(|s| s.contains(&hit.seq));
            if !selected {
                continue;
            }
            let p = m.probability;
            if p >= 1.0 || self.rng.random::<f64>() < p {
                let r = &mut self.rules[i];
                r.fired += 1;
                let delay = r.rule.action.delays().then(|| nanos(r.rule.delay));
                return Some(Fired {
                    rule: r.index,
                    delay,
                });
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::profile::message_action::MessageAction;

    fn hit(seq: Seq, key: &str, delivery: u32, now: Nanos) -> MessageHit<'_> {
        MessageHit {
            seq,
            key,
            delivery,
            now,
        }
    }

    fn schedule(rules: Vec<MessageRule>, seed: u64) -> MessageSchedule {
        let chaos: Vec<ChaosRule> = rules.into_iter().map(ChaosRule::new).collect();
        MessageSchedule::new(&chaos, seed)
    }

    #[test]
    fn a_rule_fires_for_the_deliveries_its_selectors_match() {
        let mut r = MessageRule::new(MessageAction::DropAck, Duration::ZERO);
        r.delivery = Some(2);
        r.keys = Some(vec!["order-7".into()]);
        r.times = Some(1);
        let mut s = schedule(vec![r], 1);
        // Not the ack's rule kind: a delivery is never dropped by an ack rule.
        assert_eq!(s.delivery(hit(7, "order-7", 2, 0)), None);
        assert_eq!(s.ack(hit(7, "order-7", 1, 0)), None, "delivery 1");
        assert_eq!(s.ack(hit(8, "order-8", 2, 0)), None, "another key");
        let fired = Fired {
            rule: 0,
            delay: None,
        };
        assert_eq!(s.ack(hit(7, "order-7", 2, 0)), Some(fired));
        assert_eq!(s.ack(hit(7, "order-7", 2, 0)), None, "times: 1");
    }

    #[test]
    fn seq_window_and_delay() {
        let mut r = MessageRule::new(MessageAction::DelayDelivery, Duration::from_secs(10));
        r.seq = Some(vec![3, 5]);
        r.from = Some(Duration::from_secs(1));
        r.to = Some(Duration::from_secs(2));
        let mut s = schedule(vec![r], 1);
        let s1 = 1_000_000_000;
        assert_eq!(s.delivery(hit(3, "msg-3", 1, 0)), None, "before from");
        assert_eq!(s.delivery(hit(4, "msg-4", 1, s1)), None, "seq 4");
        assert_eq!(
            s.delivery(hit(5, "msg-5", 3, s1)),
            Some(Fired {
                rule: 0,
                delay: Some(10 * s1)
            })
        );
        assert_eq!(
            s.delivery(hit(3, "msg-3", 1, 2 * s1)),
            None,
            "to is excluded"
        );
    }

    #[test]
    fn probability_is_drawn_from_the_seed() {
        let mut r = MessageRule::new(MessageAction::DropDelivery, Duration::ZERO);
        r.probability = 0.1;
        let count = |seed| {
            let mut s = schedule(vec![r.clone()], seed);
            (0..10_000)
                .filter(|&i| s.delivery(hit(i + 1, "k", 1, 0)).is_some())
                .count()
        };
        assert_eq!(count(3), count(3));
        // 10,000 draws at 0.1: 1,000 expected, a standard deviation of 30.
        assert!((850..1_150).contains(&count(3)), "{}", count(3));
    }
}
