//! Which message keys a run can publish, so that keys named elsewhere (poison keys, chaos
//! selectors) can be checked: the explicit `workload.keys`, or else `msg-1`, `msg-2`, ...

use std::collections::HashSet;

use crate::profile::path::FieldPath;
use crate::profile::problem::Problem;
use crate::profile::scalar::Text;
use crate::profile::workload_spec::{Arrival, WorkloadSpec};

use super::checks::non_empty;

/// The keys a workload can publish.
pub struct KeyUniverse<'a> {
    explicit: Option<&'a [String]>,
    /// The explicit keys as a set, so that each check is one look-up.
    explicit_set: Option<HashSet<&'a str>>,
    /// The most messages the workload publishes, when the profile says (count, or `at`).
    max: Option<u64>,
}

impl<'a> KeyUniverse<'a> {
    pub fn of(workload: &'a WorkloadSpec) -> KeyUniverse<'a> {
        let from_at = match &workload.arrival {
            Arrival::At(at) => Some(at.len() as u64),
            _ => None,
        };
        let max = match (workload.count, from_at) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        KeyUniverse {
            explicit: workload.keys.as_deref(),
            explicit_set: workload
                .keys
                .as_ref()
                .map(|k| k.iter().map(String::as_str).collect()),
            max,
        }
    }

    /// The most messages the workload publishes, when the profile says (count, or `at`).
    pub fn most(&self) -> Option<u64> {
        self.max
    }

    /// A rule's `keys` selector: not empty, each one a key the workload publishes.
    pub fn selected(
        &self,
        list: Option<Vec<Text>>,
        path: &FieldPath,
    ) -> Result<Option<Vec<String>>, Problem> {
        let Some(list) = list else { return Ok(None) };
        non_empty(&list, path, "name the message keys this rule applies to")?;
        for (i, k) in list.iter().enumerate() {
            self.check(&k.0, &path.index(i))?;
        }
        Ok(Some(list.into_iter().map(|k| k.0).collect()))
    }

    /// A problem at `path` unless `key` can be published.
    pub fn check(&self, key: &str, path: &FieldPath) -> Result<(), Problem> {
        match self.explicit {
            Some(keys) => {
                if self
                    .explicit_set
                    .as_ref()
                    .is_some_and(|set| set.contains(key))
                {
                    return Ok(());
                }
                Err(Problem::new(
                    path.clone(),
                    format!("`{key}` is not one of workload.keys ({})", preview(keys)),
                ))
            }
            None => {
                let Some(seq) = default_key_seq(key) else {
                    return Err(Problem::new(
                        path.clone(),
                        format!(
                            "`{key}` is not a message key: without workload.keys, messages are \
                             keyed msg-1, msg-2, ... (list your own keys in workload.keys)"
                        ),
                    ));
                };
                match self.max {
                    Some(max) if seq > max => Err(Problem::new(
                        path.clone(),
                        format!(
                            "`{key}` is never published: the workload publishes at most {max} \
                             messages (msg-1 to msg-{max})"
                        ),
                    )),
                    _ => Ok(()),
                }
            }
        }
    }
}

/// N for a key of the default form `msg-N` (N >= 1, no leading zero).
fn default_key_seq(key: &str) -> Option<u64> {
    let digits = key.strip_prefix("msg-")?;
    if digits.starts_with('0') || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

/// The first few keys, for a message.
fn preview(keys: &[String]) -> String {
    const SHOWN: usize = 5;
    let mut s = keys
        .iter()
        .take(SHOWN)
        .cloned()
        .collect::<Vec<_>>()
        .join(", ");
    if keys.len() > SHOWN {
        s.push_str(&format!(", ... {} in all", keys.len()));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_keys_are_msg_n_from_one() {
        assert_eq!(default_key_seq("msg-1"), Some(1));
        assert_eq!(default_key_seq("msg-108"), Some(108));
        assert_eq!(default_key_seq("msg-0"), None);
        assert_eq!(default_key_seq("msg-01"), None);
        assert_eq!(default_key_seq("msg-"), None);
        assert_eq!(default_key_seq("order-1"), None);
    }
}
