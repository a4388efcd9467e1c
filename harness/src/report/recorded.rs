//! The recorded data of a report folder: what every rendering is drawn from (see the module
//! documentation of [`super`]).

use std::fs;
use std::path::{Path, PathBuf};

use super::broker_csv;
use super::data::RUN_JSON;
use super::deliveries::{self, deliveries};
use super::hlog::{write_latency_log, END_TO_END_LOG, HANDLER_LATENCY_LOG, TIME_TO_DONE_LOG};
use super::run_json::RunJson;
use super::{charts, folder, write_file, ReportError, RunOutputs, EXPORTERS};

/// Writes summary.json, timeseries.csv, run.json, the three latency logs, for a small run
/// deliveries.csv and for a run that sampled a real broker broker-samples.csv into `dir`
/// (created if needed); returns the files written.
///
/// A worker timeline left in the folder by an earlier, smaller run (deliveries.csv,
/// charts/workers.*) is removed when this run has none, so the folder only describes this run;
/// only if ackbench wrote it (the folder's marker lists it, see [`super::folder`]).
pub fn write(dir: &Path, out: &RunOutputs<'_>) -> Result<Vec<PathBuf>, ReportError> {
    fs::create_dir_all(dir).map_err(|source| ReportError::Folder {
        path: dir.to_path_buf(),
        source,
    })?;
    let mut written = Vec::new();
    for exporter in EXPORTERS {
        written.push(write_file(dir, exporter.file_name(), |w| {
            exporter.export(out.summary, out.samples, w)
        })?);
    }
    let timeline = deliveries(out.record);
    let run = RunJson::of(out, timeline.is_some());
    written.push(write_file(dir, RUN_JSON, |w| {
        w.write_all(run.to_json().as_bytes())
    })?);
    let done = format!(
        "time to done (publish to the effect and {})",
        run.words().done.by
    );
    let logs = [
        (
            HANDLER_LATENCY_LOG,
            &out.metrics.latencies.handler.histogram,
            "handler latency (delivery to the end of its handler)",
        ),
        (
            END_TO_END_LOG,
            &out.metrics.latencies.end_to_end.histogram,
            "end-to-end latency (publish to first effect)",
        ),
        (
            TIME_TO_DONE_LOG,
            &out.metrics.latencies.time_to_done.histogram,
            done.as_str(),
        ),
    ];
    for (name, histogram, what) in logs {
        written.push(write_file(dir, name, |w| {
            write_latency_log(w, histogram, what, out.record.end)
        })?);
    }
    match &out.record.broker_samples {
        Some(b) => written.push(write_file(dir, broker_csv::FILE, |w| {
            broker_csv::write_csv(&b.samples, w)
        })?),
        None => {
            remove_stale(dir, broker_csv::FILE)?;
            for ext in ["png", "svg"] {
                remove_stale(dir, &format!("{}/broker.{ext}", charts::DIR))?;
            }
        }
    }
    match timeline {
        Some(rows) => written.push(write_file(dir, deliveries::FILE, |w| {
            deliveries::write_csv(&rows, w)
        })?),
        None => {
            remove_stale(dir, deliveries::FILE)?;
            for ext in ["png", "svg"] {
                remove_stale(dir, &format!("{}/workers.{ext}", charts::DIR))?;
            }
        }
    }
    Ok(written)
}

/// Removes file `rel` an earlier run left in `dir`, if ackbench wrote it.
fn remove_stale(dir: &Path, rel: &str) -> Result<(), ReportError> {
    folder::remove_ours(dir, rel).map_err(|source| ReportError::write(dir.join(rel), source))
}
