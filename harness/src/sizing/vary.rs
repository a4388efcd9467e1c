//! `--vary PATH=V1,V2,...`: one axis of a sweep.
//!
//! Values are separated by commas at the top level only, so a YAML flow value keeps its own
//! commas: `--vary 'provider.latency={dist: fixed, value: 1s},{dist: fixed, value: 2s}'`.
//! Each value is later applied as `--set PATH=VALUE` and validated like one.

use super::error::SizingError;

/// One varied field and its values, in the order given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Vary {
    /// The argument as given, for messages.
    pub arg: String,
    /// The dotted field path, as `--set` takes it.
    pub path: String,
    pub values: Vec<String>,
}

impl Vary {
    /// Parses `PATH=V1,V2,...`.
    pub fn parse(arg: &str) -> Result<Vary, SizingError> {
        let bad = |message: String| SizingError::BadVary {
            arg: arg.to_string(),
            message,
        };
        let Some((path, list)) = arg.split_once('=') else {
            return Err(bad(
                "expected PATH=V1,V2,..., e.g. --vary broker.visibility_timeout=20s,30s,60s".into(),
            ));
        };
        let path = path.trim();
        if path.is_empty() || path.split('.').any(|p| p.trim().is_empty()) {
            return Err(bad(format!(
                "`{path}` is not a field path: write dotted keys such as broker.visibility_timeout"
            )));
        }
        if list.trim().is_empty() {
            return Err(bad(format!(
                "no values after `{path}=`: give at least one, e.g. {path}=20s,30s"
            )));
        }
        let values: Vec<String> = split_top_level(list)
            .into_iter()
            .map(|v| v.trim().to_string())
            .collect();
        if let Some(i) = values.iter().position(String::is_empty) {
            return Err(bad(format!(
                "value {} of {} is empty: remove the extra comma",
                i + 1,
                values.len()
            )));
        }
        if let Some(dup) = values
            .iter()
            .enumerate()
            .find(|(i, v)| values[..*i].contains(v))
        {
            return Err(bad(format!("`{}` is given twice", dup.1)));
        }
        Ok(Vary {
            arg: arg.to_string(),
            path: path.to_string(),
            values,
        })
    }
}

/// Splits at commas outside brackets, braces and quotes.
fn split_top_level(list: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let (mut depth, mut quote, mut start) = (0i32, None::<char>, 0);
    for (i, c) in list.char_indices() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '\'' | '"') => quote = Some(c),
            (None, '[' | '{') => depth += 1,
            (None, ']' | '}') => depth -= 1,
            (None, ',') if depth <= 0 => {
                parts.push(&list[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&list[start..]);
    parts
}

/// Parses every `--vary`; a path varied twice is an error.
pub fn parse_all(args: &[String]) -> Result<Vec<Vary>, SizingError> {
    let mut out: Vec<Vary> = Vec::new();
    for arg in args {
        let v = Vary::parse(arg)?;
        if out.iter().any(|o| o.path == v.path) {
            return Err(SizingError::BadVary {
                arg: arg.clone(),
                message: format!("{} is already varied by another --vary", v.path),
            });
        }
        out.push(v);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn msg(arg: &str) -> String {
        Vary::parse(arg)
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default()
    }

    #[test]
    fn values_split_at_top_level_commas() {
        let v = Vary::parse("broker.visibility_timeout=20s, 30s,45s").expect("parses");
        assert_eq!(v.path, "broker.visibility_timeout");
        assert_eq!(v.values, ["20s", "30s", "45s"]);
        let v = Vary::parse(
            "provider.latency={dist: fixed, value: 1s},{dist: uniform, min: 1s, max: 2s}",
        )
        .expect("parses");
        assert_eq!(
            v.values,
            [
                "{dist: fixed, value: 1s}",
                "{dist: uniform, min: 1s, max: 2s}"
            ]
        );
        assert_eq!(
            Vary::parse("a.b='x,y',z").expect("parses").values,
            ["'x,y'", "z"]
        );
    }

    #[test]
    fn malformed_varies_say_what_is_wrong() {
        assert!(msg("broker.visibility_timeout").contains("expected PATH=V1,V2"));
        assert!(msg("broker.visibility_timeout=").contains("no values"));
        assert!(msg("broker.visibility_timeout=20s,,30s").contains("value 2 of 3 is empty"));
        assert!(msg("=20s").contains("not a field path"));
        assert!(msg("broker..x=1").contains("not a field path"));
        assert!(msg("seed=1,1").contains("given twice"));
        let twice = parse_all(&["seed=1,2".into(), "seed=3".into()]);
        assert!(twice
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default()
            .contains("already varied"));
    }
}
