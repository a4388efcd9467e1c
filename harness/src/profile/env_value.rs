//! A value of `consumer.env`: text in which `${ACKBENCH_NAME}` stands for the run variable
//! `ACKBENCH_NAME` of the worker the value is given to ([`super::run_variables`]), so a
//! consumer's own variables take the run's values without a shell wrapper:
//! `EMAIL_API_URL: "${ACKBENCH_PROVIDER_URL}send"`.
//!
//! Only `${ACKBENCH_...}` is replaced. `$${` writes a literal `${`; anything else (`${HOME}`,
//! `$ACKBENCH_WORKER` without braces, a lone `$`) is passed as written: ackbench is not a shell,
//! and a value meant for the consumer's own expansion reaches it untouched.

/// What opens a reference to a run variable.
const OPEN: &str = "${ACKBENCH_";
/// The escape of a literal `${`.
const ESCAPED_OPEN: &str = "$${";

/// A `consumer.env` value, read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EnvValue(Vec<Part>);

#[derive(Debug, Clone, PartialEq, Eq)]
enum Part {
    /// Text given to the worker as it is (escapes already undone).
    Text(String),
    /// A run variable, by its whole name (`ACKBENCH_...`).
    Variable(String),
}

/// Why a value cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EnvValueError {
    /// `${ACKBENCH_` not followed by a name and `}`.
    #[error(
        "`{fragment}` is not closed: a run variable is written `${{ACKBENCH_NAME}}` (letters, \
         digits and _), and `$${{` writes a literal `${{`"
    )]
    Unclosed { fragment: String },
}

/// A run variable the worker's environment does not have.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("no run variable {name} in this worker's environment")]
pub struct MissingVariable {
    pub name: String,
}

impl EnvValue {
    /// Reads `text`: each `${ACKBENCH_NAME}` a run variable, `$${` a literal `${`.
    pub fn parse(text: &str) -> Result<EnvValue, EnvValueError> {
        let mut parts = Vec::new();
        let mut literal = String::new();
        let mut rest = text;
        while let Some(at) = rest.find('$') {
            literal.push_str(&rest[..at]);
            rest = &rest[at..];
            if let Some(after) = rest.strip_prefix(ESCAPED_OPEN) {
                literal.push_str("${");
                rest = after;
            } else if rest.starts_with(OPEN) {
                let name_len = rest[2..]
                    .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                    .unwrap_or(rest.len() - 2);
                let name = &rest[2..2 + name_len];
                let after = &rest[2 + name_len..];
                if !after.starts_with('}') {
                    // The fragment up to and with the character that ends the name.
                    let end = 2 + name_len + after.chars().next().map_or(0, char::len_utf8);
                    return Err(EnvValueError::Unclosed {
                        fragment: rest[..end].to_string(),
                    });
                }
                if !literal.is_empty() {
                    parts.push(Part::Text(std::mem::take(&mut literal)));
                }
                parts.push(Part::Variable(name.to_string()));
                rest = &rest[2 + name_len + 1..];
            } else {
                literal.push('$');
                rest = &rest[1..];
            }
        }
        literal.push_str(rest);
        if !literal.is_empty() {
            parts.push(Part::Text(literal));
        }
        Ok(EnvValue(parts))
    }

    /// The run variables the value names, in the order written.
    pub fn variables(&self) -> impl Iterator<Item = &str> {
        self.0.iter().filter_map(|p| match p {
            Part::Variable(name) => Some(name.as_str()),
            Part::Text(_) => None,
        })
    }

    /// The value one worker is given: each run variable replaced by its value in `run`, that
    /// worker's run variables.
    pub fn expand(&self, run: &[(String, String)]) -> Result<String, MissingVariable> {
        let mut out = String::new();
        for part in &self.0 {
            match part {
                Part::Text(text) => out.push_str(text),
                Part::Variable(name) => {
                    let (_, value) = run
                        .iter()
                        .rev()
                        .find(|(k, _)| k == name)
                        .ok_or_else(|| MissingVariable { name: name.clone() })?;
                    out.push_str(value);
                }
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run() -> Vec<(String, String)> {
        [
            ("ACKBENCH_PROVIDER_URL", "http://127.0.0.1:4100/w/2/"),
            ("ACKBENCH_WORKER", "2"),
            ("AWS_REGION", "us-east-1"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
    }

    fn expand(text: &str) -> String {
        EnvValue::parse(text)
            .unwrap_or_else(|e| panic!("{text}: {e}"))
            .expand(&run())
            .unwrap_or_else(|e| panic!("{text}: {e}"))
    }

    #[test]
    fn a_run_variable_takes_the_workers_value() {
        assert_eq!(
            expand("${ACKBENCH_PROVIDER_URL}send"),
            "http://127.0.0.1:4100/w/2/send"
        );
        assert_eq!(
            expand("worker-${ACKBENCH_WORKER}: ${ACKBENCH_WORKER}"),
            "worker-2: 2"
        );
        assert_eq!(expand(""), "");
        assert_eq!(expand("plain"), "plain");
    }

    #[test]
    fn the_variables_are_listed_in_the_order_written() {
        let v = EnvValue::parse("${ACKBENCH_WORKER}-${ACKBENCH_QUEUE}-$${ACKBENCH_X}").unwrap();
        assert_eq!(
            v.variables().collect::<Vec<_>>(),
            ["ACKBENCH_WORKER", "ACKBENCH_QUEUE"]
        );
    }

    #[test]
    fn a_doubled_dollar_writes_a_literal_opening() {
        assert_eq!(expand("$${ACKBENCH_WORKER}"), "${ACKBENCH_WORKER}");
        assert_eq!(expand("a$${b}c"), "a${b}c");
        // A `$` before the escape stays a `$`.
        assert_eq!(expand("$$${ACKBENCH_WORKER}"), "$${ACKBENCH_WORKER}");
    }

    #[test]
    fn anything_else_is_passed_as_written() {
        for text in [
            "${HOME}/x",
            "$ACKBENCH_WORKER",
            "$",
            "cost: 5$",
            "$$",
            "${AWS_REGION}",
            "${ackbench_worker}",
            "${",
            "${ACKBENCH",
        ] {
            assert_eq!(expand(text), text);
        }
    }

    #[test]
    fn an_unclosed_run_variable_is_refused() {
        let unclosed = |text: &str| match EnvValue::parse(text) {
            Err(EnvValueError::Unclosed { fragment }) => fragment,
            other => panic!("{text}: {other:?}"),
        };
        assert_eq!(unclosed("${ACKBENCH_WORKER"), "${ACKBENCH_WORKER");
        assert_eq!(unclosed("x ${ACKBENCH_QUEUE:-q} y"), "${ACKBENCH_QUEUE:");
        assert_eq!(unclosed("${ACKBENCH_é}"), "${ACKBENCH_é");
        assert_eq!(
            EnvValue::parse("${ACKBENCH_WORKER")
                .unwrap_err()
                .to_string(),
            "`${ACKBENCH_WORKER` is not closed: a run variable is written `${ACKBENCH_NAME}` \
             (letters, digits and _), and `$${` writes a literal `${`"
        );
    }

    #[test]
    fn a_variable_the_worker_lacks_is_named() {
        let v = EnvValue::parse("${ACKBENCH_QUEUE}").unwrap();
        assert_eq!(
            v.expand(&run()).unwrap_err().to_string(),
            "no run variable ACKBENCH_QUEUE in this worker's environment"
        );
    }
}
