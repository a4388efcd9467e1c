//! A profile's text, read as YAML, with its `--set` overrides applied: the one input of the raw
//! stage, and what gives every problem its place (a position in the file, or an override).

use yaml_serde::Value;

use super::depth::{check_depth, MAX_DEPTH};
use super::error::{Origin, ProfileError};
use super::locate::{locate_duplicate_key, locate_nearest};
use super::overrides::Override;
use super::path::FieldPath;
use super::problem::{read_value, Problem};
use super::raw::RawProfile;

pub struct Document {
    /// The file name used in messages.
    origin: String,
    text: String,
    /// The YAML tree after overrides.
    pub value: Value,
    /// Each override applied, in order: the field it set and the argument as given.
    applied: Vec<(FieldPath, String)>,
}

impl Document {
    /// Reads `text` as YAML and applies `overrides` (each `PATH=VALUE`) in order.
    pub fn parse(origin: &str, text: &str, overrides: &[String]) -> Result<Document, ProfileError> {
        check_depth(text, MAX_DEPTH).map_err(|at| ProfileError::Syntax {
            origin: Origin::File {
                file: origin.to_string(),
                line: at.line,
                column: at.column,
            },
            message: too_deep(),
        })?;
        let mut value: Value =
            yaml_serde::from_str(text).map_err(|e| syntax_error(origin, text, &e))?;
        // `<<: *anchor` merge keys, so that profiles can share settings within a file.
        value
            .apply_merge()
            .map_err(|e| syntax_error(origin, text, &e))?;
        let mut applied = Vec::new();
        for arg in overrides {
            let o = Override::parse(arg)?;
            applied.push((o.apply(&mut value)?, o.arg));
        }
        Ok(Document {
            origin: origin.to_string(),
            text: text.to_string(),
            value,
            applied,
        })
    }

    /// The profile as written (types and keys checked, nothing else).
    pub fn read_raw(&self) -> Result<RawProfile, ProfileError> {
        if self.value.is_null() {
            return Ok(RawProfile::default());
        }
        read_value(&self.value, &FieldPath::root()).map_err(|p| self.error(p))
    }

    /// The problem with its place: the last `--set` that wrote the field (or a field inside
    /// it, or the mapping around it), else the field's position in the file.
    pub fn error(&self, problem: Problem) -> ProfileError {
        let by_override = self.applied.iter().rev().find(|(set, _)| {
            problem.path.starts_with(set)
                || (!problem.path.is_root() && set.starts_with(&problem.path))
        });
        let origin = match by_override {
            Some((_, arg)) => Origin::Override(arg.clone()),
            None => {
                let pos = locate_nearest(&self.text, &problem.path, problem.anchor);
                Origin::File {
                    file: self.origin.clone(),
                    line: pos.line,
                    column: pos.column,
                }
            }
        };
        ProfileError::Invalid {
            origin,
            field: problem.path,
            message: problem.message,
        }
    }
}

/// What a profile nested deeper than [`MAX_DEPTH`] is told.
pub fn too_deep() -> String {
    format!(
        "nested more than {MAX_DEPTH} levels deep (collections inside collections); a profile \
         needs fewer than 10"
    )
}

/// A YAML syntax error, placed where the parser stopped (a duplicate key, which the parser
/// reports without a place, at the key).
fn syntax_error(origin: &str, text: &str, e: &yaml_serde::Error) -> ProfileError {
    // The parser places a duplicate key at the mapping that holds it.
    let duplicate = e
        .to_string()
        .contains("duplicate entry with key")
        .then(|| locate_duplicate_key(text))
        .flatten();
    let (line, column) = duplicate
        .map(|p| (p.line, p.column))
        .or_else(|| e.location().map(|l| (l.line(), l.column())))
        .unwrap_or((1, 1));
    let message = match e.location() {
        Some(l) => e.to_string().replacen(
            &format!(" at line {} column {}", l.line(), l.column()),
            "",
            1,
        ),
        None => e.to_string(),
    };
    ProfileError::Syntax {
        origin: Origin::File {
            file: origin.to_string(),
            line,
            column,
        },
        message,
    }
}
