//! The subcommands, one file each: what `main.rs` dispatches to. Each returns an [`Outcome`]:
//! the process exit code (see [`crate::verdict::exit`]), or the [`CommandError`] that `main`
//! prints once. Nothing below `commands/` prints an error and exits.

mod broker;
mod check;
mod consumer_program;
mod default_folder;
pub mod echo;
mod error;
mod program;
mod provider;
mod rerender;
mod run;
mod signals;
mod size;
mod sweep;

pub use broker::broker;
pub use check::check;
pub use error::{exit_code, CommandError, Outcome};
pub use provider::provider;
pub use rerender::rerender;
pub use run::run;
pub use size::size;
pub use sweep::sweep;

use std::path::Path;

use crate::profile::{self, Mode, Scenario};
use crate::serving::ServeLimits;

/// The connection limits of a server's flags, or why they cannot serve (exit 2).
pub(crate) fn serve_limits(args: &crate::cli::ServeArgs) -> Result<ServeLimits, CommandError> {
    let bad = CommandError::bad_input;
    let duration = |flag: &str, v: &str| {
        profile::parse_duration(v).map_err(|e| bad(format!("--{flag} {v}: {e}")))
    };
    ServeLimits {
        header_read_timeout: duration("header-read-timeout", &args.header_read_timeout)?,
        idle_timeout: duration("idle-timeout", &args.idle_timeout)?,
        max_connections: args.max_connections,
    }
    .validate()
    .map_err(|e| bad(e.to_string()))
}

/// The `--set` overrides of a command line, with `--mode`'s after them (`mode=...`, and in
/// sim mode the live-only keys left out), or why the profile cannot be read (exit 2).
pub(crate) fn sets_with_mode(
    path: &Path,
    sets: &[String],
    mode: &crate::cli::ModeArgs,
) -> Result<Vec<String>, CommandError> {
    let mut all = sets.to_vec();
    if let Some(m) = mode.mode {
        let more = profile::mode_overrides(path, sets, m.mode())
            .map_err(|e| CommandError::bad_input(e.to_string()))?;
        all.extend(more);
    }
    Ok(all)
}

/// Loads and validates a profile, or says why not (exit 2).
pub(crate) fn load(path: &Path, sets: &[String]) -> Result<Scenario, CommandError> {
    profile::load(path, sets).map_err(|e| CommandError::bad_input(e.to_string()))
}

pub(crate) fn mode_name(m: Mode) -> &'static str {
    match m {
        Mode::Sim => "sim",
        Mode::Live => "live",
    }
}

/// Quotes a word for a POSIX shell when it needs it.
pub(crate) fn shell_word(s: &str) -> String {
    if !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:,@%+".contains(c))
    {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}
