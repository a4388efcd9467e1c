//! Where a live run's worker processes wrote their output, and the last lines each wrote to
//! stderr, read by the runner at the end of the run: what a report quotes when a worker crashed
//! or the consumer never ran, without reading a file itself.

use serde::{Deserialize, Serialize};

use super::WorkerId;

/// The worker logs of a live run whose consumer is a command (`consumer.command`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WorkerLogsRecord {
    /// The folder of the logs: `worker-N.out` and `worker-N.err` for each worker N.
    pub folder: String,
    /// The last lines of each worker's stderr, by worker; a worker whose stderr is empty is
    /// left out.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stderr_tails: Vec<StderrTail>,
}

/// The last lines one worker wrote to stderr.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StderrTail {
    pub worker: WorkerId,
    /// The file, in [`WorkerLogsRecord::folder`].
    pub file: String,
    /// True when the worker crashed: the lines are the last its last crashed incarnation wrote
    /// (the restarted worker may have written more). False: the last its latest incarnation
    /// wrote before the run stopped it. Of the whole file when that incarnation wrote nothing.
    pub before_last_crash: bool,
    /// At most 5 lines, blank ones left out, each at most 240 characters.
    pub lines: Vec<String>,
    /// The line of the same stderr that names the error (`TypeError: ...`, Python's last
    /// `XxxError: ...`), when it is not among `lines`: a long stack trace ends far below it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_line: Option<String>,
}

impl WorkerLogsRecord {
    /// Worker `w`'s stderr tail, if it wrote anything there.
    pub fn stderr_of(&self, w: WorkerId) -> Option<&StderrTail> {
        self.stderr_tails.iter().find(|t| t.worker == w)
    }
}
