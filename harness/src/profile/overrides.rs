//! `--set PATH=VALUE`: changes one field of a profile before it is read, as if the file said so.
//!
//! PATH is dotted (`broker.visibility_timeout`, `provider.phases.0.to`: a number indexes a list).
//! VALUE is read as YAML (`90s`, `5`, `[a, b]`, `{dist: fixed, value: 1s}`); an empty VALUE is
//! null, which puts an optional field back to its default. Missing mappings on the way are
//! created. Whether the field exists in the schema is checked when the profile is read, like any
//! key written in the file, with the `--set` argument named as the origin.

use yaml_serde::{Mapping, Value};

use super::depth::{check_depth, MAX_DEPTH};
use super::document::too_deep;
use super::error::ProfileError;
use super::path::FieldPath;

/// One parsed `--set` argument.
#[derive(Debug, Clone, PartialEq)]
pub struct Override {
    /// The argument as given, `PATH=VALUE`.
    pub arg: String,
    pub path: FieldPath,
    pub value: Value,
}

impl Override {
    /// Parses `PATH=VALUE`.
    pub fn parse(arg: &str) -> Result<Override, ProfileError> {
        let fail = |message: String| ProfileError::Override {
            arg: arg.to_string(),
            message,
        };
        let Some((path, value)) = arg.split_once('=') else {
            return Err(fail(
                "expected PATH=VALUE, e.g. --set broker.visibility_timeout=90s".to_string(),
            ));
        };
        let path = path.trim();
        if path.is_empty() || path.split('.').any(str::is_empty) {
            return Err(fail(format!(
                "`{path}` is not a field path: write dotted keys such as \
                 broker.visibility_timeout or provider.phases.0.to"
            )));
        }
        let value = if value.trim().is_empty() {
            Value::Null
        } else if check_depth(value, MAX_DEPTH).is_err() {
            return Err(fail(format!("the value is {}", too_deep())));
        } else {
            yaml_serde::from_str(value)
                .map_err(|e| fail(format!("`{value}` is not a YAML value: {e}")))?
        };
        Ok(Override {
            arg: arg.to_string(),
            path: FieldPath::parse_dotted(path),
            value,
        })
    }

    /// Writes the value into `doc`; returns the path as applied (list indices as indices).
    pub fn apply(&self, doc: &mut Value) -> Result<FieldPath, ProfileError> {
        let mut applied = FieldPath::root();
        let mut node = doc;
        let segments = &self.path.0;
        for (i, segment) in segments.iter().enumerate() {
            let key = segment.to_string();
            let last = i + 1 == segments.len();
            if node.is_null() {
                if key.parse::<usize>().is_ok() {
                    return Err(self.fail(format!(
                        "{} is not in the profile, so it has no entry {key}: give the whole \
                         list, as in --set '{}=[...]'",
                        display_or_top(&applied),
                        applied
                    )));
                }
                *node = Value::Mapping(Mapping::new());
            }
            node = match node {
                Value::Mapping(map) => {
                    applied = applied.key(&key);
                    let slot = map.entry(Value::String(key)).or_insert(Value::Null);
                    if last {
                        *slot = self.value.clone();
                        return Ok(applied);
                    }
                    slot
                }
                Value::Sequence(list) => {
                    let len = list.len();
                    let Some(n) = key.parse::<usize>().ok().filter(|n| *n < len) else {
                        let range = match len {
                            0 => "it is empty".to_string(),
                            _ => format!("0 to {}", len - 1),
                        };
                        return Err(self.fail(format!(
                            "{} is a list of {len}; `{key}` is not an index in it ({range})",
                            display_or_top(&applied),
                        )));
                    };
                    applied = applied.index(n);
                    let slot = &mut list[n];
                    if last {
                        *slot = self.value.clone();
                        return Ok(applied);
                    }
                    slot
                }
                _ => {
                    return Err(self.fail(format!(
                        "{} is a single value, not a mapping: it has no field `{key}`",
                        display_or_top(&applied)
                    )))
                }
            };
        }
        // The path is never empty (parse refuses it), so the loop has returned.
        Ok(applied)
    }

    fn fail(&self, message: String) -> ProfileError {
        ProfileError::Override {
            arg: self.arg.clone(),
            message,
        }
    }
}

fn display_or_top(path: &FieldPath) -> String {
    if path.is_root() {
        "the profile".to_string()
    } else {
        path.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(text: &str) -> Value {
        yaml_serde::from_str(text).unwrap()
    }

    fn set(d: &mut Value, arg: &str) -> Result<String, String> {
        let o = Override::parse(arg).map_err(|e| e.to_string())?;
        o.apply(d).map(|p| p.to_string()).map_err(|e| e.to_string())
    }

    #[test]
    fn sets_a_scalar_by_dotted_path() {
        let mut d = doc("broker: { visibility_timeout: 30s }");
        assert_eq!(
            set(&mut d, "broker.visibility_timeout=90s"),
            Ok("broker.visibility_timeout".into())
        );
        assert_eq!(d, doc("broker: { visibility_timeout: 90s }"));
    }

    #[test]
    fn indexes_lists_and_creates_missing_mappings() {
        let mut d = doc("provider: { phases: [ { from: 0s, to: 90m } ] }");
        assert_eq!(
            set(&mut d, "provider.phases.0.to=45m"),
            Ok("provider.phases.0.to".into())
        );
        assert_eq!(set(&mut d, "budgets.dlq=5"), Ok("budgets.dlq".into()));
        assert_eq!(
            d,
            doc("provider: { phases: [ { from: 0s, to: 45m } ] }\nbudgets: { dlq: 5 }")
        );
    }

    #[test]
    fn reads_the_value_as_yaml() {
        let mut d = doc("{}");
        set(&mut d, "workload.keys=[a, b]").unwrap();
        set(&mut d, "consumer.target=ack-before-work").unwrap();
        set(&mut d, "budgets.lost=").unwrap();
        assert_eq!(
            d,
            doc("{workload: {keys: [a, b]}, consumer: {target: ack-before-work}, budgets: {lost: null}}")
        );
    }

    #[test]
    fn an_empty_profile_takes_overrides() {
        let mut d = Value::Null;
        set(&mut d, "run.duration=1m").unwrap();
        assert_eq!(d, doc("run: { duration: 1m }"));
    }

    #[test]
    fn refuses_an_argument_without_equals_sign_or_path() {
        let e = set(&mut doc("{}"), "broker.visibility_timeout").unwrap_err();
        assert_eq!(
            e,
            "--set broker.visibility_timeout: expected PATH=VALUE, e.g. --set broker.visibility_timeout=90s"
        );
        assert!(set(&mut doc("{}"), "=5")
            .unwrap_err()
            .contains("is not a field path"));
        assert!(set(&mut doc("{}"), "a..b=5")
            .unwrap_err()
            .contains("is not a field path"));
    }

    #[test]
    fn refuses_an_index_into_a_list_the_profile_lacks() {
        let e = set(&mut doc("{}"), "chaos.0.kill_worker.point=received").unwrap_err();
        assert_eq!(
            e,
            "--set chaos.0.kill_worker.point=received: chaos is not in the profile, so it has no \
             entry 0: give the whole list, as in --set 'chaos=[...]'"
        );
    }

    #[test]
    fn refuses_a_value_that_is_not_yaml() {
        let e = set(&mut doc("{}"), "workload.keys=[a, b").unwrap_err();
        assert!(
            e.starts_with("--set workload.keys=[a, b: `[a, b` is not a YAML value"),
            "{e}"
        );
    }

    #[test]
    fn refuses_to_go_through_a_scalar_or_past_a_list() {
        let mut d = doc("broker: { visibility_timeout: 30s }\nprovider: { phases: [ {} ] }");
        let e = set(&mut d, "broker.visibility_timeout.x=1").unwrap_err();
        assert_eq!(
            e,
            "--set broker.visibility_timeout.x=1: broker.visibility_timeout is a single value, \
             not a mapping: it has no field `x`"
        );
        let e = set(&mut d, "provider.phases.3.to=1m").unwrap_err();
        assert_eq!(
            e,
            "--set provider.phases.3.to=1m: provider.phases is a list of 1; `3` is not an index \
             in it (0 to 0)"
        );
    }
}
