//! The descriptors against the rest of the code: each kind's keys are keys the profile reads,
//! names read back, and the seam holds: no code outside a kind's own files spells its name, and
//! the files that name every kind are exactly those ARCHITECTURE.md's "Add a broker kind" lists.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use super::*;
use crate::profile::path::FieldPath;

const BASE: &str = "run: { duration: 1m }\nworkload: { arrival: { every: 1s } }\n\
                    consumer: { target: ack-after-work }\n";

fn scenario_of(kind: &KindDescriptor) -> crate::profile::Scenario {
    let text = format!("{BASE}broker: {{ kind: {} }}\n", kind.name);
    crate::profile::load_str("p.yaml", &text, &[]).expect("a profile of the kind")
}

/// The keys a kind's `resolve` reads, as serde lists them when given a key it does not read.
fn keys_read(kind: &KindDescriptor) -> Vec<String> {
    let mut probe = yaml_serde::Mapping::new();
    probe.insert("\u{0}".into(), 0.into());
    let problem = (kind.resolve)(&yaml_serde::Value::Mapping(probe), &FieldPath::root())
        .expect_err("a key the kind does not read");
    let listed = problem
        .message
        .split_once("expected one of ")
        .or_else(|| problem.message.split_once("expected "))
        .unwrap_or_else(|| panic!("{}: {}", kind.name, problem.message))
        .1;
    listed
        .split('`')
        .skip(1)
        .step_by(2)
        .map(str::to_string)
        .collect()
}

#[test]
fn a_kind_reads_exactly_its_descriptors_keys() {
    for kind in KINDS {
        // Its own raw keys, in its file, are those its descriptor lists, in the same order.
        assert_eq!(keys_read(kind), kind.keys, "{}", kind.name);
        assert!(kind.keys.contains(&kind.lease.key), "{}", kind.name);
        if let Some(limit) = &kind.limit {
            assert!(kind.keys.contains(&limit.key), "{}", kind.name);
        }
        if let Some(batch) = &kind.batch {
            assert!(kind.keys.contains(&batch.key), "{}", kind.name);
            // A batch is handled between two polls: only a poll interval can cover it.
            assert_eq!(kind.lease.role, LeaseRole::PollInterval, "{}", kind.name);
        }
        if let Some(by_framework) = &kind.queue_by_framework {
            for key in by_framework.keys {
                assert!(kind.keys.contains(key), "{}: {key}", kind.name);
            }
        }
        // A scenario of the kind has a batch size exactly when its descriptor names the key.
        assert_eq!(
            scenario_of(kind).broker.poll_batch().is_some(),
            kind.batch.is_some(),
            "{}",
            kind.name
        );
        // No kind's key is one of every kind's.
        for key in kind.keys {
            assert!(!EVERY_KIND_KEYS.contains(key) && *key != "kind" && *key != "reuse");
        }
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
    assert_eq!(KindName::new("no-such-kind").lease_words(), "lease");
}

#[test]
fn an_unknown_kind_is_told_every_name_as_before() {
    let text = format!("{BASE}broker: {{ kind: kinesis }}\n");
    let err = crate::profile::load_str("p.yaml", &text, &[])
        .unwrap_err()
        .to_string();
    assert_eq!(
        err,
        "p.yaml:4:17: broker.kind: unknown variant `kinesis`, expected one of `embedded`, `sqs`, \
         `rabbitmq`, `nats`, `redis-streams`, `kafka`, `kafka-share`"
    );
}

#[test]
fn the_kind_lists_in_messages_come_from_the_registry() {
    // Of the six kinds, one (sqs) is served by ackbench's embedded broker; all but
    // kafka-share run live, sqs also against an SQS-compatible server at an endpoint.
    assert_eq!(super::embedded_names(), "sqs");
    assert_eq!(
        super::real_brokers(),
        "sqs with an endpoint, rabbitmq, nats, redis-streams, or kafka"
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
    assert_eq!(sqs::KIND.limit_value(3), 3);
}

/// How code names one kind: its name or an alias as a string literal, its variant of
/// `BrokerKind` or `BrokerModel`, or its module (`kinds::nats::KIND`, `mod nats;`).
struct Naming {
    name: &'static str,
    module: String,
    literals: Vec<String>,
    variants: Vec<String>,
}

fn namings() -> Vec<Naming> {
    KINDS
        .iter()
        .map(|k| {
            // The variant's name, as `Debug` spells the kind's `BrokerKind`.
            let debug = format!("{:?}", scenario_of(k).broker.kind);
            let variant: String = debug
                .chars()
                .take_while(char::is_ascii_alphanumeric)
                .collect();
            Naming {
                name: k.name,
                module: k.name.replace('-', "_"),
                literals: k
                    .aliases
                    .iter()
                    .chain([&k.name])
                    .map(|n| format!("\"{n}\""))
                    .collect(),
                variants: ["BrokerKind::", "BrokerModel::"]
                    .iter()
                    .map(|e| format!("{e}{variant}"))
                    .collect(),
            }
        })
        .collect()
}

pub(in crate::profile) fn ident(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// `needle` in `line` as a whole word (no identifier character right before or after it).
pub(in crate::profile) fn word(line: &str, needle: &str) -> bool {
    line.match_indices(needle).any(|(at, _)| {
        let before = line[..at].chars().next_back().is_none_or(|c| !ident(c));
        let after = line[at + needle.len()..]
            .chars()
            .next()
            .is_none_or(|c| !ident(c));
        before && after
    })
}

impl Naming {
    /// A file of the kind's own: a folder or file named after its module (`nats/`,
    /// `redis_streams.rs`), or starting or ending with it (`embedded_sqs.rs`, `sqs_queue.rs`).
    fn owns(&self, path: &Path) -> bool {
        let m = &self.module;
        path.iter().any(|c| {
            let c = c.to_string_lossy();
            let c = c.strip_suffix(".rs").unwrap_or(&c);
            c == m.as_str() || c.starts_with(&format!("{m}_")) || c.ends_with(&format!("_{m}"))
        })
    }

    fn literal_in(&self, line: &str) -> bool {
        self.literals.iter().any(|l| line.contains(l.as_str()))
    }

    /// Its variant or its module.
    fn wired_in(&self, line: &str) -> bool {
        self.variants.iter().any(|v| word(line, v))
            || word(line, &format!("{}::", self.module))
            || line.contains(&format!("mod {};", self.module))
    }
}

/// A line of code, comments left out, and whether it is a test's.
pub(in crate::profile) struct Line {
    pub text: String,
    pub test: bool,
}

/// Every source file under `src/`, its lines marked as tests' in files named `tests*`,
/// `proptests*`, `test_*`, `testutil*`, and from a file's `#[cfg(test)] mod ... {` to its end.
pub(in crate::profile) fn sources() -> Vec<(PathBuf, Vec<Line>)> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).expect("src is readable") {
            let path = entry.expect("a directory entry").path();
            if path.is_dir() {
                walk(&path, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    walk(&root.join("src"), &mut files);
    files.sort();
    let mut out = Vec::new();
    for path in files {
        let stem = path.file_stem().unwrap_or_default().to_string_lossy();
        let mut test = ["tests", "proptests", "test_", "testutil"]
            .iter()
            .any(|p| stem.starts_with(p));
        let text = std::fs::read_to_string(&path).expect("a source file");
        let lines: Vec<&str> = text.lines().collect();
        let mut code = Vec::new();
        for (i, line) in lines.iter().enumerate() {
            let next = lines.get(i + 1).map_or("", |l| l.trim());
            if line.trim() == "#[cfg(test)]" && next.starts_with("mod ") && next.ends_with('{') {
                test = true;
            }
            if !line.trim_start().starts_with("//") {
                code.push(Line {
                    text: (*line).to_string(),
                    test,
                });
            }
        }
        let rel = Path::new("harness").join(path.strip_prefix(root).expect("under the crate"));
        out.push((rel, code));
    }
    out
}

/// For each kind, the files that name it outside its own files: by its name in code, or in
/// code or tests by its variant or module. (A test's literal kind name is a profile it reads,
/// not a place the kind is wired in.)
fn files_naming() -> BTreeMap<&'static str, BTreeSet<String>> {
    let sources = sources();
    namings()
        .iter()
        .map(|n| {
            let files = sources
                .iter()
                .filter(|(path, lines)| {
                    !n.owns(path)
                        && lines
                            .iter()
                            .any(|l| (!l.test && n.literal_in(&l.text)) || n.wired_in(&l.text))
                })
                .map(|(path, _)| path.display().to_string())
                .collect();
            (n.name, files)
        })
        .collect()
}

/// No kind's name or alias is a string literal outside that kind's own files (the descriptors
/// included): code that wants a kind's words or keys reads its descriptor.
#[test]
fn no_code_spells_a_kind_outside_its_own_files() {
    let mut found = Vec::new();
    for n in namings() {
        for (path, lines) in sources() {
            if n.owns(&path) {
                continue;
            }
            for line in lines.iter().filter(|l| !l.test && n.literal_in(&l.text)) {
                found.push(format!("{}: {}", path.display(), line.text.trim()));
            }
        }
    }
    assert!(
        found.is_empty(),
        "kind names spelled outside their kind:\n{}",
        found.join("\n")
    );
}

/// The shared files ARCHITECTURE.md's section `section` lists: its items `- `harness/src/...``
/// (the new thing's own files and the prose around them are not read).
pub(in crate::profile) fn recipe_files(section: &str) -> BTreeSet<String> {
    let doc =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../ARCHITECTURE.md"))
            .expect("ARCHITECTURE.md");
    let text = doc
        .split("\n## ")
        .find(|s| s.starts_with(section))
        .unwrap_or_else(|| panic!("ARCHITECTURE.md has a section {section:?}"));
    text.lines()
        .filter_map(|l| l.strip_prefix("- `harness/src/"))
        .filter_map(|l| l.split('`').next())
        .map(|p| format!("harness/src/{p}"))
        .collect()
}

/// ARCHITECTURE.md's recipe lists exactly the shared files a new kind touches: those whose code
/// names every kind today (an enum arm per kind, a module per kind, the table of descriptors).
/// A kind's keys are read in its own file: no shared file lists them.
#[test]
fn the_recipe_to_add_a_kind_lists_the_files_that_name_every_kind() {
    let naming = files_naming();
    let mut every: Option<BTreeSet<String>> = None;
    for files in naming.values() {
        every = Some(match every {
            None => files.clone(),
            Some(e) => e.intersection(files).cloned().collect(),
        });
    }
    let expected = every.unwrap_or_default();

    let listed = recipe_files("Add a broker kind");
    let listing: Vec<String> = naming
        .iter()
        .map(|(k, files)| {
            format!(
                "{k}: {}",
                files.iter().cloned().collect::<Vec<_>>().join(", ")
            )
        })
        .collect();
    assert_eq!(
        listed,
        expected,
        "the recipe's shared files (left) against the files that name every kind (right); \
         the files naming each kind outside its own:\n{}",
        listing.join("\n")
    );
}

/// No shared code singles a kind out by its `BrokerKind` variant: outside the kinds' own files,
/// a file that matches on the variants dispatches on every kind (an arm each: `spec.rs`, the
/// enum's home, also keeps the accessors of one kind's values), and one that wants a single
/// kind's value asks the spec (`BrokerSpec::lease_check_every`, ...) or the descriptor.
#[test]
fn no_shared_code_singles_a_kind_out_by_its_variant() {
    let sources = sources();
    let namings = namings();
    let mut found = Vec::new();
    for (path, lines) in &sources {
        let named: Vec<&str> = (namings.iter())
            .filter(|n| !n.owns(path))
            .filter(|n| {
                let variant = &n.variants[0];
                lines.iter().any(|l| !l.test && word(&l.text, variant))
            })
            .map(|n| n.name)
            .collect();
        let owned = namings.iter().filter(|n| n.owns(path)).count();
        if !named.is_empty() && named.len() + owned < namings.len() {
            found.push(format!("{}: {}", path.display(), named.join(", ")));
        }
    }
    assert!(
        found.is_empty(),
        "files naming some kinds' variants, not all:\n{}",
        found.join("\n")
    );
}
