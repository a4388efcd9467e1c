//! An unknown key under `broker`: serde would list every kind's keys at once (close to 40);
//! the profile is told the keys of the kind it names (`broker.kind`, sqs when it names none),
//! all of them, from the kind's descriptor.

use yaml_serde::Value;

use super::kinds;
use super::path::{FieldPath, Segment};
use super::problem::Problem;

/// `problem` again, its message naming the keys of the profile's broker kind when it is an
/// unknown key directly under `broker`; any other problem as it is.
pub fn for_kind(problem: Problem, doc: &Value) -> Problem {
    let [Segment::Key(section), Segment::Key(key)] = problem.path.0.as_slice() else {
        return problem;
    };
    if section != "broker" || !problem.message.starts_with("unknown field") {
        return problem;
    }
    let kind = match doc.get("broker").and_then(|b| b.get("kind")) {
        None | Some(Value::Null) => kinds::DEFAULT,
        Some(Value::String(name)) => match kinds::named(name) {
            Some(k) => k,
            None => return problem,
        },
        Some(_) => return problem,
    };
    let elsewhere: Vec<&str> = kinds::KINDS
        .iter()
        .filter(|k| k.every_key().contains(&key.as_str()))
        .map(|k| k.name)
        .collect();
    let message = format!(
        "unknown key `{key}` for broker kind {}; the keys of {0} are: {}{}",
        kind.name,
        kind.every_key().join(", "),
        if elsewhere.is_empty() {
            String::new()
        } else {
            format!(" (`{key}` is a key of {})", elsewhere.join(", "))
        }
    );
    Problem::at_key(FieldPath::root().key("broker").key(key), message)
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
    }

    #[test]
    fn an_unknown_key_elsewhere_is_left_to_serde() {
        let e = error(&with("broker:\n  kind: 7\n"));
        assert!(!e.contains("unknown key"), "{e}");
        let e = error(&with("broker:\n  kind: nosuch\n  x: 1\n"));
        assert!(!e.contains("the keys of"), "{e}");
    }
}
