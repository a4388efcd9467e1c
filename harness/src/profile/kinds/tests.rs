//! The descriptors against the rest of the code: each kind's keys are keys the profile reads,
//! and names read back.

use std::collections::BTreeSet;

use super::*;

const BASE: &str = "run: { duration: 1m }\nworkload: { arrival: { every: 1s } }\n\
                    consumer: { target: ack-after-work }\n";

fn scenario_of(kind: &KindDescriptor) -> crate::profile::Scenario {
    let text = format!("{BASE}broker: {{ kind: {} }}\n", kind.name);
    crate::profile::load_str("p.yaml", &text, &[]).expect("a profile of the kind")
}

#[test]
fn every_key_of_a_kind_is_a_broker_key_the_profile_reads() {
    let raw = crate::profile::raw::RawBroker::default();
    let read: Vec<&str> = raw.keys_set().iter().map(|(k, _)| *k).collect();
    for kind in KINDS {
        for key in kind.keys {
            assert!(read.contains(key), "{}: {key} is not read", kind.name);
        }
        assert!(kind.keys.contains(&kind.lease.key), "{}", kind.name);
        assert!(kind.keys.contains(&kind.limit.key), "{}", kind.name);
    }
    for key in read {
        assert!(
            KINDS.iter().any(|k| k.keys.contains(&key)),
            "{key} belongs to no kind"
        );
    }
}

#[test]
fn names_and_aliases_are_unique_and_name_their_kind() {
    let all = names();
    assert_eq!(all.iter().collect::<BTreeSet<_>>().len(), all.len());
    for kind in KINDS {
        assert_eq!(named(kind.name), Some(*kind));
        for alias in kind.aliases {
            assert_eq!(named(alias), Some(*kind));
        }
        assert_eq!(scenario_of(kind).broker.kind.descriptor(), *kind);
    }
    assert_eq!(named("no-such-kind"), None);
    assert_eq!(lease_words("no-such-kind"), "lease");
}

#[test]
fn an_unknown_kind_is_told_every_name_as_before() {
    let text = format!("{BASE}broker: {{ kind: kafka }}\n");
    let err = crate::profile::load_str("p.yaml", &text, &[])
        .unwrap_err()
        .to_string();
    assert_eq!(
        err,
        "p.yaml:4:17: broker.kind: unknown variant `kafka`, expected one of `embedded`, `sqs`, \
         `rabbitmq`, `nats`, `redis-streams`"
    );
}

#[test]
fn a_limit_of_returns_is_one_less_than_the_deliveries() {
    let returns = Limit {
        key: "k",
        words: "w",
        counts: LimitCounts::Returns,
    };
    assert_eq!(
        (returns.value(0), returns.value(1), returns.value(3)),
        (0, 0, 2)
    );
    assert_eq!(sqs::KIND.limit.value(3), 3);
}
