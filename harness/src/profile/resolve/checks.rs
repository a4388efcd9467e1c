//! Small checks the resolve stage uses everywhere; each failure says what is allowed.

use std::time::Duration;

use crate::profile::duration::format_duration;
use crate::profile::path::FieldPath;
use crate::profile::problem::Problem;

/// The value, or a problem saying the field is required and what it is for.
pub fn required<T>(value: Option<T>, path: &FieldPath, what: &str) -> Result<T, Problem> {
    value.ok_or_else(|| Problem::new(path.clone(), format!("required: {what}")))
}

/// A duration that must be more than zero.
pub fn positive(d: Duration, path: &FieldPath) -> Result<Duration, Problem> {
    if d.is_zero() {
        return Err(Problem::new(path.clone(), "must be more than 0s, got 0s"));
    }
    Ok(d)
}

/// A probability, rate or fraction: 0 to 1, both included.
pub fn unit_interval(x: f64, path: &FieldPath) -> Result<f64, Problem> {
    if !(0.0..=1.0).contains(&x) {
        return Err(Problem::new(
            path.clone(),
            format!("must be between 0 and 1, got {x}"),
        ));
    }
    Ok(x)
}

/// A finite number of 0 or more.
pub fn non_negative(x: f64, path: &FieldPath) -> Result<f64, Problem> {
    if !x.is_finite() || x < 0.0 {
        return Err(Problem::new(
            path.clone(),
            format!("must be a number of 0 or more, got {x}"),
        ));
    }
    Ok(x)
}

/// A count that must be at least 1; `hint` says what to do instead of 0.
pub fn at_least_one<T: Into<u64> + Copy>(n: T, path: &FieldPath, hint: &str) -> Result<T, Problem> {
    if n.into() == 0 {
        return Err(Problem::new(
            path.clone(),
            format!("must be at least 1, got 0 ({hint})"),
        ));
    }
    Ok(n)
}

/// `later` must come strictly after `earlier` (named `earlier_name`).
pub fn after(
    later: Duration,
    earlier: Duration,
    earlier_name: &str,
    path: &FieldPath,
) -> Result<(), Problem> {
    if later <= earlier {
        return Err(Problem::new(
            path.clone(),
            format!(
                "must be after {earlier_name} ({}), got {}",
                format_duration(earlier),
                format_duration(later)
            ),
        ));
    }
    Ok(())
}

/// Exactly one of `keys` is present. `forms` shows what to write.
pub fn exactly_one(path: &FieldPath, keys: &[(&str, bool)], forms: &str) -> Result<(), Problem> {
    let given: Vec<&str> = keys
        .iter()
        .filter(|(_, present)| *present)
        .map(|(k, _)| *k)
        .collect();
    let names: Vec<&str> = keys.iter().map(|(k, _)| *k).collect();
    match given.as_slice() {
        [_] => Ok(()),
        [] => Err(Problem::new(
            path.clone(),
            format!("give one of {}, as in {forms}", names.join(", ")),
        )),
        many => Err(Problem::new(
            path.clone(),
            format!(
                "give only one of {}, got {}",
                names.join(", "),
                many.join(" and ")
            ),
        )),
    }
}

/// A list that must not be empty.
pub fn non_empty<T>(list: &[T], path: &FieldPath, what: &str) -> Result<(), Problem> {
    if list.is_empty() {
        return Err(Problem::new(
            path.clone(),
            format!("must not be empty: {what}"),
        ));
    }
    Ok(())
}
