//! `ackbench run --record`: a streamed run writes the same report as the same run keeping its
//! full record; `stream` is refused, with the reason and exit 2, where a run cannot stream.

use std::fs;
use std::path::Path;

use crate::common::{refused, root, run_profile, temp_profile};

/// Every file of a report folder with its bytes, lines that give the wall time blanked (`wall_s`,
/// "s of wall time", "s (wall)": what differs between two runs of one profile), the folder's own
/// path (the reproduce command's `--out`) written `OUT` and its `--record` left out (what the two
/// runs were asked to differ in), the marker left out.
fn files(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let own = dir.display().to_string();
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in fs::read_dir(&d).expect("report folder") {
            let p = entry.expect("entry").path();
            if p.is_dir() {
                stack.push(p);
                continue;
            }
            let name = p.strip_prefix(dir).expect("below").display().to_string();
            if name == ".ackbench-report" {
                continue;
            }
            let bytes = fs::read(&p).expect("file");
            let bytes = match String::from_utf8(bytes.clone()) {
                Ok(text) => text
                    .replace(&own, "OUT")
                    .replace(" --record full", "")
                    .replace(" --record stream", "")
                    .lines()
                    .map(|l| if l.contains("wall") { "wall" } else { l })
                    .collect::<Vec<_>>()
                    .join("\n")
                    .into_bytes(),
                Err(_) => bytes,
            };
            out.push((name, bytes));
        }
    }
    out.sort();
    out
}

#[test]
fn a_streamed_run_writes_the_report_its_full_record_writes() {
    // The Thursday incident (108 orders, 212 deliveries, a DLQ) and the redrive after it, each
    // run both ways: every file the same but wall time. A PNG embeds no time. The capacity run
    // reads its steps from the time series of each (the streamed grid, or the full record
    // sampled at the step boundaries).
    for profile in [
        "marlow-thursday",
        "redrive-after-incident",
        "poison-friday",
        "capacity",
    ] {
        let path = root().join(format!("profiles/{profile}.yaml"));
        let full = run_profile(&path, &["--record", "full", "--quiet"]);
        let streamed = run_profile(&path, &["--record", "stream", "--quiet"]);
        assert_eq!(
            full.code(),
            streamed.code(),
            "{profile}: {}",
            streamed.stderr()
        );
        let (a, b) = (files(full.dir.path()), files(streamed.dir.path()));
        let names = |f: &[(String, Vec<u8>)]| f.iter().map(|(n, _)| n.clone()).collect::<Vec<_>>();
        assert_eq!(names(&a), names(&b), "{profile}: the same files");
        for ((name, x), (_, y)) in a.iter().zip(&b) {
            assert!(
                x == y,
                "{profile}: {name} differs between --record full and stream"
            );
        }
    }
}

#[test]
fn stream_is_refused_where_a_run_keeps_its_full_record() {
    let profile = |p: &str| root().join(p).display().to_string();
    let thursday = profile("profiles/marlow-thursday.yaml");
    let err = refused(
        &["run", &thursday],
        &["--record", "stream", "--trace", "msg-3"],
    );
    assert!(
        err.contains("--record stream: --trace reads a message's events from the full record"),
        "{err}"
    );
    let producer = profile("profiles/producer-retry-window.yaml");
    let err = refused(&["run", &producer], &["--record", "stream"]);
    assert!(err.contains("models the producer's sends"), "{err}");
    let live = profile("profiles/live-thursday.yaml");
    let err = refused(&["run", &live], &["--record", "stream"]);
    assert!(err.contains("a live run keeps its full record"), "{err}");
    // 5e7 messages streamed hold about 0.7 GiB (16 B each) and pass; kept whole, 400 B each,
    // 18.6 GiB: more than a run may hold.
    let (_dir, big) = temp_profile(
        "name: big\nrun: { duration: 10m }\n\
         workload: { arrival: { every: 1us }, count: 50000000 }\n\
         consumer: { target: ack-after-work }\n",
    );
    let big = big.display().to_string();
    let err = refused(&["run", &big], &["--record", "full"]);
    assert!(
        err.contains(
            "error: --record full: workload.count: a run of this profile would hold about \
             18.6 GiB in memory (50000000 planned messages x 400 B"
        ),
        "{err}"
    );
    let err = refused(&["run", &big], &["--trace", "msg-1"]);
    assert!(
        err.contains("error: --trace (which keeps the full record): "),
        "{err}"
    );
    let err = refused(&["run", &thursday], &["--record", "some"]);
    assert!(
        err.contains("invalid value 'some' for '--record <HOW>'")
            && err.contains("[possible values: auto, full, stream]"),
        "{err}"
    );
}
