//! How to invoke this very binary from the user's shell, for the `reproduce:` lines.
//!
//! Reports keep the portable `ackbench run ...` (what a CI job with ackbench installed runs).
//! The console line is for pasting now: right after the README's `cargo run --release -- run
//! ...`, `ackbench` is not on PATH, so it names the binary that ran instead
//! (`target/release/ackbench run ...`), relative to the current folder when it lies below it.

use std::path::{Path, PathBuf};

use super::shell_word;

/// The word that starts this binary from the current folder: `ackbench` when that name on
/// PATH is this binary, else its path.
pub(crate) fn program_word() -> String {
    let Some(exe) = std::env::current_exe().ok().map(canonical) else {
        return "ackbench".to_string();
    };
    if on_path("ackbench").as_deref() == Some(exe.as_path()) {
        return "ackbench".to_string();
    }
    let shown = std::env::current_dir()
        .ok()
        .and_then(|cwd| exe.strip_prefix(canonical(cwd)).ok().map(Path::to_path_buf))
        .unwrap_or_else(|| exe.clone());
    shell_word(&shown.display().to_string())
}

/// The same command as `command` (which starts with `ackbench `) started with [`program_word`].
pub(crate) fn pasteable(command: &str) -> String {
    match command.strip_prefix("ackbench ") {
        Some(rest) => format!("{} {rest}", program_word()),
        None => command.to_string(),
    }
}

fn canonical(p: PathBuf) -> PathBuf {
    p.canonicalize().unwrap_or(p)
}

/// The file a shell would run for `name`, resolved through links.
fn on_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(name))
        .find(|p| p.is_file())
        .map(canonical)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_command_keeps_its_arguments_behind_the_program() {
        let got = pasteable("ackbench run profiles/healthy.yaml --seed 1");
        assert!(
            got.ends_with(" run profiles/healthy.yaml --seed 1"),
            "{got}"
        );
        // The test binary is not `ackbench` on PATH: the word is a path to it.
        assert!(got.contains('/') || got.starts_with("ackbench "), "{got}");
        assert_eq!(pasteable("other words"), "other words");
    }
}
