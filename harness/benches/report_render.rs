//! Report rendering against the run it reports: how much writing the whole report folder (every
//! format: summary.json, timeseries.csv, run.json, latency logs, charts as PNG and SVG,
//! report.html, junit.xml, summary.md) adds to a run's wall time.
//!
//! `cargo bench -p ackbench --bench report_render` (release build); `-- 100000` runs one size.
//! Columns: the run; analysing its record as `ackbench run` does (`report::analyse_run`: summary
//! and metrics, with the time series sampled side by side on a second thread); the time series
//! alone, for reference (already inside analyse_s); writing the report folder
//! (`report::write_all`); rendering's share of the run's wall time, and the share of everything
//! after the run (analyse + render).
//! The workload is `sim_throughput`'s (64 workers, 80 messages/s, 1% of provider calls past the
//! 30 s lease). Rendering reads only the time series (at most 1000 samples) and the histograms,
//! so its cost does not grow with the messages; analysing the record (summarise) does, once.

use std::time::Instant;

use ackbench::internals::report::{self, Format, RunInfo, RunOutputs};
use ackbench::internals::{profile, run};

const PROFILE: &str = include_str!("bench-workload.yaml");

fn main() {
    let sizes: Vec<u64> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .filter_map(|a| a.parse().ok())
        .collect();
    let sizes = if sizes.is_empty() {
        vec![1_000_000]
    } else {
        sizes
    };
    println!(
        "{:>10} {:>9} {:>10} {:>13} {:>10} {:>12} {:>22}",
        "messages",
        "run_s",
        "analyse_s",
        "timeseries_s",
        "render_s",
        "render/run",
        "(analyse+render)/run"
    );
    for n in sizes {
        measure(n);
    }
}

fn measure(n: u64) {
    let text = PROFILE.replace("COUNT", &n.to_string());
    let scenario = profile::load_str("bench.yaml", &text, &[]).expect("bench profile is valid");

    let t = Instant::now();
    let record = run::run(&scenario).expect("run completes");
    let run_s = t.elapsed().as_secs_f64();

    let t = Instant::now();
    let info = RunInfo {
        profile: scenario.name.clone(),
        mode: "sim".into(),
        seed: scenario.seed,
        wall_s: run_s,
    };
    let analysed = report::analyse_run(&info, &record, &scenario.budgets, None);
    let analyse_s = t.elapsed().as_secs_f64();
    // Sampled side by side with the accounting (as `ackbench run` does); timed alone here.
    let t = Instant::now();
    let every = report::default_interval(&record);
    std::hint::black_box(report::timeseries(&record, every));
    let timeseries_s = t.elapsed().as_secs_f64();
    let (summary, metrics, samples) = (&analysed.summary, &analysed.metrics, &analysed.samples);

    let dir = tempfile::tempdir().expect("temp dir");
    let t = Instant::now();
    let out = RunOutputs {
        scenario: &scenario,
        record: &record,
        metrics,
        summary,
        samples,
        sample_every: analysed.sample_every,
        profile_text: &text,
        command: "ackbench run bench.yaml --seed 42",
    };
    let files = report::write_all(dir.path(), &out, Format::ALL).expect("report written");
    let render_s = t.elapsed().as_secs_f64();
    assert_eq!(summary.messages, n);
    assert!(files.len() >= 15, "every format written");

    println!(
        "{:>10} {:>9.3} {:>10.3} {:>13.3} {:>10.3} {:>11.1}% {:>21.1}%",
        n,
        run_s,
        analyse_s,
        timeseries_s,
        render_s,
        100.0 * render_s / run_s,
        100.0 * (analyse_s + render_s) / run_s
    );
}
