//! Profiles: YAML scenarios, read in two stages.
//!
//! 1. The text is read as YAML, `--set PATH=VALUE` overrides are written into it, and it is
//!    read into [`raw`] structs that mirror the file exactly (unknown keys are errors).
//! 2. [`resolve`] fills in [`defaults`] and checks every rule, producing the [`Scenario`] the
//!    runner reads.
//!
//! Every error names its place (`file:line:column`, or the `--set` argument) and the dotted field
//! path, and says what is allowed: see [`ProfileError`].

pub(crate) mod autoscale;
mod budget_spec;
pub(crate) mod connection;
mod consumer_spec;
pub(crate) mod defaults;
pub(crate) mod deploy;
mod depth;
mod document;
pub(crate) mod duration;
mod enum_words;
pub(crate) mod env_value;
pub(crate) mod error;
pub(crate) mod fault;
pub(crate) mod faults;
pub(crate) mod key_path;
pub(crate) mod key_source;
pub(crate) mod kill_worker;
pub(crate) mod kinds;
mod locate;
pub(crate) mod message;
pub(crate) mod message_action;
pub(crate) mod message_rule;
mod mode_flag;
pub(crate) mod overrides;
pub(crate) mod path;
pub(crate) mod presets;
mod problem;
mod provider_spec;
pub(crate) mod ramp;
pub(crate) mod raw;
mod raw_broker;
mod resolve;
mod run_spec;
pub(crate) mod run_variables;
mod scalar;
pub(crate) mod scenario;
pub(crate) mod template;
mod workload_spec;

use std::path::Path;

pub use autoscale::{AutoscaleRule, PolicyUnit, QueueMetric, ScalingRules, SelectPolicy};
pub use connection::{ConnectionFault, ConnectionRule, CutTrigger, Direction, HeldFrames, Window};
pub use deploy::{DeployRule, DeployTrigger, StopSignal};
pub use duration::{format_duration, parse_duration};
pub use error::{Origin, ProfileError};
pub use fault::{ChaosRule, FaultRule};
pub use key_source::KeySource;
pub use kill_worker::{KillPoint, KillRule, KillTrigger};
pub use kinds::{KindDescriptor, KindWords, LeaseRole};
pub use message_rule::MessageRule;
pub use resolve::check_full_record;
#[cfg(feature = "live")]
pub use resolve::scaled_clock_unsupported;
pub use scalar::number_text;
pub use scenario::*;

use document::Document;
use error::ProfileError as Error;

/// Reads, overrides and validates the profile at `path`.
pub fn load(path: &Path, overrides: &[String]) -> Result<Scenario, ProfileError> {
    let text = read(path)?;
    load_str(&path.display().to_string(), &text, overrides)
}

/// Reads, overrides and validates profile `text`; `origin` is the file name used in messages,
/// and its stem is the profile's name when the text has none.
pub fn load_str(origin: &str, text: &str, overrides: &[String]) -> Result<Scenario, ProfileError> {
    let doc = Document::parse(origin, text, overrides)?;
    let raw = doc.read_raw()?;
    resolve::resolve(raw, &default_name(origin)).map_err(|p| doc.error(p))
}

/// The `--set` argument that makes the top-level list `key` of profile `text` (after
/// `overrides`) end with `item` (YAML): what `Bench::chaos` adds a rule with.
pub fn appending_override(
    origin: &str,
    text: &str,
    overrides: &[String],
    key: &str,
    item: &str,
) -> Result<String, ProfileError> {
    let fail = |message: String| Error::Override {
        arg: format!("{key}=[..., {item}]"),
        message,
    };
    let doc = Document::parse(origin, text, overrides)?;
    let mut list = match doc.value.get(key) {
        None | Some(yaml_serde::Value::Null) => Vec::new(),
        Some(yaml_serde::Value::Sequence(list)) => list.clone(),
        Some(_) => return Err(fail(format!("{key} is not a list"))),
    };
    list.push(yaml_serde::from_str(item).map_err(|e| fail(format!("`{item}` is not YAML: {e}")))?);
    // As JSON, which YAML reads: one line, whatever the items hold.
    let value = serde_json::to_string(&list).map_err(|e| fail(e.to_string()))?;
    Ok(format!("{key}={value}"))
}

/// The overrides `--mode mode` adds to the profile at `path` after `overrides`: `mode=...`,
/// and in sim mode the live-only keys it has, left out ([`mode_flag`]).
pub fn mode_overrides(
    path: &Path,
    overrides: &[String],
    mode: Mode,
) -> Result<Vec<String>, ProfileError> {
    let origin = path.display().to_string();
    let doc = Document::parse(&origin, &read(path)?, overrides)?;
    Ok(mode_flag::overrides(&doc.value, mode))
}

/// The profile at `path` after `overrides`, as YAML: what a report shows as "profile as run".
/// Defaults are not filled in; the text is not validated beyond being YAML.
pub fn effective_yaml(path: &Path, overrides: &[String]) -> Result<String, ProfileError> {
    let origin = path.display().to_string();
    let doc = Document::parse(&origin, &read(path)?, overrides)?;
    yaml_serde::to_string(&doc.value).map_err(|e| Error::Syntax {
        origin: Origin::File {
            file: origin,
            line: 1,
            column: 1,
        },
        message: e.to_string(),
    })
}

fn read(path: &Path) -> Result<String, ProfileError> {
    std::fs::read_to_string(path).map_err(|source| Error::Read {
        path: path.to_path_buf(),
        source,
    })
}

/// A profile's name when it has none: its file's stem.
fn default_name(origin: &str) -> String {
    Path::new(origin)
        .file_stem()
        .and_then(|s| s.to_str())
        .filter(|s| !s.is_empty())
        .unwrap_or(defaults::NAME)
        .to_string()
}

#[cfg(test)]
pub(crate) mod testutil;

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_observe;
