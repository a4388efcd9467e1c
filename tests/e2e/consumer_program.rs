//! A live profile's `consumer.command` names a program that must exist: `check` refuses one
//! that does not (exit 2, naming `consumer.command` and the program), and so does `run`, before
//! it starts anything or writes a report folder.

use crate::common::{ackbench, refused, stderr, temp_profile};

/// A live profile on the embedded SQS endpoint whose consumer is `command`.
fn live(command: &str) -> String {
    format!(
        "name: e2e\nmode: live\nrun: {{ duration: 1s }}\nworkload: {{ arrival: {{ every: 1s }} }}\n\
         consumer: {{ command: {command} }}\n"
    )
}

#[test]
fn a_program_not_on_path_is_refused_by_check_and_run() {
    let (_dir, path) = temp_profile(&live("[pyhton3, worker.py]"));
    let path = path.display().to_string();
    let err = refused(&["check", &path], &[]);
    assert!(
        err.contains(&format!(
            "{path}: consumer.command: the program `pyhton3` was not found on PATH ("
        )),
        "{err}"
    );
    let out = tempfile::tempdir().unwrap();
    let report = out.path().join("report");
    let err = refused(&["run", &path, "--out", report.to_str().unwrap()], &[]);
    assert!(
        err.contains("the program `pyhton3` was not found on PATH"),
        "{err}"
    );
    assert!(!report.exists(), "nothing written before the refusal");
}

#[test]
fn a_relative_path_is_resolved_from_the_folder_ackbench_runs_in() {
    // The tests run ackbench from the workspace root: the folder targets/python/ is there, and
    // ./targets/python/no_such.py is not.
    let (_dir, path) = temp_profile(&live("[./targets/python/no_such.py]"));
    let path = path.display().to_string();
    let err = refused(&["check", &path], &[]);
    assert!(
        err.contains(
            "consumer.command: the program `./targets/python/no_such.py` does not exist (a path \
             with / is taken from the folder ackbench runs in, "
        ),
        "{err}"
    );
    let (_dir, path) = temp_profile(&live("[sh, -c, 'exit 0']"));
    let o = ackbench(&["check", &path.display().to_string()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
}

#[test]
fn in_sim_mode_the_command_is_not_looked_up() {
    let text = live("[pyhton3, worker.py]").replace(
        "command: [pyhton3, worker.py]",
        "command: [pyhton3, worker.py], sim: { target: ack-after-work }",
    );
    let (_dir, path) = temp_profile(&text);
    let o = ackbench(&["check", &path.display().to_string(), "--mode", "sim"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
}
