//! Where a live run's worker processes write: `worker-N.out` and `worker-N.err` in the run's
//! log folder, appended to by every incarnation of worker N. At the end of the run the record
//! keeps the folder and the last lines of each worker's stderr ([`WorkerLogsRecord`]), so a
//! report can quote why a worker crashed or never ran without reading any file itself. The
//! lines are those of one incarnation: the one that crashed last, if the worker crashed (its
//! restarts may have written more since), else the one the run ended; of the whole file when
//! that incarnation wrote nothing. Beside them, the line naming the error it died of when it is
//! further up ([`super::error_line`]: a Node stack trace's reason is at its top).

use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};

use crate::record::{StderrTail, WorkerId, WorkerLogsRecord};

/// The most lines kept of each worker's stderr.
pub const TAIL_LINES: usize = 5;
/// The most characters kept of one line (a longer one is cut, with `…`).
const LINE_CHARS: usize = 240;
/// How far back from its end a tail is looked for: more than enough for 5 lines of 240.
const TAIL_BYTES: u64 = 16 * 1024;
/// How far back from its end the error's line is looked for: a deep stack trace or two.
const ERROR_BYTES: u64 = 256 * 1024;

/// The workers' log files, and which part of each worker's stderr each incarnation wrote.
#[derive(Debug)]
pub struct WorkerLogs {
    dir: PathBuf,
    /// Worker N's stderr marks (index `N - 1`).
    marks: Mutex<Vec<Marks>>,
}

/// Where one worker's stderr stood, in bytes.
#[derive(Debug, Clone, Copy, Default)]
struct Marks {
    /// When its latest incarnation started.
    started: u64,
    /// Where its last crashed incarnation started and ended.
    last_crash: Option<(u64, u64)>,
}

impl WorkerLogs {
    pub fn new(dir: &Path, workers: u32) -> WorkerLogs {
        WorkerLogs {
            dir: dir.to_path_buf(),
            marks: Mutex::new(vec![Marks::default(); workers as usize]),
        }
    }

    pub fn stdout(&self, w: WorkerId) -> PathBuf {
        self.dir.join(format!("worker-{w}.out"))
    }

    pub fn stderr(&self, w: WorkerId) -> PathBuf {
        self.dir.join(stderr_name(w))
    }

    /// Worker `w` starts a new incarnation: what it writes from now on is its own.
    pub fn started(&self, w: WorkerId) {
        let len = self.stderr_len(w);
        self.mark(w, |m| m.started = len);
    }

    /// Worker `w` crashed just now (its process has exited): the incarnation that crashed
    /// wrote its stderr from where it started to here.
    pub fn crashed(&self, w: WorkerId) {
        let len = self.stderr_len(w);
        self.mark(w, |m| m.last_crash = Some((m.started, len)));
    }

    fn stderr_len(&self, w: WorkerId) -> u64 {
        std::fs::metadata(self.stderr(w)).map_or(0, |m| m.len())
    }

    fn mark(&self, w: WorkerId, change: impl FnOnce(&mut Marks)) {
        let mut marks = self.marks.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(m) = marks.get_mut((w - 1) as usize) {
            change(m);
        }
    }

    /// What the run's record keeps, read from the files now (the workers are stopped): the
    /// folder, and the last lines of every stderr that has any.
    pub fn record(&self) -> WorkerLogsRecord {
        let marks = self
            .marks
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        let stderr_tails = (1..=marks.len() as WorkerId)
            .zip(marks)
            .filter_map(|(w, m)| {
                let path = self.stderr(w);
                let (mut from, to) = m.last_crash.unwrap_or((m.started, u64::MAX));
                let mut lines = tail(&path, from, to).unwrap_or_default();
                if lines.is_empty() {
                    from = 0;
                    lines = tail(&path, 0, to).unwrap_or_default();
                }
                let error_line = error_line(&path, from, to)
                    .ok()
                    .flatten()
                    .filter(|l| !lines.contains(l));
                (!lines.is_empty()).then(|| StderrTail {
                    worker: w,
                    file: stderr_name(w),
                    before_last_crash: m.last_crash.is_some(),
                    lines,
                    error_line,
                })
            })
            .collect();
        WorkerLogsRecord {
            folder: self.dir.display().to_string(),
            stderr_tails,
        }
    }
}

fn stderr_name(w: WorkerId) -> String {
    format!("worker-{w}.err")
}

/// The last [`TAIL_LINES`] lines that are not blank of the bytes `from..to` of the file at
/// `path` (`to` past its end: to its end), each made one printable line of at most
/// [`LINE_CHARS`].
fn tail(path: &Path, from: u64, to: u64) -> std::io::Result<Vec<String>> {
    let mut file = std::fs::File::open(path)?;
    let end = to.min(file.metadata()?.len());
    let start = end.saturating_sub(TAIL_BYTES).max(from.min(end));
    file.seek(SeekFrom::Start(start))?;
    let mut bytes = Vec::new();
    file.take(end - start).read_to_end(&mut bytes)?;
    let text = String::from_utf8_lossy(&bytes);
    let mut lines: Vec<&str> = text.lines().collect();
    // A cut first line is not quoted.
    if start > from && !lines.is_empty() {
        lines.remove(0);
    }
    let mut kept: Vec<String> = lines
        .into_iter()
        .rev()
        .filter(|l| !l.trim().is_empty())
        .take(TAIL_LINES)
        .map(printable)
        .collect();
    kept.reverse();
    Ok(kept)
}

/// The line naming the error in the bytes `from..to` of the file at `path` (at most the last
/// [`ERROR_BYTES`] of them), made printable as the tail's lines are.
fn error_line(path: &Path, from: u64, to: u64) -> std::io::Result<Option<String>> {
    let text = read_range(path, from, to, ERROR_BYTES)?;
    Ok(super::error_line::error_line(&text).map(printable))
}

/// The bytes `from..to` of the file at `path` (`to` past its end: to its end), at most the last
/// `most` of them, as text; a first line cut by `most` left out.
fn read_range(path: &Path, from: u64, to: u64, most: u64) -> std::io::Result<String> {
    let mut file = std::fs::File::open(path)?;
    let end = to.min(file.metadata()?.len());
    let start = end.saturating_sub(most).max(from.min(end));
    file.seek(SeekFrom::Start(start))?;
    let mut bytes = Vec::new();
    file.take(end - start).read_to_end(&mut bytes)?;
    let text = String::from_utf8_lossy(&bytes).into_owned();
    if start > from {
        return Ok(text
            .split_once('\n')
            .map_or(String::new(), |(_, rest)| rest.to_string()));
    }
    Ok(text)
}

/// A line as a report can show it: tabs as spaces, other control characters (colour codes,
/// carriage returns) dropped, cut at [`LINE_CHARS`].
fn printable(line: &str) -> String {
    let clean: String = line
        .trim_end()
        .chars()
        .filter_map(|c| match c {
            '\t' => Some(' '),
            c if c.is_control() => None,
            c => Some(c),
        })
        .collect();
    if clean.chars().count() <= LINE_CHARS {
        return clean;
    }
    let mut cut: String = clean.chars().take(LINE_CHARS - 1).collect();
    cut.push('…');
    cut
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_record_keeps_the_last_lines_of_each_stderr_that_has_any() {
        let dir = tempfile::tempdir().unwrap();
        let logs = WorkerLogs::new(dir.path(), 3);
        let lines: String = (1..=8).map(|i| format!("line {i}\n")).collect();
        std::fs::write(logs.stderr(1), lines).unwrap();
        // Worker 3's first incarnation wrote a line and crashed; its second a traceback, and
        // crashed; its third wrote on.
        let append = |w: WorkerId, text: &str| {
            let mut f = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(logs.stderr(w))
                .unwrap();
            std::io::Write::write_all(&mut f, text.as_bytes()).unwrap();
        };
        logs.started(3);
        append(3, "first try\n");
        logs.crashed(3);
        logs.started(3);
        append(3, "Traceback:\n  File x\nKeyError: 'EMAIL'\n\n");
        logs.crashed(3);
        logs.started(3);
        append(3, "started again\n");
        // Worker 2's latest incarnation wrote nothing: its earlier lines are quoted.
        logs.started(2);
        append(2, "connecting\n");
        logs.started(2);
        let r = logs.record();
        assert_eq!(r.folder, dir.path().display().to_string());
        assert_eq!(
            r.stderr_tails,
            [
                StderrTail {
                    worker: 1,
                    file: "worker-1.err".into(),
                    before_last_crash: false,
                    lines: (4..=8).map(|i| format!("line {i}")).collect(),
                    error_line: None,
                },
                StderrTail {
                    worker: 2,
                    file: "worker-2.err".into(),
                    before_last_crash: false,
                    lines: vec!["connecting".into()],
                    error_line: None,
                },
                StderrTail {
                    worker: 3,
                    file: "worker-3.err".into(),
                    before_last_crash: true,
                    lines: vec![
                        "Traceback:".into(),
                        "  File x".into(),
                        "KeyError: 'EMAIL'".into()
                    ],
                    error_line: None,
                },
            ]
        );
    }

    #[test]
    fn the_error_line_above_the_tail_is_kept_beside_it() {
        let dir = tempfile::tempdir().unwrap();
        let logs = WorkerLogs::new(dir.path(), 2);
        // Worker 1: Node's report of an uncaught TypeError (as Node 20 prints it), 12 lines:
        // the last 5 are frames and the version, the reason 8 lines up.
        let node = "/srv/consumer/worker.js:27\n  const queue = process.env.ACKBENCH_QUEUE.trim();\n                                           ^\n\nTypeError: Cannot read properties of undefined (reading 'trim')\n    at Object.<anonymous> (/srv/consumer/worker.js:27:44)\n    at Module._compile (node:internal/modules/cjs/loader:1364:14)\n    at Module._extensions..js (node:internal/modules/cjs/loader:1422:10)\n    at Module.load (node:internal/modules/cjs/loader:1203:32)\n    at Module._load (node:internal/modules/cjs/loader:1019:12)\n    at node:internal/main/run_main_module:28:49\n\nNode.js v20.20.0\n";
        logs.started(1);
        std::fs::write(logs.stderr(1), node).unwrap();
        logs.crashed(1);
        // Worker 2: a Python traceback ends with its error: nothing more to keep.
        logs.started(2);
        std::fs::write(
            logs.stderr(2),
            "Traceback (most recent call last):\n  File \"w.py\", line 3, in <module>\nKeyError: 'EMAIL'\n",
        )
        .unwrap();
        logs.crashed(2);
        let r = logs.record();
        // The last 5 lines that are not blank: 4 frames and the version.
        assert_eq!(
            r.stderr_tails[0].lines,
            [
                "    at Module._extensions..js (node:internal/modules/cjs/loader:1422:10)",
                "    at Module.load (node:internal/modules/cjs/loader:1203:32)",
                "    at Module._load (node:internal/modules/cjs/loader:1019:12)",
                "    at node:internal/main/run_main_module:28:49",
                "Node.js v20.20.0",
            ]
        );
        assert_eq!(
            r.stderr_tails[0].error_line.as_deref(),
            Some("TypeError: Cannot read properties of undefined (reading 'trim')")
        );
        assert_eq!(
            r.stderr_tails[1].lines.last().map(String::as_str),
            Some("KeyError: 'EMAIL'")
        );
        assert_eq!(r.stderr_tails[1].error_line, None);
    }

    #[test]
    fn a_long_log_is_read_from_its_end_and_lines_are_made_printable() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("w.err");
        let mut text = "x".repeat(40_000);
        text.push_str("\n\x1b[31mred\x1b[0m\tand\r\n");
        text.push_str(&"é".repeat(300));
        std::fs::write(&path, text).unwrap();
        let lines = tail(&path, 0, u64::MAX).unwrap();
        assert_eq!(
            lines.len(),
            2,
            "the cut 40,000-byte line is left out: {lines:?}"
        );
        assert_eq!(lines[0], "[31mred[0m and");
        assert_eq!(lines[1].chars().count(), LINE_CHARS);
        assert!(lines[1].ends_with("é…"));
        assert!(tail(&dir.path().join("none"), 0, u64::MAX).is_err());
        // Only the bytes asked for.
        let text = "one\ntwo\nthree\n";
        std::fs::write(&path, text).unwrap();
        assert_eq!(tail(&path, 4, 8).unwrap(), ["two"]);
    }
}
