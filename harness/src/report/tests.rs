//! The report folder of whole seeded sim runs: golden summary.md and junit.xml, charts that are
//! real images, re-rendering to the same bytes, and empty runs that render without panicking.

use std::fs;
use std::path::{Path, PathBuf};

use super::console::table;
use super::*;
use crate::metrics::Recording;
use crate::metrics::{self, Metrics};
use crate::profile::{self, Scenario};
use crate::record::{nanos, RunRecord};
use crate::runner;

const THURSDAY: &str = include_str!("../../../profiles/marlow-thursday.yaml");
const POISON: &str = include_str!("../../../profiles/poison-friday.yaml");
const KAFKA: &str = include_str!("../../../profiles/brokers/kafka-thursday.yaml");

/// A finished run, as `ackbench run` holds it before writing the report.
struct Run {
    scenario: Scenario,
    record: Recording,
    summary: Summary,
    metrics: Metrics,
    samples: Vec<Sample>,
    every: u64,
    text: String,
    command: String,
}

impl Run {
    /// Runs profile `text` with `sets` in process; the wall time is fixed so bytes are golden.
    fn of(name: &str, text: &str, sets: &[&str]) -> Run {
        let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
        let scenario = profile::load_str(name, text, &sets).unwrap_or_else(|e| panic!("{e}"));
        let record = runner::run(&scenario).unwrap_or_else(|e| panic!("{e}"));
        Run::from_record(scenario, record, text)
    }

    fn from_record(scenario: Scenario, record: impl Into<Recording>, text: &str) -> Run {
        let record = record.into();
        let info = RunInfo {
            profile: scenario.name.clone(),
            mode: "sim".into(),
            seed: scenario.seed,
            wall_s: 0.25,
        };
        let (summary, metrics) = summarise_with_metrics(&info, &record, &scenario.budgets);
        let every = metrics::default_interval(&record);
        let samples = metrics::timeseries(&record, every);
        let command = format!(
            "ackbench run profiles/{}.yaml --seed {}",
            scenario.name, scenario.seed
        );
        Run {
            scenario,
            record,
            summary,
            metrics,
            samples,
            every,
            text: text.to_string(),
            command,
        }
    }

    fn outputs(&self) -> RunOutputs<'_> {
        RunOutputs {
            scenario: &self.scenario,
            record: &self.record,
            metrics: &self.metrics,
            summary: &self.summary,
            samples: &self.samples,
            sample_every: self.every,
            profile_text: &self.text,
            command: &self.command,
        }
    }

    fn write(&self, dir: &Path, formats: &[Format]) -> Vec<PathBuf> {
        write_all(dir, &self.outputs(), formats).unwrap_or_else(|e| panic!("{e}"))
    }
}

fn tempdir() -> tempfile::TempDir {
    tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"))
}

fn read(path: &Path) -> Vec<u8> {
    fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn text(path: &Path) -> String {
    String::from_utf8_lossy(&read(path)).into_owned()
}

/// A PNG's width and height from its IHDR chunk, after checking its signature.
fn png_size(bytes: &[u8]) -> (u32, u32) {
    assert!(bytes.len() > 24, "too short for a PNG");
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n", "PNG signature");
    assert_eq!(&bytes[12..16], b"IHDR", "first chunk is IHDR");
    let be = |b: &[u8]| u32::from_be_bytes([b[0], b[1], b[2], b[3]]);
    (be(&bytes[16..20]), be(&bytes[20..24]))
}

#[test]
fn summary_md_of_the_thursday_incident() {
    let run = Run::of("marlow-thursday.yaml", THURSDAY, &[]);
    let dir = tempdir();
    run.write(dir.path(), &[Format::Md, Format::Junit]);
    insta::assert_snapshot!(
        "marlow_thursday_summary_md",
        text(&dir.path().join("summary.md"))
    );
    insta::assert_snapshot!(
        "marlow_thursday_junit_xml",
        text(&dir.path().join("junit.xml"))
    );
}

#[test]
fn summary_md_of_a_poison_run() {
    let run = Run::of(
        "poison-friday.yaml",
        POISON,
        &["workload.count=20", "workload.poison.first=4"],
    );
    let dir = tempdir();
    run.write(dir.path(), &[Format::Md, Format::Junit]);
    insta::assert_snapshot!(
        "poison_friday_summary_md",
        text(&dir.path().join("summary.md"))
    );
    insta::assert_snapshot!(
        "poison_friday_junit_xml",
        text(&dir.path().join("junit.xml"))
    );
}

#[test]
fn the_kafka_thursday_shows_its_rebalances_and_no_hold_ratio() {
    // The profile's header: generation 1 at 3 s (both workers join), generation 2 at 443 s
    // (worker 1 past max.poll.interval.ms, worker 2 alone), generation 3 at 723 s (worker 1
    // back as a new member). The 8 duplicates (orders 13-20) all come between 443 and 723 s:
    // worker 2's effects from 443 s, worker 1's fenced batch from 458 s.
    let run = Run::of("kafka-thursday.yaml", KAFKA, &[]);
    let log: Vec<(f64, u32, u32, u64)> = run
        .summary
        .rebalance_log
        .iter()
        .map(|r| (r.at_s, r.generation, r.members, r.processed_twice))
        .collect();
    assert_eq!(log, [(3.0, 1, 2, 0), (443.0, 2, 1, 8), (723.0, 3, 2, 0)]);
    let dir = tempdir();
    run.write(dir.path(), &[Format::Md, Format::Html]);
    let md = text(&dir.path().join("summary.md"));
    insta::assert_snapshot!("kafka_thursday_summary_md", md);
    let console = table(&run.summary);
    insta::assert_snapshot!("kafka_thursday_console", console);
    for page in [&md, &console, &text(&dir.path().join("report.html"))] {
        assert!(!page.contains("time held before settling"), "{page}");
        assert!(page.contains("no lease per record"), "{page}");
        assert!(page.contains("max.poll.interval.ms exceeded"), "{page}");
    }
}

#[test]
fn every_chart_is_a_real_image_with_its_title() {
    let run = Run::of("marlow-thursday.yaml", THURSDAY, &["workload.count=12"]);
    let dir = tempdir();
    let written = run.write(dir.path(), Format::ALL);
    let data = ReportData::load(dir.path()).unwrap_or_else(|e| panic!("{e}"));
    for name in ["latency", "done", "effects", "dlq", "inflight", "workers"] {
        let png = charts::path(dir.path(), name, "png");
        let svg = charts::path(dir.path(), name, "svg");
        assert!(written.contains(&png) && written.contains(&svg), "{name}");
        let bytes = read(&png);
        assert!(bytes.len() > 20_000, "{name}.png is {} bytes", bytes.len());
        let (w, h) = png_size(&bytes);
        assert_eq!(w, 1000, "{name}.png width");
        assert!((400..=2400).contains(&h), "{name}.png height {h}");
        let svg = text(&svg);
        assert!(svg.len() > 5_000, "{name}.svg is {} bytes", svg.len());
        assert!(svg.starts_with("<svg"), "{name}.svg");
        let title = data
            .svg_charts()
            .unwrap_or_default()
            .iter()
            .find(|c| c.name == name)
            .map(|c| c.title.clone())
            .unwrap_or_default();
        assert!(title.starts_with("marlow-thursday: "), "{title}");
        assert!(
            svg.contains(&format!(">\n{title}\n</text>")),
            "{name}.svg has its title"
        );
    }
    let html = text(&dir.path().join("report.html"));
    assert_eq!(html.matches("<svg").count(), 6);
    assert!(!html.contains("<script"));
    assert!(
        !html.contains("http://")
            || html.matches("http://").count()
                == html.matches("xmlns=\"http://www.w3.org/2000/svg\"").count()
    );
}

#[test]
fn the_latency_chart_says_every_thursday_handler_outlived_its_lease() {
    let run = Run::of("marlow-thursday.yaml", THURSDAY, &[]);
    let dir = tempdir();
    run.write(dir.path(), &[Format::Svg]);
    let svg = text(&charts::path(dir.path(), "latency", "svg"));
    assert!(
        svg.contains(
            "324 of 324 handlers (100%) outlived the lease they held: 216 redelivered while \
             still working, 108 dead-lettered"
        ),
        "{svg}"
    );
    let dlq = text(&charts::path(dir.path(), "dlq", "svg"));
    assert!(dlq.contains("108 in the DLQ at the end: 108 with effect"));
    // 108 messages: no worker timeline.
    assert!(!charts::path(dir.path(), "workers", "svg").exists());
    assert!(!dir.path().join(deliveries::FILE).exists());
}

#[test]
fn rerendering_gives_the_same_bytes() {
    let run = Run::of("marlow-thursday.yaml", THURSDAY, &["workload.count=12"]);
    let dir = tempdir();
    let written = run.write(dir.path(), Format::ALL);
    let before: Vec<(PathBuf, Vec<u8>)> = written.iter().map(|p| (p.clone(), read(p))).collect();
    // Every rendering goes; the recorded data stays.
    fs::remove_dir_all(dir.path().join(charts::DIR)).unwrap_or_else(|e| panic!("{e}"));
    for name in [html::FILE, junit::FILE, markdown::FILE] {
        fs::remove_file(dir.path().join(name)).unwrap_or_else(|e| panic!("{e}"));
    }
    let again = rerender(dir.path(), Format::ALL).unwrap_or_else(|e| panic!("{e}"));
    for (p, bytes) in &before {
        let ext = p.extension().and_then(|e| e.to_str()).unwrap_or_default();
        if ext == "png" {
            assert!(again.contains(p), "{} re-rendered", p.display());
            png_size(&read(p));
        } else {
            assert!(
                read(p) == *bytes,
                "{} differs after re-rendering",
                p.display()
            );
        }
    }
}

#[test]
fn empty_runs_render_without_panicking() {
    // No messages, no effects, no DLQ, no latency; and a run that published nothing at all.
    let scenario = profile::load_str("empty.yaml", THURSDAY, &[]).unwrap_or_else(|e| panic!("{e}"));
    for record in [
        RunRecord::default(),
        RunRecord {
            end: nanos(std::time::Duration::from_secs(60)),
            lease: nanos(std::time::Duration::from_secs(30)),
            workers: 2,
            ..RunRecord::default()
        },
    ] {
        let run = Run::from_record(scenario.clone(), record, "name: empty\n");
        let dir = tempdir();
        let written = run.write(dir.path(), Format::ALL);
        assert!(written.iter().any(|p| p.ends_with("charts/workers.png")));
        let md = text(&dir.path().join("summary.md"));
        assert!(
            md.contains("| 0 | 0 | 0 | 0 | 0 | 0 | 0 | 0 (0 / 0) | 0 | 0 / 0 |"),
            "{md}"
        );
        let latency = text(&charts::path(dir.path(), "latency", "svg"));
        assert!(latency.contains("No handler finished"));
    }
}

#[test]
fn text_from_the_profile_is_escaped_everywhere() {
    let text = THURSDAY.replace(
        "description: Email provider answers in 31-40 s for 90 minutes; ack after the work.",
        "description: \"<script>alert('x')</script> & *bold* | pipe\"",
    );
    let run = Run::of("marlow-thursday.yaml", &text, &["workload.count=3"]);
    let dir = tempdir();
    run.write(dir.path(), &[Format::Html, Format::Md]);
    let html = self::text(&dir.path().join("report.html"));
    assert!(html.contains("&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; *bold* | pipe"));
    assert!(!html.contains("<script"));
}

#[test]
fn a_folder_without_its_recorded_data_names_the_missing_file() {
    let dir = tempdir();
    let err = rerender(dir.path(), &[Format::Html]).err();
    let err = err.map(|e| e.to_string()).unwrap_or_default();
    assert!(err.contains("run.json is missing"), "{err}");
    fs::write(dir.path().join("run.json"), "{}").unwrap_or_else(|e| panic!("{e}"));
    let err = rerender(dir.path(), &[Format::Html]).err();
    assert!(
        matches!(
            err,
            Some(ReportError::Invalid {
                what: "run.json",
                ..
            })
        ),
        "{err:?}"
    );
}

#[test]
fn a_larger_run_removes_the_worker_timeline_of_a_smaller_one() {
    let dir = tempdir();
    Run::of("marlow-thursday.yaml", THURSDAY, &["workload.count=3"]).write(dir.path(), Format::ALL);
    assert!(dir.path().join(deliveries::FILE).exists());
    Run::of("marlow-thursday.yaml", THURSDAY, &["workload.count=60"])
        .write(dir.path(), Format::ALL);
    assert!(!dir.path().join(deliveries::FILE).exists());
    assert!(!charts::path(dir.path(), "workers", "png").exists());
    assert!(!charts::path(dir.path(), "workers", "svg").exists());
}

#[test]
fn the_handler_latency_log_reads_back() {
    let run = Run::of("marlow-thursday.yaml", THURSDAY, &[]);
    let dir = tempdir();
    run.write(dir.path(), &[]);
    let h = read_latency_log(&dir.path().join(hlog::HANDLER_LATENCY_LOG))
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(h, run.metrics.latencies.handler.histogram);
    assert_eq!(h.len(), 324);
}

#[test]
fn no_system_font_library_is_linked() {
    // Text is drawn with the embedded font (ab_glyph): nothing pulls in font-kit, fontconfig or
    // freetype.
    let lock = include_str!("../../../Cargo.lock");
    for name in [
        "font-kit",
        "yeslogic-fontconfig-sys",
        "freetype-sys",
        "servo-fontconfig",
    ] {
        assert!(
            !lock.contains(&format!("name = \"{name}\"")),
            "{name} is in Cargo.lock"
        );
    }
    assert!(charts::font::register());
}

#[test]
fn the_consumer_clock_is_kept_in_summary_json_and_said_in_every_report() {
    // A record whose consumer programs ran on a clock asked x20 and measured x19.96: summary.json
    // keeps the record as it is, and the console, report.md, report.html and junit.xml say it
    // in one note, the speeds to two decimals. The same folder re-renders the same bytes.
    let sim = Run::of("marlow-thursday.yaml", THURSDAY, &["workload.count=3"]);
    let mut record = sim.record.clone();
    record.consumer_clock = Some(crate::record::ConsumerClockRecord {
        clock: "scaled".into(),
        speed: Some(20.0),
        measured: Some(19.9612),
        note: None,
    });
    let run = Run::from_record(sim.scenario.clone(), record, THURSDAY);
    let note = "CONSUMER CLOCK: scaled x20 (measured x19.96).";
    assert!(words::notes(&run.summary).iter().any(|n| n.text == note));
    let dir = tempdir();
    run.write(dir.path(), Format::ALL);
    let json: serde_json::Value =
        serde_json::from_str(&text(&dir.path().join("summary.json"))).unwrap();
    assert_eq!(
        json["consumer_clock"],
        serde_json::json!({"clock": "scaled", "speed": 20.0, "measured": 19.9612})
    );
    for name in [html::FILE, junit::FILE, markdown::FILE] {
        let t = text(&dir.path().join(name));
        assert!(
            t.contains("CONSUMER CLOCK") && t.contains("scaled x20 (measured x19.96)"),
            "{name}"
        );
    }
    let html_before = read(&dir.path().join(html::FILE));
    fs::remove_file(dir.path().join(html::FILE)).unwrap();
    rerender(dir.path(), &[Format::Html]).unwrap_or_else(|e| panic!("{e}"));
    assert!(read(&dir.path().join(html::FILE)) == html_before);

    // A compressed run whose consumer stayed on the real clock says why; a sim run, nothing.
    let mut real = sim.record.clone();
    real.consumer_clock = Some(crate::record::ConsumerClockRecord {
        clock: "real".into(),
        speed: None,
        measured: None,
        note: Some("libfaketime is not installed".into()),
    });
    let run = Run::from_record(sim.scenario.clone(), real, THURSDAY);
    assert!(words::notes(&run.summary)
        .iter()
        .any(|n| n.text == "CONSUMER CLOCK: real: libfaketime is not installed."));
    assert!(!words::notes(&sim.summary)
        .iter()
        .any(|n| n.text.starts_with("CONSUMER CLOCK")));
}

#[test]
fn worker_logs_are_kept_in_summary_json_and_quoted_in_every_report() {
    // A record whose worker 2 crashed after writing a traceback: summary.json keeps the folder
    // and the tail as recorded; every report names the folder and quotes the tail under the
    // CRASHES note, escaped for its format; the folder re-renders the same bytes.
    use crate::record::{Event, EventKind, StderrTail, WorkerExit, WorkerLogsRecord};
    let sim = Run::of("marlow-thursday.yaml", THURSDAY, &["workload.count=3"]);
    let mut record = sim.record.record.clone();
    record.events.push(Event {
        at: record.end,
        kind: EventKind::WorkerCrashed {
            worker: 2,
            exit: WorkerExit::Status(3),
        },
    });
    let last = "KeyError: <EMAIL_API_URL> *not* set | x";
    record.worker_logs = Some(WorkerLogsRecord {
        folder: "/tmp/ackbench-live-42/logs".into(),
        stderr_tails: vec![StderrTail {
            worker: 2,
            file: "worker-2.err".into(),
            before_last_crash: true,
            lines: vec!["Traceback (most recent call last):".into(), last.into()],
            error_line: None,
        }],
    });
    let run = Run::from_record(sim.scenario.clone(), record, THURSDAY);
    let table = console::table(&run.summary);
    assert!(
        table.contains(&format!(
            "not by a kill rule: worker 2 at {:.3} s (exit status 3).\n  the last lines of \
             worker-2.err, before its last crash:\n    | Traceback (most recent call last):\n    \
             | {last}\n",
            run.summary.virtual_s
        )),
        "{table}"
    );
    let folder = "WORKER LOGS: each worker's stdout and stderr are in /tmp/ackbench-live-42/logs \
                  (worker-N.out, worker-N.err).";
    assert!(table.contains(folder), "{table}");

    let dir = tempdir();
    run.write(dir.path(), Format::ALL);
    let json: serde_json::Value =
        serde_json::from_str(&text(&dir.path().join("summary.json"))).unwrap();
    assert_eq!(
        json["worker_logs"],
        serde_json::json!({
            "folder": "/tmp/ackbench-live-42/logs",
            "stderr_tails": [{
                "worker": 2,
                "file": "worker-2.err",
                "before_last_crash": true,
                "lines": ["Traceback (most recent call last):", last],
            }],
        })
    );
    let html = text(&dir.path().join(html::FILE));
    assert!(
        html.contains(
            "<pre class=\"quote\">Traceback (most recent call last):\nKeyError: \
             &lt;EMAIL_API_URL&gt; *not* set | x</pre>"
        ),
        "{html}"
    );
    assert!(html.contains("/tmp/ackbench-live-42/logs (worker-N.out, worker-N.err)."));
    let md = text(&dir.path().join(markdown::FILE));
    assert!(md.contains(&format!(">     {last}\n")), "{md}");
    assert!(md.contains("/tmp/ackbench-live-42/logs"), "{md}");
    let junit = text(&dir.path().join(junit::FILE));
    assert!(
        junit.contains("    | KeyError: &lt;EMAIL_API_URL&gt;"),
        "{junit}"
    );

    let html_before = read(&dir.path().join(html::FILE));
    fs::remove_file(dir.path().join(html::FILE)).unwrap();
    rerender(dir.path(), &[Format::Html]).unwrap_or_else(|e| panic!("{e}"));
    assert!(read(&dir.path().join(html::FILE)) == html_before);
    // A sim run has no worker logs: no note names a folder.
    assert!(!console::table(&sim.summary).contains("WORKER LOGS"));
}
