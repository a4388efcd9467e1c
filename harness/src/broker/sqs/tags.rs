//! Queue tags, as SQS keeps them: at most 50 per queue, keys of 1 to 128 characters that do not
//! start with `aws:`, values of at most 256 characters. `CreateQueue` `tags` and `TagQueue` add
//! (a key already there takes the new value), `UntagQueue` removes, `ListQueueTags` reports.

use std::collections::BTreeMap;

use super::error::SqsError;

/// Most tags one queue carries.
pub const MAX_TAGS: usize = 50;

/// Adds `new` to `tags`, all or nothing: a bad key or value, or more than [`MAX_TAGS`] in the
/// end, changes nothing.
pub fn add(
    queue: &str,
    tags: &mut BTreeMap<String, String>,
    new: &BTreeMap<String, String>,
) -> Result<(), SqsError> {
    for (k, v) in new {
        check(k, v)?;
    }
    let added = new.keys().filter(|k| !tags.contains_key(*k)).count();
    if tags.len() + added > MAX_TAGS {
        return Err(SqsError::invalid(
            "Tags",
            format!("Too many tags added for queue {queue}: a queue has at most {MAX_TAGS} tags."),
        ));
    }
    tags.extend(new.iter().map(|(k, v)| (k.clone(), v.clone())));
    Ok(())
}

/// Removes the tags `keys` name (a key that is not there is no error).
pub fn remove(tags: &mut BTreeMap<String, String>, keys: &[String]) {
    for k in keys {
        tags.remove(k);
    }
}

fn check(key: &str, value: &str) -> Result<(), SqsError> {
    let len = key.chars().count();
    if !(1..=128).contains(&len) {
        return Err(SqsError::invalid(
            "Tags",
            format!("Tag key {key:?} must be 1 to 128 characters long."),
        ));
    }
    if key.to_ascii_lowercase().starts_with("aws:") {
        return Err(SqsError::invalid(
            "Tags",
            format!("Tag key {key:?}: the aws: prefix is reserved."),
        ));
    }
    if value.chars().count() > 256 {
        return Err(SqsError::invalid(
            "Tags",
            format!("The value of tag {key:?} must be at most 256 characters long."),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn add_replaces_values_and_remove_ignores_missing_keys() {
        let mut t = map(&[("team", "a")]);
        add("q", &mut t, &map(&[("team", "b"), ("env", "prod")])).unwrap();
        assert_eq!(t, map(&[("env", "prod"), ("team", "b")]));
        remove(&mut t, &["team".to_string(), "nope".to_string()]);
        assert_eq!(t, map(&[("env", "prod")]));
    }

    #[test]
    fn bad_tags_and_the_51st_are_refused_and_change_nothing() {
        let mut t = BTreeMap::new();
        for bad in [map(&[("", "v")]), map(&[("aws:x", "v")])] {
            assert!(add("q", &mut t, &bad).is_err());
        }
        let long = "v".repeat(257);
        assert!(add("q", &mut t, &map(&[("k", &long)])).is_err());
        let fifty: BTreeMap<String, String> =
            (0..50).map(|i| (format!("k{i}"), String::new())).collect();
        add("q", &mut t, &fifty).unwrap();
        // Replacing an existing key is no new tag; a 51st is.
        add("q", &mut t, &map(&[("k0", "x")])).unwrap();
        let e = add("q", &mut t, &map(&[("k50", "x")])).unwrap_err();
        assert!(e.message.contains("Too many tags"), "{e}");
        assert_eq!((t.len(), t["k0"].as_str()), (50, "x"));
    }
}
