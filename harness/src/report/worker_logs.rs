//! What the reports say of a live run's worker logs, from the record alone: the folder they
//! are in (a `WORKER LOGS` note), and the last lines of the stderr of the workers a `CRASHES`
//! or `NEVER RAN` note is about, quoted under that note: with the line naming the error above
//! them, and `…` between, when that line is further up (a Node stack trace's reason).

use super::note::Quote;
use super::summary::Summary;
use crate::record::{WorkerId, WorkerLogsRecord};

/// The most different stderr tails one note quotes (workers whose tails are the same share one).
pub(crate) const QUOTED: usize = 3;

/// `WORKER LOGS: ...`: where a run with worker processes left their output.
pub(crate) fn folder_note(s: &Summary) -> Option<String> {
    let logs = s.worker_logs.as_ref()?;
    Some(format!(
        "WORKER LOGS: each worker's stdout and stderr are in {} (worker-N.out, worker-N.err).",
        logs.folder
    ))
}

/// The stderr tails of the workers that crashed, in the order of their first crash.
pub(crate) fn crash_quotes(s: &Summary) -> Vec<Quote> {
    let Some(logs) = &s.worker_logs else {
        return Vec::new();
    };
    let mut workers: Vec<WorkerId> = Vec::new();
    for c in &s.crashes {
        if !workers.contains(&c.worker) {
            workers.push(c.worker);
        }
    }
    quotes(logs, &workers)
}

/// The stderr tails of every worker, for a consumer that never ran; none when it crashed (the
/// `CRASHES` note quotes them).
pub(crate) fn never_ran_quotes(s: &Summary) -> Vec<Quote> {
    match &s.worker_logs {
        Some(logs) if s.crashes.is_empty() => {
            let workers: Vec<WorkerId> = logs.stderr_tails.iter().map(|t| t.worker).collect();
            quotes(logs, &workers)
        }
        _ => Vec::new(),
    }
}

/// The tails of `workers` that wrote to stderr, the same lines quoted once (naming every file
/// that ends so), at most [`QUOTED`] of them.
fn quotes(logs: &WorkerLogsRecord, workers: &[WorkerId]) -> Vec<Quote> {
    let mut groups: Vec<(Vec<&str>, Vec<String>, bool, bool)> = Vec::new();
    for tail in workers.iter().filter_map(|&w| logs.stderr_of(w)) {
        let mut lines = Vec::new();
        if let Some(error) = &tail.error_line {
            lines.push(error.clone());
            lines.push("…".to_string());
        }
        lines.extend(tail.lines.iter().cloned());
        match groups.iter_mut().find(|(_, l, _, _)| *l == lines) {
            Some((files, _, _, _)) => files.push(&tail.file),
            None => groups.push((
                vec![&tail.file],
                lines,
                tail.before_last_crash,
                tail.error_line.is_some(),
            )),
        }
    }
    groups
        .into_iter()
        .take(QUOTED)
        .map(|(files, lines, before_crash, error)| {
            let what = if error {
                "the error's line and the last lines"
            } else {
                "the last lines"
            };
            let mut source = format!("{what} of {}", files[0]);
            if before_crash {
                source.push_str(", before its last crash");
            }
            if files.len() > 1 {
                source.push_str(&format!(" (the same in {})", files[1..].join(", ")));
            }
            Quote { source, lines }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::Crash;
    use crate::record::StderrTail;

    fn tail(worker: WorkerId, lines: &[&str], before_last_crash: bool) -> StderrTail {
        StderrTail {
            worker,
            file: format!("worker-{worker}.err"),
            before_last_crash,
            lines: lines.iter().map(|l| l.to_string()).collect(),
            error_line: None,
        }
    }

    fn crash(worker: WorkerId, at_s: f64) -> Crash {
        Crash {
            worker,
            at_s,
            exit: "exit status 1".into(),
        }
    }

    /// The summary of a run that recorded nothing.
    fn empty() -> Summary {
        let info = crate::report::summary::RunInfo {
            profile: "p".into(),
            mode: "live".into(),
            seed: 1,
            wall_s: 0.0,
        };
        let record = crate::record::RunRecord::default();
        Summary::new(&info, &crate::metrics::analyse(&record, 0), Vec::new())
    }

    fn summary(tails: Vec<StderrTail>, crashes: Vec<Crash>) -> Summary {
        let mut s = empty();
        s.worker_logs = Some(WorkerLogsRecord {
            folder: "/tmp/ackbench-live-7/logs".into(),
            stderr_tails: tails,
        });
        s.crashes = crashes;
        s
    }

    #[test]
    fn the_folder_is_named_for_a_run_with_worker_processes_only() {
        let s = summary(Vec::new(), Vec::new());
        assert_eq!(
            folder_note(&s).as_deref(),
            Some(
                "WORKER LOGS: each worker's stdout and stderr are in /tmp/ackbench-live-7/logs \
                 (worker-N.out, worker-N.err)."
            )
        );
        assert_eq!(folder_note(&empty()), None);
    }

    #[test]
    fn crashed_workers_are_quoted_once_per_different_tail_in_crash_order() {
        let boom = [
            "Traceback (most recent call last):",
            "KeyError: 'EMAIL_API_URL'",
        ];
        let s = summary(
            vec![
                tail(1, &boom, true),
                tail(2, &["quiet"], false),
                tail(3, &boom, true),
                tail(4, &["other"], true),
            ],
            vec![crash(3, 0.5), crash(1, 0.6), crash(3, 0.9), crash(4, 1.0)],
        );
        let q = crash_quotes(&s);
        assert_eq!(q.len(), 2);
        assert_eq!(
            q[0].source,
            "the last lines of worker-3.err, before its last crash (the same in worker-1.err)"
        );
        assert_eq!(q[0].lines, boom);
        assert_eq!(
            q[1].source,
            "the last lines of worker-4.err, before its last crash"
        );
        // The consumer crashed: the NEVER RAN note leaves the quoting to CRASHES.
        assert!(never_ran_quotes(&s).is_empty());
    }

    #[test]
    fn the_errors_line_is_quoted_above_the_last_lines_when_they_miss_it() {
        // Node: the reason is 8 lines above the last 5 (frames and the version).
        let mut node = tail(
            2,
            &[
                "    at Module.load (node:internal/modules/cjs/loader:1203:32)",
                "Node.js v20.20.0",
            ],
            true,
        );
        node.error_line = Some("TypeError: Cannot read properties of undefined".into());
        let s = summary(vec![node], vec![crash(2, 0.5)]);
        let q = crash_quotes(&s);
        assert_eq!(
            q[0].source,
            "the error's line and the last lines of worker-2.err, before its last crash"
        );
        assert_eq!(
            q[0].lines,
            [
                "TypeError: Cannot read properties of undefined",
                "…",
                "    at Module.load (node:internal/modules/cjs/loader:1203:32)",
                "Node.js v20.20.0"
            ]
        );
        let note = crate::report::notes::notes(&s)
            .into_iter()
            .find(|n| n.text.starts_with("CRASHES"))
            .unwrap();
        assert!(
            note.plain().contains(
                "\n  the error's line and the last lines of worker-2.err, before its last crash:\n    \
                 | TypeError: Cannot read properties of undefined\n    | …\n    |     at Module.load"
            ),
            "{}",
            note.plain()
        );
    }

    #[test]
    fn a_consumer_that_never_ran_without_crashing_is_quoted_from_every_worker() {
        let s = summary(
            (1..=5)
                .map(|w| tail(w, &[&format!("retrying {w}")], false))
                .collect(),
            Vec::new(),
        );
        let q = never_ran_quotes(&s);
        assert_eq!(q.len(), QUOTED);
        assert_eq!(q[0].source, "the last lines of worker-1.err");
        assert_eq!(q[2].lines, ["retrying 3"]);
        assert!(crash_quotes(&s).is_empty());
    }
}
