//! What the kinds' files share to read their keys: a duration or its default, a server's URL.

use std::time::Duration;

use crate::profile::path::FieldPath;
use crate::profile::problem::Problem;
use crate::profile::scalar::DurationText;

pub(super) fn duration_or(d: Option<DurationText>, default: Duration) -> Duration {
    d.map_or(default, |d| d.0)
}

/// `broker.url` of a real-server kind, or the kind's local default.
pub(super) fn kind_url(
    url: Option<String>,
    default: &str,
    schemes: &[&str],
    path: &FieldPath,
) -> Result<Option<String>, Problem> {
    match url {
        None => Ok(Some(default.to_string())),
        Some(u) => server_url(&u, schemes, &path.key("url")).map(Some),
    }
}

/// A server URL with one of `schemes` and a host.
pub(super) fn server_url(
    text: &str,
    schemes: &[&str],
    path: &FieldPath,
) -> Result<String, Problem> {
    let u = url::Url::parse(text)
        .map_err(|e| Problem::new(path.clone(), format!("is not a URL ({e}): `{text}`")))?;
    if !schemes.contains(&u.scheme()) {
        return Err(Problem::new(
            path.clone(),
            format!(
                "must be a URL with scheme {}, got `{}` in `{text}`",
                schemes.join(" or "),
                u.scheme()
            ),
        ));
    }
    if u.host_str().is_none_or(str::is_empty) {
        return Err(Problem::new(
            path.clone(),
            format!("names no host: `{text}`"),
        ));
    }
    Ok(text.to_string())
}
