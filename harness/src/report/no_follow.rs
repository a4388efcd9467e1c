//! Writing inside a report folder without following symbolic links: a link planted where a
//! report file or sub-folder goes (charts/, summary.json, ...) is refused, never written through,
//! so nothing ackbench writes lands outside the folder given with `--out`.
//!
//! Files are opened with `O_NOFOLLOW` (the kernel refuses a link as the last component with
//! `ELOOP`); sub-folders are looked at with `symlink_metadata` before they are used.

use std::fs::{self, File, OpenOptions};
use std::io;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

/// Creates (or truncates) file `path` for writing; a symbolic link there is refused.
pub fn create_file(path: &Path) -> io::Result<File> {
    OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)
}

/// Writes `bytes` to file `path` (created or truncated); a symbolic link there is refused.
pub fn write(path: &Path, bytes: impl AsRef<[u8]>) -> io::Result<()> {
    io::Write::write_all(&mut create_file(path)?, bytes.as_ref())
}

/// Creates sub-folder `path` (its parent exists) unless it is a folder already; a symbolic link
/// there is refused.
pub fn create_dir(path: &Path) -> io::Result<()> {
    match fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_symlink() => Err(link_error()),
        Ok(m) if m.is_dir() => Ok(()),
        Ok(_) => Err(io::Error::new(
            io::ErrorKind::AlreadyExists,
            "exists and is not a folder",
        )),
        Err(e) if e.kind() == io::ErrorKind::NotFound => match fs::create_dir(path) {
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => create_dir(path),
            done => done,
        },
        Err(e) => Err(e),
    }
}

/// Refuses a symbolic link at `path`, for a writer that opens the file by its name itself (the
/// PNG encoder); a file or nothing there is fine.
pub fn refuse_link(path: &Path) -> io::Result<()> {
    match fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_symlink() => Err(link_error()),
        _ => Ok(()),
    }
}

/// Whether `e` says a symbolic link stood where a file or folder was to be written.
pub fn is_link(e: &io::Error) -> bool {
    e.raw_os_error() == Some(libc::ELOOP)
}

fn link_error() -> io::Error {
    io::Error::from_raw_os_error(libc::ELOOP)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_link_where_a_file_goes_is_refused_and_its_target_untouched() {
        let tmp = tempfile::tempdir().unwrap();
        let outside = tmp.path().join("outside.txt");
        fs::write(&outside, "theirs").unwrap();
        let link = tmp.path().join("summary.json");
        std::os::unix::fs::symlink(&outside, &link).unwrap();
        let e = write(&link, "ours").unwrap_err();
        assert!(is_link(&e), "{e}");
        assert!(is_link(&refuse_link(&link).unwrap_err()));
        assert_eq!(fs::read_to_string(&outside).unwrap(), "theirs");
        let plain = tmp.path().join("run.json");
        write(&plain, "ours").unwrap();
        write(&plain, "again").unwrap();
        assert_eq!(fs::read_to_string(&plain).unwrap(), "again");
        refuse_link(&plain).unwrap();
    }

    #[test]
    fn a_link_where_a_folder_goes_is_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let elsewhere = tmp.path().join("elsewhere");
        fs::create_dir(&elsewhere).unwrap();
        let charts = tmp.path().join("charts");
        std::os::unix::fs::symlink(&elsewhere, &charts).unwrap();
        assert!(is_link(&create_dir(&charts).unwrap_err()));
        let real = tmp.path().join("real");
        create_dir(&real).unwrap();
        create_dir(&real).unwrap();
        assert!(real.is_dir());
        let file = tmp.path().join("file");
        fs::write(&file, "").unwrap();
        assert!(!is_link(&create_dir(&file).unwrap_err()));
    }
}
