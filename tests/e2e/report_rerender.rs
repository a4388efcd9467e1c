//! A report folder renders again from its recorded data alone: delete the charts, report.html,
//! junit.xml and summary.md of a run, re-render, and they come back byte for byte (PNGs come
//! back as valid images).

use std::fs;

use ackbench::internals::report::{self, Format};

use crate::report_run::write_report;

#[test]
fn deleted_renderings_come_back_identical() {
    let tmp = tempfile::tempdir().expect("temp dir");
    let dir = tmp.path().join("report");
    let written = write_report("marlow-thursday", &["workload.count=20"], &dir);
    let renderings: Vec<_> = written
        .iter()
        .filter(|p| {
            p.starts_with(dir.join("charts"))
                || ["report.html", "junit.xml", "summary.md"]
                    .iter()
                    .any(|n| p.ends_with(n))
        })
        .map(|p| (p.clone(), fs::read(p).expect("rendering written")))
        .collect();
    assert_eq!(
        renderings.len(),
        15,
        "6 charts x 2 formats, html, junit, md"
    );
    fs::remove_dir_all(dir.join("charts")).expect("charts removed");
    for n in ["report.html", "junit.xml", "summary.md"] {
        fs::remove_file(dir.join(n)).expect("rendering removed");
    }

    let again = report::rerender(
        &dir,
        &[
            Format::Png,
            Format::Svg,
            Format::Html,
            Format::Junit,
            Format::Md,
        ],
    )
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(again.len(), renderings.len());
    for (path, bytes) in &renderings {
        let now =
            fs::read(path).unwrap_or_else(|e| panic!("{} not re-rendered: {e}", path.display()));
        if path.extension().is_some_and(|e| e == "png") {
            assert_eq!(&now[..8], b"\x89PNG\r\n\x1a\n", "{}", path.display());
        } else {
            assert!(
                now == *bytes,
                "{} differs after re-rendering",
                path.display()
            );
        }
    }
}

#[test]
fn the_handler_latency_log_is_what_sizing_reads() {
    let tmp = tempfile::tempdir().expect("temp dir");
    let dir = tmp.path().join("report");
    write_report("marlow-thursday", &[], &dir);
    let h = report::read_latency_log(&dir.join("handler-latency.hlog"))
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(h.len(), 324, "every handler of the incident");
    assert!(
        h.value_at_quantile(0.0) > 30_000_000,
        "every handler outlived the 30 s lease (µs)"
    );
    let missing = report::read_latency_log(&dir.join("nothing.hlog"))
        .err()
        .map(|e| e.to_string());
    assert!(missing.is_some_and(|m| m.contains("nothing.hlog")));
}
