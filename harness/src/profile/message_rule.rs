//! `chaos[].message`: a fault on one delivery of a message, or on its ack, that a byte-level
//! fault cannot aim at (it sees no message).

use std::time::Duration;

use super::duration::format_duration;
use super::fault::{keys_scope, window_scope, FaultRule};
use super::kinds::spec::BrokerSpec;
use super::kinds::LiveMessageFaults;
use super::path::FieldPath;
use super::problem::Problem;
use super::run_spec::Mode;

pub use super::message_action::MessageAction;

/// One `message` rule: its action and the deliveries (or acks) it selects.
#[derive(Debug, Clone, PartialEq)]
pub struct MessageRule {
    pub action: MessageAction,
    /// How long a `delay_*` holds the ack or the delivery back (zero for a drop).
    pub delay: Duration,
    /// Only the D-th delivery of a message (1-based), or the ack of that delivery.
    pub delivery: Option<u32>,
    /// Only messages with one of these keys.
    pub keys: Option<Vec<String>>,
    /// Only the messages published with one of these sequence numbers (1-based, publish order).
    pub seq: Option<Vec<u32>>,
    /// Drawn from the run's seed for each selected delivery or ack (1.0: every one).
    pub probability: f64,
    pub from: Option<Duration>,
    pub to: Option<Duration>,
    /// At most this many firings.
    pub times: Option<u64>,
    /// A run in which it never fires is not a failure.
    pub optional: bool,
}

impl MessageRule {
    /// A rule with `action` and no selector (every delivery or ack).
    #[cfg(test)]
    pub fn new(action: MessageAction, delay: Duration) -> MessageRule {
        MessageRule {
            action,
            delay,
            delivery: None,
            keys: None,
            seq: None,
            probability: 1.0,
            from: None,
            to: None,
            times: None,
            optional: false,
        }
    }
}

impl FaultRule for MessageRule {
    const FAULT: &'static str = "message";

    fn optional(&self) -> bool {
        self.optional
    }

    fn check(&self, broker: &BrokerSpec, mode: Mode, path: &FieldPath) -> Result<(), Problem> {
        check_live(self, broker, mode, path)
    }

    /// `message delay_ack 40s (seq 3, 5, 8, ..., times 3, probability 0.5)`.
    fn label(&self) -> String {
        let mut label = format!("message {}", self.action.name());
        if self.action.delays() {
            label.push_str(&format!(" {}", format_duration(self.delay)));
        }
        let mut scope = Vec::new();
        if let Some(d) = self.delivery {
            scope.push(format!("delivery {d}"));
        }
        if let Some(keys) = &self.keys {
            scope.push(keys_scope(keys));
        }
        if let Some(seq) = &self.seq {
            let shown: Vec<String> = seq.iter().take(3).map(u32::to_string).collect();
            let more = if seq.len() > 3 { ", ..." } else { "" };
            scope.push(format!("seq {}{more}", shown.join(", ")));
        }
        window_scope(&mut scope, self.from, self.to, self.times, self.probability);
        if !scope.is_empty() {
            label.push_str(&format!(" ({})", scope.join(", ")));
        }
        label
    }
}

/// A live run applies a `message` rule only where the kind's live path can: refused at the
/// rule's `action` (`path` is the rule's), with the kind's reason.
fn check_live(
    m: &MessageRule,
    broker: &BrokerSpec,
    mode: Mode,
    path: &FieldPath,
) -> Result<(), Problem> {
    if mode != Mode::Live {
        return Ok(());
    }
    let kind = broker.kind.descriptor();
    let LiveMessageFaults {
        actions,
        why_not,
        external,
    } = &kind.live_message;
    let why = match external {
        Some(why) if broker.url.is_some() => why,
        _ if actions.contains(&m.action) => return Ok(()),
        _ => why_not,
    };
    Err(Problem::new(
        path.key("action"),
        format!(
            "{} cannot run live on {}: {why}; run it in sim mode",
            m.action.name(),
            kind.name
        ),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_name_the_action_its_delay_and_selectors() {
        let mut r = MessageRule::new(MessageAction::DropAck, Duration::ZERO);
        r.delivery = Some(2);
        r.keys = Some(vec!["order-7".into()]);
        assert_eq!(r.label(), "message drop_ack (delivery 2, keys order-7)");
        let mut r = MessageRule::new(MessageAction::DelayAck, Duration::from_secs(40));
        r.seq = Some(vec![3, 5, 8, 9]);
        r.times = Some(3);
        r.probability = 0.5;
        assert_eq!(
            r.label(),
            "message delay_ack 40s (seq 3, 5, 8, ..., times 3, probability 0.5)"
        );
    }
}
