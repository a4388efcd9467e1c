//! `chaos[].message`: a fault on the ack or the delivery of the deliveries a rule selects.
//! Every value that could never act is refused here: an unknown action, a delay a drop does not
//! take or a delay missing, a selector that selects nothing, and (live) an action the kind's live
//! path cannot apply.

use crate::profile::fault::{ChaosRule, Fault};
use crate::profile::message_rule::{MessageAction, MessageRule};
use crate::profile::path::FieldPath;
use crate::profile::problem::{read_value, Problem};
use crate::profile::scalar::{DurationText, Text};

use super::checks::{after, at_least_one, positive, required};
use super::keys::KeyUniverse;

use serde::Deserialize;

pub const FAULT: Fault = Fault {
    name: "message",
    example: "message: { action: drop_ack }",
    needs_full_record: false,
    resolve: |value, c, path| {
        let raw = read_value(value, path)?;
        Ok(ChaosRule::new(resolve(raw, c.keys, path)?))
    },
};

/// `chaos[].message`: drop or delay the ack or the delivery of the deliveries it selects.
#[derive(Debug, Default, Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a mapping with keys action, delay, delivery, keys, seq, probability, from, to, \
                 times, optional"
)]
struct RawMessageFault {
    action: Option<Text>,
    delay: Option<DurationText>,
    delivery: Option<u32>,
    keys: Option<Vec<Text>>,
    seq: Option<Vec<u64>>,
    probability: Option<f64>,
    from: Option<DurationText>,
    to: Option<DurationText>,
    times: Option<u64>,
    optional: Option<bool>,
}

fn resolve(
    raw: RawMessageFault,
    keys: &KeyUniverse,
    path: &FieldPath,
) -> Result<MessageRule, Problem> {
    let names = || {
        MessageAction::ALL
            .iter()
            .map(|a| a.name())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let action_path = path.key("action");
    let action = required(raw.action, &action_path, &format!("one of {}", names()))?;
    let action = MessageAction::named(&action.0).ok_or_else(|| {
        Problem::new(
            action_path.clone(),
            format!("unknown action `{}`: one of {}", action.0, names()),
        )
    })?;
    let delay_path = path.key("delay");
    let delay = match (action.delays(), raw.delay) {
        (true, None) => {
            return Err(Problem::new(
                delay_path.clone(),
                format!(
                    "required: how long {} holds it back, as in delay: 40s",
                    action.name()
                ),
            ))
        }
        (true, Some(d)) => positive(d.0, &delay_path)?,
        (false, Some(_)) => {
            return Err(Problem::at_key(
                delay_path,
                format!(
                    "belongs to delay_ack and delay_delivery: {} holds nothing back",
                    action.name()
                ),
            ))
        }
        (false, None) => Default::default(),
    };
    let delivery = raw
        .delivery
        .map(|n| at_least_one(n, &path.key("delivery"), "deliveries count from 1"))
        .transpose()?;
    let seq = raw
        .seq
        .map(|list| seqs(list, keys, &path.key("seq")))
        .transpose()?;
    let probability = match raw.probability {
        None => 1.0,
        Some(p) if p > 0.0 && p <= 1.0 => p,
        Some(p) => {
            return Err(Problem::new(
                path.key("probability"),
                format!("must be more than 0 and at most 1, got {p} (leave the rule out for 0)"),
            ))
        }
    };
    if let (Some(from), Some(to)) = (raw.from, raw.to) {
        after(to.0, from.0, "from", &path.key("to"))?;
    }
    let times = raw
        .times
        .map(|n| at_least_one(n, &path.key("times"), "leave the rule out instead"))
        .transpose()?;
    // A key never published selects nothing (as a seq past the last does).
    let keys = keys
        .selected(raw.keys, &path.key("keys"))
        .map_err(|p| Problem {
            message: format!("selects nothing: {}", p.message),
            ..p
        })?;
    Ok(MessageRule {
        action,
        delay,
        delivery,
        keys,
        seq,
        probability,
        from: raw.from.map(|d| d.0),
        to: raw.to.map(|d| d.0),
        times,
        optional: raw.optional.unwrap_or(false),
    })
}

/// `seq`: published sequence numbers, each from 1 to the most the workload publishes.
fn seqs(list: Vec<u64>, keys: &KeyUniverse, path: &FieldPath) -> Result<Vec<u32>, Problem> {
    super::checks::non_empty(
        &list,
        path,
        "name the sequence numbers this rule applies to",
    )?;
    list.iter()
        .enumerate()
        .map(|(i, &n)| {
            let at = path.index(i);
            at_least_one(n, &at, "messages are numbered from 1, in publish order")?;
            match keys.most() {
                Some(max) if n > max => Err(Problem::new(
                    at,
                    format!(
                        "selects nothing: the workload publishes at most {max} messages, got \
                         seq {n}"
                    ),
                )),
                _ => u32::try_from(n).map_err(|_| {
                    Problem::new(at, format!("must be at most {}, got {n}", u32::MAX))
                }),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use crate::profile::message_rule::{MessageAction, MessageRule};
    use crate::profile::testutil::{error, one_chaos_rule, with};

    /// `BASE` (no count: keys msg-1, msg-2, ...) with one message rule (on line 7) written
    /// `rule`.
    fn profile(rule: &str) -> String {
        with(&format!("chaos:\n  - message: {rule}\n"))
    }

    fn rule(text: &str) -> MessageRule {
        one_chaos_rule(&profile(text))
            .get::<crate::profile::MessageRule>()
            .cloned()
            .expect("a message rule")
    }

    #[test]
    fn a_rule_reads_its_action_delay_and_selectors() {
        assert_eq!(
            rule("{ action: drop_ack }"),
            MessageRule::new(MessageAction::DropAck, Duration::ZERO)
        );
        let r = rule(
            "{ action: delay_delivery, delay: 10s, delivery: 1, keys: [msg-3], seq: [3, 5], \
             probability: 0.5, from: 1m, to: 2m, times: 3, optional: true }",
        );
        assert_eq!(
            r,
            MessageRule {
                action: MessageAction::DelayDelivery,
                delay: Duration::from_secs(10),
                delivery: Some(1),
                keys: Some(vec!["msg-3".into()]),
                seq: Some(vec![3, 5]),
                probability: 0.5,
                from: Some(Duration::from_secs(60)),
                to: Some(Duration::from_secs(120)),
                times: Some(3),
                optional: true,
            }
        );
        assert_eq!(
            rule("{ action: delay_ack, delay: 40s }").action,
            MessageAction::DelayAck
        );
        assert_eq!(
            rule("{ action: drop_delivery }").action,
            MessageAction::DropDelivery
        );
    }

    #[test]
    fn the_action_is_known_and_its_delay_fits_it() {
        assert_eq!(
            error(&profile("{ delivery: 1 }")),
            "p.yaml:7:5: chaos.0.message.action: required: one of drop_ack, delay_ack, \
             drop_delivery, delay_delivery"
        );
        assert_eq!(
            error(&profile("{ action: lose_ack }")),
            "p.yaml:7:24: chaos.0.message.action: unknown action `lose_ack`: one of drop_ack, \
             delay_ack, drop_delivery, delay_delivery"
        );
        assert_eq!(
            error(&profile("{ action: delay_ack }")),
            "p.yaml:7:5: chaos.0.message.delay: required: how long delay_ack holds it back, as \
             in delay: 40s"
        );
        assert_eq!(
            error(&profile("{ action: delay_delivery, delay: 0s }")),
            "p.yaml:7:47: chaos.0.message.delay: must be more than 0s, got 0s"
        );
        assert_eq!(
            error(&profile("{ action: drop_ack, delay: 5s }")),
            "p.yaml:7:34: chaos.0.message.delay: belongs to delay_ack and delay_delivery: \
             drop_ack holds nothing back"
        );
    }

    #[test]
    fn selectors_that_select_nothing_are_refused() {
        assert_eq!(
            error(&profile("{ action: drop_ack, delivery: 0 }")),
            "p.yaml:7:44: chaos.0.message.delivery: must be at least 1, got 0 (deliveries count \
             from 1)"
        );
        for p in ["0", "1.5", "-0.1"] {
            assert_eq!(
                error(&profile(&format!(
                    "{{ action: drop_ack, probability: {p} }}"
                ))),
                format!(
                    "p.yaml:7:47: chaos.0.message.probability: must be more than 0 and at most \
                     1, got {p} (leave the rule out for 0)"
                )
            );
        }
        assert_eq!(
            error(&profile("{ action: drop_ack, seq: [0] }")),
            "p.yaml:7:40: chaos.0.message.seq.0: must be at least 1, got 0 (messages are \
             numbered from 1, in publish order)"
        );
        // The workload publishes 12 messages: seq 13 is never published.
        let counted = profile("{ action: drop_ack, seq: [2, 13] }").replace(
            "arrival: { every: 50s }",
            "arrival: { every: 50s }\n  count: 12",
        );
        assert_eq!(
            error(&counted),
            "p.yaml:8:43: chaos.0.message.seq.1: selects nothing: the workload publishes at \
             most 12 messages, got seq 13"
        );
        assert_eq!(
            error(&profile("{ action: drop_ack, keys: [order-7] }")),
            "p.yaml:7:41: chaos.0.message.keys.0: selects nothing: `order-7` is not a message key: without \
             workload.keys, messages are keyed msg-1, msg-2, ... (list your own keys in \
             workload.keys)"
        );
        assert_eq!(
            error(&profile("{ action: drop_ack, times: 0 }")),
            "p.yaml:7:41: chaos.0.message.times: must be at least 1, got 0 (leave the rule out \
             instead)"
        );
    }

    #[test]
    fn live_runs_take_only_what_the_kinds_live_path_applies() {
        let live = |broker: &str, action: &str| {
            format!(
                "name: t\nmode: live\nrun: {{ duration: 10m }}\nbroker: {broker}\nworkload:\n  \
                 arrival: {{ every: 50s }}\nconsumer: {{ target: ack-after-work }}\nchaos:\n  - \
                 message: {{ action: {action} }}\n"
            )
        };
        assert_eq!(
            error(&live("{ kind: kafka }", "drop_ack")),
            "p.yaml:9:24: chaos.0.message.action: drop_ack cannot run live on kafka: ackbench's \
             Kafka proxy relays every OffsetCommit and every fetched record as it comes; it does \
             not drop or hold them; run it in sim mode"
        );
        assert_eq!(
            error(&live("{ kind: sqs }", "delay_delivery, delay: 5s")),
            "p.yaml:9:24: chaos.0.message.action: delay_delivery cannot run live on sqs: the \
             embedded endpoint answers a ReceiveMessage with all its messages at once: holding \
             one back would hold the others with it; run it in sim mode"
        );
        assert_eq!(
            error(&live(
                "{ kind: sqs, endpoint: \"http://127.0.0.1:9324\" }",
                "drop_ack"
            )),
            "p.yaml:9:24: chaos.0.message.action: drop_ack cannot run live on sqs: ackbench \
             applies message faults in its embedded SQS endpoint; an external one takes the \
             workers' calls itself; run it in sim mode"
        );
        for action in ["drop_ack", "delay_ack, delay: 5s", "drop_delivery"] {
            let s = crate::profile::testutil::scenario(&live("{ kind: sqs }", action));
            assert_eq!(s.chaos.len(), 1, "{action}");
        }
        // RabbitMQ's AMQP proxy and the NATS proxy apply every action.
        for kind in ["rabbitmq", "nats"] {
            for action in [
                "drop_ack",
                "delay_ack, delay: 5s",
                "drop_delivery",
                "delay_delivery, delay: 5s",
            ] {
                let broker = format!("{{ kind: {kind} }}");
                let s = crate::profile::testutil::scenario(&live(&broker, action));
                assert_eq!(s.chaos.len(), 1, "{kind}: {action}");
            }
        }
    }
}
