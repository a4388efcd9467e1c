//! The recovery probe: one kill at the target's worst point on a message's first delivery, to
//! see by simulation how many deliveries its recovery takes against the delivery limit.
//!
//! For `claim-then-send` the worst point is one second after the claim (the call has started,
//! the claim is unstamped); for the other targets, right after the receive.

use std::time::Duration;

use serde::Serialize;

use crate::profile::kinds::{KindName, KindWords};
use crate::profile::{ChaosRule, KillPoint, KillRule, KillTrigger, Scenario};
use crate::record::{AckOutcome, EventKind, HandlerEnd, RunRecord};

/// The scenario with one more chaos rule: a kill at the target's worst point, on the first
/// delivery, once.
pub fn scenario(s: &Scenario) -> Scenario {
    let (point, delay) = worst_point(&s.consumer.target);
    let mut probe = s.clone();
    probe.chaos.push(ChaosRule::new(KillRule {
        delivery: Some(1),
        times: Some(1),
        delay,
        ..KillRule::new(KillTrigger::Point(point))
    }));
    probe
}

/// Where a death costs the target most, and how long after that point it dies.
pub fn worst_point(target: &str) -> (KillPoint, Duration) {
    match target {
        "claim-then-send" => (
            KillPoint::Checkpoint("claimed".into()),
            Duration::from_secs(1),
        ),
        _ => (KillPoint::Received, Duration::ZERO),
    }
}

/// The point in words.
pub fn describe_point(target: &str, words: &KindWords) -> String {
    match worst_point(target) {
        (KillPoint::Checkpoint(c), d) => format!(
            "{} after the `{c}` checkpoint",
            crate::profile::format_duration(d)
        ),
        _ => format!("right after the {}", words.sizing.received),
    }
}

/// What became of the killed message.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ProbeOutcome {
    /// Where the kill happened, in words.
    pub kill: String,
    /// The killed message's key.
    pub key: Option<String>,
    /// `acked`, `dead-lettered` or `unfinished`.
    pub fate: String,
    /// The delivery that acked it, or the last one the broker made.
    pub last_delivery: u32,
    /// Its effects (emails sent, rows written).
    pub effects: u32,
    /// The delivery limit of the run (0 = none).
    pub limit: u32,
    /// The broker kind of the run (run.json's `broker_kind`), whose words [`Self::summary`]
    /// speaks.
    #[serde(skip)]
    pub broker_kind: KindName,
}

impl ProbeOutcome {
    /// One line: "acked on delivery 3 of 4, 1 effect".
    pub fn summary(&self) -> String {
        let of = if self.limit > 0 {
            format!(" of {}", self.limit)
        } else {
            String::new()
        };
        let w = self.broker_kind.words();
        let verb = match self.fate.as_str() {
            "acked" => format!("{} on delivery", w.sizing.acked),
            "dead-lettered" => format!("{} after delivery", w.given_up.what),
            _ => format!("still {} after delivery", w.unsettled),
        };
        format!(
            "{verb} {}{of}, {} {}",
            self.last_delivery,
            self.effects,
            if self.effects == 1 {
                "effect"
            } else {
                "effects"
            }
        )
    }
}

/// The fate of the first message a kill hit in `record`; `None` when no kill hit a handler.
pub fn outcome(target: &str, record: &RunRecord, limit: u32) -> Option<ProbeOutcome> {
    let (i, seq) = record
        .events
        .iter()
        .enumerate()
        .find_map(|(i, e)| match e.kind {
            EventKind::HandlerEnded {
                seq,
                how: HandlerEnd::Killed,
                ..
            } => Some((i, seq)),
            _ => None,
        })?;
    let mut fate = "unfinished";
    let mut last_delivery = 0;
    for e in &record.events[i..] {
        match e.kind {
            EventKind::Delivered {
                seq: s, delivery, ..
            } if s == seq => last_delivery = delivery,
            EventKind::Acked {
                seq: s,
                delivery,
                outcome: AckOutcome::Deleted | AckOutcome::StaleDeleted | AckOutcome::LateDeleted,
                ..
            } if s == seq => {
                fate = "acked";
                last_delivery = delivery;
                break;
            }
            EventKind::DeadLettered { seq: s, .. } if s == seq => {
                fate = "dead-lettered";
                break;
            }
            _ => {}
        }
    }
    let effects = record
        .ledger
        .effects
        .iter()
        .filter(|e| e.seq == Some(seq))
        .count() as u32;
    Some(ProbeOutcome {
        kill: describe_point(target, record.broker_kind.words()),
        key: (seq as usize)
            .checked_sub(1)
            .and_then(|i| record.messages.get(i))
            .map(|m| m.key.to_string()),
        fate: fate.into(),
        last_delivery,
        effects,
        limit,
        broker_kind: record.broker_kind.clone(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn probed(fate: &str, kind: &str) -> String {
        ProbeOutcome {
            kill: String::new(),
            key: None,
            fate: fate.into(),
            last_delivery: 2,
            effects: 1,
            limit: 5,
            broker_kind: kind.into(),
        }
        .summary()
    }

    #[test]
    fn the_probe_speaks_its_kinds_words() {
        // Delivery 2 of a limit of 5, 1 effect: acked, given up on, or left unsettled, as a
        // queue (SQS, the reference words), a consumer group and a share group say it.
        assert_eq!(probed("acked", "sqs"), "acked on delivery 2 of 5, 1 effect");
        assert_eq!(
            probed("dead-lettered", "sqs"),
            "dead-lettered after delivery 2 of 5, 1 effect"
        );
        assert_eq!(
            probed("unfinished", "sqs"),
            "still in the queue after delivery 2 of 5, 1 effect"
        );
        assert_eq!(
            probed("acked", "kafka"),
            "committed on delivery 2 of 5, 1 effect"
        );
        assert_eq!(
            probed("unfinished", "kafka"),
            "still in the topic, uncommitted after delivery 2 of 5, 1 effect"
        );
        assert_eq!(
            probed("acked", "kafka-share"),
            "accepted on delivery 2 of 5, 1 effect"
        );
        assert_eq!(
            probed("dead-lettered", "kafka-share"),
            "archived after delivery 2 of 5, 1 effect"
        );
    }

    #[test]
    fn the_kill_point_is_named_in_the_kinds_words() {
        let on = |kind: &str| describe_point("ack-after-work", KindName::new(kind).words());
        assert_eq!(on("sqs"), "right after the receive");
        assert_eq!(on("kafka"), "right after the fetch");
        assert_eq!(on("kafka-share"), "right after the acquisition");
        // A claim's checkpoint names no broker's words.
        assert_eq!(
            describe_point("claim-then-send", KindName::new("kafka").words()),
            "1s after the `claimed` checkpoint"
        );
    }
}
