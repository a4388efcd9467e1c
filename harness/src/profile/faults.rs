//! Faults, as a profile writes them: `chaos[]` holds rules, each a mapping with one key, the
//! name of its fault. A fault is one entry of [`FAULTS`], as a toxic is one entry of
//! Toxiproxy's registry: a [`Fault`] (its name, an example for messages, whether its runs keep
//! their full record, and the function that reads and checks its keys into a [`ChaosRule`]).
//! Its rule type implements [`FaultRule`] (`fault.rs`): its label, `optional`, and the checks
//! that need the whole profile.
//!
//! Everything else derives from the registry: the keys a rule may have and what an unknown one
//! is told, the "give one of" message, each rule's fault name and label in the record. What a
//! run does with a rule is the fault's schedule (`chaos::<fault>`), which picks its own rules
//! by their type ([`ChaosRule::get`]).

use std::fmt;
use std::sync::OnceLock;

use serde::de::{self, Deserialize, Deserializer, MapAccess, Visitor};

use super::fault::{ChaosRule, Context, Fault};
use super::kinds::spec::BrokerSpec;
use super::path::FieldPath;
use super::problem::Problem;
use super::run_spec::Mode;

/// Every fault a `chaos[]` rule can name, in the order messages list them.
pub const FAULTS: &[&Fault] = &[
    &super::resolve::kill_worker::FAULT,
    &super::resolve::deploy::FAULT,
    &super::resolve::message_rule::FAULT,
    &super::resolve::connection::FAULT,
    &super::resolve::autoscale::FAULT,
];

/// `chaos[]` as written: the fault each key names, with its keys still unread.
#[derive(Debug, Default)]
pub struct RawChaosRule {
    given: Vec<(&'static Fault, yaml_serde::Value)>,
}

impl RawChaosRule {
    /// Whether the rule names a fault whose sim runs keep their full record.
    pub fn needs_full_record(&self) -> bool {
        self.given.iter().any(|(f, _)| f.needs_full_record)
    }
}

/// Every fault's name, for serde's "expected one of".
fn names() -> &'static [&'static str] {
    static NAMES: OnceLock<Vec<&'static str>> = OnceLock::new();
    NAMES.get_or_init(|| FAULTS.iter().map(|f| f.name).collect())
}

/// "kill_worker: { point: received }, deploy: { at: 10m } or ...": every fault's example.
fn examples() -> String {
    let all: Vec<&str> = FAULTS.iter().map(|f| f.example).collect();
    match all.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
        _ => all.concat(),
    }
}

/// A key of a `chaos[]` rule: a fault's name.
struct FaultName(&'static Fault);

impl<'de> Deserialize<'de> for FaultName {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<FaultName, D::Error> {
        struct Name;
        impl Visitor<'_> for Name {
            type Value = FaultName;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a fault's name")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<FaultName, E> {
                match FAULTS.iter().find(|f| f.name == v) {
                    Some(f) => Ok(FaultName(f)),
                    None => Err(E::unknown_field(v, names())),
                }
            }
        }
        deserializer.deserialize_identifier(Name)
    }
}

impl<'de> Deserialize<'de> for RawChaosRule {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<RawChaosRule, D::Error> {
        struct Rule;
        impl<'de> Visitor<'de> for Rule {
            type Value = RawChaosRule;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                write!(f, "a chaos rule such as {}", examples())
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<RawChaosRule, A::Error> {
                let mut given = Vec::new();
                while let Some(FaultName(fault)) = map.next_key()? {
                    given.push((fault, map.next_value()?));
                }
                Ok(RawChaosRule { given })
            }
        }
        deserializer.deserialize_map(Rule)
    }
}

/// The rules of `chaos`, each read by its fault.
pub fn resolve(
    raw: Vec<RawChaosRule>,
    context: &Context,
    path: &FieldPath,
) -> Result<Vec<ChaosRule>, Problem> {
    raw.into_iter()
        .enumerate()
        .map(|(i, rule)| {
            let at = path.index(i);
            let present: Vec<(&str, bool)> = FAULTS
                .iter()
                .map(|f| (f.name, rule.given.iter().any(|(g, _)| g.name == f.name)))
                .collect();
            super::resolve::checks::exactly_one(&at, &present, &examples())?;
            let (fault, value) = &rule.given[0];
            (fault.resolve)(value, context, &at.key(fault.name))
        })
        .collect::<Result<Vec<ChaosRule>, Problem>>()
        .and_then(|rules| one_per_profile(rules, path))
}

/// A second rule of a fault a profile holds once ([`ChaosRule::one_per_profile`]) is refused.
fn one_per_profile(rules: Vec<ChaosRule>, path: &FieldPath) -> Result<Vec<ChaosRule>, Problem> {
    for (i, rule) in rules.iter().enumerate() {
        let first = rules[..i].iter().position(|r| r.fault() == rule.fault());
        if let (true, Some(first)) = (rule.one_per_profile(), first) {
            return Err(Problem::new(
                path.index(i).key(rule.fault()),
                format!(
                    "a profile holds one {} rule (chaos.{first} is one): one fleet, one scaler",
                    rule.fault()
                ),
            ));
        }
    }
    Ok(rules)
}

/// Whether a sim run with these rules keeps its full record: one of them is of a fault that
/// needs it ([`Fault::needs_full_record`]).
pub fn needs_full_record(chaos: &[ChaosRule]) -> bool {
    chaos.iter().any(|rule| {
        FAULTS
            .iter()
            .any(|f| f.name == rule.fault() && f.needs_full_record)
    })
}

/// Each rule's checks against the broker and the mode, in rule order.
pub fn check(
    chaos: &[ChaosRule],
    broker: &BrokerSpec,
    mode: Mode,
    path: &FieldPath,
) -> Result<(), Problem> {
    for (i, rule) in chaos.iter().enumerate() {
        rule.check(broker, mode, &path.index(i).key(rule.fault()))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profile::testutil::{error, scenario, with};
    use crate::profile::{DeployRule, KillRule};

    #[test]
    fn a_rule_names_exactly_one_fault_of_the_registry() {
        assert_eq!(
            error(&with("chaos:\n  - {}\n")),
            "p.yaml:7:5: chaos.0: give one of kill_worker, deploy, message, connection, \
             autoscale, as in kill_worker: { point: received }, deploy: { at: 10m }, message: \
             { action: drop_ack }, connection: { fault: cut, at: 30s } or autoscale: \
             { target: 100, max: 8 }"
        );
        assert_eq!(
            error(&with("chaos:\n  - kill_provider: {}\n")),
            "p.yaml:7:5: chaos.0.kill_provider: unknown field `kill_provider`, expected one of \
             `kill_worker`, `deploy`, `message`, `connection`, `autoscale`"
        );
        assert_eq!(
            error(&with(
                "chaos:\n  - { kill_worker: { point: received }, deploy: { at: 1m } }\n"
            )),
            "p.yaml:7:5: chaos.0: give only one of kill_worker, deploy, message, connection, \
             autoscale, got kill_worker and deploy"
        );
        assert_eq!(
            error(&with("chaos:\n  - kill_worker\n")),
            "p.yaml:7:5: chaos.0: invalid type: string \"kill_worker\", expected a chaos rule \
             such as kill_worker: { point: received }, deploy: { at: 10m }, message: \
             { action: drop_ack }, connection: { fault: cut, at: 30s } or autoscale: \
             { target: 100, max: 8 }"
        );
    }

    #[test]
    fn a_fault_reads_its_own_keys_and_names_them_in_its_errors() {
        // A key of another fault inside a rule is that fault's unknown field, at its place.
        assert_eq!(
            error(&with(
                "chaos:\n  - kill_worker: { point: received, grace: 1s }\n"
            )),
            "p.yaml:7:37: chaos.0.kill_worker.grace: unknown field `grace`, expected one of \
             `point`, `at`, `every`, `delivery`, `probability`, `keys`, `worker`, `from`, `to`, \
             `times`, `delay`, `optional`"
        );
    }

    #[test]
    fn rules_keep_their_order_fault_label_and_type() {
        let s = scenario(&with(
            "chaos:\n  - deploy: { at: 1m }\n  - kill_worker: { at: 2m, optional: true }\n",
        ));
        let faults: Vec<(&str, bool)> = s.chaos.iter().map(|r| (r.fault(), r.optional())).collect();
        assert_eq!(faults, vec![("deploy", false), ("kill_worker", true)]);
        assert!(s.chaos[0].get::<DeployRule>().is_some());
        assert!(s.chaos[0].get::<KillRule>().is_none());
        assert_eq!(s.chaos[1].label(), "kill_worker at 2m");
        // Equal rules of one fault are equal; rules of two faults never are.
        assert_eq!(s.chaos[0], s.chaos[0].clone());
        assert_ne!(s.chaos[0], s.chaos[1]);
    }

    #[test]
    fn only_a_fault_that_reads_the_record_keeps_it_whole() {
        let full: Vec<&str> = FAULTS
            .iter()
            .filter(|f| f.needs_full_record)
            .map(|f| f.name)
            .collect();
        assert_eq!(full, vec!["deploy", "autoscale"]);
    }
}

/// ARCHITECTURE.md's "Add a fault" lists exactly the shared files a new fault touches.
#[cfg(test)]
mod recipe {
    use std::collections::BTreeSet;
    use std::path::Path;

    use super::FAULTS;
    use crate::profile::kinds::tests::{ident, recipe_files, sources, word};

    /// How code names one fault: its rule type, or one of its modules.
    struct Naming {
        name: &'static str,
        modules: Vec<String>,
        rule: String,
    }

    fn namings() -> Vec<Naming> {
        FAULTS
            .iter()
            .map(|f| {
                // Its rule type, as `Debug` spells a resolved rule of it.
                let rule = format!("chaos:\n  - {}\n", f.example.replace("at: 10m", "at: 1m"));
                let s = crate::profile::testutil::scenario(&crate::profile::testutil::with(&rule));
                let debug = format!("{:?}", s.chaos[0]);
                let rule: String = debug
                    .chars()
                    .take_while(char::is_ascii_alphanumeric)
                    .collect();
                // Its modules: the profile's and the resolve stage's (named after the rule
                // type) and the schedule's (named after the fault).
                let snake = rule
                    .chars()
                    .enumerate()
                    .flat_map(|(i, c)| {
                        let sep = (i > 0 && c.is_ascii_uppercase()).then_some('_');
                        sep.into_iter()
                            .chain(std::iter::once(c.to_ascii_lowercase()))
                    })
                    .collect::<String>();
                let mut modules = vec![
                    f.name.to_string(),
                    snake.trim_end_matches("_rule").to_string(),
                ];
                if snake.ends_with("_rule") && !modules.contains(&snake) {
                    modules.push(snake.clone());
                }
                modules.dedup();
                Naming {
                    name: f.name,
                    modules,
                    rule,
                }
            })
            .collect()
    }

    impl Naming {
        /// A file of the fault's own: named after one of its modules, or starting with it
        /// (`connection_faults.rs`).
        fn owns(&self, path: &Path) -> bool {
            let stem = path.file_stem().unwrap_or_default().to_string_lossy();
            self.modules
                .iter()
                .any(|m| stem == m.as_str() || stem.starts_with(&format!("{m}_")))
        }

        fn wired_in(&self, line: &str) -> bool {
            word(line, &self.rule)
                || self.modules.iter().any(|m| {
                    path_in(line, &format!("{m}::")) || line.contains(&format!("mod {m};"))
                })
        }
    }

    /// `path` (`deploy::`) in `line`, not the end of a longer name (`redeploy::`).
    fn path_in(line: &str, path: &str) -> bool {
        line.match_indices(path)
            .any(|(at, _)| line[..at].chars().next_back().is_none_or(|c| !ident(c)))
    }

    #[test]
    fn the_recipe_to_add_a_fault_lists_the_files_that_name_every_fault() {
        let sources = sources();
        let mut every: Option<BTreeSet<String>> = None;
        let mut listing = Vec::new();
        for n in namings() {
            let files: BTreeSet<String> = sources
                .iter()
                .filter(|(path, lines)| {
                    !n.owns(path) && lines.iter().any(|l| !l.test && n.wired_in(&l.text))
                })
                .map(|(path, _)| path.display().to_string())
                .collect();
            listing.push(format!("{}: {files:?}", n.name));
            every = Some(match every {
                None => files,
                Some(e) => e.intersection(&files).cloned().collect(),
            });
        }
        let listed = recipe_files("Add a fault");
        assert_eq!(
            listed,
            every.unwrap_or_default(),
            "the recipe's shared files (left) against the files that name every fault (right); \
             the files naming each fault outside its own:\n{}",
            listing.join("\n")
        );
    }

    /// The fault names that are no everyday word are never a string literal outside the
    /// fault's own files: code that wants a rule's fault asks the rule (`ChaosRule::fault`).
    #[test]
    fn no_code_spells_a_fault_outside_its_own_files() {
        let mut found = Vec::new();
        for n in namings()
            .iter()
            .filter(|n| n.name.contains('_') || n.name == "deploy")
        {
            let literal = format!("\"{}\"", n.name);
            for (path, lines) in sources() {
                if n.owns(&path) {
                    continue;
                }
                for l in lines
                    .iter()
                    .filter(|l| !l.test && l.text.contains(&literal))
                {
                    found.push(format!("{}: {}", path.display(), l.text.trim()));
                }
            }
        }
        assert!(
            found.is_empty(),
            "fault names spelled outside their fault:\n{}",
            found.join("\n")
        );
    }
}
