//! The line of a worker's stderr that names the error it died of, which the last lines of a
//! long stack trace may not hold (a Node trace ends with `at ...` frames and the Node version;
//! its reason is near the top). Kept in the record beside the last lines
//! ([`crate::record::StderrTail::error_line`]) so a `CRASHES` note can quote it.
//!
//! An error line starts at the line's first column with an error's name: a word (dotted for a
//! Python module path, `$` allowed as in JavaScript) ending in `Error` or `Exception`, or `Error`
//! itself, optionally followed by Node's ` [CODE]`, then `:` or the end of the line
//! (`TypeError: x is not a function`, `botocore.exceptions.NoCredentialsError: ...`,
//! `Error [ERR_MODULE_NOT_FOUND]: Cannot find package 'amqplib'`, `KeyError: 'EMAIL'`). Also Go's
//! `panic: ...` and Rust's `thread '...' panicked at ...`. Which one:
//!
//! - Node prints an uncaught error as a `file:line` header (`/app/worker.js:12`,
//!   `node:internal/modules/cjs/loader:1228`), the source line, a caret, a blank line, then the
//!   error: the first error line after the last such header;
//! - otherwise (Python's traceback, whose last line is the exception, chained ones before it)
//!   the last error line.

/// The error line of `text` (one incarnation's stderr), as written; `None` when no line names
/// an error.
pub fn error_line(text: &str) -> Option<&str> {
    let lines: Vec<&str> = text.lines().collect();
    if let Some(header) = lines.iter().rposition(|l| is_node_header(l)) {
        if let Some(line) = lines[header + 1..].iter().find(|l| names_error(l)) {
            return Some(line);
        }
    }
    lines.iter().rev().find(|l| names_error(l)).copied()
}

/// `path:line` alone on a line, as Node heads an uncaught error's report.
fn is_node_header(line: &str) -> bool {
    let line = line.trim_end();
    let Some((path, number)) = line.rsplit_once(':') else {
        return false;
    };
    !path.is_empty()
        && !path.contains(' ')
        && (path.contains('/') || path.contains('\\') || path.starts_with("node:"))
        && !number.is_empty()
        && number.chars().all(|c| c.is_ascii_digit())
}

/// Whether `line` starts with an error's name (see the module documentation).
fn names_error(line: &str) -> bool {
    if line.starts_with("panic: ")
        || (line.starts_with("thread '") && line.contains("' panicked at"))
    {
        return true;
    }
    let name_end = line
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '.' || c == '$'))
        .unwrap_or(line.len());
    let name = &line[..name_end];
    let last = name.rsplit('.').next().unwrap_or(name);
    let is_error_name = !last.is_empty()
        && last.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_' || c == '$')
        && (last.ends_with("Error") || last.ends_with("Exception"));
    if !is_error_name {
        return false;
    }
    let mut rest = &line[name_end..];
    // Node's `Error [ERR_SOMETHING]: ...`.
    if let Some(after) = rest.strip_prefix(" [") {
        match after.find(']') {
            Some(end) => rest = &after[end + 1..],
            None => return false,
        }
    }
    rest.is_empty() || rest.starts_with(':')
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What Node 20 prints for an uncaught TypeError (a real trace, the paths shortened): the
    /// reason is on the line after the `file:line` header, the source line, the caret and a
    /// blank line; the last 5 lines are frames and the version.
    const NODE: &str = "\
/srv/consumer/worker.js:27
  const queue = process.env.ACKBENCH_QUEUE.trim();
                                           ^

TypeError: Cannot read properties of undefined (reading 'trim')
    at Object.<anonymous> (/srv/consumer/worker.js:27:44)
    at Module._compile (node:internal/modules/cjs/loader:1364:14)
    at Module._extensions..js (node:internal/modules/cjs/loader:1422:10)
    at Module.load (node:internal/modules/cjs/loader:1203:32)
    at Module._load (node:internal/modules/cjs/loader:1019:12)
    at Function.executeUserEntryPoint [as runMain] (node:internal/modules/run_main:128:12)
    at node:internal/main/run_main_module:28:49

Node.js v20.20.0
";

    /// Node's report of a missing package: the header is Node's own loader, the error has a
    /// code in brackets, and an object dump follows the frames.
    const NODE_MODULE: &str = "\
node:internal/modules/cjs/loader:1228
  throw err;
  ^

Error: Cannot find module 'amqplib'
Require stack:
- /srv/consumer/worker.js
    at Module._resolveFilename (node:internal/modules/cjs/loader:1225:15)
    at Module._load (node:internal/modules/cjs/loader:1051:27)
    at Module.require (node:internal/modules/cjs/loader:1311:19)
    at require (node:internal/modules/helpers:179:18)
    at Object.<anonymous> (/srv/consumer/worker.js:3:14)
    at Module._compile (node:internal/modules/cjs/loader:1469:14) {
  code: 'MODULE_NOT_FOUND',
  requireStack: [ '/srv/consumer/worker.js' ]
}

Node.js v20.20.0
";

    /// What CPython 3.11 prints for a chained exception: the last error line is the one the
    /// process died of.
    const PYTHON: &str = "\
Traceback (most recent call last):
  File \"/srv/consumer/worker.py\", line 14, in <module>
    QUEUE_URL = os.environ[\"ORDERS_QUEUE_URL\"]
                ~~~~~~~~~~^^^^^^^^^^^^^^^^^^^^
  File \"<frozen os>\", line 679, in __getitem__
KeyError: 'ORDERS_QUEUE_URL'

During handling of the above exception, another exception occurred:

Traceback (most recent call last):
  File \"/srv/consumer/worker.py\", line 16, in <module>
    raise SystemExit.__new__(RuntimeError) from None
  File \"/srv/consumer/worker.py\", line 18, in <module>
    raise botocore.exceptions.NoCredentialsError()
botocore.exceptions.NoCredentialsError: Unable to locate credentials
";

    #[test]
    fn nodes_reason_is_the_line_after_its_file_and_line_header() {
        assert_eq!(
            error_line(NODE),
            Some("TypeError: Cannot read properties of undefined (reading 'trim')")
        );
        assert_eq!(
            error_line(NODE_MODULE),
            Some("Error: Cannot find module 'amqplib'")
        );
        let esm = "file:///srv/c/worker.mjs:1\nimport amqp from 'amqplib';\n^\n\nError [ERR_MODULE_NOT_FOUND]: Cannot find package 'amqplib'\n    at x (node:internal/y:1:1)\n\nNode.js v20.20.0\n";
        assert_eq!(
            error_line(esm),
            Some("Error [ERR_MODULE_NOT_FOUND]: Cannot find package 'amqplib'")
        );
    }

    #[test]
    fn pythons_reason_is_its_last_error_line() {
        assert_eq!(
            error_line(PYTHON),
            Some("botocore.exceptions.NoCredentialsError: Unable to locate credentials")
        );
        assert_eq!(
            error_line("Traceback (most recent call last):\n  File \"w.py\", line 1\nKeyError: 'EMAIL'\nshutting down\n"),
            Some("KeyError: 'EMAIL'")
        );
    }

    #[test]
    fn panics_count_and_plain_lines_do_not() {
        assert_eq!(
            error_line("goroutine 1\npanic: runtime error: index out of range [3]\n\tmain.go:9\n"),
            Some("panic: runtime error: index out of range [3]")
        );
        assert_eq!(
            error_line("thread 'main' panicked at src/main.rs:4:5:\nboom\n"),
            Some("thread 'main' panicked at src/main.rs:4:5:")
        );
        for text in [
            "",
            "connecting to 127.0.0.1:5672\nretrying\n",
            "    raise KeyError('x')\n",
            "An Error: not at the start of a name\n",
            "MyErrorHandler: installed\n",
            "ERROR: something\n",
        ] {
            assert_eq!(error_line(text), None, "{text:?}");
        }
        // A log line naming an error is one too (the last of them, without a Node header).
        assert_eq!(
            error_line("ConnectionError: refused\nretrying\n"),
            Some("ConnectionError: refused")
        );
    }
}
