//! `--mode sim|live` (`ackbench run`, `check`, `sweep`, `size`): the profile's mode, as
//! `--set` overrides written after the command line's own.
//!
//! `--mode live` is `--set mode=live`. `--mode sim` is `--set mode=sim` with the keys only a
//! live run reads left out, so that a live profile runs as its sim model:
//!
//! - `broker.url`, `broker.endpoint` (the real server), `broker.observe` (its proxy), and
//!   `workload.ingress` (the system's HTTP front door: the sim publishes the workload's arrivals
//!   itself);
//! - `consumer.env` and `consumer.clock`, a consumer command's environment and clock;
//! - `consumer.command` when something stands in for it: a `consumer.target` (given with
//!   `--set`), which then runs. With `consumer.sim` the command stays, and the resolver runs the
//!   stand-in in its place; with neither, the command stays too and the resolver refuses sim
//!   mode naming `consumer.sim`.

use yaml_serde::Value;

use super::scenario::Mode;

/// Keys a sim run does not read, or refuses, that `--mode sim` leaves out when the profile
/// has them.
const LIVE_ONLY: &[(&str, &str)] = &[
    ("broker", "url"),
    ("broker", "endpoint"),
    ("broker", "observe"),
    ("workload", "ingress"),
    ("consumer", "env"),
    ("consumer", "clock"),
];

/// The overrides `--mode mode` adds to a profile whose YAML, after the command line's own
/// overrides, is `doc`.
pub fn overrides(doc: &Value, mode: Mode) -> Vec<String> {
    let mut sets = Vec::new();
    if mode == Mode::Live {
        sets.push("mode=live".to_string());
        return sets;
    }
    sets.push("mode=sim".to_string());
    let has = |section: &str, key: &str| {
        doc.get(section)
            .and_then(|s| s.get(key))
            .is_some_and(|v| !v.is_null())
    };
    for (section, key) in LIVE_ONLY {
        if has(section, key) {
            sets.push(format!("{section}.{key}="));
        }
    }
    if has("consumer", "command") && has("consumer", "target") && !has("consumer", "sim") {
        sets.push("consumer.command=".to_string());
    }
    sets
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profile::scenario::Mode;
    use crate::profile::testutil::error_with;
    use crate::profile::{load_str, Mode as M};

    /// A live framework profile: a command with its environment, the real server, and the
    /// stand-in `consumer.sim`.
    const LIVE: &str = "\
name: t
mode: live
run: { duration: 10s }
broker: { kind: rabbitmq, url: \"amqp://guest:guest@127.0.0.1:5672/%2f\", observe: proxy }
workload: { arrival: { every: 1s } }
consumer:
  command: [python3, worker.py]
  env: { QUEUE: \"${ACKBENCH_QUEUE}\" }
  clock: real
  workers: 2
  sim: { target: ack-after-work, options: { http_timeout: 5s } }
";

    fn sets_for(text: &str, user: &[&str], mode: Mode) -> Vec<String> {
        let user: Vec<String> = user.iter().map(|s| s.to_string()).collect();
        let doc = crate::profile::document::Document::parse("p.yaml", text, &user).unwrap();
        overrides(&doc.value, mode)
    }

    /// `text` loaded with `user`'s overrides, then `--mode mode`'s.
    fn load(text: &str, user: &[&str], mode: Mode) -> Result<crate::profile::Scenario, String> {
        let mut all: Vec<String> = user.iter().map(|s| s.to_string()).collect();
        all.extend(sets_for(text, user, mode));
        load_str("p.yaml", text, &all).map_err(|e| e.to_string())
    }

    #[test]
    fn live_only_sets_the_mode() {
        assert_eq!(sets_for(LIVE, &[], Mode::Live), ["mode=live"]);
        let s = load(LIVE, &[], Mode::Live).unwrap();
        assert_eq!(s.mode, M::Live);
        assert_eq!(s.consumer.command.as_deref().map(<[_]>::len), Some(2));
    }

    #[test]
    fn sim_leaves_out_the_live_only_keys_the_profile_has_and_keeps_the_command_for_its_stand_in() {
        // broker.url and broker.observe, consumer.env and consumer.clock; the command stays
        // (consumer.sim stands in for it); nothing about ingress or an endpoint, which the
        // profile does not have.
        assert_eq!(
            sets_for(LIVE, &[], Mode::Sim),
            [
                "mode=sim",
                "broker.url=",
                "broker.observe=",
                "consumer.env=",
                "consumer.clock="
            ]
        );
        let s = load(LIVE, &[], Mode::Sim).unwrap();
        assert_eq!(s.mode, M::Sim);
        assert_eq!(s.consumer.target, "ack-after-work");
        assert_eq!(s.consumer.command, None);
        assert_eq!(s.consumer.workers, 2);
        assert_eq!(
            s.consumer.options.http_timeout,
            Some(std::time::Duration::from_secs(5))
        );
    }

    #[test]
    fn sim_with_a_target_given_drops_the_command_it_replaces() {
        let text = LIVE.replace(
            "  sim: { target: ack-after-work, options: { http_timeout: 5s } }\n",
            "",
        );
        let user = ["consumer.target=ack-before-work"];
        assert_eq!(
            sets_for(&text, &user, Mode::Sim).last().map(String::as_str),
            Some("consumer.command=")
        );
        let s = load(&text, &user, Mode::Sim).unwrap();
        assert_eq!(s.consumer.target, "ack-before-work");
    }

    #[test]
    fn sim_of_a_command_with_no_stand_in_is_refused_naming_consumer_sim() {
        let text = LIVE.replace(
            "  sim: { target: ack-after-work, options: { http_timeout: 5s } }\n",
            "",
        );
        let e = load(&text, &[], Mode::Sim).unwrap_err();
        assert!(
            e.starts_with(
                "p.yaml:7:3: consumer.command: a consumer command runs only in live mode (mode: \
                 live); to run this profile in sim mode, give consumer.sim: the built-in target \
                 that stands in for the command there, e.g. `sim: { target: ack-after-work }` \
                 under consumer (built-in targets: ack-after-work, "
            ),
            "{e}"
        );
        // The same with --set mode=sim.
        let e = error_with(&text, &["mode=sim"]);
        assert!(e.contains("give consumer.sim: the built-in target"), "{e}");
    }

    #[test]
    fn a_profile_without_live_keys_gets_only_the_mode() {
        let text = "run: { duration: 10s }\nworkload: { arrival: { every: 1s } }\nconsumer: { target: ack-after-work }\n";
        assert_eq!(sets_for(text, &[], Mode::Sim), ["mode=sim"]);
        assert_eq!(load(text, &[], Mode::Sim).unwrap().mode, M::Sim);
    }
}
