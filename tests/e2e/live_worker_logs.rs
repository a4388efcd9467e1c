//! Where a live run's workers wrote, said by the run: a consumer that crashes at once has the
//! end of its stderr quoted under the CRASHES note, on the console and in report.html, and the
//! report names the folder of the worker logs.

use crate::common::run_text;

#[test]
fn a_crashing_consumer_has_its_stderr_quoted_and_its_log_folder_named() {
    // A shell consumer that says what is wrong and exits 3, with its queue from consumer.env:
    // every start crashes; nothing is ever received.
    let profile = r#"
name: live-crash-logs
mode: live
seed: 1
run: { duration: 1s, drain: 1s, time_scale: 1 }
broker: { visibility_timeout: 30s, max_receives: 3 }
workload: { arrival: { every: 500ms }, count: 2 }
consumer:
  command: [sh, -c, 'echo "consuming $ORDERS" >&2; echo "fatal: EMAIL_API_URL is not set" >&2; exit 3']
  workers: 1
  env: { ORDERS: "${ACKBENCH_QUEUE_URL}" }
"#;
    let r = run_text(profile, &[]);
    assert_eq!(
        r.code(),
        1,
        "unfinished messages fail the run: {}",
        r.stderr()
    );
    let s = r.summary();
    let logs = &s["worker_logs"];
    let folder = logs["folder"].as_str().unwrap_or_else(|| panic!("{s}"));
    let tail = &logs["stderr_tails"][0];
    assert_eq!(
        (&tail["worker"], &tail["file"], &tail["before_last_crash"]),
        (&1.into(), &"worker-1.err".into(), &true.into()),
        "{s}"
    );
    let lines: Vec<&str> = tail["lines"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l.as_str().unwrap())
        .collect();
    assert_eq!(lines.len(), 2, "one crashed start's lines: {lines:?}");
    assert!(
        lines[0].starts_with("consuming http://127.0.0.1:"),
        "{lines:?}"
    );
    assert_eq!(lines[1], "fatal: EMAIL_API_URL is not set");
    // The console: the quote under the CRASHES note, and the folder.
    let out = r.stdout();
    assert!(
        out.contains(
            "  the last lines of worker-1.err, before its last crash:\n    | consuming http://"
        ) && out.contains("\n    | fatal: EMAIL_API_URL is not set\nNEVER RAN:"),
        "{out}"
    );
    assert!(
        out.contains(&format!(
            "WORKER LOGS: each worker's stdout and stderr are in {folder} (worker-N.out, \
             worker-N.err)."
        )),
        "{out}"
    );
    // The files are where the report says.
    let err = std::fs::read_to_string(std::path::Path::new(folder).join("worker-1.err")).unwrap();
    assert!(err.ends_with("fatal: EMAIL_API_URL is not set\n"), "{err}");
    // report.html: the same quote, escaped, and the folder.
    let html = std::fs::read_to_string(r.dir.path().join("report.html")).unwrap();
    assert!(
        html.contains("\nfatal: EMAIL_API_URL is not set</pre>") && html.contains(folder),
        "{html}"
    );
}
