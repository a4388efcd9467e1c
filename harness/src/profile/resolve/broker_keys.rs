//! The keys under `broker` besides those of every kind: each must be a key of the profile's
//! kind (`broker.kind`, sqs when it names none). A key of another kind, or of no kind, is told
//! the kind's keys, all of them, from its descriptor; serde would list every kind's keys at once
//! (close to 40).

use crate::profile::kinds::{self, KindDescriptor};
use crate::profile::path::FieldPath;
use crate::profile::problem::Problem;
use crate::profile::raw::RawBroker;

/// Refuses the first key, in the file's order, that is not one of `kind`'s own. A key of
/// another kind set to nothing (`~`) is let through, as unset.
pub fn check(raw: &RawBroker, kind: &KindDescriptor, path: &FieldPath) -> Result<(), Problem> {
    for (key, value) in &raw.own {
        let Some(key) = key.as_str() else {
            return Err(Problem::new(
                path.clone(),
                format!(
                    "a key under broker is a word, got {}; the keys of {} are: {}",
                    yaml_serde::to_string(key).unwrap_or_default().trim_end(),
                    kind.name,
                    kind.every_key().join(", ")
                ),
            ));
        };
        if kind.keys.contains(&key) {
            continue;
        }
        let owners: Vec<&str> = kinds::KINDS
            .iter()
            .filter(|k| k.keys.contains(&key))
            .map(|k| k.name)
            .collect();
        let name = kind.name;
        let keys = kind.every_key().join(", ");
        let message = match owners.as_slice() {
            [] => format!("unknown key `{key}` for broker kind {name}; the keys of {name} are: {keys}"),
            _ if value.is_null() => continue,
            [one] => format!(
                "`{key}` is a key of broker kind {one}, not of {name}; the keys of {name} are: {keys}"
            ),
            many => format!(
                "`{key}` is a key of broker kinds {}, not of {name}; the keys of {name} are: {keys}",
                many.join(", ")
            ),
        };
        return Err(Problem::at_key(path.key(key), message));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use crate::profile::kinds::{self, KINDS};
    use crate::profile::testutil::{error, with};

    #[test]
    fn an_unknown_key_lists_the_keys_of_the_profiles_kind_only() {
        // No kind: sqs, the default. Its keys: kind, its own 6, then observe and queue (sqs
        // takes no existing queue, so no reuse): 9 names.
        assert_eq!(
            error(&with("broker:\n  visiblity_timeout: 30s\n")),
            "p.yaml:7:3: broker.visiblity_timeout: unknown key `visiblity_timeout` for broker \
             kind sqs; the keys of sqs are: kind, endpoint, visibility_timeout, max_receives, \
             stale_ack, fifo, dedup_window, observe, queue"
        );
        // rabbitmq: kind, its own 9, observe, queue and reuse (it takes an existing queue).
        assert_eq!(
            error(&with("broker:\n  kind: rabbitmq\n  prefetch_count: 5\n")),
            "p.yaml:8:3: broker.prefetch_count: unknown key `prefetch_count` for broker kind \
             rabbitmq; the keys of rabbitmq are: kind, url, queue_type, consumer_timeout, \
             timeout_check_every, delivery_limit, prefetch, dead_letter, heartbeat, arguments, \
             observe, queue, reuse"
        );
        // An alias names its kind.
        let e = error(&with("broker:\n  kind: embedded\n  nope: 1\n"));
        assert!(
            e.contains("for broker kind sqs; the keys of sqs are: kind, endpoint"),
            "{e}"
        );
        // The key comes before the kind in the file: the kind is still the one named.
        let e = error(&with("broker:\n  nope: 1\n  kind: nats\n"));
        assert!(
            e.starts_with("p.yaml:7:3: broker.nope: unknown key `nope` for broker kind nats"),
            "{e}"
        );
    }

    #[test]
    fn every_kinds_list_is_its_descriptors_keys_with_the_keys_of_every_kind() {
        for kind in KINDS {
            let keys = kind.every_key();
            assert_eq!(keys[0], "kind");
            assert_eq!(&keys[1..=kind.keys.len()], kind.keys, "{}", kind.name);
            assert!(keys.contains(&"observe") && keys.contains(&"queue"));
            assert_eq!(
                keys.contains(&"reuse"),
                kind.can.reuse_queue,
                "{}",
                kind.name
            );
            let e = error(&with(&format!(
                "broker:\n  kind: {}\n  no_such_key: 1\n",
                kind.name
            )));
            assert!(
                e.ends_with(&format!(
                    "the keys of {} are: {}",
                    kind.name,
                    keys.join(", ")
                )),
                "{e}"
            );
        }
        assert_eq!(kinds::DEFAULT.name, "sqs");
    }

    #[test]
    fn a_key_of_another_kind_is_told_the_chosen_kinds_keys_all_of_them() {
        assert_eq!(
            error(&with("broker:\n  kind: kafka\n  visibility_timeout: 3s\n")),
            "p.yaml:8:3: broker.visibility_timeout: `visibility_timeout` is a key of broker kind \
             sqs, not of kafka; the keys of kafka are: kind, url, partitions, max_poll_interval, \
             session_timeout, heartbeat_interval, max_poll_records, enable_auto_commit, \
             auto_commit_interval, assignment, static_membership, observe, queue"
        );
        // `url` is a key of five kinds, all named; sqs's server is its `endpoint`.
        assert_eq!(
            error(&with("broker:\n  url: http://127.0.0.1:9324\n")),
            "p.yaml:7:3: broker.url: `url` is a key of broker kinds rabbitmq, nats, \
             redis-streams, kafka, kafka-share, not of sqs; the keys of sqs are: kind, endpoint, \
             visibility_timeout, max_receives, stale_ack, fifo, dedup_window, observe, queue"
        );
        // Set to nothing, another kind's key is unset, as before there were kinds of keys.
        let e = error(&with(
            "broker:\n  kind: kafka\n  visibility_timeout: ~\n  partitions: 0\n",
        ));
        assert!(e.contains("broker.partitions"), "{e}");
    }

    #[test]
    fn a_key_that_is_not_a_word_is_refused_with_the_kinds_keys() {
        let e = error(&with("broker:\n  1: 2\n"));
        assert!(
            e.contains("broker: a key under broker is a word, got 1; the keys of sqs are: kind,"),
            "{e}"
        );
    }

    #[test]
    fn a_wrong_type_at_kind_is_left_to_serde() {
        let e = error(&with("broker:\n  kind: 7\n"));
        assert!(!e.contains("unknown key"), "{e}");
        let e = error(&with("broker:\n  kind: nosuch\n  x: 1\n"));
        assert!(!e.contains("the keys of"), "{e}");
    }

    #[test]
    fn a_broker_that_is_not_a_mapping_is_told_every_kinds_keys() {
        // Each kind's keys are listed from its descriptor.
        let e = error(&with("broker: 5\n"));
        for kind in KINDS {
            assert!(
                e.contains(&format!("{}: {}", kind.name, kind.keys.join(", "))),
                "{e}"
            );
        }
        assert!(
            e.contains("a mapping with keys kind, observe, queue, reuse"),
            "{e}"
        );
    }
}
