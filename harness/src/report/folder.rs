//! The folders ackbench writes (a run's report folder, a sweep's, a sizing's) and how it keeps
//! out of everyone else's.
//!
//! Each holds a marker file, [`MARKER`] (`.ackbench-report`), that lists every file ackbench
//! wrote there. Before a command writes anything (before it runs), [`prepare`] checks its folder:
//! a folder that does not exist is created, an empty one or one with the marker is used, and any
//! other (a folder of someone's files) is refused unless `--force`; the marker is written then,
//! which also proves the folder can be written. Inside its folders ackbench removes only files
//! the marker lists ([`remove_ours`]), never a file it did not write.

use std::collections::BTreeSet;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// The marker file of every folder ackbench writes.
pub const MARKER: &str = ".ackbench-report";

/// A folder ackbench will not, or cannot, write.
#[derive(Debug, thiserror::Error)]
pub enum FolderError {
    #[error("{}: exists and is not a folder", path.display())]
    NotAFolder { path: PathBuf },
    #[error(
        "{}: the folder holds files ackbench did not write (it has no {MARKER} marker), so \
         ackbench will not write its {kind} there: choose another folder with --out, or pass \
         --force to write into it anyway (ackbench then overwrites only the files it writes and \
         removes none)",
        path.display()
    )]
    NotOurs { path: PathBuf, kind: &'static str },
    #[error("{}: cannot create the folder: {source}", path.display())]
    Create { path: PathBuf, source: io::Error },
    #[error(
        "{}: is a symbolic link: ackbench writes only inside the folder and does not follow \
         links out of it; remove the link or choose another folder",
        path.display()
    )]
    Link { path: PathBuf },
    #[error("{}: cannot write in the folder: {source}", path.display())]
    Write { path: PathBuf, source: io::Error },
}

/// What [`prepare`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Prepared {
    /// The folder was new or empty.
    New,
    /// The folder held an earlier output of ackbench, which this one replaces.
    Replacing,
    /// `--force`: the folder held other files, which stay.
    Forced,
}

/// The marker's content.
#[derive(Debug, Default, Serialize, Deserialize)]
struct Marker {
    /// Says what the file is to whoever opens it.
    ackbench: String,
    /// What wrote the folder last: `report` (a run), `sweep` or `sizing`.
    kind: String,
    /// Every file ackbench wrote here, relative to the folder.
    files: BTreeSet<String>,
}

const ABOUT: &str = "this folder is written by ackbench; it removes only the files listed here";

/// Checks that ackbench may write its `kind` of output (`report`, `sweep`, `sizing`) into `dir`,
/// creates the folder if needed and writes the marker (see the module documentation).
pub fn prepare(dir: &Path, kind: &'static str, force: bool) -> Result<Prepared, FolderError> {
    let marker_path = dir.join(MARKER);
    let found = match fs::metadata(dir) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            fs::create_dir_all(dir).map_err(|source| FolderError::Create {
                path: dir.to_path_buf(),
                source,
            })?;
            Prepared::New
        }
        Err(source) => {
            return Err(FolderError::Create {
                path: dir.to_path_buf(),
                source,
            })
        }
        Ok(m) if !m.is_dir() => {
            return Err(FolderError::NotAFolder {
                path: dir.to_path_buf(),
            })
        }
        Ok(_) if marker_path.is_file() => Prepared::Replacing,
        Ok(_) if is_empty(dir)? => Prepared::New,
        Ok(_) if force => Prepared::Forced,
        Ok(_) => {
            return Err(FolderError::NotOurs {
                path: dir.to_path_buf(),
                kind,
            })
        }
    };
    let mut marker = read(dir).unwrap_or_default();
    marker.kind = kind.to_string();
    write(dir, marker).map_err(|source| {
        if super::no_follow::is_link(&source) {
            FolderError::Link { path: marker_path }
        } else {
            FolderError::Write {
                path: dir.to_path_buf(),
                source,
            }
        }
    })?;
    Ok(found)
}

fn is_empty(dir: &Path) -> Result<bool, FolderError> {
    let mut entries = fs::read_dir(dir).map_err(|source| FolderError::Write {
        path: dir.to_path_buf(),
        source,
    })?;
    Ok(entries.next().is_none())
}

/// Adds `written` (paths inside `dir`) to the files the marker lists; writes the marker if the
/// folder has none yet.
pub fn record(dir: &Path, written: &[PathBuf]) -> io::Result<()> {
    let mut marker = read(dir).unwrap_or_default();
    for path in written {
        if let Some(rel) = relative(dir, path) {
            marker.files.insert(rel);
        }
    }
    write(dir, marker)
}

/// Removes `dir/rel` if ackbench wrote it (the marker lists it); a file it did not write stays.
pub fn remove_ours(dir: &Path, rel: &str) -> io::Result<()> {
    let Some(mut marker) = read(dir) else {
        return Ok(());
    };
    if !marker.files.remove(rel) {
        return Ok(());
    }
    match fs::remove_file(dir.join(rel)) {
        Err(e) if e.kind() != io::ErrorKind::NotFound => return Err(e),
        _ => {}
    }
    write(dir, marker)
}

/// `path` relative to `dir`, with `/` separators.
fn relative(dir: &Path, path: &Path) -> Option<String> {
    let rel = path.strip_prefix(dir).ok()?;
    let parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    (!parts.is_empty()).then(|| parts.join("/"))
}

fn read(dir: &Path) -> Option<Marker> {
    let text = fs::read_to_string(dir.join(MARKER)).ok()?;
    serde_json::from_str(&text).ok()
}

fn write(dir: &Path, mut marker: Marker) -> io::Result<()> {
    marker.ackbench = ABOUT.to_string();
    let mut text = serde_json::to_string_pretty(&marker).map_err(io::Error::other)?;
    text.push('\n');
    super::no_follow::write(&dir.join(MARKER), text)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tempdir() -> tempfile::TempDir {
        tempfile::tempdir().expect("a temp dir")
    }

    #[test]
    fn a_new_or_empty_folder_is_used_and_marked() {
        let tmp = tempdir();
        let dir = tmp.path().join("reports").join("x");
        assert_eq!(prepare(&dir, "run", false).ok(), Some(Prepared::New));
        assert!(dir.join(MARKER).is_file());
        let empty = tmp.path().join("empty");
        fs::create_dir(&empty).unwrap();
        assert_eq!(prepare(&empty, "run", false).ok(), Some(Prepared::New));
        // Marked now: the next output replaces this one.
        assert_eq!(
            prepare(&empty, "run", false).ok(),
            Some(Prepared::Replacing)
        );
    }

    #[test]
    fn a_folder_of_other_files_is_refused_unless_forced() {
        let tmp = tempdir();
        fs::write(tmp.path().join("deliveries.csv"), "mine").unwrap();
        let e = prepare(tmp.path(), "report", false)
            .unwrap_err()
            .to_string();
        assert!(e.contains("has no .ackbench-report marker"), "{e}");
        assert!(e.contains("--force"), "{e}");
        assert!(!tmp.path().join(MARKER).exists());
        assert_eq!(
            prepare(tmp.path(), "report", true).ok(),
            Some(Prepared::Forced)
        );
        // Forced, the user's file is not ackbench's: it is never removed.
        remove_ours(tmp.path(), "deliveries.csv").unwrap();
        assert_eq!(
            fs::read_to_string(tmp.path().join("deliveries.csv")).unwrap(),
            "mine"
        );
    }

    #[test]
    fn a_file_in_place_of_the_folder_is_refused() {
        let tmp = tempdir();
        let file = tmp.path().join("taken");
        fs::write(&file, "").unwrap();
        let e = prepare(&file, "run", true).unwrap_err().to_string();
        assert!(e.ends_with("taken: exists and is not a folder"), "{e}");
    }

    #[test]
    fn only_recorded_files_are_removed() {
        let tmp = tempdir();
        let dir = tmp.path();
        prepare(dir, "run", false).unwrap();
        fs::create_dir(dir.join("charts")).unwrap();
        for f in ["charts/workers.png", "charts/mine.png", "deliveries.csv"] {
            fs::write(dir.join(f), "x").unwrap();
        }
        record(dir, &[dir.join("charts").join("workers.png")]).unwrap();
        remove_ours(dir, "charts/workers.png").unwrap();
        remove_ours(dir, "charts/mine.png").unwrap();
        remove_ours(dir, "deliveries.csv").unwrap();
        assert!(!dir.join("charts/workers.png").exists());
        assert!(dir.join("charts/mine.png").exists());
        assert!(dir.join("deliveries.csv").exists());
        // Removed, it is no longer listed.
        assert_eq!(read(dir).map(|m| m.files.len()), Some(0));
    }

    #[test]
    fn an_unwritable_place_is_refused() {
        // /proc is not writable, even for root.
        let e = prepare(Path::new("/proc/ackbench-nope"), "run", false)
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("/proc/ackbench-nope: cannot create the folder:"),
            "{e}"
        );
    }
}
