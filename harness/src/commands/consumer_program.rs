//! `consumer.command`'s program must exist before a live run starts anything: `check` and
//! `run` look it up as the run starts it (a name without `/` on PATH, the workers' PATH when
//! `consumer.env` sets one; a path with `/` from the current folder), and refuse with exit 2
//! naming the field and the program when it is not there or cannot be run.

use std::ffi::OsString;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use super::CommandError;
use crate::profile::{Mode, Scenario};

/// Refuses a live scenario whose consumer program is not found (exit 2).
pub(crate) fn check(file: &Path, s: &Scenario) -> Result<(), CommandError> {
    let Some(program) = s.consumer.command.as_ref().and_then(|argv| argv.first()) else {
        return Ok(());
    };
    if s.mode != Mode::Live {
        return Ok(());
    }
    // A PATH of the profile's own: the workers' PATH, which the run looks the program up in.
    let path = s
        .consumer
        .env
        .iter()
        .find(|(name, _)| name == "PATH")
        .map(|(_, v)| match v.variables().next() {
            None => v.expand(&[]).ok(),
            Some(_) => None,
        });
    let path = match path {
        Some(Some(own)) => Some(OsString::from(own)),
        // A PATH made of run variables is only known per worker: not checked.
        Some(None) => return Ok(()),
        None => std::env::var_os("PATH"),
    };
    let cwd = std::env::current_dir().unwrap_or_default();
    match missing(program, path.as_deref(), &cwd) {
        None => Ok(()),
        Some(why) => Err(CommandError::bad_input(format!(
            "{}: consumer.command: {why}",
            file.display()
        ))),
    }
}

/// Why `program` cannot be started, looked up as `Command::new` does; `None` when it can.
fn missing(program: &str, path: Option<&std::ffi::OsStr>, cwd: &Path) -> Option<String> {
    if program.contains('/') {
        let file = cwd.join(program);
        return match runnable(&file) {
            Ok(()) => None,
            Err(why) if Path::new(program).is_absolute() => {
                Some(format!("the program `{program}` {why}"))
            }
            Err(why) => Some(format!(
                "the program `{program}` {why} (a path with / is taken from the folder ackbench \
                 runs in, {})",
                cwd.display()
            )),
        };
    }
    let dirs: Vec<PathBuf> = path
        .map(|p| std::env::split_paths(p).collect())
        .unwrap_or_default();
    let mut not_runnable = None;
    for dir in &dirs {
        // An empty entry is the current folder.
        let file = if dir.as_os_str().is_empty() {
            cwd.join(program)
        } else {
            cwd.join(dir).join(program)
        };
        match runnable(&file) {
            Ok(()) => return None,
            Err(why) if file.exists() && not_runnable.is_none() => {
                not_runnable = Some(format!("{} {why}", file.display()))
            }
            Err(_) => {}
        }
    }
    let shown = path.map_or_else(
        || "(PATH is not set)".to_string(),
        |p| p.to_string_lossy().into_owned(),
    );
    Some(match not_runnable {
        Some(found) => format!("the program `{program}` was found on PATH, but {found}"),
        None => format!("the program `{program}` was not found on PATH ({shown})"),
    })
}

/// Whether `file` is a file its owner, group or others may execute.
fn runnable(file: &Path) -> Result<(), &'static str> {
    let meta = std::fs::metadata(file).map_err(|_| "does not exist")?;
    if !meta.is_file() {
        return Err("is not a file");
    }
    if meta.permissions().mode() & 0o111 == 0 {
        return Err("is not executable");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::missing;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn a_program_is_looked_up_on_path_and_a_path_from_the_current_folder() {
        let dir = tempfile::tempdir().unwrap();
        let bin = dir.path().join("bin");
        std::fs::create_dir(&bin).unwrap();
        let exe = bin.join("worker");
        std::fs::write(&exe, "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(&exe, std::fs::Permissions::from_mode(0o755)).unwrap();
        let text = bin.join("notes");
        std::fs::write(&text, "").unwrap();
        let path = std::ffi::OsString::from(format!("/nonexistent:{}", bin.display()));
        let cwd = dir.path();
        // On PATH: found in its second folder.
        assert_eq!(missing("worker", Some(&path), cwd), None);
        // A name not on PATH is named with the PATH it was looked up in.
        assert_eq!(
            missing("pyhton3", Some(&path), cwd).unwrap(),
            format!(
                "the program `pyhton3` was not found on PATH (/nonexistent:{})",
                bin.display()
            )
        );
        // Found, but not executable.
        assert_eq!(
            missing("notes", Some(&path), cwd).unwrap(),
            format!(
                "the program `notes` was found on PATH, but {} is not executable",
                text.display()
            )
        );
        // A relative path, from the current folder; not on PATH.
        assert_eq!(missing("bin/worker", None, cwd), None);
        assert_eq!(missing("./bin/worker", None, cwd), None);
        assert_eq!(
            missing("./worker", Some(&path), cwd).unwrap(),
            format!(
                "the program `./worker` does not exist (a path with / is taken from the folder \
                 ackbench runs in, {})",
                cwd.display()
            )
        );
        assert!(missing("bin", None, dir.path())
            .unwrap()
            .contains("was not found on PATH ((PATH is not set))"));
        assert!(missing("./bin", None, cwd)
            .unwrap()
            .contains("`./bin` is not a file"));
        // An absolute path.
        assert_eq!(missing(&exe.display().to_string(), None, cwd), None);
        assert_eq!(
            missing("/nonexistent/consumer", None, cwd).unwrap(),
            "the program `/nonexistent/consumer` does not exist"
        );
    }
}
