//! The folders ackbench writes: checked before anything runs, marked as ackbench's, never
//! holding or deleting anyone else's files, and named after a run's overrides by default.

use std::path::Path;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use crate::common::{ackbench, stderr, stdout, temp_profile};

/// A profile of three messages that runs in well under a second.
pub const SMALL: &str = "\
name: small
run: { duration: 10s, drain: 1m }
workload:
  arrival: { every: 1s }
  count: 3
consumer: { target: ack-after-work }
provider:
  latency: { dist: fixed, value: 10ms }
";

/// Runs `ackbench ARGS...` in folder `cwd`.
fn ackbench_in(cwd: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ackbench"))
        .args(args)
        .current_dir(cwd)
        .output()
        .expect("the ackbench binary runs")
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn a_profile_named_dot_dot_by_its_file_writes_nothing() {
    // `...yaml` without `name:` would be named `..`: the report folder would be reports/..,
    // the current folder. The user's files there stay as they are.
    let cwd = tempfile::tempdir().expect("temp dir");
    std::fs::write(
        cwd.path().join("...yaml"),
        SMALL.replace("name: small\n", ""),
    )
    .unwrap();
    std::fs::write(cwd.path().join("deliveries.csv"), "mine\n").unwrap();
    let o = ackbench_in(cwd.path(), &["run", "...yaml"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("...yaml:1:1: name: the profile has no name, so it is named after its file, and the file's name gives \"..\""),
        "{}",
        stderr(&o)
    );
    let mut names: Vec<String> = std::fs::read_dir(cwd.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["...yaml", "deliveries.csv"]);
    assert_eq!(read(&cwd.path().join("deliveries.csv")), "mine\n");
}

#[test]
fn a_folder_of_someone_elses_files_is_refused_unless_forced() {
    let (dir, profile) = temp_profile(SMALL);
    let profile = profile.display().to_string();
    let theirs = dir.path().join("theirs");
    std::fs::create_dir_all(theirs.join("charts")).unwrap();
    std::fs::write(theirs.join("deliveries.csv"), "mine\n").unwrap();
    std::fs::write(theirs.join("charts").join("workers.png"), "mine\n").unwrap();
    let out = theirs.display().to_string();

    let o = ackbench(&["run", &profile, "--out", &out]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains(&format!(
            "error: --out {out}: the folder holds files ackbench did not write (it has no \
             .ackbench-report marker)"
        )),
        "{}",
        stderr(&o)
    );
    assert!(!theirs.join("summary.json").exists());

    // Forced, with 60 messages (no worker timeline): ackbench writes its files and removes
    // none of the user's, although an earlier smaller run of its own would have had them.
    let o = ackbench(&[
        "run",
        &profile,
        "--out",
        &out,
        "--force",
        "--set",
        "workload.count=60",
        "--set",
        "run.duration=60s",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(theirs.join("summary.json").is_file());
    assert!(theirs.join(".ackbench-report").is_file());
    assert_eq!(read(&theirs.join("deliveries.csv")), "mine\n");
    assert_eq!(read(&theirs.join("charts").join("workers.png")), "mine\n");
}

#[test]
fn inside_its_own_folder_ackbench_removes_only_what_it_wrote() {
    let (dir, profile) = temp_profile(SMALL);
    let profile = profile.display().to_string();
    let out = dir.path().join("r");
    let out_s = out.display().to_string();
    // 3 messages: a worker timeline (deliveries.csv, charts/workers.*).
    let o = ackbench(&["run", &profile, "--out", &out_s]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(out.join("deliveries.csv").is_file());
    assert!(read(&out.join(".ackbench-report")).contains("\"deliveries.csv\""));
    std::fs::write(out.join("charts").join("notes.png"), "mine\n").unwrap();
    // 60 messages: no timeline; ackbench's own old one goes, the user's file stays.
    let o = ackbench(&[
        "run",
        &profile,
        "--out",
        &out_s,
        "--set",
        "workload.count=60",
        "--set",
        "run.duration=60s",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        stdout(&o).contains(&format!(
            "report: {out_s} (replaced the earlier report there)"
        )),
        "{}",
        stdout(&o)
    );
    assert!(!out.join("deliveries.csv").exists());
    assert!(!out.join("charts").join("workers.png").exists());
    assert_eq!(read(&out.join("charts").join("notes.png")), "mine\n");
}

#[test]
fn an_unwritable_report_folder_is_refused_before_a_live_run_starts() {
    // /proc takes no new folders: the live run (4.5 minutes of python workers) never starts.
    let started = Instant::now();
    let o = ackbench(&[
        "run",
        "profiles/live-thursday.yaml",
        "--out",
        "/proc/ackbench-nope",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("error: --out /proc/ackbench-nope: cannot create the folder:"),
        "{}",
        stderr(&o)
    );
    assert!(started.elapsed() < Duration::from_secs(20));
    assert!(
        !stdout(&o).contains("ackbench: live-thursday"),
        "{}",
        stdout(&o)
    );
}

#[test]
fn sweep_and_size_check_their_folder_before_running() {
    for (cmd, extra) in [
        ("sweep", vec!["--vary", "broker.visibility_timeout=20s,30s"]),
        ("size", vec![]),
    ] {
        let o = ackbench(
            &[
                cmd,
                "profiles/marlow-thursday.yaml",
                "--out",
                "/proc/ackbench-nope",
            ]
            .into_iter()
            .chain(extra.iter().copied())
            .collect::<Vec<_>>(),
        );
        assert_eq!(o.status.code(), Some(2), "{cmd}: {}", stderr(&o));
        assert!(
            stderr(&o).contains("/proc/ackbench-nope: cannot create the folder:"),
            "{cmd}: {}",
            stderr(&o)
        );
        let dir = tempfile::tempdir().expect("temp dir");
        std::fs::write(dir.path().join("notes.txt"), "mine\n").unwrap();
        let out = dir.path().display().to_string();
        let o = ackbench(
            &[cmd, "profiles/marlow-thursday.yaml", "--out", &out]
                .into_iter()
                .chain(extra.iter().copied())
                .collect::<Vec<_>>(),
        );
        assert_eq!(o.status.code(), Some(2), "{cmd}: {}", stderr(&o));
        assert!(
            stderr(&o).contains("has no .ackbench-report marker), so ackbench will not write its"),
            "{cmd}: {}",
            stderr(&o)
        );
    }
}

#[test]
fn sweep_and_size_say_they_need_a_sim_profile() {
    for (cmd, extra) in [
        ("sweep", vec!["--vary", "broker.visibility_timeout=20s,30s"]),
        ("size", vec![]),
    ] {
        for (profile, why) in [
            (
                "profiles/live-thursday.yaml",
                "runs your own consumer program (consumer.command)",
            ),
            (
                "profiles/live-ingress.yaml",
                "publishes through your ingress service (workload.ingress)",
            ),
        ] {
            let dir = tempfile::tempdir().expect("temp dir");
            let out = dir.path().join("o").display().to_string();
            let o = ackbench(
                &[cmd, profile, "--out", &out]
                    .into_iter()
                    .chain(extra.iter().copied())
                    .collect::<Vec<_>>(),
            );
            assert_eq!(o.status.code(), Some(2), "{cmd} {profile}: {}", stderr(&o));
            assert!(
                stderr(&o).contains(&format!(
                    "{profile}: {cmd} runs the profile in sim mode, and this profile {why}, \
                     which only a live run can run: {cmd} needs a sim profile"
                )),
                "{cmd} {profile}: {}",
                stderr(&o)
            );
        }
    }
}

#[test]
fn trace_keys_are_checked_before_the_run() {
    let (dir, profile) = temp_profile(SMALL);
    let profile = profile.display().to_string();
    let out = dir.path().join("r");
    let out_s = out.display().to_string();
    let long = "k".repeat(300);
    for (key, words) in [
        (long.as_str(), "the key is 300 bytes long; a traced key names its file trace-KEY.txt, so it may be at most 200 bytes"),
        ("../msg-1", "a traced key names its file trace-KEY.txt, so it cannot be empty, contain /"),
        ("msg-9", "--trace msg-9: no published message has that key (keys run from msg-1 to msg-3)"),
    ] {
        let o = ackbench(&["run", &profile, "--out", &out_s, "--trace", key]);
        assert_eq!(o.status.code(), Some(2), "{key}: {}", stderr(&o));
        assert!(stderr(&o).contains(words), "{key}: {}", stderr(&o));
        // Refused before anything was written.
        assert!(!out.exists());
    }
    let o = ackbench(&["run", &profile, "--out", &out_s, "--trace", "msg-2"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(read(&out.join(".ackbench-report")).contains("\"trace-msg-2.txt\""));
}

#[test]
fn a_run_with_overrides_gets_a_report_folder_of_its_own() {
    let cwd = tempfile::tempdir().expect("temp dir");
    std::fs::write(cwd.path().join("small.yaml"), SMALL).unwrap();
    let reports = cwd.path().join("reports");

    let o = ackbench_in(cwd.path(), &["run", "small.yaml"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("report: reports/small\n"),
        "{}",
        stdout(&o)
    );

    let o = ackbench_in(
        cwd.path(),
        &[
            "run",
            "small.yaml",
            "--set",
            "consumer.target=ack-before-work",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let variant = "small+consumer.target=ack-before-work";
    assert!(
        stdout(&o).contains(&format!("report: reports/{variant}\n")),
        "{}",
        stdout(&o)
    );
    // The profile's own report is untouched: still the ack-after-work run.
    assert!(read(&reports.join("small/run.json")).contains("ack-after-work"));
    assert!(read(&reports.join(variant).join("summary.json")).contains("\"profile\""));

    // A seed other than the profile's is part of the name; the profile's own seed is not.
    let o = ackbench_in(cwd.path(), &["run", "small.yaml", "--seed", "7"]);
    assert!(
        stdout(&o).contains("report: reports/small+seed=7\n"),
        "{}",
        stdout(&o)
    );
    let o = ackbench_in(cwd.path(), &["run", "small.yaml", "--seed", "1"]);
    assert!(
        stdout(&o).contains("report: reports/small (replaced the earlier report there)\n"),
        "{}",
        stdout(&o)
    );
}

#[test]
fn the_providers_ledger_and_time_scale_are_checked_before_it_serves() {
    let started = Instant::now();
    let o = ackbench(&[
        "provider",
        "profiles/healthy.yaml",
        "--listen",
        "127.0.0.1:0",
        "--ledger",
        "/proc/ackbench-nope/ledger.csv",
        "--for",
        "30s",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("error: --ledger /proc/ackbench-nope/ledger.csv: cannot write it:"),
        "{}",
        stderr(&o)
    );
    assert!(started.elapsed() < Duration::from_secs(20));
    let o = ackbench(&[
        "provider",
        "profiles/healthy.yaml",
        "--listen",
        "127.0.0.1:0",
        "--time-scale",
        "1e-300",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("--time-scale 1e-300: must be from 0.001 to 1"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn a_file_where_the_report_folder_should_be_is_refused() {
    let (dir, profile) = temp_profile(SMALL);
    let taken = dir.path().join("taken");
    std::fs::write(&taken, "mine\n").unwrap();
    let out = taken.display().to_string();
    let o = ackbench(&[
        "run",
        &profile.display().to_string(),
        "--out",
        &out,
        "--force",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains(&format!("error: --out {out}: exists and is not a folder")),
        "{}",
        stderr(&o)
    );
    assert_eq!(read(&taken), "mine\n");
}
