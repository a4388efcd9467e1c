//! Reports: what a run leaves behind and prints.
//!
//! A report folder holds the run's **recorded data**, written by [`write_all`] after every run:
//!
//! - summary.json ([`summary`]): the summary, the contract CI scripts read;
//! - timeseries.csv ([`timeseries_csv`]): the run sampled over time;
//! - run.json ([`run_json`]): the profile as run, the command and seed that reproduce it, the
//!   lease, the provider's phases and the budgets as evaluated;
//! - handler-latency.hlog and end-to-end.hlog ([`hlog`]): the raw HDR latency histograms;
//! - deliveries.csv ([`deliveries`]): the worker timeline, for runs of up to 50 messages;
//! - broker-samples.csv ([`broker_csv`]): what a real broker answered about its own counts
//!   every `run.sample_every`, for live runs on one;
//!
//! and its **renderings**, drawn from that data alone ([`data::ReportData`]), so [`rerender`]
//! draws them again, byte for byte, without rerunning:
//!
//! - charts/*.png and charts/*.svg ([`charts`]);
//! - report.html ([`html`]): one self-contained page;
//! - junit.xml ([`junit`]): one test case per budget;
//! - summary.md ([`markdown`]): for a PR comment or `$GITHUB_STEP_SUMMARY`.
//!
//! Besides: [`console`] prints the table `ackbench run` shows, [`trace`] one message's life, and
//! [`progress`] the progress bar of a long run.

mod analysed;
mod broken;
pub(crate) mod broker_csv;
pub(crate) mod broker_rows;
pub(crate) mod capacity;
pub(crate) mod charts;
pub(crate) mod console;
pub(crate) mod data;
pub(crate) mod deliveries;
pub(crate) mod error;
pub(crate) mod faults;
pub(crate) mod folder;
pub(crate) mod format;
pub(crate) mod groups;
pub(crate) mod hlog;
pub(crate) mod html;
pub(crate) mod ingress;
pub(crate) mod junit;
pub(crate) mod late_group;
pub(crate) mod markdown;
pub(crate) mod no_follow;
pub(crate) mod note;
pub(crate) mod notes;
pub(crate) mod outputs;
pub(crate) mod png;
pub(crate) mod progress;
pub(crate) mod publisher;
pub(crate) mod rebalances;
pub(crate) mod recorded;
pub(crate) mod run_json;
pub(crate) mod summary;
pub(crate) mod svg;
pub(crate) mod timeseries_csv;
pub(crate) mod trace;
pub(crate) mod words;
pub(crate) mod worker_logs;

use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

pub use analysed::analyse_run;
pub use data::ReportData;
pub use error::ReportError;
pub use format::Format;
pub use hlog::read_latency_log;
pub use outputs::RunOutputs;
pub use progress::{Progress, RunProgress};
pub use summary::{summarise, summarise_with_metrics, RunInfo, Summary, SummaryJson};
pub use timeseries_csv::TimeseriesCsv;

use crate::metrics::Sample;

/// Writes one file of the report folder from the summary and the time series.
pub trait Exporter {
    /// The file's name inside the report folder.
    fn file_name(&self) -> &'static str;
    /// Writes the file's content.
    fn export(&self, summary: &Summary, samples: &[Sample], w: &mut dyn Write) -> io::Result<()>;
}

/// Every exporter [`write_report`] runs, in order.
pub const EXPORTERS: &[&dyn Exporter] = &[&SummaryJson, &TimeseriesCsv];

/// Renders one [`Format`] of the report from a folder's recorded data.
pub trait Renderer {
    fn format(&self) -> Format;
    /// Writes this format's files into report folder `dir`; returns them.
    fn render(&self, data: &ReportData, dir: &Path) -> Result<Vec<PathBuf>, ReportError>;
}

/// Every renderer, one per format, in the order [`write_all`] and [`rerender`] run them.
pub const RENDERERS: &[&dyn Renderer] = &[
    &SummaryJson,
    &TimeseriesCsv,
    &png::Png,
    &svg::Svg,
    &html::Html,
    &junit::Junit,
    &markdown::Markdown,
];

/// Writes the report folder `dir` (created if needed) of a finished run: the recorded data (see
/// the module's documentation; always written, whatever `formats` says) and then every rendering
/// in `formats` (`json` and `csv` are part of the recorded data). Returns every file written. An
/// error names the file it happened on.
pub fn write_all(
    dir: &Path,
    out: &RunOutputs<'_>,
    formats: &[Format],
) -> Result<Vec<PathBuf>, ReportError> {
    let mut written = recorded::write(dir, out)?;
    let data = ReportData::load(dir)?;
    let renderings: Vec<Format> = formats
        .iter()
        .copied()
        .filter(|f| !matches!(f, Format::Json | Format::Csv))
        .collect();
    written.extend(render(&data, dir, &renderings)?);
    mark(dir, &written)?;
    Ok(written)
}

/// Lists `written` in the folder's marker ([`folder`]), so that only those are ever removed.
fn mark(dir: &Path, written: &[PathBuf]) -> Result<(), ReportError> {
    folder::record(dir, written)
        .map_err(|source| ReportError::write(dir.join(folder::MARKER), source))
}

/// Renders `formats` again from the recorded data of report folder `dir`, without rerunning:
/// what [`write_all`] wrote, byte for byte (`json` and `csv` rewrite summary.json and
/// timeseries.csv from what they hold). Returns every file written.
pub fn rerender(dir: &Path, formats: &[Format]) -> Result<Vec<PathBuf>, ReportError> {
    let data = ReportData::load(dir)?;
    let written = render(&data, dir, formats)?;
    mark(dir, &written)?;
    Ok(written)
}

/// Runs the renderer of each format in `formats`, in [`RENDERERS`] order.
fn render(data: &ReportData, dir: &Path, formats: &[Format]) -> Result<Vec<PathBuf>, ReportError> {
    let mut written = Vec::new();
    for r in RENDERERS.iter().filter(|r| formats.contains(&r.format())) {
        written.extend(r.render(data, dir)?);
    }
    Ok(written)
}

/// Writes file `name` of report folder `dir` through `f`; an error names the file.
pub(crate) fn write_file(
    dir: &Path,
    name: &str,
    f: impl FnOnce(&mut dyn Write) -> io::Result<()>,
) -> Result<PathBuf, ReportError> {
    let path = dir.join(name);
    let write = || -> io::Result<()> {
        let mut w = BufWriter::new(no_follow::create_file(&path)?);
        f(&mut w)?;
        w.flush()
    };
    match write() {
        Ok(()) => Ok(path),
        Err(source) => Err(ReportError::write(path, source)),
    }
}

impl Renderer for SummaryJson {
    fn format(&self) -> Format {
        Format::Json
    }

    fn render(&self, data: &ReportData, dir: &Path) -> Result<Vec<PathBuf>, ReportError> {
        let path = write_file(dir, self.file_name(), |w| {
            self.export(&data.summary, &data.samples, w)
        })?;
        Ok(vec![path])
    }
}

impl Renderer for TimeseriesCsv {
    fn format(&self) -> Format {
        Format::Csv
    }

    fn render(&self, data: &ReportData, dir: &Path) -> Result<Vec<PathBuf>, ReportError> {
        let path = write_file(dir, self.file_name(), |w| {
            self.export(&data.summary, &data.samples, w)
        })?;
        Ok(vec![path])
    }
}

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_commit_handlers;
#[cfg(test)]
mod tests_kind_words;
#[cfg(test)]
mod tests_returned;
#[cfg(test)]
mod tests_schema;

#[cfg(test)]
mod folder_tests {
    use std::fs;
    use std::time::Duration;

    use super::summary::to_json;
    use super::*;
    use crate::metrics::testkit::{s, slow_handler};
    use crate::metrics::timeseries;
    use crate::profile::{Budgets, StaleAck};

    /// Writes the report folder `dir` (created if needed): summary.json and timeseries.csv. An
    /// error names the file it happened on.
    fn write_report(dir: &Path, summary: &Summary, samples: &[Sample]) -> io::Result<()> {
        fs::create_dir_all(dir).map_err(|e| at(dir, e))?;
        for exporter in EXPORTERS {
            let path = dir.join(exporter.file_name());
            let write = || -> io::Result<()> {
                let mut w = BufWriter::new(no_follow::create_file(&path)?);
                exporter.export(summary, samples, &mut w)?;
                w.flush()
            };
            write().map_err(|e| at(&path, e))?;
        }
        Ok(())
    }

    /// The error, with the path it happened on.
    fn at(path: &Path, e: io::Error) -> io::Error {
        io::Error::new(e.kind(), format!("{}: {e}", path.display()))
    }

    #[test]
    fn the_report_folder_holds_the_summary_and_the_time_series() -> io::Result<()> {
        let tmp = tempfile::tempdir()?;
        let dir = tmp.path().join("reports").join("incident");
        let record = slow_handler(StaleAck::Reject);
        let info = RunInfo {
            profile: "incident".into(),
            mode: "sim".into(),
            seed: 1,
            wall_s: 0.5,
        };
        let budgets = Budgets {
            late_after: Duration::from_secs(300),
            ..Budgets::default()
        };
        let summary = summarise(&info, &record, &budgets);
        let samples = timeseries(&record, s(30.0));
        write_report(&dir, &summary, &samples)?;
        assert_eq!(
            fs::read_to_string(dir.join("summary.json"))?,
            to_json(&summary)
        );
        let csv = fs::read_to_string(dir.join("timeseries.csv"))?;
        assert_eq!(csv.lines().count(), 1 + samples.len());
        assert!(csv.starts_with(timeseries_csv::HEADER));
        Ok(())
    }

    #[test]
    fn an_error_names_the_file() -> io::Result<()> {
        let tmp = tempfile::tempdir()?;
        let blocker = tmp.path().join("taken");
        fs::write(&blocker, "a file, not a folder")?;
        let summary = summarise(
            &RunInfo {
                profile: "p".into(),
                mode: "sim".into(),
                seed: 0,
                wall_s: 0.0,
            },
            &crate::record::RunRecord::default(),
            &Budgets::default(),
        );
        let err = write_report(&blocker, &summary, &[])
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(err.contains("taken"), "{err}");
        Ok(())
    }
}
