//! Why a command stopped: what `main` prints (once, as `error: ...`) and the exit code it
//! exits with (see [`crate::verdict::exit`]).

use std::process::ExitCode;

use crate::verdict::exit;

/// What a command returns: the exit code of a command that ran to its end (0, or 1 when a
/// budget failed, or 3 for an incomplete run), or why it stopped.
pub type Outcome = Result<ExitCode, CommandError>;

/// A command that could not do what it was asked.
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub struct CommandError {
    /// The process exit code: 2 bad input, 3 the run (or a server) could not complete.
    pub code: i32,
    pub message: String,
    /// Lines printed after the error, as they are (e.g. `reproduce: ...`).
    pub then: Vec<String>,
}

impl CommandError {
    /// Bad usage or an invalid input file (exit 2).
    pub fn bad_input(message: impl Into<String>) -> CommandError {
        CommandError::with_code(exit::BAD_INPUT, message)
    }

    /// The run, a server or a write could not complete (exit 3).
    pub fn run_failed(message: impl Into<String>) -> CommandError {
        CommandError::with_code(exit::RUN_FAILED, message)
    }

    pub fn with_code(code: i32, message: impl Into<String>) -> CommandError {
        CommandError {
            code,
            message: message.into(),
            then: Vec::new(),
        }
    }

    /// This error, followed by `line`.
    pub fn then(mut self, line: String) -> CommandError {
        self.then.push(line);
        self
    }

    /// Prints the error to stderr: `error: MESSAGE` (long echoed values cut, see
    /// [`super::echo`]), then its lines.
    pub fn print(&self) {
        eprintln!("error: {}", super::echo::cut_echoes(&self.message));
        for line in &self.then {
            eprintln!("{line}");
        }
    }
}

/// A process exit code from one of [`crate::verdict::exit`]'s.
pub fn exit_code(code: i32) -> ExitCode {
    ExitCode::from(u8::try_from(code).unwrap_or(3))
}

impl From<crate::sizing::SizingError> for CommandError {
    fn from(e: crate::sizing::SizingError) -> CommandError {
        CommandError::with_code(e.exit_code(), e.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_follow_the_kind_of_failure() {
        assert_eq!(CommandError::bad_input("x").code, 2);
        assert_eq!(CommandError::run_failed("x").code, 3);
        let e = CommandError::run_failed("the run could not complete").then("reproduce: x".into());
        assert_eq!(e.to_string(), "the run could not complete");
        assert_eq!(e.then, ["reproduce: x"]);
        assert_eq!(exit_code(1), ExitCode::from(1));
        assert_eq!(
            exit_code(-1),
            ExitCode::from(3),
            "out of range: could not complete"
        );
    }
}
