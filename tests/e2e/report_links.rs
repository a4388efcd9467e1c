//! A symbolic link planted where a report file or sub-folder goes is refused with exit 2 naming
//! it, and nothing is written through it: whatever the link points at, outside `--out`, stays
//! as it was. For `run`, `report` (re-rendering) and `size`.

use std::fs;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};

use crate::common::{ackbench, stderr, temp_profile};
use crate::report_folder::SMALL;

/// A run of [`SMALL`] into `out`; its exit code and stderr.
fn run(profile: &Path, out: &Path) -> (Option<i32>, String) {
    let o = ackbench(&[
        "run",
        &profile.display().to_string(),
        "--out",
        &out.display().to_string(),
    ]);
    (o.status.code(), stderr(&o))
}

/// A folder `r` written by a first run, in a temp folder; the profile's path.
fn first_run() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let (dir, profile) = temp_profile(SMALL);
    let out = dir.path().join("r");
    assert_eq!(run(&profile, &out).0, Some(0));
    (dir, profile, out)
}

/// Replaces file `name` of folder `out` with a link to a file outside holding "theirs"; its path.
fn plant_file_link(dir: &Path, out: &Path, name: &str) -> PathBuf {
    let outside = dir.join(format!("outside-{}", name.replace('/', "-")));
    fs::write(&outside, "theirs\n").unwrap();
    fs::remove_file(out.join(name)).unwrap();
    symlink(&outside, out.join(name)).unwrap();
    outside
}

#[test]
fn a_link_planted_where_a_report_file_goes_is_refused() {
    let (dir, profile, out) = first_run();
    let outside = plant_file_link(dir.path(), &out, "summary.json");

    let (code, err) = run(&profile, &out);
    assert_eq!(code, Some(2), "{err}");
    let named = format!("{} is a symbolic link", out.join("summary.json").display());
    assert!(err.contains(&named), "{err}");
    assert_eq!(fs::read_to_string(&outside).unwrap(), "theirs\n");
}

#[test]
fn a_link_planted_where_a_report_folder_goes_is_refused() {
    let (dir, profile, out) = first_run();
    let elsewhere = dir.path().join("elsewhere");
    fs::create_dir(&elsewhere).unwrap();
    fs::remove_dir_all(out.join("charts")).unwrap();
    symlink(&elsewhere, out.join("charts")).unwrap();

    let (code, err) = run(&profile, &out);
    assert_eq!(code, Some(2), "{err}");
    let named = format!("{} is a symbolic link", out.join("charts").display());
    assert!(err.contains(&named), "{err}");
    assert_eq!(
        fs::read_dir(&elsewhere).unwrap().count(),
        0,
        "nothing written there"
    );
}

#[test]
fn a_link_planted_where_the_marker_goes_is_refused_before_the_run() {
    let (dir, profile, out) = first_run();
    let outside = plant_file_link(dir.path(), &out, ".ackbench-report");

    let (code, err) = run(&profile, &out);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains(".ackbench-report: is a symbolic link"),
        "{err}"
    );
    assert_eq!(fs::read_to_string(&outside).unwrap(), "theirs\n");
}

#[test]
fn re_rendering_refuses_planted_links_too() {
    let (dir, _profile, out) = first_run();
    let outside = plant_file_link(dir.path(), &out, "report.html");
    let out_s = out.display().to_string();

    let o = ackbench(&["report", &out_s, "--format", "html"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let named = format!("{} is a symbolic link", out.join("report.html").display());
    assert!(stderr(&o).contains(&named), "{}", stderr(&o));
    assert_eq!(fs::read_to_string(&outside).unwrap(), "theirs\n");

    // A PNG chart: the encoder opens the file by name, so the link is looked for first.
    let elsewhere = plant_file_link(dir.path(), &out, "charts/latency.png");
    let o = ackbench(&["report", &out_s, "--format", "png"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("latency.png is a symbolic link"),
        "{}",
        stderr(&o)
    );
    assert_eq!(fs::read_to_string(&elsewhere).unwrap(), "theirs\n");
}

#[test]
fn sizing_refuses_a_link_planted_where_its_chart_goes() {
    let (dir, profile) = temp_profile(SMALL);
    let out = dir.path().join("s");
    let args = [
        "size",
        &profile.display().to_string(),
        "--out",
        &out.display().to_string(),
    ]
    .map(String::from);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let o = ackbench(&args);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let outside = plant_file_link(dir.path(), &out, "sizing.svg");

    let o = ackbench(&args);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("sizing.svg: is a symbolic link"),
        "{}",
        stderr(&o)
    );
    assert_eq!(fs::read_to_string(&outside).unwrap(), "theirs\n");
}
